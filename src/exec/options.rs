//! How one turn's calls run: [`ExecOptions`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::clock::Interrupt;
use super::durable::{Checkpoint, TurnState};
use super::future::BoxFuture;
use super::policy::Approval;
use super::server::{Progress, ProgressFn};
use crate::results::ResultOptions;

/// The default bound on a call's first request (approval and hooks included)
/// and on each input round's server time: 300 s.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(300);

/// Options for
/// [`Source::execute_tool_calls`](crate::Source::execute_tool_calls),
/// [`Source::execute_calls`](crate::Source::execute_calls) and
/// [`Source::execute_stream`](crate::Source::execute_stream): how one turn's
/// calls run.
///
/// ```
/// use std::time::Duration;
/// use mcp_adapters::{ExecOptions, ResultOptions};
/// use mcp_adapters::results::StructuredMode;
///
/// let options = ExecOptions::new()
///     .max_concurrency(8)
///     .call_timeout(Duration::from_secs(30))
///     .principal("user-42")
///     .results(ResultOptions::new().structured(StructuredMode::Append));
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ExecOptions {
    pub(super) max_concurrency: usize,
    pub(super) max_concurrency_per_server: Option<usize>,
    pub(super) call_start: CallStart,
    pub(super) framing: Option<crate::stream::Framing>,
    pub(super) call_timeout: Option<Duration>,
    pub(super) results: ResultOptions,
    pub(super) principal: Option<String>,
    pub(super) bound_values: BTreeMap<String, Value>,
    pub(super) assigns: Map<String, Value>,
    pub(super) taint: BTreeSet<String>,
    pub(super) meta: Option<Map<String, Value>>,
    pub(super) progress: Option<ProgressFn>,
    pub(super) max_input_rounds: Option<usize>,
    pub(super) input_timeout: Option<Duration>,
    pub(super) retry_interrupted: bool,
    pub(super) output_schema: OutputSchemaCheck,
    pub(super) trace_content: bool,
    pub(super) suspend: bool,
    pub(super) decisions: BTreeMap<String, Approval>,
    pub(super) checkpoint: Option<Checkpoint>,
    pub(super) interrupt: Option<Interrupt>,
}

impl std::fmt::Debug for ExecOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecOptions")
            .field("max_concurrency", &self.max_concurrency)
            .field(
                "max_concurrency_per_server",
                &self.max_concurrency_per_server,
            )
            .field("call_start", &self.call_start)
            .field("call_timeout", &self.call_timeout)
            .field("results", &self.results)
            .field("principal", &self.principal)
            .field(
                "bound_values",
                &self.bound_values.keys().collect::<Vec<_>>(),
            )
            .field("taint", &self.taint)
            .field("max_input_rounds", &self.max_input_rounds)
            .field("input_timeout", &self.input_timeout)
            .field("retry_interrupted", &self.retry_interrupted)
            .field("output_schema", &self.output_schema)
            .field("trace_content", &self.trace_content)
            .field("suspend", &self.suspend)
            .field("decisions", &self.decisions)
            .field("checkpoint", &self.checkpoint.is_some())
            .field("interrupt", &self.interrupt)
            .finish_non_exhaustive()
    }
}

impl ExecOptions {
    /// The concurrency limit and the per-call timeout these options give.
    pub(super) fn limits(&self) -> (usize, Duration) {
        let limit = match self.max_concurrency {
            0 => std::thread::available_parallelism().map_or(4, usize::from),
            n => n,
        };
        (limit, self.call_timeout.unwrap_or(DEFAULT_CALL_TIMEOUT))
    }

    /// The defaults: as many calls at once as the machine has cores, each
    /// bounded by [`DEFAULT_CALL_TIMEOUT`], results as the spec says.
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls run at once; 0 (the default) means the machine's available parallelism.
    pub fn max_concurrency(mut self, calls: usize) -> Self {
        self.max_concurrency = calls;
        self
    }

    /// Calls in flight at once on any one server (within
    /// [`max_concurrency`](Self::max_concurrency)); unbounded by default. A
    /// call waiting for its server's slot has not started: its timeout does
    /// not run. 0 is taken as 1.
    pub fn max_concurrency_per_server(mut self, calls: usize) -> Self {
        self.max_concurrency_per_server = Some(calls);
        self
    }

