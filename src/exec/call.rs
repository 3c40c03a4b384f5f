//! One call through the governed pipeline: resolved, decided, gated, sent,
//! taken through its input rounds, and recorded.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use serde_json::Value;
use tracing::Instrument;

use super::answerer::{Answerer, CallState};
use super::answering::not_run_halted;
use super::approve::Approving;
use super::clock::Halt;
use super::durable::{Ended, IdempotencyKey, Stage, Waits};
use super::future::BoxFuture;
use super::gate::Pass;
use super::input::Mark;
use super::options::ExecOptions;
use super::server::{CallContext, Server};
use super::source::Source;
use super::turn_run::{Caller, Shared, not_sent};
use crate::calls::ToolCall;
use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{CallToolResponse, CallToolResult, InputRequiredResult};
use crate::toolset::ToolSet;

impl Source {
    /// One call through the pipeline, with panics caught: its first request
    /// (checks, approval and hooks included) bounded by `timeout`, then any
    /// input rounds, each request bounded by `timeout` again. `start` says
    /// where a resumed call takes up.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn guarded(
        &self,
        call: ToolCall,
        toolset: &ToolSet,
        options: &ExecOptions,
        shared: &Shared,
        timeout: Duration,
        halted: &Halt,
        start: Start,
    ) -> (ToolCall, Result<CallToolResult>) {
        // Shared with the call's state, which shows it to the handlers of
        // the questions its server asks: moved, not copied.
        let mut call = Arc::new(call);
        let state = CallState::new(
            call.clone(),
            options.principal.clone(),
            shared.taint(),
            timeout,
            options.max_input_rounds,
            options.input_timeout,
            halted.clone(),
            shared.suspend,
        );
        let context = self.call_context(&call, options, shared, &state);
        let span = tracing::info_span!(
            "execute_tool",
            otel.name = tracing::field::Empty,
            otel.kind = "internal",
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %call.tool,
            gen_ai.tool.call.id = call.call_id.as_deref(),
            mcp_adapters.server = %call.server_id,
            gen_ai.tool.call.arguments = tracing::field::Empty,
            gen_ai.tool.call.result = tracing::field::Empty,
            error.r#type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        let traced = !span.is_disabled();
        if traced {
            span.record("otel.name", format!("execute_tool {}", call.exposed_name));
            if options.trace_content {
                span.record(
                    "gen_ai.tool.call.arguments",
                    Value::Object(call.arguments.clone()).to_string(),
                );
            }
        }
        // Boxed: every call's future is moved into the turn's set of running
        // calls, and a pointer moves faster than the pipeline's state.
        let pipeline = AssertUnwindSafe(Box::pin(self.pipeline(
            &mut call, toolset, context, options, shared, timeout, halted, &state, start,
        )))
        .catch_unwind()
        .instrument(span.clone());
        let outcome = match pipeline.await {
            Ok(result) => result,
            Err(panic) => Err(Error::new(
                ErrorKind::Server,
                format!("the call failed: {}", panic_message(&panic)),
            )),
        };
        if traced {
            match &outcome {
                Err(err) => crate::telemetry::record_failure(&span, err),
                Ok(result) if options.trace_content => {
                    if let Ok(json) = serde_json::to_string(result) {
                        span.record("gen_ai.tool.call.result", json);
                    }
                }
                Ok(_) => {}
            }
        }
        if let Some(journal) = shared.journal() {
            let stage = match &outcome {
                Err(err) => Waits::of(err).cloned(),
                Ok(_) => None,
            };
            let stage = stage.unwrap_or_else(|| Stage::Ended(Ended::of(&outcome)));
            let halted = halted.is_set();
            journal.update(|state| {
                state.halted |= halted;
                state.set_stage(&call, stage);
            });
            Box::pin(journal.flush_or_log()).await;
        }
        if let Err(err) = &outcome
            && Waits::of(err).is_none()
        {
            let kind = err.kind();
            tracing::warn!(server = %call.server_id, tool = %call.tool, call_id = call.call_id.as_deref().unwrap_or(""),
                kind = ?kind, reason = %err.message_with_causes(), "tool call not completed");
        }
        // The call's state (and every answerer that held it) is gone by now,
        // unless a server kept one: then the call is copied.
        drop(state);
        let call = Arc::try_unwrap(call).unwrap_or_else(|shared| ToolCall::clone(&shared));
        (call, outcome)
    }

    /// What the server is told of `call` besides its arguments, with the
    /// answerer of its questions.
    fn call_context(
        &self,
        call: &ToolCall,
        options: &ExecOptions,
        shared: &Shared,
        state: &Arc<CallState>,
    ) -> CallContext {
        CallContext {
            server_id: call.server_id.clone(),
            tool: call.tool.clone(),
            call_id: call.call_id.clone(),
            principal: options.principal.clone(),
            assigns: shared.assigns.clone(),
            taint: state.taint().clone(),
            meta: options.meta.clone(),
            progress: options.progress.clone(),
            input_responses: None,
            request_state: None,
            answerer: Some(Answerer::for_call(
                self.governor.clone(),
                call.server_id.clone(),
                state.clone(),
            )),
            idempotency_key: Some(IdempotencyKey::new(shared.turn.clone(), call.index)),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn pipeline(
        &self,
        call: &mut Arc<ToolCall>,
        toolset: &ToolSet,
        mut context: CallContext,
        options: &ExecOptions,
        shared: &Shared,
        timeout: Duration,
        halted: &Halt,
        state: &Arc<CallState>,
        start: Start,
    ) -> Result<CallToolResult> {
        let retry = options.retry_interrupted;
        match start {
            Start::Fresh => {}
            resumed => {
                // Boxed: a fresh call's future need not hold a resumed one's.
                return Box::pin(self.take_up(
                    call, toolset, context, options, shared, timeout, halted, state, resumed,
                ))
                .await;
            }
        }
        let first = {
            let mut first = std::pin::pin!(self.first_request(
                call,
                toolset,
                &mut context,
                halted,
                retry,
                shared,
                state
            ));
            // A call that completes at once never sets a timer; what each
            // call's future holds stays small, and the rest is boxed when it
            // is needed.
            match futures_util::poll!(first.as_mut()) {
                std::task::Poll::Ready(first) => first,
                std::task::Poll::Pending => tokio::select! {
                    biased;
                    first = first => first,
                    () = expiry(state) => Err(Error::new(
                        ErrorKind::Timeout,
                        format!(
                            "the call took longer than {} ms and was cancelled",
                            timeout.as_millis()
                        ),
                    )),
                },
            }
        };
        let (server, response, retry, _pass) = first?;
        match response {
            CallToolResponse::Complete(result) => Ok(result),
            response => {
                let call: &ToolCall = call;
                // The first request may have taken the context with it.
                if context.answerer.is_none() {
                    context = self.call_context(call, options, shared, state);
                }
                let mark = shared.marker(call);
                self.rounds
                    .complete_boxed(
                        call,
                        server.as_ref(),
                        context,
                        response,
                        options,
                        timeout,
                        halted,
                        state,
                        retry,
                        0,
                        shared.journal().map(|_| &mark as &Mark<'_>),
                    )
                    .await
            }
        }
    }

    /// A resumed call that was sent: one whose tool's questions waited
    /// (answered now, and the call goes on from the round it reached with
    /// the server's request state), or one whose task was still working
    /// (followed now). Its policy decision stands (it was sent); the
    /// server's gate is passed again.
    #[allow(clippy::too_many_arguments)]
    async fn take_up(
        &self,
        call: &mut Arc<ToolCall>,
        toolset: &ToolSet,
        context: CallContext,
        options: &ExecOptions,
        shared: &Shared,
        timeout: Duration,
        halted: &Halt,
        state: &CallState,
        start: Start,
    ) -> Result<CallToolResult> {
        let call: &ToolCall = call;
        let mark = shared.marker(call);
        let tool = toolset
            .resolve(&call.exposed_name)
            .filter(|t| t.server_id == call.server_id && t.tool.name == call.tool)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::UnknownTool,
                    format!(
                        "tool `{}` is no longer offered, so its call cannot go on",
                        call.exposed_name
                    ),
                )
            })?;
        let server = self.server(&call.server_id).ok_or_else(|| {
            Error::new(
                ErrorKind::Unavailable,
                format!("server `{}` is not part of this source", call.server_id),
            )
        })?;
        let retry = options.retry_interrupted && safe_to_repeat(&tool.tool);
        let alone = self.runs_alone(&call.server_id, &call.tool);
        let _pass = Box::pin(
            self.gates
                .pass(&call.server_id, alone, shared.slots.as_ref()),
        )
        .await;
        // A call taken up keeps its stage (waiting for its answers, or for its
        // task) until its next request goes out.
        let (response, answered) = match start {
            Start::Asked { round, asked } => (
                CallToolResponse::InputRequired(*asked),
                round.saturating_sub(1),
            ),
            Start::Task { task_id } => {
                state.start_clock(timeout);
                let following = server.resume_task(&call.tool, &task_id, context.clone());
                let response = tokio::select! {
                    response = following => response?,
                    () = state.expired() => return Err(Error::new(
                        ErrorKind::Timeout,
                        format!(
                            "following task `{task_id}` took longer than {} ms and was given up",
                            timeout.as_millis()
                        ),
                    )),
                };
                (response, 0)
            }
            Start::Fresh => return Err(Error::new(ErrorKind::Input, "nothing to take up")),
        };
        self.rounds
            .complete_boxed(
                call,
                server.as_ref(),
                context,
                response,
                options,
                timeout,
                halted,
                state,
                retry,
                answered,
                shared.journal().map(|_| &mark as &Mark<'_>),
            )
            .await
    }

    /// The checks, the policy (and approver), validation, the `before` hook,
    /// the server's gate and the first request; the pass through the gate is
    /// held until the call has ended.
    #[allow(clippy::too_many_arguments)]
    async fn first_request(
        &self,
        call: &mut Arc<ToolCall>,
        toolset: &ToolSet,
        context: &mut CallContext,
        halted: &Halt,
        retry_interrupted: bool,
        shared: &Shared,
        state: &Arc<CallState>,
    ) -> Result<(&Arc<dyn Server>, CallToolResponse, bool, Pass)> {
        let tool = match shared.caller {
            Caller::Model => toolset
                .resolve(&call.exposed_name)
                .filter(|t| t.server_id == call.server_id && t.tool.name == call.tool),
            Caller::App => toolset.app_tool(&call.server_id, &call.tool),
        };
        let tool = tool.ok_or_else(|| {
            Error::new(
                ErrorKind::UnknownTool,
                format!(
                    "unknown tool `{}`: call one of the tools offered",
                    call.exposed_name
                ),
            )
        })?;
        self.cache
            .check_offered(&self.servers, &call.server_id, &call.tool)
            .await?;
        if let Approving::Asking(approval) = self.check_policy(call, context, halted, shared)? {
            approval.await?;
        }
        if self.validate {
            self.check_arguments(call, &tool.tool.input_schema)?;
        }
        if let Some(hooks) = self.rounds.hooks() {
            hooks.before(Arc::make_mut(call), context).await?;
            // The handlers see the arguments as sent.
            if let Some(answerer) = &context.answerer {
                answerer.set_arguments(&call.arguments);
            }
        }
        if halted.is_set() {
            return Err(not_run_halted());
        }
        let server = self.server(&call.server_id).ok_or_else(|| {
            Error::new(
                ErrorKind::Unavailable,
                format!("server `{}` is not part of this source", call.server_id),
            )
        })?;
        let retry = retry_interrupted && safe_to_repeat(&tool.tool);
        let alone = self.runs_alone(&call.server_id, &call.tool);
        let slots = shared.slots.as_ref();
        let ungated = self.alone.is_empty();
        let pass = match self.gates.try_pass(&call.server_id, alone, slots, ungated) {
            Some(pass) => pass,
            None => {
                // Waiting for the server is not the call's time.
                let _paused = state.pause();
                Box::pin(self.gates.pass(&call.server_id, alone, slots)).await
            }
        };
        if halted.is_set() {
            return Err(not_run_halted());
        }
        if let Some(journal) = shared.journal() {
            let change = journal.stage(call, Stage::Sent);
            // Sent only once the state that says so is kept; keeping it is
            // not the call's time.
            let _paused = state.pause();
            Box::pin(journal.flush_through(change))
                .await
                .map_err(not_sent)?;
            if halted.is_set() {
                return Err(not_run_halted());
            }
        }
        let response = self
            .rounds
            .send_first(server.as_ref(), call, context, retry)
            .await?;
        Ok((server, response, retry, pass))
    }

    /// Whether a call to `server_id`'s `tool` runs alone on its server
    /// ([`SourceBuilder::run_alone`](crate::exec::SourceBuilder::run_alone)).
    fn runs_alone(&self, server_id: &str, tool: &str) -> bool {
        if self.alone.is_empty() {
            return false;
        }
        let name = format!("{server_id}/{tool}");
        self.alone.iter().any(|glob| glob.is_match(&name))
    }
}

/// Where a call's pipeline takes up.
pub(super) enum Start {
    /// From the start: checks, policy, the first request.
    Fresh,
    /// A resumed call whose tool asked at `round` and waits for the answers.
    Asked {
        round: usize,
        asked: Box<InputRequiredResult>,
    },
    /// A resumed call its server runs as task `task_id`.
    Task { task_id: String },
}

/// The call's clock running out, boxed: set only for a call still in
/// flight after its first poll.
fn expiry(state: &CallState) -> BoxFuture<'_, ()> {
    Box::pin(state.expired())
}

/// Whether a tool says calling it twice does no harm (`readOnlyHint` or
/// `idempotentHint`).
fn safe_to_repeat(tool: &crate::mcp::Tool) -> bool {
    let hint = |name: &str| {
        tool.annotations
            .as_ref()
            .and_then(|a| a.get(name))
            .and_then(Value::as_bool)
            == Some(true)
    };
    hint("readOnlyHint") || hint("idempotentHint")
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        format!("panicked: {s}")
    } else if let Some(s) = panic.downcast_ref::<String>() {
        format!("panicked: {s}")
    } else {
        "panicked".to_owned()
    }
}
