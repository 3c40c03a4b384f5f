//! Running a turn's tool calls: governed, concurrent, timed, answered in order.

use std::collections::BTreeSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use serde_json::{Map, Value};

use super::asks::{Answerer, CallInfo, CallState};
use super::clock::{CallClock, Halt};
use super::policy::{Action, Approval, ApprovalRequest};
use super::server::{CallContext, ProgressFn, Server};
use super::source::Source;
use super::turn::Answering;
use crate::calls::{Extracted, ToolCall};
use crate::error::{Error, ErrorKind, Result};
use crate::listing::Listing;
use crate::mcp::{CallToolResponse, CallToolResult};
use crate::results::ResultOptions;
use crate::spec::Provider;
use crate::toolset::ToolSet;

/// The default bound on a call's first request (approval and hooks included)
/// and on each input round's server time: 300 s.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(300);

/// Options for [`Source::execute_tool_calls`], [`Source::execute_calls`] and
/// [`Source::execute_stream`]: how one turn's calls run.
///
/// ```
/// use std::time::Duration;
/// use mcp_adapters::{ExecOptions, ResultOptions, StructuredMode};
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
    pub(crate) max_concurrency: usize,
    pub(crate) call_start: CallStart,
    pub(crate) framing: Option<crate::spec::Framing>,
    pub(crate) call_timeout: Option<Duration>,
    pub(crate) results: ResultOptions,
    pub(crate) principal: Option<String>,
    pub(crate) assigns: Map<String, Value>,
    pub(crate) taint: BTreeSet<String>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) progress: Option<ProgressFn>,
    pub(crate) max_input_rounds: Option<usize>,
    pub(crate) input_timeout: Option<Duration>,
    pub(crate) retry_interrupted: bool,
}

impl std::fmt::Debug for ExecOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecOptions")
            .field("max_concurrency", &self.max_concurrency)
            .field("call_start", &self.call_start)
            .field("call_timeout", &self.call_timeout)
            .field("results", &self.results)
            .field("principal", &self.principal)
            .field("taint", &self.taint)
            .field("max_input_rounds", &self.max_input_rounds)
            .field("input_timeout", &self.input_timeout)
            .field("retry_interrupted", &self.retry_interrupted)
            .finish_non_exhaustive()
    }
}

impl ExecOptions {
    /// The concurrency limit and the per-call timeout these options give.
    pub(crate) fn limits(&self) -> (usize, Duration) {
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

    /// Bound on one call ([`DEFAULT_CALL_TIMEOUT`] otherwise): its first
    /// request, approval and hooks included, and then each input round's
    /// server time again (the input handler's time has its own bound,
    /// [`input_timeout`](Self::input_timeout)).
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = Some(timeout);
        self
    }

    /// The most input rounds one call may take ([`DEFAULT_MAX_INPUT_ROUNDS`](crate::DEFAULT_MAX_INPUT_ROUNDS)
    /// otherwise): the input handler is asked at most this many times, and a
    /// tool that asks once more ends the call with an error. 0 never asks.
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = Some(rounds);
        self
    }

    /// Sends a call once more when its server went away while it was in
    /// flight ([`ErrorKind::Interrupted`]), after the server is back, if the
    /// tool says it is safe to repeat (its annotations' `readOnlyHint` or
    /// `idempotentHint` is `true`). Off by default: a call that may have run
    /// is never sent again unless this is asked for.
    pub fn retry_interrupted(mut self, retry: bool) -> Self {
        self.retry_interrupted = retry;
        self
    }

    /// Bound on the input handler's answer to one round's questions
    /// ([`DEFAULT_INPUT_TIMEOUT`](crate::DEFAULT_INPUT_TIMEOUT), 600 s, otherwise); over it the call ends with an error.
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

    /// The caller's own data, passed to policy, hooks and servers untouched.
    pub fn assigns(mut self, assigns: Map<String, Value>) -> Self {
        self.assigns = assigns;
        self
    }

    /// Servers whose output is already in the model's context (earlier
    /// turns' [`Execution::ran_servers`]), for the policy's taint rules.
    pub fn taint(mut self, servers: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.taint = servers.into_iter().map(Into::into).collect();
        self
    }

    /// MCP request `_meta` sent with every call.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// When the calls of a streamed response start (see
    /// [`Source::execute_stream`]): as soon as each is complete (the
    /// default), or once the stream has ended.
    pub fn call_start(mut self, start: CallStart) -> Self {
        self.call_start = start;
        self
    }

    /// Reads a streamed response with another framing than the spec's (see
    /// [`CallStream::framing`](crate::CallStream::framing)).
    pub fn framing(mut self, framing: crate::spec::Framing) -> Self {
        self.framing = Some(framing);
        self
    }

    /// Receives progress notifications.
    pub fn progress(mut self, sink: impl Fn(super::Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(sink));
        self
    }
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

