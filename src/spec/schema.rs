//! The JSON Schemas of the two file formats, `schemas/provider-spec.schema.json`
//! and `schemas/strict-rules.schema.json`, generated from the document types
//! that read the files (schemars' derive, in test builds only): the types'
//! and fields' doc comments are the descriptions, and each template's
//! variables are its kind's [`TemplateVars::NAMES`], the list the compiler
//! checks. The loader validates every file against the checked-in schemas;
//! the test below fails when they differ from what the types generate, and
//! rewrites them when `UPDATE_SCHEMAS=1` is set:
//!
//! ```text
//! UPDATE_SCHEMAS=1 cargo test --lib spec::schema
//! ```
//!
//! Added here, where a type alone cannot say it: the schemas of the hand-typed
//! pieces (a path, a template, the strict default), the `if`/`then`/`else` of
//! a shorthand (a string, or an object that says more), the partial form of
//! each section for specs with `extends` (every key optional, `null` to remove
//! one), and the root that chooses between the whole form and the partial one.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use heck::ToSnakeCase;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value, json};

use super::SpecDoc;
use super::path::PathDoc;
use super::strict::{StrictDefault, StrictMode};
use super::template::{TemplateDoc, TemplateVars, TextTemplateDoc};
use crate::strict::rules::RawRules;

/// Where each schema is written, and its `$id`.
const SPEC_FILE: &str = "provider-spec.schema.json";
const RULES_FILE: &str = "strict-rules.schema.json";
const ID_BASE: &str = "https://github.com/mcp-adapters/schemas/";

/// The template syntax, said once at the end of every template's description.
const TEMPLATE_SYNTAX: &str = "A string that is exactly ${var} is the variable's value; ${var?} vanishes when absent; other strings interpolate ${var} (${var?}: empty when absent); $${ writes ${.";

/// What `null` means in the partial form of a section.
const NULL_REMOVES: &str = "null removes this key from the spec extended.";

/// `$ref` to the definition `name`.
fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/$defs/{name}") })
}

/// The pattern of a string that uses only `names` (any lower-case name as
/// well when `open`): `${name}`, `${name?}`, `$${` and lone `$` signs.
fn text_pattern(names: &[&str], open: bool) -> String {
    let var = if open {
        r"|\$\{[a-z_][a-z0-9_]*\??\}".to_owned()
    } else if names.is_empty() {
        String::new()
    } else {
        format!(r"|\$\{{(?:{})\??\}}", names.join("|"))
    };
    format!(r"^(?:[^$]|\$\$\{{{var}|\$(?!\{{))*$")
}

impl<K: TemplateVars> JsonSchema for TemplateDoc<K> {
    fn schema_name() -> Cow<'static, str> {
        K::DEF.into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        met::<K>();
        let itself = reference(K::DEF);
        json_schema!({
            "description": format!("{} {TEMPLATE_SYNTAX}", K::ABOUT.trim()),
            "anyOf": [
                {"type": "string", "pattern": text_pattern(K::NAMES, K::OPEN)},
                {"type": "object", "additionalProperties": itself},
                {"type": "array", "items": itself},
                {"type": ["number", "boolean", "null"]},
            ]
        })
    }
}

impl<K: TemplateVars> JsonSchema for TextTemplateDoc<K> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("{}_text", K::DEF).into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "pattern": text_pattern(K::NAMES, K::OPEN)})
    }
}

impl JsonSchema for PathDoc {
    fn schema_name() -> Cow<'static, str> {
        "path".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^[^/]+(/[^/]+)*$",
            "description": "A slash-separated path into a JSON value; numeric segments index arrays.",
        })
    }
}

impl JsonSchema for StrictDefault {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "strict_default".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"enum": ["auto", true, false]})
    }
}

/// The default a field of this type shows in the schema: `auto`, `true` or `false`.
impl Serialize for StrictDefault {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            StrictMode::On => s.serialize_bool(true),
            StrictMode::Off => s.serialize_bool(false),
            _ => s.serialize_str("auto"),
        }
    }
}

