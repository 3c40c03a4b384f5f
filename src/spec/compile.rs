//! Semantic checks and compilation of a typed spec document into a [`Provider`].
//!
//! Every error is a [`Problem`] naming the JSON pointer inside the spec; the
//! loader adds the file and line.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::Provider;
use super::doc::*;
use super::plan::*;
use super::template::{Piece, Template, parse_pieces};
use crate::error::Problem;
use crate::json::pointer_child;
use crate::strict::StrictRules;
use crate::strict::rules::Mode;

/// Variables of a tool definition.
pub(crate) const TOOL_VARS: &[&str] = &["name", "description", "schema", "title"];
/// Variables of a tool definition when the spec has a strict section.
pub(crate) const TOOL_VARS_STRICT: &[&str] = &["name", "description", "schema", "title", "strict"];
/// Variables of a client search tool's definition.
pub(crate) const SEARCH_TOOL_VARS: &[&str] = &["name", "description", "schema"];
/// Variables of a search answer.
pub(crate) const SEARCH_ANSWER_VARS: &[&str] = &["call_id", "name", "tools", "references", "text"];
/// Variables of a tool reference.
pub(crate) const REFERENCE_VARS: &[&str] = &["name"];
/// Variables of a namespace definition.
pub(crate) const NAMESPACE_VARS: &[&str] = &["name", "description", "tools"];
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
    "blob_text",
    "file_name",
    "document_name",
];
/// Variables of a structured-content rule.
pub(crate) const STRUCTURED_VARS: &[&str] = &["value"];
/// Variables of the follow-up text item.
pub(crate) const FOLLOW_UP_TEXT_VARS: &[&str] = &["text"];
/// Variables of the follow-up envelope.
pub(crate) const FOLLOW_UP_ENVELOPE_VARS: &[&str] = &["items"];

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
    let schema = match &doc.schema {
        Some(section) => Some(compile_schema(section, rules)?),
        None => None,
    };
    let tool_choice = super::sampling::compile_choices(doc.tool_choice, "/tool_choice")?;
    let tool_vars = if strict.is_some() {
        TOOL_VARS_STRICT
    } else {
        TOOL_VARS
    };
    let options = compile_options(doc.options)?;
    let results = compile_results(doc.results, "/results")?;
    let sampling = match doc.sampling {
        Some(section) => {
            let mut plans = vec![&results];
            plans.extend(
                options
                    .values()
                    .flat_map(|o| o.values.values())
                    .filter_map(|e| e.results.as_deref()),
            );
            Some(super::sampling::compile(section, &plans, &tool_choice)?)
        }
        None => None,
    };
    Ok(Provider {
        id: id.to_owned(),
        title: doc.title,
        description: doc.description,
        source,
        sources: doc.sources,
        tools: ToolsPlan {
            definition: template(&doc.tools.definition, "/tools/definition", tool_vars)?,
            missing_description: doc.tools.missing_description,
        },
        schema,
        strict,
        tool_choice,
        options,
        calls: compile_calls(doc.calls),
        results,
        stream: doc.stream.map(super::stream::compile).transpose()?,
        sampling,
        search: doc.search.map(compile_search).transpose()?,
    })
}

/// The rules file `id`, which must be in `mode` (the section at `at` names it).
fn find_rules(
    id: &str,
    mode: Mode,
    at: &str,
    rules: &BTreeMap<String, Arc<StrictRules>>,
) -> Result<Arc<StrictRules>, Problem> {
    let found = rules.get(id).ok_or_else(|| {
        let known: Vec<_> = rules.keys().map(String::as_str).collect();
        Problem::at(
            at,
            format!(
                "no rules file `{id}` (rules/{id}.yaml); known: {}",
                known.join(", ")
            ),
        )
    })?;
    if found.mode != mode {
        let (section, wanted) = match mode {
            Mode::Strict => ("strict", "strict"),
            Mode::Subset => ("schema", "subset"),
        };
        return Err(Problem::at(
            at,
            format!("rules `{id}` are not `mode: {wanted}`, which the `{section}:` section takes"),
        ));
    }
    Ok(found.clone())
}

fn compile_schema(
    doc: &SchemaDoc,
    rules: &BTreeMap<String, Arc<StrictRules>>,
) -> Result<SchemaPlan, Problem> {
    Ok(SchemaPlan {
        rules_id: doc.rules.clone(),
        rules: find_rules(&doc.rules, Mode::Subset, "/schema/rules", rules)?,
    })
}

