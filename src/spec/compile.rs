//! Semantic checks and compilation of a typed spec document into a [`Provider`].
//!
//! Every error is a [`Problem`] naming the JSON pointer inside the spec; the
//! loader adds the file and line.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::doc::*;
use super::plan::*;
use super::template::{Piece, Template, parse_pieces};
use super::{Problem, Provider};
use crate::json::pointer_child;
use crate::strict::StrictRules;

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
/// Variables of a structured-content rule.
pub(crate) const STRUCTURED_VARS: &[&str] = &["value"];

fn template(value: &Value, at: &str, vars: &[&str]) -> Result<Template, Problem> {
    Template::compile(value, vars).map_err(|p| Problem::at(format!("{at}{}", p.path), p.message))
}

/// Compiles a merged, schema-valid, typed spec document.
pub(crate) fn compile(
    id: &str,
    source: String,
    doc: SpecDoc,
    rules: &BTreeMap<String, Arc<StrictRules>>,
) -> Result<Provider, Problem> {
    let strict = compile_strict(doc.strict.as_ref(), rules)?;
    let tool_vars = if strict.is_some() {
        TOOL_VARS_STRICT
    } else {
        TOOL_VARS
    };
    Ok(Provider {
        id: id.to_owned(),
        title: doc.title,
        description: doc.description,
        source,
        tools: ToolsPlan {
            definition: template(&doc.tools.definition, "/tools/definition", tool_vars)?,
            missing_description: doc.tools.missing_description,
        },
        strict,
        options: compile_options(doc.options)?,
        calls: compile_calls(doc.calls),
        results: compile_results(doc.results)?,
        stream: doc.stream.map(crate::stream::plan::compile).transpose()?,
    })
}

fn compile_strict(
    doc: Option<&StrictDoc>,
    rules: &BTreeMap<String, Arc<StrictRules>>,
) -> Result<Option<StrictPlan>, Problem> {
    let Some(doc) = doc else {
        return Ok(None);
    };
    let found = rules.get(&doc.rules).ok_or_else(|| {
        let known: Vec<_> = rules.keys().map(String::as_str).collect();
        Problem::at(
            "/strict/rules",
            format!(
                "no rules file `{0}` (rules/{0}.yaml); known: {1}",
                doc.rules,
                known.join(", ")
            ),
        )
    })?;
    Ok(Some(StrictPlan {
        rules_id: doc.rules.clone(),
        rules: found.clone(),
        default: doc.default.0,
    }))
}

fn compile_options(
    options: BTreeMap<String, OptionDoc>,
) -> Result<BTreeMap<String, OptionPlan>, Problem> {
    let mut out = BTreeMap::new();
    for (name, option) in options {
        let mut plan = OptionPlan {
            description: option.description,
            ..Default::default()
        };
        for (value, effect) in option.values {
            if effect.merge_last.is_none() && effect.merge_each.is_none() {
                let at = pointer_child(
                    &pointer_child(&pointer_child("/options", &name), "values"),
                    &value,
                );
                return Err(Problem::at(
                    at,
                    "an option value needs merge_last or merge_each",
                ));
            }
            plan.values.insert(
                value,
                OptionEffect {
                    description: effect.description,
                    merge_last: effect.merge_last,
                    merge_each: effect.merge_each,
                },
            );
        }
        out.insert(name, plan);
    }
    Ok(out)
}

fn field(doc: FieldDoc) -> Field {
    match doc {
        FieldDoc::Path(path) => Field {
            path: JsonPath::parse(&path),
            optional: false,
        },
        FieldDoc::Full { path, optional } => Field {
            path: JsonPath::parse(&path),
            optional,
        },
    }
}

fn compile_calls(doc: CallsDoc) -> CallsPlan {
    let locate = doc
        .locate
        .into_iter()
        .map(|entry| match entry {
            LocateDoc::Path(path) => Locate {
                when: path.split('/').next().unwrap_or_default().to_owned(),
                list: JsonPath::parse(&path),
            },
            LocateDoc::When { when, list } => Locate {
                when,
                list: JsonPath::parse(&list),
            },
        })
        .collect();
    CallsPlan {
        locate,
        select: Select {
            path: JsonPath::parse(&doc.select.path),
            equals: doc.select.equals,
        },
        id: field(doc.id),
        name: field(doc.name),
        arguments: Field {
            path: JsonPath::parse(&doc.arguments.path),
            optional: false,
        },
        arg_format: doc.arguments.format,
        missing_arguments: doc.arguments.missing,
    }
}

fn compile_results(doc: ResultsDoc) -> Result<ResultsPlan, Problem> {
    let content = doc.content;
    let text_block = match &doc.text_block {
        Some(value) => Some(template(value, "/results/text_block", TEXT_VARS)?),
        None if content != ContentForm::String => {
            return Err(Problem::at(
                "/results",
                "`content: blocks` and `string_or_blocks` need a `text_block` template",
            ));
        }
        None => None,
    };
    let envelope = template(&doc.envelope, "/results/envelope", ENVELOPE_VARS)?;
    let error_envelope = match &doc.error.envelope {
        Some(value) => Some(template(value, "/results/error/envelope", ENVELOPE_VARS)?),
        None => None,
    };
    let plan = ResultsPlan {
        structured: compile_structured(doc.structured_content, content)?,
        content,
        text_block,
        envelope,
        error_envelope,
        error_prefix: doc.error.prefix,
        media: compile_media(doc.media, content)?,
    };
    check_envelopes(&plan)?;
    Ok(plan)
}

