//! The `sampling:` section of a spec, compiled: how an MCP
//! `sampling/createMessage` request becomes the provider's request body and
//! how its response is read back. The engine that runs it is
//! [`crate::sampling`].
//!
//! Checked here, at load: every template's variables, that nothing a request
//! carries can be lost without the spec saying so (`messages` and
//! `max_tokens` are placed; `system`, `temperature`, `stop_sequences` and
//! `metadata` are placed or listed in `ignore`), that each place a template
//! fills exists (`${tool_calls}` when tool uses go there, `${attachments}`
//! when media rules attach), and that the follow-ups of every results
//! section (the spec's and each option's) have somewhere to go.

use std::collections::BTreeMap;

use serde_json::Value;

use super::compile::uses;
use super::doc::*;
pub(crate) use super::doc::{
    ChoiceMode, FollowUpPlacement, ResultsPlacement, SamplingParam, ToolUseInto,
};
use super::plan::{JsonPath, MediaRule, ResultsPlan};
use super::template::Template;
use crate::error::Problem;
use crate::json::pointer_child;
use crate::mcp::StopReason;

/// Variables of the request body.
pub(crate) const REQUEST_VARS: &[&str] = &[
    "model",
    "system",
    "messages",
    "max_tokens",
    "temperature",
    "stop_sequences",
    "metadata",
    "tools",
    "tool_choice",
];
/// Variables of the system prompt's value or message.
pub(crate) const SYSTEM_VARS: &[&str] = &["text"];
/// Variables of a message envelope.
pub(crate) const MESSAGE_VARS: &[&str] = &["content", "attachments", "tool_calls"];
/// Variables of a message's text block.
pub(crate) const TEXT_VARS: &[&str] = &["text"];
/// Variables of a message's media rules.
pub(crate) const MEDIA_VARS: &[&str] = &["type", "mime", "mime_subtype", "data", "size"];
/// Variables of a tool use, besides those its `meta` names.
pub(crate) const TOOL_USE_VARS: &[&str] = &["id", "name", "input", "arguments"];
/// Variables of the tools' wrapper.
pub(crate) const WRAP_VARS: &[&str] = &["tools", "tool_choice"];

/// The compiled `sampling:` section.
#[derive(Debug, Clone)]
pub(crate) struct SamplingPlan {
    pub request: Template,
    /// Fields the request drops with a warning.
    pub ignore: Vec<SamplingParam>,
    /// Fields the request (or the tools' wrapper) places.
    pub placed: Vec<SamplingParam>,
    pub system: SystemPlacement,
    pub user: RolePlan,
    pub assistant: RolePlan,
    pub tool_use: ToolUsePlan,
    pub tool_results: ResultsPlacement,
    pub follow_ups: FollowUpPlacement,
    pub merge_consecutive: bool,
    pub call_ids: Option<CallIds>,
    pub tools_wrap: Option<Template>,
    /// Whether the wrapper places `${tool_choice}` (else the request does).
    pub tools_wrap_places_choice: bool,
    pub tools_strict: StrictMode,
    pub tools_required_by_history: bool,
    pub tool_choice: BTreeMap<ChoiceMode, Choice>,
    pub response: ResponsePlan,
}

/// Where the system prompt goes.
#[derive(Debug, Clone)]
pub(crate) enum SystemPlacement {
    /// `${system}`: the text, or this template of it.
    Value(Option<Template>),
    /// A message put before the conversation.
    Message(Template),
}

/// How the messages of one role are shaped.
#[derive(Debug, Clone)]
pub(crate) struct RolePlan {
    pub content: ContentForm,
    pub text_block: Option<Template>,
    pub envelope: Template,
    /// Envelope variables read from the message's `_meta`: the variable,
    /// the `_meta` key and the value when the key is absent.
    pub meta: Vec<MetaVar>,
    /// `None`: the role's messages carry no images.
    pub image: Option<Vec<MediaRule>>,
    /// `None`: the role's messages carry no audio.
    pub audio: Option<Vec<MediaRule>>,
}

/// An envelope variable read from a message's `_meta`.
#[derive(Debug, Clone)]
pub(crate) struct MetaVar {
    pub var: String,
    pub key: String,
    pub default: Option<Value>,
}

/// The form of call ids the provider takes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallIds {
    pub alphabet: IdAlphabet,
    pub length: Option<usize>,
    pub max_length: Option<usize>,
}

/// How a tool use is written.
#[derive(Debug, Clone)]
pub(crate) struct ToolUsePlan {
    pub into: ToolUseInto,
    pub item: Template,
    /// Template variable and the `_meta` key it is read from.
    pub meta: Vec<(String, String)>,
}

/// What a tool choice mode becomes.
#[derive(Debug, Clone)]
pub(crate) enum Choice {
    /// `${tool_choice}` is this.
    Value(Template),
    /// No tool choice is sent: the provider's default.
    Unsent,
    /// Neither the tools nor a tool choice are sent.
    NoTools,
}

