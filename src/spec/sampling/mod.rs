//! The `sampling:` section of a spec, compiled: how an MCP
//! `sampling/createMessage` request becomes the provider's request body and
//! how its response is read back. The crate's `sampling` module runs the
//! compiled plan.
//!
//! Checked here, at load: every template's variables, that nothing a request
//! carries can be lost without the spec saying so (`messages` and
//! `max_tokens` are placed; `system`, `temperature`, `stop_sequences` and
//! `metadata` are placed or listed in `ignore`), that each place a template
//! fills exists (`${tool_calls}` when tool uses go there, `${attachments}`
//! when media rules attach), and that the follow-ups of every results
//! section (the spec's and each option's) have somewhere to go.

mod call_ids;
mod messages;
mod response;

use std::collections::BTreeMap;

use serde::Deserialize;

use super::choice::{self, Choice, ChoiceDoc, ChoiceMode};
use super::results::ResultsPlan;
use super::strict::{StrictDefault, StrictMode};
use super::template::{Template, TemplateDoc, TemplateVars, template_vars};
use crate::error::Problem;
use crate::json::pointer_child;
use call_ids::compile_call_ids;
pub(crate) use call_ids::{CallIds, IdAlphabet};
pub(crate) use messages::{FollowUpPlacement, ResultsPlacement, RolePlan, ToolUseInto};
use messages::{
    MessagesDoc, ToolUsePlan, check_follow_ups, check_messages, compile_role, compile_tool_use,
};
pub(crate) use response::{ItemAction, ItemRule, ResponsePlan};
use response::{ResponseDoc, compile_response};

template_vars! {
    /// A sampling request body. Variables: model (the application's model
    /// name; leave it out for providers whose model is in the URL), system
    /// (the system prompt: its text, or system.value of it; absent without
    /// one), messages (the rendered messages, required), max_tokens
    /// (maxTokens, required), temperature, stop_sequences (a list; absent
    /// when empty), metadata (MCP's free-form metadata), tools (the tool
    /// definitions, wrapped by tools.wrap; absent without tools or when a
    /// tool choice leaves them out), tool_choice (the tool choice's value;
    /// absent when none is sent).
    pub(super) Request("sampling_request_template") = [
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
}

template_vars! {
    /// The system prompt as a value for ${system} (system.value) or as a
    /// message before the others (system.message). Variable: text.
    pub(super) System("sampling_system_template") = ["text"];
}

template_vars! {
    /// Wraps the tool definitions into ${tools}. Variables: tools (the
    /// definitions, a list), tool_choice (the tool choice's value, placed
    /// here instead of in the request).
    pub(super) ToolsWrap("sampling_wrap_template") = ["tools", "tool_choice"];
}

/// How an MCP `sampling/createMessage` request becomes this provider's
/// request body, and its response a `CreateMessageResult`.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct SamplingDoc {
    /// The request body; it must place `${messages}`, `${max_tokens}` and `${tools}`.
    #[cfg_attr(test, schemars(transform = crate::spec::schema::object_template))]
    pub request: TemplateDoc<Request>,
    /// Request fields the provider has no place for: dropped with a
    /// warning. A field neither placed nor ignored is an error when a
    /// request carries it.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("uniqueItems" = true)))]
    pub ignore: Vec<SamplingParam>,
    #[serde(default)]
    pub system: Option<SystemDoc>,
    pub messages: MessagesDoc,
    #[serde(default)]
    pub tools: SamplingToolsDoc,
    /// What each `toolChoice` mode becomes in a sampling request, when it
    /// differs from the spec's `tool_choice` section (which applies otherwise).
    #[serde(default)]
    pub tool_choice: Option<BTreeMap<ChoiceMode, ChoiceDoc>>,
    pub response: ResponseDoc,
}

/// A field of a sampling request that a spec may place or ignore.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum SamplingParam {
    System,
    Temperature,
    StopSequences,
    Metadata,
}

/// Where the system prompt goes: a value for `${system}` (absent: the text
/// itself), or a message before the others.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(extend("oneOf" = [{"required": ["value"]}, {"required": ["message"]}]))
)]
#[serde(deny_unknown_fields)]
pub(super) struct SystemDoc {
    #[serde(default)]
    pub value: Option<TemplateDoc<System>>,
    #[serde(default)]
    pub message: Option<TemplateDoc<System>>,
}

