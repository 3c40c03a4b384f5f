//! Input rounds: a tool that answers `input_required` (MCP 2026-07-28
//! multi-round-trip requests) is asked again with the application's answers,
//! round after round, until it completes or the call ends with an error.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::asks::{Asking, Attribution};
use super::clock::{CallClock, Halt};
use super::run::ExecOptions;
use super::server::{BoxFuture, CallContext, Server};
use super::source::Source;
use crate::calls::ToolCall;
use crate::describe::sanitize_description;
use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{
    CallToolResponse, CallToolResult, CreateTaskResult, Elicitation, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, Object,
};

/// The default bound on input rounds per call: 10, as the official SDKs.
pub const DEFAULT_MAX_INPUT_ROUNDS: usize = 10;

/// The default bound on the time an input handler takes to answer one
/// round: 600 s, so that a person can answer.
pub const DEFAULT_INPUT_TIMEOUT: Duration = Duration::from_secs(600);

/// A server's questions for the input handler: a round of an
/// `input_required` result, or one request the server sent during a call.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct InputQuestions {
    /// The server that asks.
    pub server_id: String,
    /// The call the questions belong to.
    pub call: Attribution,
    /// How the server asked: in an `input_required` result (keys are the
    /// server's), or as a request during the call (one request, keyed by its
    /// JSON-RPC id).
    pub asking: Asking,
    /// 1 for the first questions of a call, 2 for the next, ...
    pub round: usize,
    /// The questions, keyed as [`asking`](Self::asking) says: answer each
    /// under its key.
    pub requests: InputRequests,
}

impl InputQuestions {
    /// The call's tool, when the questions belong to exactly one call.
    pub fn tool(&self) -> Option<&str> {
        self.call.call().map(|c| c.tool.as_str())
    }
}

/// An input handler's answer to a round's questions.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputAnswer {
    /// Call the tool again with these answers, one per question's key (an
    /// elicitation's answer may itself accept, decline or cancel it, which
    /// the server then acts on).
    Respond(InputResponses),
    /// Do not answer: the call ends, and the model is told what the tool
    /// asked for and `reason`.
    Decline(String),
    /// The person dismissed the questions: the call ends as with `Decline`,
    /// and the turn halts (as [`Approval::DenyAndHalt`](crate::Approval::DenyAndHalt)).
    Cancel(String),
}

/// Answers the questions of tools that ask for input; see
/// [`SourceBuilder::input_handler`](crate::SourceBuilder::input_handler).
pub type InputHandler =
    Arc<dyn Fn(InputQuestions) -> BoxFuture<'static, InputAnswer> + Send + Sync>;

/// The pause before a retry that carries no answers (a server shedding load
/// answers with a request state only), doubling from 50 ms up to 250 ms.
fn backoff(retry: usize) -> Duration {
    let ms = 50u64.saturating_mul(1 << retry.min(3));
    Duration::from_millis(ms.min(250))
}