fn compile_strict(
    doc: Option<&StrictDoc>,
    rules: &BTreeMap<String, Arc<StrictRules>>,
) -> Result<Option<StrictPlan>, Problem> {
    let Some(doc) = doc else {
        return Ok(None);
    };
    let found = find_rules(&doc.rules, Mode::Strict, "/strict/rules", rules)?;
    Ok(Some(StrictPlan {
        rules_id: doc.rules.clone(),
        rules: found,
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
            let at = pointer_child(
                &pointer_child(&pointer_child("/options", &name), "values"),
                &value,
            );
            if effect.merge_last.is_none()
                && effect.merge_each.is_none()
                && effect.results.is_none()
            {
                return Err(Problem::at(
                    at,
                    "an option value needs merge_last, merge_each or results",
                ));
            }
            let results = match effect.results {
                Some(doc) => Some(Arc::new(compile_results(
                    doc,
                    &pointer_child(&at, "results"),
                )?)),
                None => None,
            };
            plan.values.insert(
                value,
                OptionEffect {
                    description: effect.description,
                    merge_last: effect.merge_last,
                    merge_each: effect.merge_each,
                    results,
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

fn compile_search(doc: SearchDoc) -> Result<SearchPlan, Problem> {
    let client = match doc.client {
        Some(client) => {
            let reference = client
                .reference
                .as_ref()
                .map(|r| template(r, "/search/client/reference", REFERENCE_VARS))
                .transpose()?;
            let answer = template(&client.answer, "/search/client/answer", SEARCH_ANSWER_VARS)?;
            if reference.is_none() && answer.uses("references") {
                return Err(Problem::at(
                    "/search/client/answer",
                    "the answer uses `${references}`, which needs a `reference` template",
                ));
            }
            Some(ClientSearchPlan {
                tool: client
                    .tool
                    .as_ref()
                    .map(|t| template(t, "/search/client/tool", SEARCH_TOOL_VARS))
                    .transpose()?,
                calls: client.calls.map(|calls| SearchCallsPlan {
                    select: Select {
                        path: JsonPath::parse(&calls.select.path),
                        equals: calls.select.equals,
                    },
                    id: field(calls.id),
                    arguments: Field {
                        path: JsonPath::parse(&calls.arguments.path),
                        optional: false,
                    },
                    arg_format: calls.arguments.format,
                }),
                answer,
                reference,
            })
        }
        None => None,
    };
    Ok(SearchPlan {
        defer: doc.defer,
        server_tools: doc.server_tools,
        client,
        namespace: doc
            .namespace
            .map(|n| {
                template(
                    &n.definition,
                    "/search/namespace/definition",
                    NAMESPACE_VARS,
                )
            })
            .transpose()?,
    })
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

/// Compiles a results section found at `at` (`/results`, or an option value's override).
fn compile_results(doc: ResultsDoc, at: &str) -> Result<ResultsPlan, Problem> {
    let content = doc.content;
    let child = |key: &str| pointer_child(at, key);
    let text_block = match &doc.text_block {
        Some(value) => Some(template(value, &child("text_block"), TEXT_VARS)?),
        None if content != ContentForm::String => {
            return Err(Problem::at(
                at,
                "`content: blocks` and `string_or_blocks` need a `text_block` template",
            ));
        }
        None => None,
    };
    let envelope = template(&doc.envelope, &child("envelope"), ENVELOPE_VARS)?;
    let error_envelope = match &doc.error.envelope {
        Some(value) => Some(template(
            value,
            &pointer_child(&child("error"), "envelope"),
            ENVELOPE_VARS,
        )?),
        None => None,
    };
    let follow_up = match &doc.follow_up {
        Some(f) => Some(compile_follow_up(f, &child("follow_up"))?),
        None => None,
    };
    let request_limits = doc
        .request_limits
        .into_iter()
        .enumerate()
        .map(|(i, limit)| {
            if limit.max_bytes.is_none() && limit.max_items.is_none() {
                return Err(Problem::at(
                    pointer_child(&child("request_limits"), &i.to_string()),
                    "a request limit needs max_bytes or max_items",
                ));
            }
            Ok(RequestLimit {
                accept: lower_case(limit.accept),
                max_bytes: limit.max_bytes,
                max_items: limit.max_items,
            })
        })
        .collect::<Result<_, _>>()?;
    let plan = ResultsPlan {
        structured: compile_structured(doc.structured_content, content, at)?,
        content,
        text_block,
        envelope,
        error_envelope,
        error_prefix: doc.error.prefix,
        media: compile_media(doc.media, content, at)?,
        follow_up,
        request_limits,
    };
    check_envelopes(&plan, at)?;
    Ok(plan)
}

fn compile_follow_up(doc: &FollowUpDoc, at: &str) -> Result<FollowUpPlan, Problem> {
    let envelope = match &doc.envelope {
        Some(value) => {
            let at = pointer_child(at, "envelope");
            let envelope = template(value, &at, FOLLOW_UP_ENVELOPE_VARS)?;
            if !uses(&envelope, "items") {
                return Err(Problem::at(
                    at,
                    "the follow-up envelope must place ${items}, or follow-ups would be lost",
                ));
            }
            Some(envelope)
        }
        None => None,
    };
    Ok(FollowUpPlan {
        text: template(&doc.text, &pointer_child(at, "text"), FOLLOW_UP_TEXT_VARS)?,
        envelope,
    })
}

fn lower_case(accept: Option<Vec<String>>) -> Option<Vec<String>> {
    accept.map(|list| list.iter().map(|m| m.to_ascii_lowercase()).collect())
}

fn compile_structured(
    doc: StructuredDoc,
    content: ContentForm,
    results_at: &str,
) -> Result<StructuredPlan, Problem> {
    let at = pointer_child(&pointer_child(results_at, "structured_content"), "render");
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
                    let at = pointer_child(&at, &i.to_string());
                    if rule.accept.is_some() || rule.max_bytes.is_some() {
                        return Err(Problem::at(
                            at,
                            "a structured value has no MIME type or payload; `accept` and `max_bytes` apply to media rows only",
                        ));
                    }
                    if rule.follow_up.is_some() {
                        return Err(Problem::at(
                            pointer_child(&at, "follow_up"),
                            "a structured value is part of the answer; `follow_up` applies to media rows only",
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
    results_at: &str,
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
        let at = pointer_child(&pointer_child(results_at, "media"), kind.key());
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

pub(crate) fn compile_rule(
    rule: RuleDoc,
    at: &str,
    content: ContentForm,
    vars: &[&str],
) -> Result<MediaRule, Problem> {
    let accept = lower_case(rule.accept);
    let action = match (rule.block, rule.attach, rule.as_text, rule.follow_up) {
        (Some(block), None, None, None) => {
            if content == ContentForm::String {
                return Err(Problem::at(
                    pointer_child(at, "block"),
                    "`content: string` holds one string, so a rule cannot produce a block; use `as_text`, `attach` or `follow_up`",
                ));
            }
            MediaAction::Block(template(&block, &pointer_child(at, "block"), vars)?)
        }
        (None, Some(attach), None, None) => {
            MediaAction::Attach(template(&attach, &pointer_child(at, "attach"), vars)?)
        }
        (None, None, Some(text), None) => MediaAction::Text(
            parse_pieces(&text, vars).map_err(|m| Problem::at(pointer_child(at, "as_text"), m))?,
        ),
        (None, None, None, Some(item)) => {
            MediaAction::FollowUp(template(&item, &pointer_child(at, "follow_up"), vars)?)
        }
        _ => {
            return Err(Problem::at(
                at,
                "a rule produces exactly one of `block`, `attach`, `follow_up` and `as_text`",
            ));
        }
    };
    Ok(MediaRule {
        accept,
        action,
        max_bytes: rule.max_bytes,
    })
}

fn check_envelopes(plan: &ResultsPlan, at: &str) -> Result<(), Problem> {
    let structured_rules = match &plan.structured.render {
        StructuredRender::Rules(rules) => rules.as_slice(),
        _ => &[],
    };
    let rules = || plan.media.values().flatten().chain(structured_rules);
    let attaches = rules().any(|r| matches!(r.action, MediaAction::Attach(_)));
    if plan.follow_up.is_none() && rules().any(|r| matches!(r.action, MediaAction::FollowUp(_))) {
        return Err(Problem::at(
            pointer_child(at, "follow_up"),
            "media rules send `follow_up` items, so the results need a `follow_up` section (its `text` item introduces them)",
        ));
    }
    let error_at = pointer_child(&pointer_child(at, "error"), "envelope");
    for (at, template) in [
        (pointer_child(at, "envelope"), Some(&plan.envelope)),
        (error_at, plan.error_envelope.as_ref()),
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
