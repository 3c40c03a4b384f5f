//! Semantic checks and compilation of a schema-valid spec document into a [`Provider`].
//!
//! Every error is `(JSON pointer inside the spec, message)`; the loader adds the
//! file and line.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::Provider;
use super::plan::*;
use super::template::{Template, parse_pieces};
use crate::listing::StrictMode;
use crate::results::StructuredMode;
use crate::strict::StrictRules;

type Fail = (String, String);

/// Variables of a tool definition.
pub(crate) const TOOL_VARS: &[&str] = &["name", "description", "schema", "title"];
/// Variables of a tool definition when the spec has a strict section.
pub(crate) const TOOL_VARS_STRICT: &[&str] = &["name", "description", "schema", "title", "strict"];
/// Variables of an answer envelope.
pub(crate) const ENVELOPE_VARS: &[&str] = &["call_id", "name", "content", "attachments"];
/// Variables of a text block.
pub(crate) const TEXT_VARS: &[&str] = &["text"];
/// Variables of a media rule.
pub(crate) const MEDIA_VARS: &[&str] = &[
    "type",
    "text",
    "mime",
    "mime_subtype",
    "data",
    "size",
    "uri",
    "name",
    "title",
    "description",
    "value",
];

fn fail(at: impl Into<String>, msg: impl Into<String>) -> Fail {
    (at.into(), msg.into())
}

fn template(doc: &Value, at: &str, vars: &[&str]) -> Result<Template, Fail> {
    let value = pointer(doc, at).ok_or_else(|| fail(at, "missing"))?;
    Template::compile(value, vars).map_err(|(p, m)| fail(format!("{at}{p}"), m))
}

fn pointer<'v>(doc: &'v Value, at: &str) -> Option<&'v Value> {
    doc.pointer(at)
}

fn str_at<'v>(doc: &'v Value, at: &str) -> Option<&'v str> {
    doc.pointer(at).and_then(Value::as_str)
}

/// Compiles a merged, schema-valid spec document.
pub(crate) fn compile(
    id: &str,
    source: String,
    doc: &Value,
    rules: &BTreeMap<String, Arc<StrictRules>>,
) -> Result<Provider, Fail> {
    let strict = compile_strict(doc, rules)?;
    let tool_vars = if strict.is_some() {
        TOOL_VARS_STRICT
    } else {
        TOOL_VARS
    };
    Ok(Provider {
        id: id.to_owned(),
        title: str_at(doc, "/title").unwrap_or(id).to_owned(),
        description: str_at(doc, "/description").map(str::to_owned),
        source,
        tools: ToolsPlan {
            definition: template(doc, "/tools/definition", tool_vars)?,
            empty_description: str_at(doc, "/tools/missing_description") == Some("empty"),
            omit_blank_description: str_at(doc, "/tools/missing_description") == Some("omit_empty"),
        },
        strict,
        options: compile_options(doc)?,
        calls: compile_calls(doc)?,
        results: compile_results(doc)?,
    })
}

fn compile_strict(
    doc: &Value,
    rules: &BTreeMap<String, Arc<StrictRules>>,
) -> Result<Option<StrictPlan>, Fail> {
    let Some(rules_id) = str_at(doc, "/strict/rules") else {
        return Ok(None);
    };
    let found = rules.get(rules_id).ok_or_else(|| {
        let known: Vec<_> = rules.keys().map(String::as_str).collect();
        fail(
            "/strict/rules",
            format!(
                "no rules file `{rules_id}` (rules/{rules_id}.yaml); known: {}",
                known.join(", ")
            ),
        )
    })?;
    let default = match str_at(doc, "/strict/default").unwrap_or("auto") {
        "true" => StrictMode::On,
        "false" => StrictMode::Off,
        _ => StrictMode::Auto,
    };
    Ok(Some(StrictPlan {
        rules_id: rules_id.to_owned(),
        rules: found.clone(),
        default,
    }))
}