impl Source {
    /// Drives a call from its first answer to a result: asks the handlers
    /// and calls again while the server requires input. `timeout` bounds each
    /// request's server time, the options' input timeout each answer.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn complete_rounds(
        &self,
        call: &ToolCall,
        server: &dyn Server,
        mut context: CallContext,
        mut response: CallToolResponse,
        options: &ExecOptions,
        timeout: Duration,
        halt: &Halt,
        state: &super::asks::CallState,
        retry: bool,
    ) -> Result<CallToolResult> {
        let max_rounds = options.max_input_rounds.unwrap_or(DEFAULT_MAX_INPUT_ROUNDS);
        let mut answered = 0usize;
        loop {
            let asked = match response {
                CallToolResponse::Complete(result) => return Ok(result),
                CallToolResponse::InputRequired(asked) => asked,
                CallToolResponse::Task(task) => return Err(task_error(&task)),
                CallToolResponse::Other(map) => return Err(unknown_result_error(&map)),
            };
            if answered >= max_rounds {
                return Err(not_completed(
                    &asked,
                    &format!(
                        "it asked for input more than {max_rounds} times (the bound on input rounds)"
                    ),
                ));
            }
            if halt.is_set() {
                return Err(not_completed(&asked, "the turn was halted"));
            }
            let responses = if asked.input_requests.is_empty() {
                tokio::time::sleep(backoff(answered)).await;
                None
            } else {
                let answerer = context
                    .answerer
                    .as_ref()
                    .ok_or_else(|| not_completed(&asked, "no input handler is configured"))?;
                Some(answerer.answer_round(&asked, answered + 1).await?)
            };
            answered += 1;
            context.input_responses = responses;
            context.request_state = asked.request_state;
            let round = answered + 1;
            let clock = CallClock::new(timeout);
            state.set_clock(clock.clone());
            response = tokio::select! {
                sent = self.send(server, call, context.clone(), retry) => sent?,
                () = clock.expired() => return Err(Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "round {round} of the call took longer than {} ms and was cancelled",
                        timeout.as_millis()
                    ),
                )),
            };
        }
    }

    /// One request to the server; a completed result goes through the `after` hook.
    /// `retry`: the call is sent once more if its server went away while it
    /// was in flight ([`ExecOptions::retry_interrupted`] and a tool that says
    /// it is safe to repeat).
    pub(super) async fn send(
        &self,
        server: &dyn Server,
        call: &ToolCall,
        context: CallContext,
        retry: bool,
    ) -> Result<CallToolResponse> {
        let first = server
            .call_tool(&call.name, call.arguments.clone(), context.clone())
            .await;
        let response = match first {
            Err(err) if retry && err.kind() == ErrorKind::Interrupted => {
                tracing::warn!(server = %call.server_id, tool = %call.name, call_id = call.call_id.as_deref().unwrap_or(""),
                    "the server went away during a call its tool says is safe to repeat; sending it once more");
                server
                    .call_tool(&call.name, call.arguments.clone(), context.clone())
                    .await
                    .map_err(|again| {
                        let message = format!(
                            "{} (sent once more after the first try was interrupted: {})",
                            again.message(),
                            err.message()
                        );
                        again.with_message(message)
                    })?
            }
            other => other?,
        };
        let Some(hooks) = &self.hooks else {
            return match response {
                CallToolResponse::Complete(result) if !is_complete(&result) => reread(&result),
                other => Ok(other),
            };
        };
        let mut result = match response {
            CallToolResponse::Complete(result) if is_complete(&result) => result,
            CallToolResponse::Complete(result) => return reread(&result),
            other => return Ok(other),
        };
        hooks.after(call, &mut result, &context).await?;
        Ok(CallToolResponse::Complete(result))
    }
}

/// A result built in memory with another `resultType`, read for what it says.
fn reread(result: &CallToolResult) -> Result<CallToolResponse> {
    let value = serde_json::to_value(result).map_err(|e| {
        Error::new(ErrorKind::Server, "the tool result cannot be read").with_source(e)
    })?;
    CallToolResponse::from_value(value)
}

fn is_complete(result: &CallToolResult) -> bool {
    match result.extra.get("resultType") {
        None | Some(Value::Null) => true,
        Some(value) => value.as_str() == Some("complete"),
    }
}

/// The questions shown in an error, at most this many.
const SHOWN_REQUESTS: usize = 8;
/// The form fields named per question, at most this many.
const SHOWN_FIELDS: usize = 8;
/// The characters of a sampling prompt shown, at most this many.
const SHOWN_PROMPT: usize = 200;

/// `text` cut to `max` characters, with `...` when cut.
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_owned(),
    }
}

/// The error for a call that ended while its tool still required input: why,
/// and what it asked for (its texts cleaned as descriptions are).
pub(crate) fn not_completed(asked: &InputRequiredResult, why: &str) -> Error {
    Error::new(
        ErrorKind::InputRequired,
        format!(
            "the tool asked for input and the call did not complete: {why}. {}",
            describe(&asked.input_requests)
        ),
    )
}