/// A shorthand's schema: the derive's `anyOf` of the string form (first)
/// and the full form becomes `if` / `then` / `else`, so that an error inside
/// the full form names its place instead of "no branch matched".
pub(crate) fn string_or_object(schema: &mut Schema) {
    shorthand(schema, json!({"type": "string"}));
}

/// The same, for a tool choice: an object with `omit` (first), or a value.
pub(crate) fn omit_or_value(schema: &mut Schema) {
    shorthand(schema, json!({"type": "object", "required": ["omit"]}));
}

fn shorthand(schema: &mut Schema, condition: Value) {
    let Some(Value::Array(forms)) = schema.remove("anyOf") else {
        panic!("a shorthand is an untagged enum of two forms: {schema:?}");
    };
    let [short, full]: [Value; 2] = forms.try_into().expect("two forms");
    schema.insert("if".into(), condition);
    schema.insert("then".into(), short);
    schema.insert("else".into(), full);
}

/// A template that must be an object (a tool definition, a request body).
pub(crate) fn object_template(schema: &mut Schema) {
    let reference = schema.remove("$ref").expect("a template is a reference");
    schema.insert("allOf".into(), json!([{ "$ref": reference }]));
    schema.insert("type".into(), "object".into());
}

/// An option value's `results`: the partial form of the results section,
/// which the loader deep-merges over the spec's.
pub(crate) fn results_override(generator: &mut SchemaGenerator) -> Schema {
    let whole = generator.subschema_for::<super::results::ResultsDoc>();
    let name = def_name(&root_name(&whole));
    Schema::try_from(reference(&format!("{name}_partial"))).expect("a schema")
}

/// The provider-spec schema.
pub(crate) fn provider_spec() -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let root = generator.subschema_for::<SpecDoc>();
    let mut defs = tidy(generator.take_definitions(true));
    let spec = def_name(&root_name(&root));
    add_partial_forms(&mut defs, &spec);
    let description = defs[&spec]["description"].clone();
    let mut schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("{ID_BASE}{SPEC_FILE}"),
        "title": "mcp-adapters provider spec",
        "description": description,
        "if": {"type": "object", "required": ["extends"]},
        "then": reference(&format!("{spec}_partial")),
        "else": reference(&spec),
    });
    schema["$defs"] = Value::Object(defs);
    schema
}

/// The strict-rules schema.
pub(crate) fn strict_rules() -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let root = generator.subschema_for::<RawRules>();
    let mut defs = tidy(generator.take_definitions(true));
    let Value::Object(body) = defs
        .shift_remove(&def_name(&root_name(&root)))
        .expect("the rules' definition")
    else {
        panic!("the rules' schema is an object");
    };
    let mut schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("{ID_BASE}{RULES_FILE}"),
        "title": "Schema rules",
    });
    let map = schema.as_object_mut().expect("an object");
    map.extend(body);
    map.insert("$defs".into(), Value::Object(defs));
    schema
}

fn root_name(root: &Schema) -> String {
    root.get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .expect("the root type is a definition")
        .to_owned()
}

/// A definition's name in the schema: the type's, without `Doc`, in snake
/// case (a name the schema gives itself, such as `media_template`, as it is).
fn def_name(type_name: &str) -> String {
    type_name
        .strip_suffix("Doc")
        .unwrap_or(type_name)
        .to_snake_case()
}

/// The derive's definitions, renamed and cleaned: `null` only where a spec
/// may write it, descriptions as prose, enums with their values explained.
fn tidy(defs: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (name, mut def) in defs {
        let renamed = def_name(&name);
        rename_refs(&mut def);
        if !renamed.ends_with("_template") {
            no_null(&mut def);
        }
        prose(&mut def);
        assert!(
            out.insert(renamed.clone(), def).is_none(),
            "two types are named `{renamed}` in the schema"
        );
    }
    explain_values(&mut out);
    out
}