/// How a response is read.
#[derive(Debug, Clone)]
pub(crate) struct ResponsePlan {
    pub model: Option<JsonPath>,
    pub error: Vec<JsonPath>,
    /// The sources, with the path as written (for messages).
    pub content: Vec<(String, JsonPath)>,
    pub items: Vec<ItemRule>,
    pub stop: StopPlan,
    pub tool_use_meta: Vec<(String, JsonPath)>,
    /// `_meta` keys of the result and the response paths they are read from.
    pub message_meta: Vec<(String, JsonPath)>,
}

/// One rule for response items.
#[derive(Debug, Clone)]
pub(crate) struct ItemRule {
    pub when: Option<(JsonPath, Option<Value>)>,
    pub action: ItemAction,
}

#[derive(Debug, Clone)]
pub(crate) enum ItemAction {
    Text(JsonPath),
    Media { mime: JsonPath, data: JsonPath },
    Each(JsonPath),
    Skip,
}

/// How the stop reason is read.
#[derive(Debug, Clone)]
pub(crate) struct StopPlan {
    pub from: Vec<(String, JsonPath)>,
    pub map: BTreeMap<String, StopReason>,
    pub calls_mean_tool_use: bool,
    pub empty_means_tool_use: bool,
}

mod messages;
mod response;

use messages::{check_follow_ups, check_messages, compile_role, compile_tool_use};
use response::compile_response;

const AT: &str = "/sampling";

fn at(path: &[&str]) -> String {
    path.iter().fold(AT.to_owned(), |p, s| pointer_child(&p, s))
}

fn template(value: &Value, path: &[&str], vars: &[&str]) -> Result<Template, Problem> {
    let at = at(path);
    Template::compile(value, vars).map_err(|p| Problem::at(format!("{at}{}", p.path), p.message))
}

/// Compiles a `sampling:` section; `results` are the spec's results sections
/// (its own and each option value's), whose follow-ups the section must place,
/// and `choices` the spec's own tool choices (used unless the section has its own).
pub(crate) fn compile(
    doc: SamplingDoc,
    results: &[&ResultsPlan],
    choices: &BTreeMap<ChoiceMode, Choice>,
) -> Result<SamplingPlan, Problem> {
    let request = template(&doc.request, &["request"], REQUEST_VARS)?;
    for (var, why) in [
        ("messages", "the conversation would be lost"),
        ("max_tokens", "MCP requires the client to respect maxTokens"),
    ] {
        if !uses(&request, var) {
            return Err(Problem::at(
                at(&["request"]),
                format!("the request must place ${{{var}}}: {why}"),
            ));
        }
    }
    let tools_wrap = match &doc.tools.wrap {
        Some(value) => {
            let wrap = template(value, &["tools", "wrap"], WRAP_VARS)?;
            if !uses(&wrap, "tools") {
                return Err(Problem::at(
                    at(&["tools", "wrap"]),
                    "the wrapper must place ${tools}, or the tool definitions would be lost",
                ));
            }
            Some(wrap)
        }
        None => None,
    };
    let tool_choice = match doc.tool_choice {
        Some(own) => compile_choices(own, &at(&["tool_choice"]))?,
        None => choices.clone(),
    };
    check_tool_placement(&request, tools_wrap.as_ref(), &tool_choice)?;
    let system = compile_system(doc.system, &request)?;
    let placed = placed_params(&request, &system);
    for (i, param) in doc.ignore.iter().enumerate() {
        if placed.contains(param) {
            return Err(Problem::at(
                at(&["ignore", &i.to_string()]),
                "the request places this field, so it cannot also be ignored",
            ));
        }
    }
    let messages = doc.messages;
    let tool_use = compile_tool_use(messages.tool_use)?;
    let user = compile_role(messages.user, "user")?;
    let assistant = compile_role(messages.assistant, "assistant")?;
    check_messages(&user, &assistant, &tool_use, messages.tool_results)?;
    check_follow_ups(messages.follow_ups, messages.tool_results, results)?;
    Ok(SamplingPlan {
        request,
        ignore: doc.ignore,
        placed,
        system,
        user,
        assistant,
        tool_use,
        tool_results: messages.tool_results,
        follow_ups: messages.follow_ups,
        merge_consecutive: messages.merge_consecutive,
        call_ids: compile_call_ids(messages.call_ids)?,
        tools_wrap_places_choice: tools_wrap.as_ref().is_some_and(|w| uses(w, "tool_choice")),
        tools_wrap,
        tools_strict: doc.tools.strict.0,
        tools_required_by_history: doc.tools.required_by_history,
        tool_choice,
        response: compile_response(doc.response)?,
    })
}