/// The tools a sampling request offers.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct SamplingToolsDoc {
    /// Wraps the definitions (the tools.definition template's, under the
    /// toolset's names) into `${tools}`; it must place `${tools}`.
    #[serde(default)]
    pub wrap: Option<TemplateDoc<ToolsWrap>>,
    /// The strict mode of the tools offered (`SamplingOptions::strict` overrides it).
    #[serde(default = "strict_off")]
    pub strict: StrictDefault,
    /// The API needs the tool definitions whenever the history holds tool
    /// uses or results: `{omit: tools}` keeps them then, without a tool
    /// choice (with a warning).
    #[serde(default)]
    pub required_by_history: bool,
}

fn strict_off() -> StrictDefault {
    StrictDefault(StrictMode::Off)
}

impl Default for SamplingToolsDoc {
    fn default() -> Self {
        SamplingToolsDoc {
            wrap: None,
            strict: strict_off(),
            required_by_history: false,
        }
    }
}

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

const AT: &str = "/sampling";

fn at(path: &[&str]) -> String {
    path.iter().fold(AT.to_owned(), |p, s| pointer_child(&p, s))
}

fn template<K: TemplateVars>(doc: &TemplateDoc<K>, path: &[&str]) -> Result<Template, Problem> {
    doc.compile_at(&at(path))
}

/// Compiles a `sampling:` section; `results` are the spec's results sections
/// (its own and each option value's), whose follow-ups the section must place,
/// and `choices` the spec's own tool choices (used unless the section has its own).
pub(super) fn compile(
    doc: SamplingDoc,
    results: &[&ResultsPlan],
    choices: &BTreeMap<ChoiceMode, Choice>,
) -> Result<SamplingPlan, Problem> {
    let request = template(&doc.request, &["request"])?;
    for (var, why) in [
        ("messages", "the conversation would be lost"),
        ("max_tokens", "MCP requires the client to respect maxTokens"),
    ] {
        if !request.uses(var) {
            return Err(Problem::at(
                at(&["request"]),
                format!("the request must place ${{{var}}}: {why}"),
            ));
        }
    }
    let tools_wrap = match &doc.tools.wrap {
        Some(value) => {
            let wrap = template(value, &["tools", "wrap"])?;
            if !wrap.uses("tools") {
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
        Some(own) => choice::compile(own, &at(&["tool_choice"]))?,
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
        tools_wrap_places_choice: tools_wrap.as_ref().is_some_and(|w| w.uses("tool_choice")),
        tools_wrap,
        tools_strict: doc.tools.strict.0,
        tools_required_by_history: doc.tools.required_by_history,
        tool_choice,
        response: compile_response(doc.response)?,
    })
}

/// `${tools}` is placed once by the request; `${tool_choice}`, when a mode
/// renders one, once by the request or the tools' wrapper.
fn check_tool_placement(
    request: &Template,
    wrap: Option<&Template>,
    choices: &BTreeMap<ChoiceMode, Choice>,
) -> Result<(), Problem> {
    if !request.uses("tools") {
        return Err(Problem::at(
            at(&["request"]),
            "the request must place ${tools}, or the request's tools would be lost",
        ));
    }
    let in_request = request.uses("tool_choice");
    let in_wrap = wrap.is_some_and(|w| w.uses("tool_choice"));
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

fn compile_system(doc: Option<SystemDoc>, request: &Template) -> Result<SystemPlacement, Problem> {
    let in_request = request.uses("system");
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
            )?)))
        }
        None => Ok(SystemPlacement::Value(None)),
    }
}

fn placed_params(request: &Template, system: &SystemPlacement) -> Vec<SamplingParam> {
    let mut placed = Vec::new();
    if matches!(system, SystemPlacement::Message(_)) || request.uses("system") {
        placed.push(SamplingParam::System);
    }
    for (param, var) in [
        (SamplingParam::Temperature, "temperature"),
        (SamplingParam::StopSequences, "stop_sequences"),
        (SamplingParam::Metadata, "metadata"),
    ] {
        if request.uses(var) {
            placed.push(param);
        }
    }
    placed
}
