//! One call through the governed pipeline, as one value: its data held
//! once, its stages as methods in the order they happen (admit, gate, send,
//! input rounds, output check, record).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use serde_json::Value;
use tokio::sync::SemaphorePermit;

use super::answerer::{Answerer, CallState, not_completed};
use super::answering::{unless_cut, unsent};
use super::approve::Approving;
use super::check::output_tool;
use super::durable::{Ended, Stage, Waits};
use super::future::BoxFuture;
use super::gate::Pass;
use super::input::{backoff, task_error, unknown_result_error};
use super::server::{CallContext, Server};
use super::turn::Checked;
use super::turn_run::{Caller, TurnRun};
use crate::calls::ToolCall;
use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{CallToolResponse, CallToolResult, InputRequiredResult, InputResponses};
use crate::telemetry::SpanName;
use crate::toolset::{Bound, ExposedTool, write_bound};

/// Where a call's pipeline takes up.
pub(super) enum Start {
    /// From the start: checks, policy, the first request.
    Fresh,
    /// A resumed call whose tool asked at `round` and waits for the answers.
    Asked {
        round: usize,
        asked: Box<InputRequiredResult>,
    },
    /// A resumed call its server runs as a task (boxed: rare, and every
    /// call's future holds the place).
    Task(Box<TaskStart>),
}

/// A resumed call's task: its id, and its status and poll interval as its
/// stage kept them.
pub(super) struct TaskStart {
    task_id: String,
    status: String,
    poll_interval_ms: Option<u64>,
}

impl Start {
    /// Where a call of a suspended turn at `stage` takes up; the stage of
    /// one that does not (it ended, or was sent when its process ended).
    pub(super) fn taken_up(stage: &Stage) -> std::result::Result<Start, &Stage> {
        match stage {
            Stage::Pending | Stage::WaitingForApproval => Ok(Start::Fresh),
            Stage::WaitingForInput { round, asked } => Ok(Start::Asked {
                round: *round,
                asked: Box::new(asked.clone()),
            }),
            Stage::WaitingForTask {
                task_id,
                status,
                poll_interval_ms,
            } => Ok(Start::Task(Box::new(TaskStart {
                task_id: task_id.clone(),
                status: status.clone(),
                poll_interval_ms: *poll_interval_ms,
            }))),
            other => Err(other),
        }
    }

    /// The stage a resumed call was taken up from, which it keeps while it
    /// waits again; none for a fresh call.
    fn stage(&self) -> Option<Stage> {
        match self {
            Start::Fresh => None,
            Start::Asked { round, asked } => Some(Stage::WaitingForInput {
                round: *round,
                asked: (**asked).clone(),
            }),
            Start::Task(task) => Some(Stage::WaitingForTask {
                task_id: task.task_id.clone(),
                status: task.status.clone(),
                poll_interval_ms: task.poll_interval_ms,
            }),
        }
    }
}

/// One call of a turn, from where it takes up to its checked outcome.
pub(super) struct Call<'r> {
    run: &'r TurnRun<'r>,
    /// The call as it was made, with what the turn shares with the call's
    /// context and the handlers of the questions its server asks.
    state: Arc<CallState>,
    /// The call as the `before` hook changed it, when there are hooks
    /// (boxed: rare, and every call's future holds the place).
    changed: Option<Box<ToolCall>>,
    /// What the server is told besides the arguments (emptied when the
    /// first request takes it, and built again for the rounds after).
    context: CallContext,
    start: Start,
    /// The call's tool, once resolved.
    tool: Option<&'r ExposedTool>,
    /// Whether a request its server's end interrupted is sent once more.
    retry: bool,
    /// The call as sent, when the application binds some of its arguments:
    /// `call` with their values written (`call` keeps what the model wrote).
    sent: Option<Arc<ToolCall>>,
}

/// A call's places in flight: the turn's permit and its server's pass, held
/// until the call has ended.
struct InFlight<'r> {
    _permit: SemaphorePermit<'r>,
    _pass: Pass,
}

