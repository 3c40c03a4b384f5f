//! The machinery that answers what servers ask: an [`Answerer`] for each
//! call (and one per server for questions outside any call) applies the
//! source's rules to the application's [`Handlers`]: bounds on rounds and on
//! the time to answer, the call's timeout stopped while the application
//! answers, the sampling rules and caps, and a halt when a handler cancels.
//! When a tool's questions go unanswered, [`not_completed`] tells the model
//! what it asked for and why.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value};

use super::asks::{
    Asking, Attribution, CallInfo, ClientFeatures, DEFAULT_INPUT_TIMEOUT, DEFAULT_MAX_INPUT_ROUNDS,
    Handlers, InputAnswer, InputQuestions, Sampling, SamplingAnswer, SamplingRequest,
};
use super::clock::{CallClock, Clocked, Halt, Interrupt, Paused};
use super::durable::{Stage, Waits};
use super::policy::{Action, Approval, ApprovalRequest, Approver};
use crate::calls::ToolCall;
use crate::describe::sanitize_description;
use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{
    CreateMessageParams, CreateMessageResult, ElicitResult, Elicitation, IncludeContext,
    InputRequest, InputRequests, InputRequiredResult, InputResponse, InputResponses,
    ListRootsResult,
};

/// The handlers and the approver a source answers with.
pub(super) struct Governor {
    pub(super) handlers: Handlers,
    pub(super) approver: Option<Approver>,
}

/// What the answerers of one turn's calls share: who the calls are made
/// for, the bounds on what their servers ask, the turn's halt, and whether
/// a call may wait for answers not available now.
pub(super) struct CallRules {
    pub(super) principal: Option<Arc<str>>,
    pub(super) max_rounds: usize,
    pub(super) input_timeout: Duration,
    pub(super) halt: Halt,
    /// Whether the call may wait for answers not available now
    /// ([`ExecOptions::suspend`](crate::exec::ExecOptions::suspend)).
    pub(super) suspend: bool,
}

impl CallRules {
    /// The rules with the library's bounds where none is given.
    pub(super) fn new(
        principal: Option<Arc<str>>,
        max_rounds: Option<usize>,
        input_timeout: Option<Duration>,
        interrupt: Option<&Interrupt>,
        suspend: bool,
    ) -> Self {
        CallRules {
            principal,
            max_rounds: max_rounds.unwrap_or(DEFAULT_MAX_INPUT_ROUNDS),
            input_timeout: input_timeout.unwrap_or(DEFAULT_INPUT_TIMEOUT),
            halt: Halt::for_turn(interrupt, suspend),
            suspend,
        }
    }
}

/// One call's share of the rules: the call, the turn's rules and what it
/// has used of them, and its clock. One allocation for each call, shared by
/// the pipeline that runs it, its context and the answerers of its
/// questions.
pub(super) struct CallState {
    /// The call as it was made.
    call: ToolCall,
    /// Its arguments as sent, once the `before` hook changed them.
    changed: Mutex<Option<Map<String, Value>>>,
    taint: Arc<BTreeSet<String>>,
    rules: Arc<CallRules>,
    used: Mutex<Used>,
    clock: CallClock,
    /// Whether a request of the call went out (or is going out).
    sent: AtomicBool,
}

#[derive(Default)]
struct Used {
    requests: usize,
    samplings: usize,
}

impl Clocked for CallState {
    fn clock(&self) -> &CallClock {
        &self.clock
    }
}

impl CallState {
    /// The state of a call whose first request runs out `timeout` from now.
    pub(super) fn new(
        call: ToolCall,
        rules: Arc<CallRules>,
        taint: Arc<BTreeSet<String>>,
        timeout: Duration,
    ) -> Arc<Self> {
        Arc::new(CallState {
            call,
            changed: Mutex::new(None),
            taint,
            rules,
            used: Mutex::new(Used::default()),
            clock: CallClock::new(timeout),
            sent: AtomicBool::new(false),
        })
    }

    /// Notes that a request of the call goes out: cut off from now on, it
    /// may have run.
    pub(super) fn mark_sent(&self) {
        self.sent.store(true, Ordering::Relaxed);
    }

