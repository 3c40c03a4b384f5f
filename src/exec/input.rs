//! Input rounds: a tool that answers `input_required` (MCP 2026-07-28
//! multi-round-trip requests) is asked again with the application's answers,
//! round after round, until it completes or the call ends with an error.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::answerer::{Answerer, CallState, not_completed};
use super::asks::DEFAULT_MAX_INPUT_ROUNDS;
use super::clock::Halt;
use super::durable::{Stage, Waits};
use super::future::BoxFuture;
use super::hooks::Hooks;
use super::options::ExecOptions;
use super::server::{CallContext, Server};
use crate::calls::ToolCall;
use crate::describe::sanitize_description;
use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{CallToolResponse, CallToolResult, CreateTaskResult, Object};

/// The pause before a retry that carries no answers (a server shedding load
/// answers with a request state only), doubling from 50 ms up to 250 ms.
fn backoff(retry: usize) -> Duration {
    let ms = 50u64.saturating_mul(1 << retry.min(3));
    Duration::from_millis(ms.min(250))
}

/// Told a call's stage as its rounds go, for the turn's state: an error
/// when the request must not go out.
pub(super) type Mark<'a> = dyn Fn(Stage) -> BoxFuture<'a, Result<()>> + Send + Sync + 'a;

/// A call's requests to its server, as a source sends them: each through the
/// `after` hook, and round after round while the tool requires input.
pub(super) struct Rounds {
    hooks: Option<Arc<dyn Hooks>>,
}

impl Rounds {
    pub(super) fn new(hooks: Option<Arc<dyn Hooks>>) -> Self {
        Rounds { hooks }
    }

    /// The hooks run around every call.
    pub(super) fn hooks(&self) -> Option<&dyn Hooks> {
        self.hooks.as_deref()
    }