/// Whether the agent loop may go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// Every call was answered; go on.
    Ok,
    /// An approver answered deny-and-halt, or an input handler cancelled: answer
    /// the model if you like, then stop.
    Halt,
}

/// What happened to one call.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct CallRecord {
    /// The call's position in the model's response.
    pub index: usize,
    /// The call's id.
    pub call_id: Option<String>,
    /// The tool name the model called.
    pub exposed_name: Option<String>,
    /// The tool's server, when the call resolved.
    pub server_id: Option<String>,
    /// Whether the call completed with a result (`isError` or not). A call
    /// that ended while its tool asked for input is `false`, though its
    /// server is in [`Execution::ran_servers`].
    pub ran: bool,
    /// Why the call failed or was not sent.
    #[serde(serialize_with = "message")]
    pub error: Option<Error>,
}

fn message<S: serde::Serializer>(e: &Option<Error>, s: S) -> std::result::Result<S::Ok, S::Error> {
    match e {
        Some(e) => s.serialize_some(&format!("{:?}: {}", e.kind(), e.message_with_causes())),
        None => s.serialize_none(),
    }
}

/// The answers to a turn's calls.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct Execution {
    /// [`Status::Halt`] when an approver (or an input handler) halted the loop.
    pub status: Status,
    /// One answer per call, in the model's order, in the provider's shape.
    pub results: Vec<Value>,
    /// The media the answers could not carry, to put right after `results`
    /// (where, per provider: [`Turn`](crate::Turn)): empty unless the spec's
    /// `follow_up` rules apply (for instance with the `media: full` option).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<Value>,
    /// What happened to each call, in the same order.
    pub calls: Vec<CallRecord>,
    /// The servers whose results (or, for a call that ended while its tool
    /// asked for input, whose questions) are now in the model's context: add
    /// them to the next turn's taint.
    pub ran_servers: BTreeSet<String>,
    /// The tools the turn's searches found (exposed names, in the order
    /// found): pass them to the next listing with
    /// [`ListOptions::found`](crate::ListOptions::found), with those of the
    /// earlier turns.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub found: Vec<String>,
}

impl Source {
    /// Runs the tool calls in `response` (a response, a message or a list of
    /// items) and answers every one, in the model's order, in `provider`'s
    /// shape. `listing` is what the model was offered: calls resolve against
    /// its toolset only. See [`execute_calls`](Self::execute_calls).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when `response` is none of the provider's accepted
    /// forms or `listing` is another provider's.
    pub async fn execute_tool_calls(
        &self,
        provider: &Provider,
        response: &Value,
        listing: &Listing,
        options: &ExecOptions,
    ) -> Result<Execution> {
        let extracted = provider.extract_calls(response, listing)?;
        self.execute_calls(provider, extracted, listing, options)
            .await
    }

    /// Runs already extracted calls and answers every one.
    ///
    /// Rejected calls keep their answers and are never sent (HB-2); a call whose
    /// tool is not in the `listing`'s toolset is rejected here too. The others go through
    /// policy (and the approver), optional validation, hooks and the server,
    /// at most `max_concurrency` at once, each bounded by `call_timeout`; a
    /// tool that asks for input goes through its input rounds (see
    /// [`SourceBuilder::input_handler`](crate::SourceBuilder::input_handler)),
    /// and a call to a tool its server no longer lists is answered with an
    /// error, not sent. A failure, timeout or panic answers that call alone.
    /// Once an approver answers deny-and-halt, or an input handler cancels,
    /// calls not yet sent are answered as not run.
    ///
    /// The answers are shaped once every call has ended, in the model's order.
    /// Media the spec sends after the turn's answers (its `follow_up` rules, as
    /// with the `media: full` option) are in [`Execution::follow_ups`]: put
    /// them right after the results (see [`Turn`](crate::Turn) for where).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] only when the provider cannot shape an answer
    /// (a call without the id the provider requires) or the result options name
    /// an option the spec does not offer.
    pub async fn execute_calls(
        &self,
        provider: &Provider,
        extracted: Extracted,
        listing: &Listing,
        options: &ExecOptions,
    ) -> Result<Execution> {
        let toolset = listing.toolset();
        let mut turn = Answering::new(provider, options);
        for rejected in extracted.rejected {
            turn.rejected(rejected);
        }
        for search in &extracted.searches {
            self.search(provider, search, listing, options, &mut turn)?;
        }
        let (limit, timeout) = options.limits();
        let shared = Shared::new(options);
        let halted = Halt::default();
        let outcomes: Vec<(ToolCall, Result<CallToolResult>)> =
            futures_util::stream::iter(extracted.calls)
                .map(|call| self.guarded(call, toolset, options, &shared, timeout, &halted))
                .buffer_unordered(limit)
                .collect()
                .await;
        // Answered in the model's order: follow-ups and request limits go by it.
        for (call, outcome) in outcomes {
            turn.ended(call, outcome);
        }
        turn.finish(&halted)
    }