    /// Whether a request of the call went out.
    pub(super) fn was_sent(&self) -> bool {
        self.sent.load(Ordering::Relaxed)
    }

    /// The turn's rules.
    pub(super) fn rules(&self) -> &CallRules {
        &self.rules
    }

    /// The call as it was made.
    pub(super) fn call(&self) -> &ToolCall {
        &self.call
    }

    /// The call itself, once nothing else holds its state (else a copy).
    pub(super) fn into_call(mut self: Arc<Self>) -> ToolCall {
        // Taken out where it lies: the rest of the state is not moved first.
        match Arc::get_mut(&mut self) {
            Some(state) => std::mem::replace(&mut state.call, ToolCall::bare("", "")),
            None => self.call.clone(),
        }
    }

    fn changed(&self) -> std::sync::MutexGuard<'_, Option<Map<String, Value>>> {
        self.changed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The servers whose output was in the model's context when the call was made.
    pub(super) fn taint(&self) -> &Arc<BTreeSet<String>> {
        &self.taint
    }

    /// The call as handlers see it: built when a question comes, not for
    /// every call.
    fn info(&self) -> CallInfo {
        let mut call = self.call.clone();
        if let Some(arguments) = &*self.changed() {
            call.arguments = arguments.clone();
        }
        CallInfo {
            call,
            principal: self.rules.principal.as_deref().map(str::to_owned),
            taint: (*self.taint).clone(),
        }
    }

    /// Starts timing the call's next request, which runs out `timeout` from now.
    pub(super) fn start_clock(&self, timeout: Duration) {
        self.clock.start(timeout);
    }

    /// Completes when the request now on the wire has run out of time.
    pub(super) async fn expired(&self) {
        self.clock.expired().await;
    }

    /// Stops the clock of the call's request until the guard is dropped.
    pub(super) fn pause(self: &Arc<Self>) -> Paused<CallState> {
        CallClock::pause(self)
    }

    /// Counts one more of a kind; `false` when that goes past `max`.
    fn count(&self, max: usize, pick: impl Fn(&mut Used) -> &mut usize) -> bool {
        let Ok(mut used) = self.used.lock() else {
            return false;
        };
        let n = pick(&mut used);
        *n += 1;
        *n <= max
    }
}

/// Whose question it is, for an [`Answerer`].
#[derive(Clone)]
enum Target {
    One(Arc<CallState>),
    Ambiguous(Vec<Arc<CallState>>),
    NoCall,
}

/// Answers what a server asks of the client, under the source's rules:
/// handed to a [`Server`](crate::Server) in
/// [`CallContext::answerer`](crate::exec::CallContext::answerer) for each call, and
/// through [`Server::attach`](crate::Server::attach) for questions outside
/// any call.
///
/// [`McpClient`](crate::McpClient) uses it for the requests a server sends
/// during a call (revisions up to 2025-11-25) and for the input a task asks
/// for; the source itself answers `input_required` rounds with it. A `Server`
/// of your own that speaks another transport does the same.
#[derive(Clone)]
pub struct Answerer {
    governor: Arc<Governor>,
    /// Shared by the server's answerers.
    server_id: Arc<str>,
    target: Target,
}

impl std::fmt::Debug for Answerer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Answerer")
            .field("server_id", &self.server_id)
            .field("call", &self.attribution())
            .finish_non_exhaustive()
    }
}

impl Answerer {
    pub(super) fn for_call(
        governor: Arc<Governor>,
        server_id: Arc<str>,
        call: Arc<CallState>,
    ) -> Self {
        Answerer {
            governor,
            server_id,
            target: Target::One(call),
        }
    }

    pub(super) fn for_server(governor: Arc<Governor>, server_id: impl Into<Arc<str>>) -> Self {
        Answerer {
            governor,
            server_id: server_id.into(),
            target: Target::NoCall,
        }
    }

    /// An answerer for `handlers` alone, outside any source: no approver,
    /// the default bounds.
    pub fn standalone(handlers: Handlers, server_id: impl Into<String>) -> Self {
        Self::for_server(
            Arc::new(Governor {
                handlers,
                approver: None,
            }),
            Arc::<str>::from(server_id.into()),
        )
    }