/// A key whose own description stands beside a reference to an enum (an
/// editor shows that one, not the enum's) gets the enum's list of values
/// and their meanings too.
fn explain_values(defs: &mut Map<String, Value>) {
    let lists: BTreeMap<String, String> = defs
        .iter()
        .filter(|(_, def)| def.get("enum").is_some())
        .filter_map(|(name, def)| {
            let about = def.get("description")?.as_str()?;
            let list: Vec<&str> = about.lines().filter(|l| l.starts_with("- `")).collect();
            (!list.is_empty()).then(|| (format!("#/$defs/{name}"), list.join("\n")))
        })
        .collect();
    fn walk(node: &mut Value, lists: &BTreeMap<String, String>) {
        match node {
            Value::Object(map) => {
                let list = map
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| lists.get(r));
                if let (Some(list), Some(Value::String(about))) = (list, map.get_mut("description"))
                {
                    about.push('\n');
                    about.push_str(list);
                }
                subschemas(map).into_iter().for_each(|v| walk(v, lists));
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, lists)),
            _ => {}
        }
    }
    defs.values_mut().for_each(|def| walk(def, &lists));
}

fn rename_refs(node: &mut Value) {
    match node {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                match (k.as_str(), &*v) {
                    ("$ref", Value::String(r)) => {
                        let name = r.strip_prefix("#/$defs/").expect("a local reference");
                        *v = Value::String(format!("#/$defs/{}", def_name(name)));
                    }
                    _ => rename_refs(v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rename_refs),
        _ => {}
    }
}

/// The derive lets `null` stand for an `Option` that is `None`; a spec never
/// writes `null` for that (it leaves the key out), so `null` is taken back
/// out: of types, enums and `anyOf` branches, and as a default. Number
/// formats (`uint64`, `double`) and empty defaults go too.
fn no_null(node: &mut Value) {
    let Value::Object(map) = node else {
        if let Value::Array(items) = node {
            items.iter_mut().for_each(no_null);
        }
        return;
    };
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    let is_null = |v: &Value| v.get("type") == Some(&json!("null"));
    if let Some(Value::Array(branches)) = map.get("anyOf")
        && branches.len() == 2
        && branches.iter().any(is_null)
    {
        let kept = branches
            .iter()
            .find(|b| !is_null(b))
            .cloned()
            .unwrap_or_default();
        let mut merged = Map::new();
        for (k, v) in std::mem::take(map) {
            if k == "anyOf" {
                if let Value::Object(inner) = &kept {
                    merged.extend(inner.clone());
                }
            } else {
                merged.insert(k, v);
            }
        }
        *map = merged;
    }
    let empty = |v: &Value| {
        v.is_null()
            || v.as_array().is_some_and(Vec::is_empty)
            || v.as_object().is_some_and(Map::is_empty)
    };
    if map.get("default").is_some_and(empty) {
        map.shift_remove("default");
    }
    if map.get("format").and_then(Value::as_str).is_some_and(|f| {
        f.starts_with("int") || f.starts_with("uint") || f == "double" || f == "float"
    }) {
        map.shift_remove("format");
    }
    subschemas(map).into_iter().for_each(no_null);
}

/// The values of a schema object that are schemas or lists of them: each
/// keyword's but those that hold instance values (`default`, `const`,
/// `enum`, `examples`), and each entry of a map of schemas (`properties`),
/// whatever its key (a spec key may be named `default`).
fn subschemas(map: &mut Map<String, Value>) -> Vec<&mut Value> {
    let mut out = Vec::new();
    for (k, v) in map.iter_mut() {
        match (k.as_str(), v) {
            ("default" | "const" | "enum" | "examples", _) => {}
            ("properties" | "patternProperties" | "$defs", Value::Object(schemas)) => {
                out.extend(schemas.values_mut());
            }
            (_, v) => out.push(v),
        }
    }
    out
}

/// Descriptions as prose (a doc comment's lines joined), and an enum whose
/// values have doc comments (the derive's `oneOf` of constants) as one
/// `enum`, each value's meaning listed in its description.
fn prose(node: &mut Value) {
    match node {
        Value::Object(map) => {
            if let Some(Value::String(text)) = map.get_mut("description") {
                *text = join_lines(text);
            }
            fold_enum(map);
            subschemas(map).into_iter().for_each(prose);
        }
        Value::Array(items) => items.iter_mut().for_each(prose),
        _ => {}
    }
}

/// A doc comment's lines, joined into paragraphs; list items keep their lines.
fn join_lines(text: &str) -> String {
    let mut out = String::new();
    let mut blank = true;
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            blank = true;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if line.starts_with("- ") {
                "\n"
            } else if blank {
                "\n\n"
            } else {
                " "
            });
        }
        out.push_str(line);
        blank = false;
    }
    out
}

