//! A call's requests to its server: each through the hooks, sent once more
//! when its server went away and the tool is safe to repeat, and read for
//! what the server answered (a result, `input_required` questions for the
//! next round, a task).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::future::BoxFuture;
use super::hooks::Hooks;
use super::server::{CallContext, Server};
use crate::calls::ToolCall;
use crate::describe::sanitize_description;
use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{CallToolResponse, CallToolResult, CreateTaskResult, Object};

/// The pause before a retry that carries no answers (a server shedding load
/// answers with a request state only), doubling from 50 ms up to 250 ms.
pub(super) fn backoff(retry: usize) -> Duration {
    let ms = 50u64.saturating_mul(1 << retry.min(3));
    Duration::from_millis(ms.min(250))
}

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
            // Boxed: a call sent once, without hooks, need not hold the
            // copied context and the hooks' futures.
            return Box::pin(self.send(server, call, context, retry)).await;
        }
        // What is left holds the shared parts only: nothing is allocated for it.
        let hollow = context.hollow();
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

pub(super) fn task_error(task: &CreateTaskResult) -> Error {
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

pub(super) fn unknown_result_error(result: &Object) -> Error {
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
