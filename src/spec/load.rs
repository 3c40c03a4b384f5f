//! Reading spec and rules files: built-in, from a folder, or given directly.
//!
//! Both kinds go through one front end: the file is size-checked and parsed
//! with the same budget ([`Document::parse`]), validated against its JSON
//! Schema (compiled once per process), deserialized into typed structs that
//! deny unknown fields, then checked semantically. Every error names the
//! file, the line where the parser knows it, and the JSON pointer inside
//! the document.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::merge::deep_merge;
use super::yaml::Document;
use super::{Registry, SpecDoc, compile};
use crate::error::{Error, Problem, Result};
use crate::strict::StrictRules;

include!(concat!(env!("OUT_DIR"), "/builtin.rs"));

const SPEC_SCHEMA: &str = include_str!("../../schemas/provider-spec.schema.json");
const RULES_SCHEMA: &str = include_str!("../../schemas/strict-rules.schema.json");

/// The largest spec or rules file read, in bytes (the bundled ones are under 8 KiB).
pub(crate) const MAX_SPEC_BYTES: usize = 1024 * 1024;

/// What a [`SpecFile`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecKind {
    /// A provider spec (`providers/<id>.yaml`).
    Provider,
    /// Strict-mode rules (`providers/rules/<id>.yaml`).
    Rules,
}

/// One spec or rules file's text, with its id and where it came from.
#[derive(Debug, Clone)]
pub struct SpecFile {
    kind: SpecKind,
    id: String,
    file: PathBuf,
    text: String,
}

impl SpecFile {
    /// A provider spec with `id`, read from `file` (named in errors).
    pub fn provider(
        id: impl Into<String>,
        file: impl Into<PathBuf>,
        text: impl Into<String>,
    ) -> Self {
        SpecFile {
            kind: SpecKind::Provider,
            id: id.into(),
            file: file.into(),
            text: text.into(),
        }
    }

    /// Strict-mode rules with `id`, read from `file` (named in errors).
    pub fn rules(id: impl Into<String>, file: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        SpecFile {
            kind: SpecKind::Rules,
            id: id.into(),
            file: file.into(),
            text: text.into(),
        }
    }

    /// What the file holds.
    pub fn kind(&self) -> SpecKind {
        self.kind
    }

    /// The id (a file's stem).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Where the text came from.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The YAML text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

pub(crate) fn builtin_files() -> Vec<SpecFile> {
    BUILTIN
        .iter()
        .map(|&(kind, id, file, text)| {
            let file = PathBuf::from(format!("built-in {file}"));
            if kind == "rules" {
                SpecFile::rules(id, file, text)
            } else {
                SpecFile::provider(id, file, text)
            }
        })
        .collect()
}

pub(crate) fn dir_files(dir: &Path) -> Result<Vec<SpecFile>> {
    let mut out = read_yaml_files(dir, SpecKind::Provider)?;
    let rules = dir.join("rules");
    if rules.is_dir() {
        out.extend(read_yaml_files(&rules, SpecKind::Rules)?);
    }
    Ok(out)
}

fn read_yaml_files(dir: &Path, kind: SpecKind) -> Result<Vec<SpecFile>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(e, dir))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).map_err(|e| Error::io(e, &path))?;
            let text = String::from_utf8(bytes).map_err(|e| {
                let offset = e.utf8_error().valid_up_to();
                Error::spec(format!("not UTF-8 (invalid byte at offset {offset})"))
                    .with_source(e)
                    .with_file(&path)
            })?;
            let id = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_owned();
            Ok(SpecFile {
                kind,
                id,
                file: path,
                text,
            })
        })
        .collect()
}

/// A spec error at `at` (a JSON pointer) in `file`, with the line from the
/// first of `docs` that has the node.
fn error_at(file: &Path, docs: &[&Document<'_>], problem: Problem) -> Error {
    let mut err = Error::spec(problem.message).with_file(file);
    let doc = docs
        .iter()
        .find(|d| d.value.pointer(&problem.path).is_some())
        .or(docs.first());
    if let Some(line) = doc.and_then(|d| d.line(&problem.path)) {
        err = err.with_line(line);
    }
    let path = if problem.path.is_empty() {
        "/".to_owned()
    } else {
        problem.path
    };
    err.with_path(path)
}

/// Parses one file's text with the shared size and parse budget.
fn parse(file: &SpecFile) -> Result<Document<'_>> {
    if file.text.len() > MAX_SPEC_BYTES {
        return Err(Error::spec(format!(
            "the file is {} bytes; specs and rules files are limited to {MAX_SPEC_BYTES} bytes",
            file.text.len()
        ))
        .with_file(&file.file));
    }
    Document::parse(&file.text).map_err(|e| {
        let mut err = Error::spec(format!("invalid YAML: {}", e.message)).with_file(&file.file);
        if let Some(line) = e.line {
            err = err.with_line(line);
        }
        err
    })
}