/// Compiles a tool choice map found at `at` (`/tool_choice`, `/sampling/tool_choice`).
pub(crate) fn compile_choices(
    doc: BTreeMap<ChoiceMode, ChoiceDoc>,
    at: &str,
) -> Result<BTreeMap<ChoiceMode, Choice>, Problem> {
    doc.into_iter()
        .map(|(mode, choice)| {
            let key = mode.key();
            let choice = match choice {
                ChoiceDoc::Omit(OmitDoc {
                    omit: OmitWhat::ToolChoice,
                }) => Choice::Unsent,
                ChoiceDoc::Omit(OmitDoc {
                    omit: OmitWhat::Tools,
                }) => Choice::NoTools,
                ChoiceDoc::Value(value) => {
                    let at = pointer_child(at, key);
                    Choice::Value(
                        Template::compile(&value, &[])
                            .map_err(|p| Problem::at(format!("{at}{}", p.path), p.message))?,
                    )
                }
            };
            Ok((mode, choice))
        })
        .collect()
}

/// `${tools}` is placed once by the request; `${tool_choice}`, when a mode
/// renders one, once by the request or the tools' wrapper.
fn check_tool_placement(
    request: &Template,
    wrap: Option<&Template>,
    choices: &BTreeMap<ChoiceMode, Choice>,
) -> Result<(), Problem> {
    if !uses(request, "tools") {
        return Err(Problem::at(
            at(&["request"]),
            "the request must place ${tools}, or the request's tools would be lost",
        ));
    }
    let in_request = uses(request, "tool_choice");
    let in_wrap = wrap.is_some_and(|w| uses(w, "tool_choice"));
    if in_request && in_wrap {
        return Err(Problem::at(
            at(&["tools", "wrap"]),
            "${tool_choice} is placed by both the request and the tools' wrapper: place it once",
        ));
    }
    let renders = choices.values().any(|c| matches!(c, Choice::Value(_)));
    if renders && !in_request && !in_wrap {
        return Err(Problem::at(
            at(&["tool_choice"]),
            "tool choice values render ${tool_choice}, which neither the request nor tools.wrap places",
        ));
    }
    Ok(())
}

/// The longest id `call_ids` may ask for (a made-up id is this many hash characters at most).
const MAX_CALL_ID_LENGTH: usize = 64;

fn compile_call_ids(doc: Option<CallIdsDoc>) -> Result<Option<CallIds>, Problem> {
    let Some(doc) = doc else {
        return Ok(None);
    };
    let at = at(&["messages", "call_ids"]);
    for (name, value) in [("length", doc.length), ("max_length", doc.max_length)] {
        if let Some(n) = value
            && !(8..=MAX_CALL_ID_LENGTH).contains(&n)
        {
            return Err(Problem::at(
                pointer_child(&at, name),
                format!(
                    "{name} must be from 8 to {MAX_CALL_ID_LENGTH}, so that made-up ids stay unique"
                ),
            ));
        }
    }
    match (doc.length, doc.max_length) {
        (Some(_), Some(_)) => Err(Problem::at(at, "give `length` or `max_length`, not both")),
        (None, None) if doc.alphabet == IdAlphabet::Any => Err(Problem::at(
            at,
            "any id of any length is what the history has: give an alphabet, a length or a max_length",
        )),
        _ => Ok(Some(CallIds {
            alphabet: doc.alphabet,
            length: doc.length,
            max_length: doc.max_length,
        })),
    }
}

fn compile_system(doc: Option<SystemDoc>, request: &Template) -> Result<SystemPlacement, Problem> {
    let in_request = uses(request, "system");
    match doc {
        Some(SystemDoc {
            value: Some(_),
            message: Some(_),
        })
        | Some(SystemDoc {
            value: None,
            message: None,
        }) => Err(Problem::at(
            at(&["system"]),
            "give the system prompt either a `value` or a `message`",
        )),
        Some(SystemDoc {
            message: Some(message),
            ..
        }) => {
            if in_request {
                return Err(Problem::at(
                    at(&["request"]),
                    "the system prompt is a message (system.message), so ${system} has no value here",
                ));
            }
            Ok(SystemPlacement::Message(template(
                &message,
                &["system", "message"],
                SYSTEM_VARS,
            )?))
        }
        Some(SystemDoc {
            value: Some(value), ..
        }) => {
            if !in_request {
                return Err(Problem::at(
                    at(&["system", "value"]),
                    "the request must place ${system}, or the system prompt would be lost",
                ));
            }
            Ok(SystemPlacement::Value(Some(template(
                &value,
                &["system", "value"],
                SYSTEM_VARS,
            )?)))
        }
        None => Ok(SystemPlacement::Value(None)),
    }
}

fn placed_params(request: &Template, system: &SystemPlacement) -> Vec<SamplingParam> {
    let mut placed = Vec::new();
    if matches!(system, SystemPlacement::Message(_)) || uses(request, "system") {
        placed.push(SamplingParam::System);
    }
    for (param, var) in [
        (SamplingParam::Temperature, "temperature"),
        (SamplingParam::StopSequences, "stop_sequences"),
        (SamplingParam::Metadata, "metadata"),
    ] {
        if uses(request, var) {
            placed.push(param);
        }
    }
    placed
}