fn compile_options(doc: &Value) -> Result<BTreeMap<String, OptionPlan>, Fail> {
    let mut out = BTreeMap::new();
    let Some(options) = doc.get("options").and_then(Value::as_object) else {
        return Ok(out);
    };
    for (name, option) in options {
        let mut plan = OptionPlan {
            description: option
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            ..Default::default()
        };
        for (value, effect) in option
            .get("values")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let obj = |key: &str| effect.get(key).and_then(Value::as_object).cloned();
            let effect_plan = OptionEffect {
                description: effect
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                merge_last: obj("merge_last"),
                merge_each: obj("merge_each"),
            };
            if effect_plan.merge_last.is_none() && effect_plan.merge_each.is_none() {
                return Err(fail(
                    format!("/options/{name}/values/{value}"),
                    "an option value needs merge_last or merge_each",
                ));
            }
            plan.values.insert(value.clone(), effect_plan);
        }
        out.insert(name.clone(), plan);
    }
    Ok(out)
}

fn field(doc: &Value, at: &str) -> Field {
    match pointer(doc, at) {
        Some(Value::String(path)) => Field {
            path: JsonPath::parse(path),
            optional: false,
        },
        Some(obj) => Field {
            path: JsonPath::parse(obj.get("path").and_then(Value::as_str).unwrap_or_default()),
            optional: obj
                .get("optional")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        },
        None => Field {
            path: JsonPath(Vec::new()),
            optional: true,
        },
    }
}

fn compile_calls(doc: &Value) -> Result<CallsPlan, Fail> {
    let locate = doc
        .pointer("/calls/locate")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|entry| match entry {
            Value::String(path) => Locate {
                when: path.split('/').next().unwrap_or_default().to_owned(),
                list: JsonPath::parse(path),
            },
            obj => Locate {
                when: obj
                    .get("when")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                list: JsonPath::parse(obj.get("list").and_then(Value::as_str).unwrap_or_default()),
            },
        })
        .collect();
    let select = match doc
        .pointer("/calls/select")
        .and_then(Value::as_object)
        .and_then(|m| m.iter().next())
    {
        Some((key, Value::String(key_path))) if key == "has" => {
            Select::Has(JsonPath::parse(key_path))
        }
        Some((key_path, Value::String(want))) => {
            Select::Equals(JsonPath::parse(key_path), want.clone())
        }
        _ => return Err(fail("/calls/select", "expected {key: value} or {has: key}")),
    };
    let args = doc.pointer("/calls/arguments").cloned().unwrap_or_default();
    Ok(CallsPlan {
        locate,
        select,
        id: field(doc, "/calls/id"),
        name: field(doc, "/calls/name"),
        arguments: Field {
            path: JsonPath::parse(args.get("path").and_then(Value::as_str).unwrap_or_default()),
            optional: false,
        },
        arg_format: match args.get("format").and_then(Value::as_str) {
            Some("json_string") => ArgFormat::JsonString,
            Some("any") => ArgFormat::Any,
            _ => ArgFormat::Object,
        },
        missing_args_empty: args.get("missing").and_then(Value::as_str) == Some("empty"),
    })
}

fn compile_results(doc: &Value) -> Result<ResultsPlan, Fail> {
    let content = match str_at(doc, "/results/content") {
        Some("blocks") => ContentForm::Blocks,
        Some("text_or_blocks") => ContentForm::TextOrBlocks,
        _ => ContentForm::Text,
    };
    let structured = match str_at(doc, "/results/structured").unwrap_or("auto") {
        "prefer" => StructuredMode::Prefer,
        "append" => StructuredMode::Append,
        "ignore" => StructuredMode::Ignore,
        _ => StructuredMode::Auto,
    };
    let text_block = match doc.pointer("/results/text") {
        Some(_) => Some(template(doc, "/results/text", TEXT_VARS)?),
        None if content != ContentForm::Text => {
            return Err(fail(
                "/results",
                "`content: blocks` and `text_or_blocks` need a `text` block template",
            ));
        }
        None => None,
    };
    let envelope = template(doc, "/results/envelope", ENVELOPE_VARS)?;
    let error_envelope = match doc.pointer("/results/error/envelope") {
        Some(_) => Some(template(doc, "/results/error/envelope", ENVELOPE_VARS)?),
        None => None,
    };
    let media = compile_media(doc, content)?;
    let plan = ResultsPlan {
        structured,
        content,
        text_block,
        envelope,
        error_envelope,
        error_prefix: str_at(doc, "/results/error/prefix").map(str::to_owned),
        media,
    };
    check_envelopes(&plan)?;
    Ok(plan)
}