    /// Answers a search: tools the policy denies (given the turn's taint) are
    /// never found, as the toolset's filters already hid theirs (PO-7).
    pub(crate) fn search(
        &self,
        provider: &Provider,
        search: &crate::deferred::SearchCall,
        listing: &Listing,
        options: &ExecOptions,
        turn: &mut Answering<'_>,
    ) -> Result<()> {
        let visible = |tool: &crate::toolset::ExposedTool| {
            self.policy.as_ref().is_none_or(|p| {
                p.decide(&tool.server_id, &tool.tool.name, &options.taint) != Action::Deny
            })
        };
        let answered = provider.answer_search(search, listing, visible)?;
        tracing::debug!(query = %search.query, found = ?answered.found, "search answered");
        let record = CallRecord {
            index: search.index,
            call_id: search.call_id.clone(),
            exposed_name: listing.search_tool_name().map(str::to_owned),
            server_id: None,
            ran: true,
            error: None,
        };
        turn.searched(record, answered.answer, answered.found);
        Ok(())
    }

    /// One call through the pipeline, with panics caught: its first request
    /// (checks, approval and hooks included) bounded by `timeout`, then any
    /// input rounds, each request bounded by `timeout` again.
    pub(crate) async fn guarded(
        &self,
        mut call: ToolCall,
        toolset: &ToolSet,
        options: &ExecOptions,
        shared: &Shared,
        timeout: Duration,
        halted: &Halt,
    ) -> (ToolCall, Result<CallToolResult>) {
        let mut context = CallContext {
            server_id: call.server_id.clone(),
            tool: call.name.clone(),
            call_id: call.call_id.clone(),
            principal: options.principal.clone(),
            assigns: shared.assigns.clone(),
            taint: shared.taint.clone(),
            meta: options.meta.clone(),
            progress: options.progress.clone(),
            input_responses: None,
            request_state: None,
            answerer: None,
        };
        let state = CallState::new(
            CallInfo {
                tool: call.name.clone(),
                exposed_name: call.exposed_name.clone(),
                call_id: call.call_id.clone(),
                arguments: call.arguments.clone(),
                principal: options.principal.clone(),
                taint: options.taint.clone(),
            },
            options.max_input_rounds,
            options.input_timeout,
            halted.clone(),
        );
        context.answerer = Some(Answerer::for_call(
            self.governor.clone(),
            call.server_id.clone(),
            state.clone(),
        ));
        // Boxed so that the (large) pipeline state is not moved around by the stream.
        let pipeline = Box::pin(
            AssertUnwindSafe(self.pipeline(
                &mut call, toolset, context, options, timeout, halted, &state,
            ))
            .catch_unwind(),
        );
        let outcome = match pipeline.await {
            Ok(result) => result,
            Err(panic) => Err(Error::new(
                ErrorKind::Server,
                format!("the call failed: {}", panic_message(&panic)),
            )),
        };
        if let Err(err) = &outcome {
            let kind = err.kind();
            tracing::warn!(server = %call.server_id, tool = %call.name, call_id = call.call_id.as_deref().unwrap_or(""),
                kind = ?kind, reason = %err.message_with_causes(), "tool call not completed");
        }
        (call, outcome)
    }