fn fold_enum(map: &mut Map<String, Value>) {
    let Some(Value::Array(variants)) = map.get("oneOf") else {
        return;
    };
    let values: Option<Vec<(Value, Option<String>)>> = variants
        .iter()
        .map(|v| {
            let value = v.get("const").filter(|c| c.is_string())?.clone();
            let about = v.get("description").and_then(Value::as_str).map(join_lines);
            Some((value, about))
        })
        .collect();
    let Some(values) = values else {
        return;
    };
    let mut text = map
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_default();
    for (value, about) in &values {
        let value = value.as_str().unwrap_or_default();
        text.push_str(if text.is_empty() { "" } else { "\n" });
        text.push_str(&match about {
            Some(about) => format!("- `{value}`: {about}"),
            None => format!("- `{value}`"),
        });
    }
    map.shift_remove("oneOf");
    map.insert("description".into(), text.into());
    map.insert("type".into(), "string".into());
    map.insert(
        "enum".into(),
        values
            .into_iter()
            .map(|(v, _)| v)
            .collect::<Vec<_>>()
            .into(),
    );
}

/// Adds `<name>_partial` for every definition a spec with `extends` may
/// hold in part: those reached from `root` through objects' keys (a list
/// replaces the list it extends, so its items stay whole) that hold an
/// object or refer to one that does. In the partial form no key is
/// required, every key may be `null` (which removes it from the spec
/// extended), a choice among required keys is dropped (a partial may name
/// one and remove another), and references go to partial forms.
fn add_partial_forms(defs: &mut Map<String, Value>, root: &str) {
    let mut reached = BTreeSet::new();
    let mut next = vec![root.to_owned()];
    while let Some(name) = next.pop() {
        // A reference to a partial form (an option's results) is followed later.
        if let Some(def) = defs.get(&name)
            && reached.insert(name)
        {
            merged_refs(def, &mut next);
        }
    }
    let mut partial: BTreeSet<String> = reached
        .iter()
        .filter(|name| has_keys(&defs[name.as_str()]))
        .cloned()
        .collect();
    loop {
        let more: Vec<String> = reached
            .iter()
            .filter(|name| !partial.contains(*name))
            .filter(|name| {
                let mut refs = Vec::new();
                merged_refs(&defs[name.as_str()], &mut refs);
                refs.iter().any(|r| partial.contains(r))
            })
            .cloned()
            .collect();
        if more.is_empty() {
            break;
        }
        partial.extend(more);
    }
    let order: Vec<String> = defs
        .keys()
        .filter(|k| partial.contains(*k))
        .cloned()
        .collect();
    for name in order {
        let form = partial_form(&defs[&name], &partial);
        defs.insert(format!("{name}_partial"), form);
    }
    let partial = defs
        .get_mut(&format!("{root}_partial"))
        .and_then(Value::as_object_mut)
        .expect("the spec's partial form");
    partial.insert("required".into(), json!(["extends"]));
    // A spec keeps its title.
    let title = &mut partial["properties"]["title"];
    *title = title["anyOf"][0].take();
    for form in [root.to_owned(), format!("{root}_partial")] {
        with_extends(&mut defs[&form]);
    }
}