impl<'r> TurnRun<'r> {
    /// `call`, ready to run from `start`: its first request runs out
    /// the turn's timeout from now.
    pub(super) fn call(&'r self, call: ToolCall, start: Start) -> Call<'r> {
        let state = CallState::new(call, self.rules.clone(), self.taint(), self.timeout);
        let context = self.context(&state);
        Call {
            run: self,
            state,
            changed: None,
            context,
            start,
            tool: None,
            retry: false,
            sent: None,
        }
    }
}

impl<'r> Call<'r> {
    /// The call: as the `before` hook changed it, or as it was made.
    fn call(&self) -> &ToolCall {
        self.changed.as_deref().unwrap_or_else(|| self.state.call())
    }

    /// The call through the pipeline, with panics caught: its first request
    /// (checks, approval and hooks included) bounded by the turn's timeout,
    /// then any input rounds, each request bounded by it again; then kept
    /// in the turn's state, and its result checked against the tool's
    /// `outputSchema`.
    pub(super) async fn run(mut self) -> (ToolCall, Checked) {
        let span = self.span();
        let outcome = {
            let (run, state) = (self.run, self.state.clone());
            // Pinned where it lies, not boxed on its own (the turn boxes the
            // call's whole future once): what wraps it moves a pointer.
            let pipeline = std::pin::pin!(self.pipeline());
            let mut pipeline = AssertUnwindSafe(pipeline).catch_unwind();
            // In the span at each poll, and only then: `Instrument` would
            // enter it once more to drop what it wraps (here a pointer, the
            // pipeline itself is dropped below), and a subscriber's every
            // entry and exit costs (an exit reads the wall clock).
            let pipeline = std::future::poll_fn(|cx| span.in_scope(|| pipeline.poll_unpin(cx)));
            match unless_cut(pipeline, run.halt(), &state).await {
                Ok(result) => result,
                Err(panic) => Err(Error::new(
                    ErrorKind::Server,
                    format!("the call failed: {}", panic_message(&panic)),
                )),
            }
        };
        self.record(&outcome, &span).await;
        let Call {
            run,
            state,
            changed,
            tool,
            context,
            ..
        } = self;
        // The call's state (and every answerer that held it) is gone by now,
        // unless a server kept one: then the call is copied.
        drop(context);
        let call = match changed {
            Some(changed) => *changed,
            None => state.into_call(),
        };
        let tool = match tool {
            Some(tool) => Some(&*tool.tool),
            // Not resolved on the way: an unknown tool, or a panic before.
            None => output_tool(run.toolset, &call),
        };
        // Checked where it lies: only a result its check replaces moves.
        let mut checked = Checked::as_it_is(outcome);
        let check = run.options.output_schema;
        run.source.check_in_place(&call, tool, &mut checked, check);
        if let Some(filter) = &call.select {
            // Boxed: a call without a filter need not hold its machinery.
            Box::pin(checked.select(filter, &run.options.results.select_limits)).await;
        }
        (call, checked)
    }