fn compile_media(
    doc: &Value,
    content: ContentForm,
) -> Result<BTreeMap<MediaKind, Vec<MediaRule>>, Fail> {
    let mut table = BTreeMap::new();
    for kind in MediaKind::ALL {
        let at = format!("/results/media/{}", kind.key());
        let rules = match doc.pointer(&at) {
            None => continue,
            Some(Value::String(s)) if s == "text" => Vec::new(),
            Some(Value::String(s)) if s == "value" => {
                if content != ContentForm::Text {
                    return Err(fail(
                        at,
                        "`structured: value` needs `content: text` (the value replaces the content)",
                    ));
                }
                vec![MediaRule {
                    accept: None,
                    action: MediaAction::Value,
                }]
            }
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, rule)| compile_rule(rule, &format!("{at}/{i}"), content))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(fail(at, "expected `text` or a list of rules")),
        };
        table.insert(kind, rules);
    }
    Ok(table)
}

fn compile_rule(rule: &Value, at: &str, content: ContentForm) -> Result<MediaRule, Fail> {
    let accept = rule.get("accept").and_then(Value::as_array).map(|list| {
        list.iter()
            .filter_map(Value::as_str)
            .map(str::to_ascii_lowercase)
            .collect()
    });
    let action = if rule.get("block").is_some() {
        if content == ContentForm::Text {
            return Err(fail(
                format!("{at}/block"),
                "`content: text` holds one string, so a media rule cannot produce a block; use `text` or `attach`",
            ));
        }
        MediaAction::Block(
            template(rule, "/block", MEDIA_VARS).map_err(|(p, m)| fail(format!("{at}{p}"), m))?,
        )
    } else if rule.get("attach").is_some() {
        MediaAction::Attach(
            template(rule, "/attach", MEDIA_VARS).map_err(|(p, m)| fail(format!("{at}{p}"), m))?,
        )
    } else {
        let text = rule.get("text").and_then(Value::as_str).unwrap_or_default();
        MediaAction::Text(
            parse_pieces(text, MEDIA_VARS).map_err(|m| fail(format!("{at}/text"), m))?,
        )
    };
    Ok(MediaRule { accept, action })
}

fn check_envelopes(plan: &ResultsPlan) -> Result<(), Fail> {
    let attaches = plan
        .media
        .values()
        .flatten()
        .any(|r| matches!(r.action, MediaAction::Attach(_)));
    for (at, template) in [
        ("/results/envelope", Some(&plan.envelope)),
        ("/results/error/envelope", plan.error_envelope.as_ref()),
    ] {
        let Some(template) = template else { continue };
        if !uses(template, "content") {
            return Err(fail(
                at,
                "the envelope must place ${content}, or results would be lost",
            ));
        }
        if attaches && !uses(template, "attachments") {
            return Err(fail(
                at,
                "media rules `attach` items, so the envelope must place ${attachments}",
            ));
        }
    }
    Ok(())
}

fn uses(template: &Template, var: &str) -> bool {
    match template {
        Template::Var { name, .. } => name == var,
        Template::Text(pieces) => pieces
            .iter()
            .any(|p| matches!(p, super::template::Piece::Var(n) if n.trim_end_matches('?') == var)),
        Template::Object(entries) => entries.iter().any(|(_, t)| uses(t, var)),
        Template::Array(items) => items.iter().any(|t| uses(t, var)),
        Template::Literal(_) => false,
    }
}

/// Deep-merges `over` into `base`: objects merge key by key, `null` removes a key,
/// anything else replaces.
pub(crate) fn deep_merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => merge_maps(b, o),
        (b, o) => *b = o.clone(),
    }
}

fn merge_maps(base: &mut Map<String, Value>, over: &Map<String, Value>) {
    for (k, v) in over {
        if v.is_null() {
            base.shift_remove(k);
        } else if let Some(existing) = base.get_mut(k) {
            deep_merge(existing, v);
        } else {
            base.insert(k.clone(), v.clone());
        }
    }
}