/// Lists `extends` among the spec's keys, after `description`: the loader
/// reads it before the document is typed (and the root's `if` sends a spec
/// that has it to the partial form; it is listed in the whole form too, for
/// an editor to offer it).
fn with_extends(spec: &mut Value) {
    let properties = spec
        .get_mut("properties")
        .and_then(Value::as_object_mut)
        .expect("the spec's keys");
    let mut keys = Map::new();
    for (key, value) in std::mem::take(properties) {
        let after = key == "description";
        keys.insert(key, value);
        if after {
            keys.insert(
                "extends".into(),
                json!({
                    "type": "string",
                    "minLength": 1,
                    "description": "The id of a spec this one is based on: this document is deep-merged over it (objects merge, anything else replaces, null removes a key).",
                }),
            );
        }
    }
    *properties = keys;
}

/// The definitions `node` refers to where a merge reaches (not list items).
fn merged_refs(node: &Value, out: &mut Vec<String>) {
    let Value::Object(map) = node else {
        if let Value::Array(items) = node {
            items.iter().for_each(|v| merged_refs(v, out));
        }
        return;
    };
    for (k, v) in map {
        match k.as_str() {
            "$ref" => {
                let name = v.as_str().and_then(|r| r.strip_prefix("#/$defs/"));
                out.extend(name.map(str::to_owned));
            }
            "items" | "prefixItems" | "propertyNames" | "contains" | "not" | "default"
            | "const" | "enum" => {}
            "properties" => v
                .as_object()
                .into_iter()
                .flat_map(Map::values)
                .for_each(|v| merged_refs(v, out)),
            _ => merged_refs(v, out),
        }
    }
}

/// Whether `node` holds an object schema with keys (outside list items).
fn has_keys(node: &Value) -> bool {
    match node {
        Value::Object(map) => {
            map.contains_key("properties")
                || map.iter().any(|(k, v)| {
                    !matches!(
                        k.as_str(),
                        "items" | "prefixItems" | "default" | "const" | "enum"
                    ) && has_keys(v)
                })
        }
        Value::Array(items) => items.iter().any(has_keys),
        _ => false,
    }
}

fn partial_form(node: &Value, partial: &BTreeSet<String>) -> Value {
    let Value::Object(map) = node else {
        return match node {
            Value::Array(items) => items.iter().map(|v| partial_form(v, partial)).collect(),
            other => other.clone(),
        };
    };
    let mut out = Map::new();
    for (k, v) in map {
        match k.as_str() {
            "required" if map.contains_key("properties") => {}
            "oneOf" if only_required(v) => {}
            "$ref" => {
                let name = v.as_str().and_then(|r| r.strip_prefix("#/$defs/"));
                let value = match name {
                    Some(name) if partial.contains(name) => {
                        Value::String(format!("#/$defs/{name}_partial"))
                    }
                    _ => v.clone(),
                };
                out.insert(k.clone(), value);
            }
            "properties" => {
                let keys = v
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(key, sub)| {
                        let nullable = json!({"anyOf": [
                            partial_form(sub, partial),
                            {"type": "null", "description": NULL_REMOVES},
                        ]});
                        (key.clone(), nullable)
                    })
                    .collect();
                out.insert(k.clone(), Value::Object(keys));
            }
            "items" | "prefixItems" | "default" | "const" | "enum" => {
                out.insert(k.clone(), v.clone());
            }
            _ => {
                out.insert(k.clone(), partial_form(v, partial));
            }
        }
    }
    Value::Object(out)
}

/// A `oneOf` that only says which of some keys is required.
fn only_required(v: &Value) -> bool {
    v.as_array().is_some_and(|branches| {
        branches.iter().all(|b| {
            b.as_object()
                .is_some_and(|m| m.keys().all(|k| k == "required"))
        })
    })
}

/// Rewrites the checked-in schemas when set (to anything but `0`).
const UPDATE: &str = "UPDATE_SCHEMAS";