    /// One answerer for a question that may belong to any of `calls` (their
    /// first's handlers answer it): the handler is told the call is
    /// [`Attribution::Ambiguous`]. With one candidate, it is that one; with
    /// none, `self`'s server outside any call.
    pub fn ambiguous(&self, calls: &[Answerer]) -> Answerer {
        let states: Vec<Arc<CallState>> = calls
            .iter()
            .filter_map(|a| match &a.target {
                Target::One(state) => Some(state.clone()),
                _ => None,
            })
            .collect();
        let governor = calls
            .first()
            .map_or_else(|| self.governor.clone(), |a| a.governor.clone());
        let target = match states.len() {
            0 => Target::NoCall,
            1 => Target::One(states[0].clone()),
            _ => Target::Ambiguous(states),
        };
        Answerer {
            governor,
            server_id: self.server_id.clone(),
            target,
        }
    }

    /// The arguments as sent, once the `before` hook changed them.
    pub(super) fn set_arguments(&self, arguments: &Map<String, Value>) {
        if let Target::One(state) = &self.target {
            *state.changed() = Some(arguments.clone());
        }
    }

    /// The server whose questions this answers.
    pub fn server_id(&self) -> &str {
        &self.server_id
    }

    /// The call the questions belong to.
    pub fn attribution(&self) -> Attribution {
        match &self.target {
            Target::One(state) => Attribution::Call(Box::new(state.info())),
            Target::Ambiguous(states) => {
                Attribution::Ambiguous(states.iter().map(|s| s.info()).collect())
            }
            Target::NoCall => Attribution::NoCall,
        }
    }

    /// What the handlers can answer: what a client declares.
    pub fn features(&self) -> ClientFeatures {
        self.governor.handlers.features()
    }

    /// The handlers.
    pub fn handlers(&self) -> &Handlers {
        &self.governor.handlers
    }

    /// Whether the call's turn was halted (a task then cancels itself).
    pub fn is_halted(&self) -> bool {
        self.states().iter().any(|s| s.rules.halt.is_set())
    }

    fn states(&self) -> Vec<&Arc<CallState>> {
        match &self.target {
            Target::One(state) => vec![state],
            Target::Ambiguous(states) => states.iter().collect(),
            Target::NoCall => Vec::new(),
        }
    }

    /// Whether the call's turn may be suspended
    /// ([`ExecOptions::suspend`](crate::exec::ExecOptions::suspend)): its
    /// questions may then wait for answers not available now, and a
    /// [`Server`](crate::Server) following a task for it may hand the task
    /// back ([`CallToolResponse::Task`](crate::mcp::CallToolResponse::Task))
    /// rather than wait for its end, when the task outlives this process
    /// ([`McpClient`](crate::McpClient) does for a server reached over
    /// HTTP). Only for the questions of one call.
    pub fn may_suspend(&self) -> bool {
        matches!(&self.target, Target::One(state) if state.rules.suspend)
    }

    fn can_wait(&self) -> bool {
        self.may_suspend()
    }

    fn halt(&self) {
        for state in self.states() {
            state.rules.halt.set();
        }
    }

    /// Stops the clocks of the calls concerned while the application answers.
    fn pause(&self) -> Vec<Paused<CallState>> {
        self.states().into_iter().map(CallState::pause).collect()
    }

    fn input_timeout(&self) -> Duration {
        match &self.target {
            Target::One(state) => state.rules.input_timeout,
            Target::Ambiguous(states) => states
                .iter()
                .map(|s| s.rules.input_timeout)
                .min()
                .unwrap_or(DEFAULT_INPUT_TIMEOUT),
            Target::NoCall => DEFAULT_INPUT_TIMEOUT,
        }
    }