    /// Bound on one call ([`DEFAULT_CALL_TIMEOUT`] otherwise): its first
    /// request, approval and hooks included, and then each input round's
    /// server time again (the input handler's time has its own bound,
    /// [`input_timeout`](Self::input_timeout)).
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = Some(timeout);
        self
    }

    /// The most input rounds one call may take ([`DEFAULT_MAX_INPUT_ROUNDS`](crate::exec::DEFAULT_MAX_INPUT_ROUNDS)
    /// otherwise): the input handler is asked at most this many times, and a
    /// tool that asks once more ends the call with an error. 0 never asks.
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = Some(rounds);
        self
    }

    /// Sends a call once more when its server went away while it was in
    /// flight ([`ErrorKind::Interrupted`](crate::ErrorKind::Interrupted)),
    /// after the server is back, if the tool says it is safe to repeat (its
    /// annotations' `readOnlyHint` or `idempotentHint` is `true`). Off by
    /// default: a call that may have run is never sent again unless this is
    /// asked for.
    pub fn retry_interrupted(mut self, retry: bool) -> Self {
        self.retry_interrupted = retry;
        self
    }

    /// What to do with a completed result (not `isError`) whose
    /// `structuredContent` breaks the tool's `outputSchema`, or that has none
    /// though the tool declares one (the MCP specification: servers MUST
    /// give structured results that conform; clients SHOULD check them).
    /// [`OutputSchemaCheck::Enforce`] by default. The schemas are compiled
    /// once per tool list.
    pub fn output_schema(mut self, check: OutputSchemaCheck) -> Self {
        self.output_schema = check;
        self
    }

    /// Bound on the input handler's answer to one round's questions
    /// ([`DEFAULT_INPUT_TIMEOUT`](crate::exec::DEFAULT_INPUT_TIMEOUT), 600 s, otherwise); over it the call ends with an error.
    pub fn input_timeout(mut self, timeout: Duration) -> Self {
        self.input_timeout = Some(timeout);
        self
    }

    /// How results are answered.
    pub fn results(mut self, options: ResultOptions) -> Self {
        self.results = options;
        self
    }

    /// Who the calls are made for (a user id, a tenant): given to the policy,
    /// the approver, hooks and servers.
    pub fn principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// The value of the arguments bound to `name`
    /// ([`BoundValue::Supplied`](crate::toolset::BoundValue::Supplied), see
    /// [`SourceBuilder::bind`](crate::exec::SourceBuilder::bind)) for this
    /// turn's calls: the principal's own (their tenant, their user id),
    /// written into each call's arguments before it is checked and sent,
    /// and never shown to the model. A call whose bound argument has no
    /// value here is refused, and not sent. Debug output names the values
    /// without showing them.
    pub fn bound_value(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.bound_values.insert(name.into(), value.into());
        self
    }

    /// The caller's own data, passed to policy, hooks and servers untouched.
    pub fn assigns(mut self, assigns: Map<String, Value>) -> Self {
        self.assigns = assigns;
        self
    }

    /// Servers whose output is already in the model's context (earlier
    /// turns' [`Execution::ran_servers`](crate::Execution::ran_servers)), for
    /// the policy's taint rules.
    pub fn taint(mut self, servers: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.taint = servers.into_iter().map(Into::into).collect();
        self
    }

    /// Records each call's arguments and result on its span
    /// (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`; off by
    /// default: they may hold what operators should not see). See
    /// [`telemetry`](crate::telemetry).
    pub fn trace_content(mut self, on: bool) -> Self {
        self.trace_content = on;
        self
    }

    /// MCP request `_meta` sent with every call.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// When the calls of a streamed response start (see
    /// [`Source::execute_stream`](crate::Source::execute_stream)): as soon as
    /// each is complete (the default), or once the stream has ended.
    pub fn call_start(mut self, start: CallStart) -> Self {
        self.call_start = start;
        self
    }

    /// Reads a streamed response with another framing than the spec's (see
    /// [`CallStream::framing`](crate::stream::CallStream::framing)).
    pub fn framing(mut self, framing: crate::stream::Framing) -> Self {
        self.framing = Some(framing);
        self
    }

    /// Receives progress notifications.
    pub fn progress(mut self, sink: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(sink));
        self
    }

    /// Suspends the turn, rather than holding the process, when a call
    /// waits for an answer that is not available now (off by default): a
    /// policy `ask` with no approver, or whose approver answers
    /// [`Approval::Later`]; a tool's `input_required` questions with no
    /// handler for them, or whose input handler answers
    /// [`InputAnswer::Later`](crate::exec::InputAnswer::Later); the
    /// provider's approval request for a hosted call, likewise; a call its
    /// server runs as a task, while the task works (the task goes on, and
    /// resuming follows it). Every other
    /// call runs to its end; the turn then comes back as
    /// [`Status::Suspended`](crate::exec::Status::Suspended), with its
    /// [`TurnState`] in [`Execution::suspended`](crate::Execution::suspended),
    /// to resume with [`Source::resume_turn`](crate::exec::Source::resume_turn).
    ///
    /// What cannot outlive the process is not waited on: a question a
    /// server of a revision up to 2025-11-25 sends during a call (an
    /// `elicitation/create` or `sampling/createMessage` request, which lives
    /// on its connection) that no handler answers now is declined, and the
    /// server's own result then answers the call.
    pub fn suspend(mut self, on: bool) -> Self {
        self.suspend = on;
        self
    }

    /// Approves the call `call` (the provider's call id, or `#INDEX`, its
    /// position in the response, for a call that has no id; for a hosted
    /// call, its approval request's id) where the policy asks about it: the
    /// approver is not asked. A policy that denies it still denies. A
    /// decision names one call of one turn: give each turn its own options,
    /// since ids may repeat from one response to the next, and `#INDEX`
    /// never names a call that has an id.
    pub fn approve_call(mut self, call: impl Into<String>) -> Self {
        self.decisions.insert(call.into(), Approval::Allow);
        self
    }

    /// Denies the call `call` (named as for
    /// [`approve_call`](Self::approve_call)) where the policy asks about
    /// it, with `reason` for the model.
    pub fn deny_call(mut self, call: impl Into<String>, reason: impl Into<String>) -> Self {
        self.decisions
            .insert(call.into(), Approval::Deny(reason.into()));
        self
    }

    /// Lets `interrupt` stop the turn from outside it (a process told to
    /// stop): once [`Interrupt::stop`] is called no call is sent any more,
    /// and once [`Interrupt::cut`] is, the calls still in flight are
    /// answered as interrupted; see [`Interrupt`] for what the turn then
    /// answers. Give every turn a clone of the same interrupt.
    pub fn interrupt(mut self, interrupt: Interrupt) -> Self {
        self.interrupt = Some(interrupt);
        self
    }

    /// Keeps the turn's whole state as it goes: `checkpoint` is handed it as
    /// the turn starts, before each request goes out, while a tool's
    /// questions wait for their answers, and as each call ends or comes to
    /// wait. Keep the last one (a durable-execution engine's step, a
    /// database row) and answer `Ok` once it is kept: if the process ends
    /// mid-turn, resuming it with
    /// [`Source::resume_turn`](crate::exec::Source::resume_turn) runs the
    /// calls never sent, keeps the results obtained, takes up the calls
    /// whose questions or tasks waited, and answers a call that was in
    /// flight as interrupted
    /// ([`ErrorKind::Interrupted`](crate::ErrorKind::Interrupted)), never
    /// sending it again.
    ///
    /// A request goes out only once the state that says so is kept: when
    /// the checkpoint fails (or panics), the call is not sent and is
    /// answered [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable)
    /// (the failure itself goes to the log, not to the model). States are
    /// kept one at a time, each holding every change of the ones before, so
    /// one write keeps the changes of several calls; a failure to keep any
    /// other change is logged. The future is dropped with the turn.
    ///
    /// ```
    /// use mcp_adapters::ExecOptions;
    ///
    /// let options = ExecOptions::new().checkpoint(|state| {
    ///     Box::pin(async move {
    ///         let document = state.to_json()?;
    ///         // ... write `document` to the turn's row, and await it ...
    ///         # let _ = document;
    ///         Ok(())
    ///     })
    /// });
    /// ```
    pub fn checkpoint<F>(mut self, checkpoint: F) -> Self
    where
        F: Fn(TurnState) -> BoxFuture<'static, crate::Result<()>> + Send + Sync + 'static,
    {
        self.checkpoint = Some(Arc::new(checkpoint));
        self
    }
}

/// What happens to a result that breaks its tool's `outputSchema`; see
/// [`ExecOptions::output_schema`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputSchemaCheck {
    /// The call is answered with an error naming where the result breaks the
    /// schema and why ([`ErrorKind::InvalidResult`](crate::ErrorKind::InvalidResult));
    /// the result stays in the call's record.
    #[default]
    Enforce,
    /// The result is answered as it is, with a warning (a `tracing` event)
    /// naming where it breaks the schema and why.
    Warn,
    /// Structured results are not checked.
    Off,
}

/// When the calls of a streamed response start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallStart {
    /// Each call starts the moment the stream completes it, while the model
    /// is still streaming the next ones.
    #[default]
    WhenComplete,
    /// Every call waits for the end of the stream.
    AfterStream,
}