/// The two file formats and their JSON Schemas, compiled once per process.
#[derive(Clone, Copy)]
enum Format {
    Provider,
    Rules,
}

impl Format {
    fn validator(self) -> &'static jsonschema::Validator {
        static PROVIDER: LazyLock<jsonschema::Validator> =
            LazyLock::new(|| compile_schema(SPEC_SCHEMA, true));
        static RULES: LazyLock<jsonschema::Validator> =
            LazyLock::new(|| compile_schema(RULES_SCHEMA, false));
        match self {
            Format::Provider => &PROVIDER,
            Format::Rules => &RULES,
        }
    }
}

/// Compiles a bundled schema. With `skip_templates`, the `*_template`
/// definitions accept any value: the schema describes templates for editors,
/// but the compiler checks them with a better message (the unknown variable
/// and the ones known there) than a schema can give ("no branch matched").
fn compile_schema(text: &str, skip_templates: bool) -> jsonschema::Validator {
    // The crate's tests load both schemas; a failure here is a build defect.
    let mut schema: Value = serde_json::from_str(text).expect("the bundled schemas are valid JSON");
    if skip_templates && let Some(Value::Object(defs)) = schema.get_mut("$defs") {
        for (name, def) in defs.iter_mut() {
            if name.ends_with("_template") {
                *def = Value::Bool(true);
            }
        }
    }
    jsonschema::validator_for(&schema).expect("the bundled schemas are valid JSON Schema")
}

/// Validates `value` against `format`'s schema, then deserializes it.
///
/// The deepest schema violation is reported (the most specific one), at its
/// JSON pointer; a deserialization error names its path the same way. The
/// path is tracked only to report an error: a value that fails to
/// deserialize is made `again` and deserialized once more, keeping it.
fn typed<T: DeserializeOwned>(
    format: Format,
    file: &Path,
    docs: &[&Document<'_>],
    value: Value,
    again: impl FnOnce() -> Result<Value>,
) -> Result<T> {
    let validator = format.validator();
    let errors: Vec<_> = match validator.is_valid(&value) {
        true => Vec::new(),
        false => validator.iter_errors(&value).collect(),
    };
    if let Some(deepest) = errors
        .iter()
        .map(|e| e.instance_path().as_str().len())
        .max()
    {
        // Every violation at the most specific place: a missing key and an
        // unexpected one at the same object say together what was meant.
        let at = errors
            .iter()
            .find(|e| e.instance_path().as_str().len() == deepest)
            .map(|e| e.instance_path().as_str().to_owned())
            .unwrap_or_default();
        let mut messages: Vec<String> = Vec::new();
        for err in errors.iter().filter(|e| e.instance_path().as_str() == at) {
            let message = err.to_string();
            if !messages.contains(&message) {
                messages.push(message);
            }
        }
        return Err(error_at(file, docs, Problem::at(at, messages.join("; "))));
    }
    if let Ok(typed) = T::deserialize(value) {
        return Ok(typed);
    }
    let err = match serde_path_to_error::deserialize::<_, T>(again()?) {
        Ok(typed) => return Ok(typed),
        Err(err) => err,
    };
    let at = crate::json::pointer_of(err.path());
    let message = err.inner().to_string();
    Err(error_at(file, docs, Problem::at(at, message)).with_source(err.into_inner()))
}

impl StrictRules {
    /// Loads rules from YAML text, as a [`Registry`](crate::Registry) loads a
    /// rules file: with the same size and parse budget, validated against
    /// `schemas/strict-rules.schema.json`, typed, then checked semantically.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Spec`](crate::ErrorKind::Spec) naming the line and the
    /// path inside the rules: a YAML error, a schema violation, or a semantic
    /// problem (a keyword in two classes, an essential keyword not kept, a
    /// kept keyword the converter cannot rewrite, a value rule for a keyword
    /// that is not kept, a duplicate format, a zero limit).
    pub fn from_yaml_str(text: &str) -> crate::Result<StrictRules> {
        rules_from_file(&SpecFile::rules("rules", "strict rules", text))
    }
}

/// Loads one rules file: parsed, validated, typed and checked.
fn rules_from_file(file: &SpecFile) -> Result<StrictRules> {
    let doc = parse(file)?;
    rules_from_doc(&file.file, &doc)
}

fn rules_from_doc(file: &Path, doc: &Document<'_>) -> Result<StrictRules> {
    let again = || Ok(doc.value.clone());
    let rules: StrictRules = typed(Format::Rules, file, &[doc], doc.value.clone(), again)?;
    rules.check().map_err(|p| error_at(file, &[doc], p))?;
    Ok(rules)
}

struct Parsed<'f> {
    file: &'f Path,
    doc: Document<'f>,
}