    /// Answers the questions of an `input_required` result (round `round` of
    /// the call): the roots and sampling requests by the library and the
    /// sampling handler, everything else by the input handler, in one go.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InputRequired`] naming what the tool asked for and why
    /// the call cannot go on: a kind with no handler, a handler that declined,
    /// cancelled (the turn halts) or was too slow, a sampling request the
    /// rules refused.
    pub async fn answer_round(
        &self,
        asked: &InputRequiredResult,
        round: usize,
    ) -> Result<InputResponses> {
        let mut responses = InputResponses::new();
        let mut questions = InputRequests::new();
        for (key, request) in &asked.input_requests {
            match request {
                InputRequest::ListRoots(_) => {
                    let roots = self.list_roots().map_err(|e| {
                        not_completed(asked, &format!("for `{key}`: {}", e.message()))
                    })?;
                    responses.insert(key.clone(), roots.into());
                }
                InputRequest::Sampling(_)
                    if self.governor.handlers.sampling.is_none() && self.can_wait() =>
                {
                    return Err(waits_for(asked, round));
                }
                InputRequest::Sampling(params) => {
                    let result = self.sample((**params).clone()).await.map_err(|e| {
                        not_completed(asked, &format!("for `{key}`: {}", e.message()))
                    })?;
                    responses.insert(key.clone(), result.into());
                }
                other => {
                    questions.insert(key.clone(), other.clone());
                }
            }
        }
        if !questions.is_empty() {
            let answer = match self.ask(questions, Asking::InputRequired, round).await {
                Ok(answer) => answer,
                Err(NoAnswer::Later(_)) if self.can_wait() => {
                    return Err(waits_for(asked, round));
                }
                Err(why) => return Err(not_completed(asked, &why)),
            };
            responses.extend(answer);
        }
        Ok(responses)
    }

    /// Answers the questions of a task's round (its `inputRequests`, MCP
    /// 2026-07-28 tasks) as [`answer_round`](Self::answer_round) does, each
    /// round counted against the call's `max_input_rounds` with the requests
    /// made during the call.
    ///
    /// # Errors
    ///
    /// As [`answer_round`](Self::answer_round), and when the bound is reached.
    pub async fn answer_task_round(
        &self,
        asked: &InputRequiredResult,
        round: usize,
    ) -> Result<InputResponses> {
        self.count_request()
            .map_err(|e| not_completed(asked, e.message()))?;
        self.answer_round(asked, round).await
    }

    /// Answers an `elicitation/create` request the server sent during the
    /// call (revisions up to 2025-11-25), with the input handler. The
    /// handler's [`InputAnswer::Decline`] and [`InputAnswer::Cancel`] are
    /// sent as the `decline` and `cancel` actions (the server's own result
    /// then answers the call), and a cancel halts the turn; a handler that
    /// does not answer within the input timeout is sent `cancel`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InputRequired`] when no input handler is configured, the
    /// call's server asked more than `max_input_rounds` times, or the handler
    /// answered with something other than an elicitation result; the server
    /// is then answered with an error.
    pub async fn elicit(&self, request_id: &str, elicitation: Elicitation) -> Result<ElicitResult> {
        let refuse = |why: String| Error::new(ErrorKind::InputRequired, why);
        if self.governor.handlers.input.is_none() {
            return Err(refuse("this client has no input handler".into()));
        }
        let round = self.count_request()?;
        let mut requests = InputRequests::new();
        requests.insert(
            request_id.to_owned(),
            InputRequest::Elicitation(elicitation),
        );
        match self.ask(requests, Asking::Request, round).await {
            Ok(mut answers) => match answers.remove(request_id) {
                Some(InputResponse::Elicitation(result)) => Ok(result),
                Some(_) => Err(refuse(
                    "the input handler answered the elicitation with something other than an \
                     elicitation result"
                        .into(),
                )),
                None => Err(refuse(
                    "the input handler gave no answer to the elicitation".into(),
                )),
            },
            Err(NoAnswer::Declined(_)) => Ok(ElicitResult::decline()),
            Err(NoAnswer::Later(why)) => {
                // The request lives on the connection: it cannot wait for
                // the turn to resume in another process.
                tracing::warn!(server = %self.server_id, call = ?self.attribution().call().map(|c| &c.call.call_id),
                    reason = %why, "an elicitation request declined: it cannot wait for an answer that is not available now");
                Ok(ElicitResult::decline())
            }
            // Not answered in time: as a person who dismissed the form.
            Err(NoAnswer::Cancelled(_)) | Err(NoAnswer::Late(_)) => Ok(ElicitResult::cancel()),
            Err(NoAnswer::Refused(why)) => Err(refuse(why)),
        }
    }