    /// The call's span, with its name and (when content is traced) its
    /// arguments.
    fn span(&self) -> tracing::Span {
        let call = self.call();
        // Every attribute known at the start is given here, where the
        // subscriber reads them once, rather than recorded afterwards (each
        // `record` is another visit of the span's data). Its kind is left
        // out: a span's kind is internal unless it says otherwise. The
        // values are only evaluated when a subscriber takes the span.
        let program = call.caller.program_id();
        let span = tracing::info_span!(
            "execute_tool",
            otel.name = &*SpanName::new("execute_tool", &call.exposed_name).text(),
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = call.tool.as_str(),
            gen_ai.tool.call.id = call.call_id.as_deref(),
            mcp_adapters.server = call.server_id.as_str(),
            // A call a program made says so, and which program.
            mcp_adapters.caller = program.map(|_| call.caller.kind()),
            mcp_adapters.program_id = program,
            gen_ai.tool.call.arguments = self
                .run
                .options
                .trace_content
                .then(|| serde_json::Value::Object(call.arguments.clone()).to_string()),
            gen_ai.tool.call.result = tracing::field::Empty,
            error.r#type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        span
    }

    /// The stages from where the call takes up: a fresh call's first
    /// request raced with its clock, then its input rounds.
    async fn pipeline(&mut self) -> Result<CallToolResult> {
        match std::mem::replace(&mut self.start, Start::Fresh) {
            // Interrupted before it started: not asked about, not sent.
            Start::Fresh if self.run.halt().interrupted() => return Err(unsent(self.run.halt())),
            Start::Fresh => {}
            // Boxed: a fresh call's future need not hold a resumed one's.
            resumed => return Box::pin(self.take_up(resumed)).await,
        }
        let state = self.state.clone();
        let timeout = self.run.timeout;
        let first = {
            let mut first = std::pin::pin!(self.first());
            // A call that completes at once never sets a timer; what each
            // call's future holds stays small, and the rest is boxed when it
            // is needed.
            match futures_util::poll!(first.as_mut()) {
                std::task::Poll::Ready(first) => first,
                std::task::Poll::Pending => tokio::select! {
                    biased;
                    first = first => first,
                    () = expiry(&state) => Err(Error::new(
                        ErrorKind::Timeout,
                        format!(
                            "the call took longer than {} ms and was cancelled",
                            timeout.as_millis()
                        ),
                    )),
                },
            }
        };
        let (server, response, _in_flight) = first?;
        match response {
            CallToolResponse::Complete(result) => Ok(result),
            response => self.rounds(server.as_ref(), response, 0).await,
        }
    }

    /// The first request: admitted, through the gates, sent. The places in
    /// flight are held until the call has ended.
    async fn first(&mut self) -> Result<(&'r Arc<dyn Server>, CallToolResponse, InFlight<'r>)> {
        let tool = self.admit().await?;
        let (server, in_flight) = self.gate(tool).await?;
        let response = self.send(server.as_ref()).await?;
        Ok((server, response, in_flight))
    }

    /// The tool resolved for the caller and still offered by its server,
    /// the policy (and the approver), the arguments against the tool's
    /// schema, the `before` hook.
    async fn admit(&mut self) -> Result<&'r ExposedTool> {
        let run = self.run;
        let source = run.source;
        // Not yet changed by the `before` hook.
        let call = self.state.call();
        let tool = match run.caller {
            Caller::Model => run
                .toolset
                .resolve(&call.exposed_name)
                .filter(|t| t.server_id == call.server_id && t.tool.name == call.tool),
            Caller::App => run.toolset.app_tool(&call.server_id, &call.tool),
        };
        self.tool = tool;
        let tool = tool.ok_or_else(|| {
            Error::new(
                ErrorKind::UnknownTool,
                format!(
                    "unknown tool `{}`: call one of the tools offered",
                    call.exposed_name
                ),
            )
        })?;
        // A call that writes what the application binds is refused first.
        source.refuse_bound(call)?;
        // The policy first: a call it denies reaches no server, not even
        // to list its tools again.
        {
            let approving = run.check_policy(call, &self.context)?;
            source
                .cache
                .check_offered(&source.servers, &call.server_id, &call.tool)
                .await?;
            if let Approving::Asking(approval) = approving {
                approval.await?;
            }
        }
        let bound = self.bound(tool)?;
        if let Some(hooks) = source.rounds.hooks() {
            // Boxed: a call without hooks need not hold the changed call.
            Box::pin(self.before(hooks)).await?;
        }
        self.sent = bound_call(self.call(), &bound)?;
        Ok(tool)
    }

    /// The `before` hook, which may change the call.
    async fn before(&mut self, hooks: &dyn super::hooks::Hooks) -> Result<()> {
        let mut changed = Box::new(self.state.call().clone());
        hooks.before(&mut changed, &self.context).await?;
        // The handlers see the arguments as sent.
        if let Some(answerer) = &self.context.answerer {
            answerer.set_arguments(&changed.arguments);
        }
        self.changed = Some(changed);
        Ok(())
    }