fn compile_structured(doc: StructuredDoc, content: ContentForm) -> Result<StructuredPlan, Problem> {
    let at = "/results/structured_content/render";
    let render = match doc.render {
        RenderDoc::Keyword(RenderKeyword::JsonText) => StructuredRender::JsonText,
        RenderDoc::Keyword(RenderKeyword::Value) if content != ContentForm::String => {
            return Err(Problem::at(
                at,
                "`render: value` needs `content: string` (the value replaces the content)",
            ));
        }
        RenderDoc::Keyword(RenderKeyword::Value) => StructuredRender::Value,
        RenderDoc::Rules(rules) => StructuredRender::Rules(
            rules
                .into_iter()
                .enumerate()
                .map(|(i, rule)| {
                    let at = pointer_child(at, &i.to_string());
                    if rule.accept.is_some() {
                        return Err(Problem::at(
                            pointer_child(&at, "accept"),
                            "a structured value has no MIME type; `accept` applies to media rows only",
                        ));
                    }
                    compile_rule(rule, &at, content, STRUCTURED_VARS)
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    Ok(StructuredPlan {
        mode: doc.use_,
        render,
    })
}

fn compile_media(
    doc: MediaDoc,
    content: ContentForm,
) -> Result<BTreeMap<MediaKind, Vec<MediaRule>>, Problem> {
    let rows = [
        (MediaKind::Image, doc.image),
        (MediaKind::Audio, doc.audio),
        (MediaKind::ResourceLink, doc.resource_link),
        (MediaKind::ResourceText, doc.resource_text),
        (MediaKind::ResourceBlob, doc.resource_blob),
        (MediaKind::Unknown, doc.unknown),
    ];
    let mut table = BTreeMap::new();
    for (kind, row) in rows {
        let at = pointer_child("/results/media", kind.key());
        let rules = match row {
            None => continue,
            Some(RowDoc::Placeholder(_)) => Vec::new(),
            Some(RowDoc::Rules(rules)) => rules
                .into_iter()
                .enumerate()
                .map(|(i, rule)| {
                    compile_rule(
                        rule,
                        &pointer_child(&at, &i.to_string()),
                        content,
                        MEDIA_VARS,
                    )
                })
                .collect::<Result<_, _>>()?,
        };
        table.insert(kind, rules);
    }
    Ok(table)
}

fn compile_rule(
    rule: RuleDoc,
    at: &str,
    content: ContentForm,
    vars: &[&str],
) -> Result<MediaRule, Problem> {
    let accept = rule
        .accept
        .map(|list| list.iter().map(|m| m.to_ascii_lowercase()).collect());
    let action = match (rule.block, rule.attach, rule.as_text) {
        (Some(block), None, None) => {
            if content == ContentForm::String {
                return Err(Problem::at(
                    pointer_child(at, "block"),
                    "`content: string` holds one string, so a rule cannot produce a block; use `as_text` or `attach`",
                ));
            }
            MediaAction::Block(template(&block, &pointer_child(at, "block"), vars)?)
        }
        (None, Some(attach), None) => {
            MediaAction::Attach(template(&attach, &pointer_child(at, "attach"), vars)?)
        }
        (None, None, Some(text)) => MediaAction::Text(
            parse_pieces(&text, vars).map_err(|m| Problem::at(pointer_child(at, "as_text"), m))?,
        ),
        _ => {
            return Err(Problem::at(
                at,
                "a rule produces exactly one of `block`, `attach` and `as_text`",
            ));
        }
    };
    Ok(MediaRule { accept, action })
}

fn check_envelopes(plan: &ResultsPlan) -> Result<(), Problem> {
    let structured_rules = match &plan.structured.render {
        StructuredRender::Rules(rules) => rules.as_slice(),
        _ => &[],
    };
    let attaches = plan
        .media
        .values()
        .flatten()
        .chain(structured_rules)
        .any(|r| matches!(r.action, MediaAction::Attach(_)));
    for (at, template) in [
        ("/results/envelope", Some(&plan.envelope)),
        ("/results/error/envelope", plan.error_envelope.as_ref()),
    ] {
        let Some(template) = template else { continue };
        if !uses(template, "content") {
            return Err(Problem::at(
                at,
                "the envelope must place ${content}, or results would be lost",
            ));
        }
        if attaches && !uses(template, "attachments") {
            return Err(Problem::at(
                at,
                "media rules `attach` items, so the envelope must place ${attachments}",
            ));
        }
    }
    Ok(())
}

/// Whether `template` refers to `var` anywhere.
pub(crate) fn uses(template: &Template, var: &str) -> bool {
    match template {
        Template::Var { name, .. } => name == var,
        Template::Text(pieces) => pieces
            .iter()
            .any(|p| matches!(p, Piece::Var { name, .. } if name == var)),
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

/// [`deep_merge`] of an object into a value.
pub(crate) fn merge_object(target: &mut Value, extra: &Map<String, Value>) {
    match target {
        Value::Object(map) => merge_maps(map, extra),
        other => *other = Value::Object(extra.clone()),
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