    /// [`complete`](Self::complete), boxed: most calls complete at once, and
    /// their futures need not hold the rounds' machinery.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn complete_boxed<'a, 'm: 'a>(
        &'a self,
        call: &'a ToolCall,
        server: &'a dyn Server,
        context: CallContext,
        response: CallToolResponse,
        options: &'a ExecOptions,
        timeout: Duration,
        halt: &'a Halt,
        state: &'a CallState,
        retry: bool,
        answered: usize,
        mark: Option<&'a Mark<'m>>,
    ) -> BoxFuture<'a, Result<CallToolResult>> {
        Box::pin(self.complete(
            call, server, context, response, options, timeout, halt, state, retry, answered, mark,
        ))
    }

    /// Drives a call from its first answer to a result: asks the handlers
    /// and calls again while the server requires input. `timeout` bounds each
    /// request's server time, the options' input timeout each answer.
    /// `answered`: the rounds already answered (a call taken up again after
    /// its turn was suspended). `mark` is told the call's stage as it goes
    /// (waiting for a round's answers, then sent), for the turn's state.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn complete(
        &self,
        call: &ToolCall,
        server: &dyn Server,
        mut context: CallContext,
        mut response: CallToolResponse,
        options: &ExecOptions,
        timeout: Duration,
        halt: &Halt,
        state: &CallState,
        retry: bool,
        answered: usize,
        mark: Option<&Mark<'_>>,
    ) -> Result<CallToolResult> {
        let max_rounds = options.max_input_rounds.unwrap_or(DEFAULT_MAX_INPUT_ROUNDS);
        let mut answered = answered;
        loop {
            let asked = match response {
                CallToolResponse::Complete(result) => return Ok(result),
                CallToolResponse::InputRequired(asked) => asked,
                CallToolResponse::Task(task)
                    if context.answerer.as_ref().is_some_and(Answerer::may_suspend) =>
                {
                    return Err(Waits::error(Stage::WaitingForTask {
                        task_id: task.task_id,
                        status: task.status,
                        poll_interval_ms: task.poll_interval_ms,
                    }));
                }
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
                if let Some(mark) = mark {
                    mark(Stage::WaitingForInput {
                        round: answered + 1,
                        asked: asked.clone(),
                    })
                    .await?;
                }
                Some(answerer.answer_round(&asked, answered + 1).await?)
            };
            answered += 1;
            context.input_responses = responses;
            context.request_state = asked.request_state;
            let round = answered + 1;
            // Sent only once the state that says so is kept, and not once
            // the turn was halted meanwhile.
            if let Some(mark) = mark {
                mark(Stage::Sent).await?;
            }
            if halt.is_set() {
                return Err(Error::new(
                    ErrorKind::InputRequired,
                    "the tool asked for input and the call did not complete: the turn was halted \
                     before its answers were sent",
                ));
            }
            state.start_clock(timeout);
            response = tokio::select! {
                sent = self.send(server, call, &context, retry) => sent?,
                () = state.expired() => return Err(Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "round {round} of the call took longer than {} ms and was cancelled",
                        timeout.as_millis()
                    ),
                )),
            };
        }
    }

    /// A call's first request, as [`send`](Self::send) makes it; where no
    /// hook and no retry needs the context again, it is handed to the
    /// server rather than copied (and `context` is left empty: build it
    /// again for the rounds that follow).
    pub(super) async fn send_first(
        &self,
        server: &dyn Server,
        call: &ToolCall,
        context: &mut CallContext,
        retry: bool,
    ) -> Result<CallToolResponse> {
        if retry || self.hooks.is_some() {
            return self.send(server, call, context, retry).await;
        }
        // What is left holds the shared parts only: nothing is allocated for it.
        let hollow = CallContext {
            server_id: String::new(),
            tool: String::new(),
            call_id: None,
            principal: None,
            assigns: context.assigns.clone(),
            taint: context.taint.clone(),
            meta: None,
            progress: None,
            input_responses: None,
            request_state: None,
            answerer: None,
            idempotency_key: None,
        };
        let context = std::mem::replace(context, hollow);
        match server
            .call_tool(&call.tool, call.arguments.clone(), context)
            .await?
        {
            CallToolResponse::Complete(result) if !is_complete(&result) => reread(&result),
            response => Ok(response),
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
        context: &CallContext,
        retry: bool,
    ) -> Result<CallToolResponse> {
        let first = server
            .call_tool(&call.tool, call.arguments.clone(), context.clone())
            .await;
        // The rare paths are boxed, so that every call's future stays small.
        let response = match first {
            Err(err) if retry && err.kind() == ErrorKind::Interrupted => {
                resend(server, call, context, err).await?
            }
            other => other?,
        };
        match (&self.hooks, response) {
            (_, CallToolResponse::Complete(result)) if !is_complete(&result) => reread(&result),
            (Some(hooks), CallToolResponse::Complete(result)) => {
                after(hooks.as_ref(), call, result, context).await
            }
            (_, other) => Ok(other),
        }
    }
}

/// A completed result through the `after` hook (boxed, as the rare paths of
/// a call are).
fn after<'a>(
    hooks: &'a dyn Hooks,
    call: &'a ToolCall,
    mut result: CallToolResult,
    context: &'a CallContext,
) -> BoxFuture<'a, Result<CallToolResponse>> {
    Box::pin(async move {
        hooks.after(call, &mut result, context).await?;
        Ok(CallToolResponse::Complete(result))
    })
}

/// Sends a call once more after its first try was interrupted.
fn resend<'a>(
    server: &'a dyn Server,
    call: &'a ToolCall,
    context: &'a CallContext,
    err: Error,
) -> BoxFuture<'a, Result<CallToolResponse>> {
    Box::pin(resend_now(server, call, context, err))
}

async fn resend_now(
    server: &dyn Server,
    call: &ToolCall,
    context: &CallContext,
    err: Error,
) -> Result<CallToolResponse> {
    tracing::warn!(server = %call.server_id, tool = %call.tool, call_id = call.call_id.as_deref().unwrap_or(""),
        "the server went away during a call its tool says is safe to repeat; sending it once more");
    server
        .call_tool(&call.tool, call.arguments.clone(), context.clone())
        .await
        .map_err(|again| {
            let message = format!(
                "{} (sent once more after the first try was interrupted: {})",
                again.message(),
                err.message()
            );
            again.with_message(message)
        })
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

    #[test]
    fn backoff_grows_and_stops() {
        let waits: Vec<u128> = (0..6).map(|r| backoff(r).as_millis()).collect();
        assert_eq!(waits, [50, 100, 200, 250, 250, 250]);
    }
}