    /// Answers a sampling request (sent during a call up to 2025-11-25, or in
    /// an input round) with the sampling handler, under the rules of
    /// [`Sampling`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Denied`] when the rules, the approver or the handler
    /// refused it (a handler's cancel also halts the turn),
    /// [`ErrorKind::Input`] for a request offering tools the handler does not
    /// take, [`ErrorKind::Timeout`] when the handler was too slow, and
    /// [`ErrorKind::InputRequired`] when no sampling handler is configured.
    pub async fn sample(&self, mut params: CreateMessageParams) -> Result<CreateMessageResult> {
        let Some(sampling) = self.governor.handlers.sampling.clone() else {
            return Err(Error::new(
                ErrorKind::InputRequired,
                "this client has no sampling handler",
            ));
        };
        if let Target::One(state) = &self.target
            && !state.count(sampling.max_requests, |u| &mut u.samplings)
        {
            return Err(Error::new(
                ErrorKind::Denied,
                format!(
                    "the server asked for more than {} completions during this call (the bound on \
                     sampling requests per call)",
                    sampling.max_requests
                ),
            ));
        }
        if (params.tools.is_some() || params.tool_choice.is_some()) && !sampling.tools {
            return Err(Error::input(
                "the sampling request offers tools, but this client did not declare sampling with \
                 tools",
            ));
        }
        if !sampling.context && params.include_context() != IncludeContext::None {
            tracing::debug!(server = %self.server_id, asked = %params.include_context(),
                "sampling includeContext treated as none");
            params.include_context = None;
        }
        if let Some(cap) = sampling.max_tokens {
            params.max_tokens = params.max_tokens.min(cap);
        }
        let _paused = self.pause();
        self.decide_sampling(&sampling, &params).await?;
        let request = SamplingRequest {
            server_id: self.server_id.to_string(),
            call: self.attribution(),
            params,
        };
        let timeout = self.input_timeout();
        match tokio::time::timeout(timeout, (sampling.handler)(request)).await {
            Ok(SamplingAnswer::Respond(result)) => Ok(result),
            Ok(SamplingAnswer::Decline(reason)) => Err(Error::new(
                ErrorKind::Denied,
                format!("the sampling handler declined: {reason}"),
            )),
            Ok(SamplingAnswer::Cancel(reason)) => {
                self.halt();
                tracing::warn!(server = %self.server_id, reason = %reason,
                    "sampling handler cancelled and halted the turn");
                Err(Error::new(
                    ErrorKind::Denied,
                    format!("the sampling handler cancelled it: {reason}"),
                ))
            }
            Err(_) => Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "the sampling handler did not answer within {} ms",
                    timeout.as_millis()
                ),
            )),
        }
    }

    async fn decide_sampling(
        &self,
        sampling: &Sampling,
        params: &CreateMessageParams,
    ) -> Result<()> {
        let attribution = self.attribution();
        let call = attribution.call();
        let tool = call.map_or("", |c| c.call.tool.as_str());
        let taint = call.map(|c| c.taint.clone()).unwrap_or_default();
        let (action, rule) = sampling
            .policy
            .decide_with_rule(&self.server_id, tool, &taint);
        let denied = |why: String| Error::new(ErrorKind::Denied, why);
        match action {
            Action::Allow => Ok(()),
            Action::Deny => Err(denied(match rule {
                Some(pattern) => {
                    format!("sampling denied by the sampling policy (rule `{pattern}`)")
                }
                None => "sampling denied by the sampling policy (no rule allows it)".to_owned(),
            })),
            Action::Ask => {
                let Some(approver) = &self.governor.approver else {
                    return Err(denied(
                        "this sampling request needs approval, and no approver is configured"
                            .into(),
                    ));
                };
                let request = ApprovalRequest {
                    call: match call {
                        Some(info) => info.call.clone(),
                        None => ToolCall::bare(&self.server_id, tool),
                    },
                    principal: call.and_then(|c| c.principal.clone()),
                    taint,
                    sampling: Some(Box::new(params.clone())),
                };
                match approver(request).await {
                    Approval::Allow => Ok(()),
                    Approval::Deny(reason) => {
                        Err(denied(format!("sampling denied by the approver: {reason}")))
                    }
                    Approval::DenyAndHalt(reason) => {
                        self.halt();
                        Err(denied(format!("sampling denied by the approver: {reason}")))
                    }
                    Approval::Later => Err(denied(
                        "sampling denied: the approver gave no answer now, and a sampling \
                         request is answered while its call waits"
                            .into(),
                    )),
                }
            }
        }
    }

    /// The client's roots, for `roots/list`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InputRequired`] when no roots are configured.
    pub fn list_roots(&self) -> Result<ListRootsResult> {
        match &self.governor.handlers.roots {
            Some(roots) => Ok(ListRootsResult::new(roots.get())),
            None => Err(Error::new(
                ErrorKind::InputRequired,
                "this client offers no roots",
            )),
        }
    }

    /// Counts a request sent during the call against `max_input_rounds`;
    /// returns its number.
    fn count_request(&self) -> Result<usize> {
        let Target::One(state) = &self.target else {
            return Ok(1);
        };
        if !state.count(state.rules.max_rounds, |u| &mut u.requests) {
            return Err(Error::new(
                ErrorKind::InputRequired,
                format!(
                    "the server asked for input more than {} times during this call (the bound on \
                     input rounds)",
                    state.rules.max_rounds
                ),
            ));
        }
        Ok(state.used.lock().map_or(1, |u| u.requests))
    }

    /// Asks the input handler; `Err` says why there is no answer.
    async fn ask(
        &self,
        requests: InputRequests,
        asking: Asking,
        round: usize,
    ) -> std::result::Result<InputResponses, NoAnswer> {
        let Some(handler) = self.governor.handlers.input.clone() else {
            if self.can_wait() {
                return Err(NoAnswer::Later("no input handler is configured".into()));
            }
            return Err(NoAnswer::Refused("no input handler is configured".into()));
        };
        let questions = InputQuestions {
            server_id: self.server_id.to_string(),
            call: self.attribution(),
            asking,
            round,
            requests,
        };
        let timeout = self.input_timeout();
        let _paused = self.pause();
        match tokio::time::timeout(timeout, handler(questions)).await {
            Ok(InputAnswer::Respond(responses)) => Ok(responses),
            Ok(InputAnswer::Decline(reason)) => Err(NoAnswer::Declined(format!(
                "the input handler declined: {reason}"
            ))),
            Ok(InputAnswer::Later) => Err(NoAnswer::Later(
                "the input handler gave no answer now, and the turn cannot be suspended".into(),
            )),
            Ok(InputAnswer::Cancel(reason)) => {
                self.halt();
                tracing::warn!(server = %self.server_id, reason = %reason,
                    "input handler cancelled and halted the turn");
                Err(NoAnswer::Cancelled(format!(
                    "the input handler cancelled it: {reason}"
                )))
            }
            Err(_) => Err(NoAnswer::Late(format!(
                "the input handler did not answer within {} ms",
                timeout.as_millis()
            ))),
        }
    }
}