/// `It asked: confirm: "Delete?" (a form with confirm); ...`
pub(crate) fn describe(requests: &InputRequests) -> String {
    if requests.is_empty() {
        return "It asked to be called again, with no questions.".to_owned();
    }
    let mut out = String::from("It asked: ");
    for (i, (key, request)) in requests.iter().take(SHOWN_REQUESTS).enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        let _ = write!(out, "{}: ", sanitize_description(key));
        match request {
            InputRequest::Elicitation(Elicitation::Form(form)) => {
                let fields = form.fields();
                let mut shown: Vec<String> = fields
                    .iter()
                    .take(SHOWN_FIELDS)
                    .map(|f| sanitize_description(f).into_owned())
                    .collect();
                if fields.len() > SHOWN_FIELDS {
                    shown.push(format!("{} more", fields.len() - SHOWN_FIELDS));
                }
                let _ = write!(out, "\"{}\"", sanitize_description(&form.message));
                if shown.is_empty() {
                    out.push_str(" (a form)");
                } else {
                    let _ = write!(out, " (a form with {})", shown.join(", "));
                }
            }
            InputRequest::Elicitation(Elicitation::Url(url)) => {
                let _ = write!(
                    out,
                    "\"{}\" (a page to open: {})",
                    sanitize_description(&url.message),
                    sanitize_description(&url.url)
                );
            }
            InputRequest::Sampling(params) => {
                let asked = params
                    .messages
                    .iter()
                    .rev()
                    .map(|m| m.text())
                    .find(|t| !t.is_empty())
                    .unwrap_or_default();
                let _ = write!(
                    out,
                    "a completion from the client's model (\"{}\", at most {} tokens)",
                    shorten(&sanitize_description(&asked), SHOWN_PROMPT),
                    params.max_tokens
                );
            }
            InputRequest::ListRoots(_) => out.push_str("the client's roots"),
            other => match other.method() {
                "" => out.push_str("a request of no known kind"),
                method => {
                    let _ = write!(out, "a {} request", sanitize_description(method));
                }
            },
        }
    }
    if requests.len() > SHOWN_REQUESTS {
        let _ = write!(out, "; and {} more", requests.len() - SHOWN_REQUESTS);
    }
    out.push('.');
    out
}

fn task_error(task: &CreateTaskResult) -> Error {
    Error::new(
        ErrorKind::Server,
        format!(
            "the server handed back a task (`{}`, {}) instead of following it to a result, so \
             the call did not complete",
            sanitize_description(&task.task_id),
            sanitize_description(&task.status)
        ),
    )
}

fn unknown_result_error(result: &Object) -> Error {
    let kind = result
        .get("resultType")
        .and_then(Value::as_str)
        .unwrap_or("");
    Error::new(
        ErrorKind::Server,
        format!(
            "the server answered with a result of type `{}`, which this client does not know, so \
             the call did not complete",
            sanitize_description(kind)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn questions_are_described_with_their_kind() {
        let asked = InputRequiredResult::new()
            .ask(
                "confirm",
                InputRequest::form(
                    "Delete note \u{202e}`todo`?",
                    json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}}),
                ),
            )
            .ask(
                "login",
                InputRequest::url("Sign in", "https://example.com/x"),
            )
            .ask(
                "sample",
                InputRequest::Other(json!({"method": "sampling/createMessage"})),
            )
            .ask(
                "summary",
                InputRequest::sampling(crate::mcp::CreateMessageParams::new(
                    vec![crate::mcp::SamplingMessage::user_text(format!(
                        "Sum up: {}",
                        "x".repeat(300)
                    ))],
                    50,
                )),
            )
            .ask("where", InputRequest::list_roots());
        assert_eq!(
            describe(&asked.input_requests),
            format!(
                "It asked: confirm: \"Delete note `todo`?\" (a form with confirm); login: \"Sign in\" \
                 (a page to open: https://example.com/x); sample: a sampling/createMessage request; \
                 summary: a completion from the client's model (\"Sum up: {}...\", at most 50 tokens); \
                 where: the client's roots.",
                "x".repeat(192)
            )
        );
        assert_eq!(
            describe(&InputRequests::new()),
            "It asked to be called again, with no questions."
        );
    }

    #[test]
    fn backoff_grows_and_stops() {
        let waits: Vec<u128> = (0..6).map(|r| backoff(r).as_millis()).collect();
        assert_eq!(waits, [50, 100, 200, 250, 250, 250]);
    }
}