    /// The values the application binds for the call, its arguments
    /// checked with them written (when arguments are validated) against the
    /// tool's whole schema.
    fn bound(&self, tool: &'r ExposedTool) -> Result<Bound<'r>> {
        let run = self.run;
        let source = run.source;
        let bound = source.bound_values(self.call(), &run.options.bound_values)?;
        if source.validate {
            let schema = &run.toolset.with_bound(tool).input_schema;
            source.check_arguments(self.call(), schema, &bound)?;
        }
        Ok(bound)
    }

    /// The turn's halt, the call's server and its places in flight, and the
    /// turn's state saying the call is sent, kept before it is.
    async fn gate(&mut self, tool: &ExposedTool) -> Result<(&'r Arc<dyn Server>, InFlight<'r>)> {
        let halted = self.run.halt();
        if halted.stops_sending() {
            return Err(unsent(halted));
        }
        let server = self.server()?;
        self.retry = self.run.options.retry_interrupted && safe_to_repeat(&tool.tool);
        let in_flight = self.in_flight().await?;
        if halted.stops_sending() {
            return Err(unsent(halted));
        }
        if self.run.journal().is_some() {
            // Sent only once the state that says so is kept; keeping it is
            // not the call's time.
            let _paused = self.state.pause();
            Box::pin(self.run.mark(self.call(), Stage::Sent)).await?;
            if halted.stops_sending() {
                return Err(unsent(halted));
            }
        }
        Ok((server, in_flight))
    }

    /// The call's server, if the source has it.
    fn server(&self) -> Result<&'r Arc<dyn Server>> {
        self.run
            .source
            .server(&self.call().server_id)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Unavailable,
                    format!(
                        "server `{}` is not part of this source",
                        self.call().server_id
                    ),
                )
                .plain()
            })
    }

    /// The turn's permit, then the pass through the server's gate: waiting
    /// for either is not the call's time.
    async fn in_flight(&self) -> Result<InFlight<'r>> {
        let run = self.run;
        let source = run.source;
        let permit = match run.try_permit() {
            Some(permit) => permit,
            None => {
                let _paused = self.state.pause();
                Box::pin(run.permit()).await?
            }
        };
        let server_id = &self.call().server_id;
        let alone = source.runs_alone(server_id, &self.call().tool);
        let slots = run.slots.as_ref();
        let ungated = source.alone.is_empty();
        let pass = match source.gates.try_pass(server_id, alone, slots, ungated) {
            Some(pass) => pass,
            None => {
                let _paused = self.state.pause();
                Box::pin(source.gates.pass(server_id, alone, slots)).await
            }
        };
        Ok(InFlight {
            _permit: permit,
            _pass: pass,
        })
    }

    /// The first request, which may take the context with it.
    async fn send(&mut self, server: &dyn Server) -> Result<CallToolResponse> {
        self.state.mark_sent();
        let call = match (&self.sent, &self.changed) {
            (Some(sent), _) => sent,
            (None, Some(changed)) => &**changed,
            (None, None) => self.state.call(),
        };
        self.run
            .source
            .rounds
            .send_first(server, call, &mut self.context, self.retry)
            .await
    }

    /// A resumed call that was sent: one whose tool's questions waited
    /// (answered now, and the call goes on from the round it reached with
    /// the server's request state), or one whose task was still working
    /// (followed now). It is judged again first, as the document says
    /// nothing that was decided stands; the server's gate is passed again,
    /// and its stage holds until its next request goes out.
    async fn take_up(&mut self, start: Start) -> Result<CallToolResult> {
        // Sent in an earlier process.
        self.state.mark_sent();
        let call = self.call();
        let tool = self
            .run
            .toolset
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
        self.tool = Some(tool);
        self.judged_again(&start).await?;
        let bound = self.bound(tool)?;
        self.sent = bound_call(self.call(), &bound)?;
        let server = self.server()?;
        self.retry = self.run.options.retry_interrupted && safe_to_repeat(&tool.tool);
        let _in_flight = self.in_flight().await?;
        let (response, answered) = match start {
            Start::Asked { round, asked } => (
                CallToolResponse::InputRequired(*asked),
                round.saturating_sub(1),
            ),
            Start::Task(task) => (self.follow_task(server.as_ref(), &task.task_id).await?, 0),
            Start::Fresh => return Err(Error::input("nothing to take up")),
        };
        self.rounds(server.as_ref(), response, answered).await
    }

    /// A resumed call judged again before its next request, whatever stage
    /// its document says it reached: by the policy and the decisions given
    /// now (or the approver), and its arguments against the tool's schema
    /// when arguments are validated. A denied call is answered as denied and
    /// nothing more is sent for it. One that nobody approves now, in a turn
    /// that may be suspended again, waits again where it was (its questions
    /// or its task kept) until an approval is given.
    async fn judged_again(&self, start: &Start) -> Result<()> {
        let call = self.call();
        self.run.source.refuse_bound(call)?;
        if let Approving::Asking(approval) = self.run.check_policy(call, &self.context)? {
            match approval.await {
                Ok(()) => {}
                Err(error) => match (Waits::of(&error), start.stage()) {
                    (Some(_), Some(stage)) => {
                        tracing::warn!(server = %call.server_id, tool = %call.tool,
                            call_id = call.call_id.as_deref().unwrap_or(""),
                            "a resumed call waits for an approval given at resume before its next request");
                        return Err(Waits::error(stage));
                    }
                    _ => return Err(error),
                },
            }
        }
        Ok(())
    }

    /// The task a resumed call's server runs for it, followed again.
    async fn follow_task(&self, server: &dyn Server, task_id: &str) -> Result<CallToolResponse> {
        let timeout = self.run.timeout;
        self.state.start_clock(timeout);
        let following = server.resume_task(&self.call().tool, task_id, self.context.clone());
        tokio::select! {
            response = following => response,
            () = self.state.expired() => Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "following task `{task_id}` took longer than {} ms and was given up",
                    timeout.as_millis()
                ),
            )),
        }
    }

    /// [`input_rounds`](Self::input_rounds), boxed: most calls complete at
    /// once, and their futures need not hold the rounds' machinery.
    fn rounds<'a>(
        &'a mut self,
        server: &'a dyn Server,
        response: CallToolResponse,
        answered: usize,
    ) -> BoxFuture<'a, Result<CallToolResult>> {
        Box::pin(self.input_rounds(server, response, answered))
    }

    /// Drives the call from an answer to a result: asks the handlers and
    /// calls again while the server requires input. The turn's timeout
    /// bounds each request's server time, the input timeout each answer.
    /// `answered`: the rounds already answered (a call taken up again after
    /// its turn was suspended). The call's stage is kept in the turn's state
    /// as it goes (waiting for a round's answers, then sent).
    async fn input_rounds(
        &mut self,
        server: &dyn Server,
        mut response: CallToolResponse,
        mut answered: usize,
    ) -> Result<CallToolResult> {
        // The first request may have taken the context with it.
        if self.context.answerer.is_none() {
            self.context = self.run.context(&self.state);
        }
        let max_rounds = self.state.rules().max_rounds;
        loop {
            let asked = match response {
                CallToolResponse::Complete(result) => return Ok(result),
                CallToolResponse::InputRequired(asked) => asked,
                CallToolResponse::Task(task)
                    if self
                        .context
                        .answerer
                        .as_ref()
                        .is_some_and(Answerer::may_suspend) =>
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
            if self.run.halt().is_set() {
                return Err(not_completed(&asked, "the turn was halted"));
            }
            let responses = self.answer(&asked, answered).await?;
            answered += 1;
            self.context.input_responses = responses;
            self.context.request_state = asked.request_state;
            response = self.next_request(server, answered + 1).await?;
        }
    }

    /// The answers to round `answered + 1`'s questions; none for a round
    /// with no questions (after a pause, as a server shedding load asks).
    async fn answer(
        &self,
        asked: &InputRequiredResult,
        answered: usize,
    ) -> Result<Option<InputResponses>> {
        if asked.input_requests.is_empty() {
            tokio::time::sleep(backoff(answered)).await;
            return Ok(None);
        }
        let answerer = self
            .context
            .answerer
            .as_ref()
            .ok_or_else(|| not_completed(asked, "no input handler is configured"))?;
        if self.run.journal().is_some() {
            let waiting = Stage::WaitingForInput {
                round: answered + 1,
                asked: asked.clone(),
            };
            self.run.mark(self.call(), waiting).await?;
        }
        Ok(Some(answerer.answer_round(asked, answered + 1).await?))
    }

    /// Round `round`'s request, sent only once the state that says so is
    /// kept, and not once the turn was halted meanwhile; its server time
    /// bounded by the turn's timeout.
    async fn next_request(
        &mut self,
        server: &dyn Server,
        round: usize,
    ) -> Result<CallToolResponse> {
        if self.run.journal().is_some() {
            self.run.mark(self.call(), Stage::Sent).await?;
        }
        if self.run.halt().is_set() {
            return Err(Error::new(
                ErrorKind::InputRequired,
                "the tool asked for input and the call did not complete: the turn was halted \
                 before its answers were sent",
            ));
        }
        let timeout = self.run.timeout;
        self.state.start_clock(timeout);
        let rounds = &self.run.source.rounds;
        tokio::select! {
            sent = rounds.send(server, self.as_sent(), &self.context, self.retry) => sent,
            () = self.state.expired() => Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "round {round} of the call took longer than {} ms and was cancelled",
                    timeout.as_millis()
                ),
            )),
        }
    }

    /// The call as its server is sent it: with the values the application
    /// binds, when it binds some.
    fn as_sent(&self) -> &ToolCall {
        self.sent.as_deref().unwrap_or_else(|| self.call())
    }

    /// The call's end, where it belongs to the call: its stage in the
    /// turn's state, its span, the log of a call that did not complete.
    async fn record(&self, outcome: &Result<CallToolResult>, span: &tracing::Span) {
        if !span.is_disabled() {
            match outcome {
                Err(err) => crate::telemetry::record_failure(span, err),
                Ok(result) if self.run.options.trace_content => {
                    if let Ok(json) = serde_json::to_string(result) {
                        span.record("gen_ai.tool.call.result", json);
                    }
                }
                Ok(_) => {}
            }
        }
        if let Some(journal) = self.run.journal() {
            let stage = match outcome {
                Err(err) => Waits::of(err).cloned(),
                Ok(_) => None,
            };
            let stage = stage.unwrap_or_else(|| Stage::Ended(Ended::of(outcome)));
            let halted = self.run.halt().is_set();
            journal.update(|state| {
                state.halted |= halted;
                state.set_stage(self.call(), stage);
            });
            Box::pin(journal.flush_or_log()).await;
        }
        let call = self.call();
        if let Err(err) = outcome
            && Waits::of(err).is_none()
        {
            let kind = err.kind();
            tracing::warn!(server = %call.server_id, tool = %call.tool, call_id = call.call_id.as_deref().unwrap_or(""),
                kind = ?kind, reason = %err.message_with_causes(), "tool call not completed");
        }
    }
}

/// `call` with the `bound` values written, when there are some.
fn bound_call(call: &ToolCall, bound: &Bound<'_>) -> Result<Option<Arc<ToolCall>>> {
    if bound.is_empty() {
        return Ok(None);
    }
    let mut sent = ToolCall::clone(call);
    write_bound(&mut sent.arguments, bound)?;
    Ok(Some(Arc::new(sent)))
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