    #[allow(clippy::too_many_arguments)]
    async fn pipeline(
        &self,
        call: &mut ToolCall,
        toolset: &ToolSet,
        mut context: CallContext,
        options: &ExecOptions,
        timeout: Duration,
        halted: &Halt,
        state: &CallState,
    ) -> Result<CallToolResult> {
        let clock = CallClock::new(timeout);
        state.set_clock(clock.clone());
        let first = tokio::select! {
            first = self.first_request(call, toolset, &mut context, halted, options.retry_interrupted) => first,
            () = clock.expired() => Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "the call took longer than {} ms and was cancelled",
                    timeout.as_millis()
                ),
            )),
        };
        let (server, response, retry) = first?;
        self.complete_rounds(
            call,
            server.as_ref(),
            context,
            response,
            options,
            timeout,
            halted,
            state,
            retry,
        )
        .await
    }

    /// The checks, the policy (and approver), validation, the `before` hook and
    /// the first request.
    async fn first_request(
        &self,
        call: &mut ToolCall,
        toolset: &ToolSet,
        context: &mut CallContext,
        halted: &Halt,
        retry_interrupted: bool,
    ) -> Result<(&Arc<dyn Server>, CallToolResponse, bool)> {
        let tool = toolset
            .resolve(&call.exposed_name)
            .filter(|t| t.server_id == call.server_id && t.tool.name == call.name)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::UnknownTool,
                    format!(
                        "unknown tool `{}`: call one of the tools offered",
                        call.exposed_name
                    ),
                )
            })?;
        self.check_offered(&call.server_id, &call.name).await?;
        self.check_policy(call, context, halted).await?;
        if self.validate {
            self.check_arguments(call, &tool.tool.input_schema)?;
        }
        if let Some(hooks) = &self.hooks {
            hooks.before(call, context).await?;
            // The handlers see the arguments as sent.
            if let Some(answerer) = &context.answerer {
                answerer.set_arguments(&call.arguments);
            }
        }
        if halted.is_set() {
            return Err(Error::new(
                ErrorKind::Denied,
                "not run: this turn was halted (by an approver or an input handler)",
            ));
        }
        let server = self.server(&call.server_id).ok_or_else(|| {
            Error::new(
                ErrorKind::Unavailable,
                format!("server `{}` is not part of this source", call.server_id),
            )
        })?;
        let retry = retry_interrupted && safe_to_repeat(&tool.tool);
        let response = self
            .send(server.as_ref(), call, context.clone(), retry)
            .await?;
        Ok((server, response, retry))
    }

    async fn check_policy(
        &self,
        call: &ToolCall,
        context: &CallContext,
        halted: &Halt,
    ) -> Result<()> {
        let Some(policy) = &self.policy else {
            return Ok(());
        };
        let (action, rule) = policy.decide_with_rule(&call.server_id, &call.name, &context.taint);
        let denied = |reason: String| Error::new(ErrorKind::Denied, reason);
        match action {
            Action::Allow => Ok(()),
            Action::Deny => Err(denied(match rule {
                Some(pattern) => format!("denied by policy (rule `{pattern}`)"),
                None => "denied by policy (no rule allows this tool)".to_owned(),
            })),
            Action::Ask => {
                let request = ApprovalRequest {
                    server_id: call.server_id.clone(),
                    tool: call.name.clone(),
                    exposed_name: call.exposed_name.clone(),
                    call_id: call.call_id.clone(),
                    arguments: call.arguments.clone(),
                    principal: context.principal.clone(),
                    taint: (*context.taint).clone(),
                    sampling: None,
                };
                match self.approve(request).await {
                    Approval::Allow => Ok(()),
                    Approval::Deny(reason) => {
                        Err(denied(format!("denied by the approver: {reason}")))
                    }
                    Approval::DenyAndHalt(reason) => {
                        halted.set();
                        tracing::warn!(server = %call.server_id, tool = %call.name, call_id = call.call_id.as_deref().unwrap_or(""),
                            reason = %reason, "approver halted the turn");
                        Err(denied(format!("denied by the approver: {reason}")))
                    }
                }
            }
        }
    }

    fn check_arguments(&self, call: &ToolCall, schema: &Value) -> Result<()> {
        let validator = self.validator(&call.server_id, &call.name, schema);
        let Some(validator) = validator.as_ref() else {
            return Ok(());
        };
        let instance = Value::Object(call.arguments.clone());
        let problems: Vec<String> = validator
            .iter_errors(&instance)
            .take(5)
            .map(|e| {
                let at = e.instance_path().as_str().to_owned();
                format!("{}: {e}", if at.is_empty() { "/" } else { &at })
            })
            .collect();
        if problems.is_empty() {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::InvalidArguments,
            format!("invalid arguments: {}", problems.join("; ")),
        ))
    }
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

/// Per-turn values every call's context shares.
pub(crate) struct Shared {
    assigns: Arc<Map<String, Value>>,
    taint: Arc<BTreeSet<String>>,
}

impl Shared {
    pub(crate) fn new(options: &ExecOptions) -> Self {
        Shared {
            assigns: Arc::new(options.assigns.clone()),
            taint: Arc::new(options.taint.clone()),
        }
    }
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