pub(crate) fn load(files: Vec<SpecFile>) -> Result<Registry> {
    let mut specs: BTreeMap<&str, Parsed<'_>> = BTreeMap::new();
    let mut rules_docs: BTreeMap<&str, Parsed<'_>> = BTreeMap::new();
    for file in &files {
        let doc = parse(file)?;
        let parsed = Parsed {
            file: &file.file,
            doc,
        };
        match file.kind {
            SpecKind::Provider => specs.insert(&file.id, parsed),
            SpecKind::Rules => rules_docs.insert(&file.id, parsed),
        };
    }
    let mut registry = Registry::default();
    for (&id, parsed) in &rules_docs {
        let rules = rules_from_doc(parsed.file, &parsed.doc)?;
        registry.rules.insert(id.to_owned(), Arc::new(rules));
    }
    for (&id, parsed) in &specs {
        let merged_spec = || -> Result<Value> {
            let mut merged = resolve_extends(id, &specs)?;
            expand_option_results(&mut merged);
            Ok(merged)
        };
        let docs = chain_docs(id, &specs);
        let doc: SpecDoc = typed(
            Format::Provider,
            parsed.file,
            &docs,
            merged_spec()?,
            merged_spec,
        )?;
        let source = parsed.file.display().to_string();
        let provider = compile(id, source, doc, &registry.rules)
            .map_err(|p| error_at(parsed.file, &docs, p))?;
        registry.providers.insert(id.to_owned(), Arc::new(provider));
    }
    Ok(registry)
}

/// The documents of `id` and the specs it extends, nearest first.
fn chain_docs<'a, 'f>(id: &str, specs: &'a BTreeMap<&str, Parsed<'f>>) -> Vec<&'a Document<'f>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut next = Some(id.to_owned());
    while let Some(cur) = next.take() {
        let Some(parsed) = specs.get(cur.as_str()).filter(|_| seen.insert(cur.clone())) else {
            break;
        };
        out.push(&parsed.doc);
        next = parsed
            .doc
            .value
            .get("extends")
            .and_then(Value::as_str)
            .map(str::to_owned);
    }
    out
}

/// Replaces each option value's `results` override with the spec's `results`
/// section with the override deep-merged in, so that it compiles (and is
/// checked) as a whole section of its own.
fn expand_option_results(spec: &mut Value) {
    let Some(base) = spec.get("results").filter(|r| r.is_object()).cloned() else {
        return;
    };
    let Some(Value::Object(options)) = spec.get_mut("options") else {
        return;
    };
    for option in options.values_mut() {
        let Some(Value::Object(values)) = option.get_mut("values") else {
            continue;
        };
        for value in values.values_mut() {
            if let Some(over) = value.get_mut("results").filter(|r| r.is_object()) {
                let mut merged = base.clone();
                deep_merge(&mut merged, over);
                *over = merged;
            }
        }
    }
}

/// The document of `id` deep-merged over the specs it extends.
fn resolve_extends(id: &str, specs: &BTreeMap<&str, Parsed<'_>>) -> Result<Value> {
    let mut chain: Vec<&Parsed> = Vec::new();
    let mut seen = vec![id.to_owned()];
    let mut cur = &specs[id];
    loop {
        chain.push(cur);
        let Some(base) = cur.doc.value.get("extends") else {
            break;
        };
        let fail =
            |message: String| error_at(cur.file, &[&cur.doc], Problem::at("/extends", message));
        let Some(base_id) = base.as_str() else {
            return Err(fail("`extends` must be a spec id".into()));
        };
        if seen.iter().any(|s| s == base_id) {
            return Err(fail(format!(
                "`extends` makes a cycle: {} -> {base_id}",
                seen.join(" -> ")
            )));
        }
        cur = specs
            .get(base_id)
            .ok_or_else(|| fail(format!("no spec `{base_id}` to extend")))?;
        seen.push(base_id.to_owned());
    }
    // The deepest base merged into nothing is a copy of it without its
    // top-level nulls (a copy keeps each map's hashes; inserting rehashes).
    let mut layers = chain.iter().rev();
    let mut merged = match layers.next().map(|base| base.doc.value.clone()) {
        Some(Value::Object(mut base)) => {
            base.retain(|_, v| !v.is_null());
            Value::Object(base)
        }
        Some(other) => other,
        None => Value::Object(Default::default()),
    };
    for parsed in layers {
        deep_merge(&mut merged, &parsed.doc.value);
    }
    if let Value::Object(map) = &mut merged {
        map.shift_remove("extends");
    }
    Ok(merged)
}