#[test]
fn the_checked_in_schemas_are_generated() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    let update = std::env::var(UPDATE).is_ok_and(|v| !v.is_empty() && v != "0");
    let regenerate = format!("Regenerate it: {UPDATE}=1 cargo test --lib spec::schema");
    for (file, schema) in [(SPEC_FILE, provider_spec()), (RULES_FILE, strict_rules())] {
        let path = dir.join(file);
        let text = serde_json::to_string_pretty(&schema).expect("JSON") + "\n";
        if update {
            std::fs::write(&path, &text).expect("the schema is written");
            continue;
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        if checked_in != text {
            let diff = similar::TextDiff::from_lines(&checked_in, &text);
            let mut shown = diff
                .unified_diff()
                .context_radius(4)
                .header(&format!("schemas/{file}"), "generated")
                .to_string();
            if let Some((cut, _)) = shown.char_indices().nth(6000) {
                shown.truncate(cut);
                shown.push_str("\n...");
            }
            panic!("schemas/{file} is not what the spec's types generate:\n{shown}\n{regenerate}");
        }
    }
}

/// A kind's check that its pattern judges strings as its compiler does.
type Agreement = fn() -> Result<(), String>;

thread_local! {
    /// The template kinds the generator met, each with [`agrees`] for it.
    static KINDS: std::cell::RefCell<BTreeMap<&'static str, Agreement>> =
        const { std::cell::RefCell::new(BTreeMap::new()) };
}

fn met<K: TemplateVars>() {
    KINDS.with(|kinds| kinds.borrow_mut().insert(K::DEF, agrees::<K>));
}

/// Whether the schema's pattern for the kind `K` judges strings as the
/// compiler does: each of its variables, plain and optional, whole and
/// interpolated; escapes and lone `$` signs; unknown and malformed names.
fn agrees<K: TemplateVars>() -> Result<(), String> {
    let pattern = text_pattern(K::NAMES, K::OPEN);
    let validator = jsonschema::validator_for(&json!({"type": "string", "pattern": pattern}))
        .map_err(|e| format!("{}: {e}", K::DEF))?;
    let first = K::NAMES.first().copied().unwrap_or("x");
    let mut texts: Vec<String> = [
        "plain text",
        "a $ sign",
        "$",
        "$$",
        "$${literal}",
        "${zz_unknown}",
        "${zz_unknown?}",
        "${Upper}",
        "${}",
        "${?}",
        "a ${",
        "$${",
    ]
    .map(str::to_owned)
    .into();
    texts.push(format!("${{{first}"));
    for name in K::NAMES {
        texts.extend([
            format!("${{{name}}}"),
            format!("${{{name}?}}"),
            format!("<${{{name}}}, $${{{name}}}, ${{{name}?}}>"),
        ]);
    }
    // An open kind also takes the names the spec gives (a `meta` map).
    let given: &[&str] = if K::OPEN { &["zz_unknown"] } else { &[] };
    for text in texts {
        let doc: TemplateDoc<K> =
            serde_json::from_value(Value::String(text.clone())).expect("a string template");
        let compiles = doc.compile_with("", given).is_ok();
        let valid = validator.is_valid(&Value::String(text.clone()));
        if compiles != valid {
            return Err(format!(
                "{}: the compiler {} `{text}` and the schema {}",
                K::DEF,
                if compiles { "takes" } else { "refuses" },
                if valid { "takes it" } else { "refuses it" },
            ));
        }
    }
    Ok(())
}

/// Every template definition of the schema lets an editor through the
/// strings the loader takes, and only those: its variables are the kind's
/// [`TemplateVars::NAMES`] and its pattern reads them as the compiler does.
#[test]
fn every_template_pattern_judges_as_the_compiler_does() {
    KINDS.with(|kinds| kinds.borrow_mut().clear());
    let schema = provider_spec();
    let kinds = KINDS.with(|kinds| std::mem::take(&mut *kinds.borrow_mut()));
    let defs: BTreeSet<&str> = schema["$defs"]
        .as_object()
        .expect("definitions")
        .keys()
        .map(String::as_str)
        .filter(|name| name.ends_with("_template"))
        .collect();
    assert_eq!(
        defs,
        kinds.keys().copied().collect(),
        "each template definition is a kind the generator met"
    );
    let failures: Vec<String> = kinds.values().filter_map(|check| check().err()).collect();
    assert!(failures.is_empty(), "{failures:#?}");
}