/// Why the input handler gave no answers.
enum NoAnswer {
    /// No handler.
    Refused(String),
    Declined(String),
    Cancelled(String),
    Late(String),
    /// No answer now: the call may wait for it.
    Later(String),
}

impl std::ops::Deref for NoAnswer {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            NoAnswer::Refused(s)
            | NoAnswer::Declined(s)
            | NoAnswer::Cancelled(s)
            | NoAnswer::Late(s)
            | NoAnswer::Later(s) => s,
        }
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

/// The error of a call whose tool's questions wait for answers not available
/// now: the call waits at this round.
fn waits_for(asked: &InputRequiredResult, round: usize) -> Error {
    Waits::error(Stage::WaitingForInput {
        round,
        asked: asked.clone(),
    })
}

/// The error for a call that ended while its tool still required input: why,
/// and what it asked for (its texts cleaned as descriptions are).
pub(super) fn not_completed(asked: &InputRequiredResult, why: &str) -> Error {
    Error::new(
        ErrorKind::InputRequired,
        format!(
            "the tool asked for input and the call did not complete: {why}. {}",
            describe(&asked.input_requests)
        ),
    )
}

/// `It asked: confirm: "Delete?" (a form with confirm); ...`
fn describe(requests: &InputRequests) -> String {
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
}
