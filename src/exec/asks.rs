//! What servers ask of the client: a person's answer (elicitation), a
//! completion from the application's model (sampling) and the client's roots.
//!
//! The application says what it can answer once, in [`Handlers`]; the MCP
//! clients declare exactly that, and every question reaches the same handler
//! with the same description of the call it belongs to, whichever way the
//! server asked:
//!
//! - in an `input_required` result (MCP 2026-07-28, and a 2026 task that
//!   needs input): a round of keyed requests;
//! - as a request sent during the call (revisions up to 2025-11-25): one
//!   request, attributed to its call (over streamable HTTP by the stream it
//!   arrived on; over stdio to the server's one call in flight, or marked
//!   [`Attribution::Ambiguous`] when several are).
//!
//! Everything goes through an [`Answerer`], which applies the governed
//! pipeline's rules: bounds on rounds and on the time to answer, the call's
//! timeout stopped while the application answers, the sampling rules and caps,
//! and a halt when a handler cancels.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::watch;

use super::clock::{CallClock, Halt, Paused};
use super::input::{
    DEFAULT_INPUT_TIMEOUT, DEFAULT_MAX_INPUT_ROUNDS, InputAnswer, InputHandler, InputQuestions,
    not_completed,
};
use super::policy::{Action, Approval, ApprovalRequest, Approver, Policy};
use super::server::BoxFuture;
use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{
    CreateMessageParams, CreateMessageResult, ElicitResult, Elicitation, IncludeContext,
    InputRequest, InputRequests, InputRequiredResult, InputResponse, InputResponses,
    ListRootsResult, Root,
};

/// The default bound on the sampling requests one call's server may make: 10.
pub const DEFAULT_MAX_SAMPLING_REQUESTS: usize = 10;

/// What the application can answer when a server asks: questions for a person
/// ([`input`](Self::input)), completions from its model
/// ([`sampling`](Self::sampling)) and its roots ([`roots`](Self::roots)).
///
/// Give the same `Handlers` to the MCP clients
/// ([`ClientOptions::handlers`](crate::ClientOptions::handlers), so that they
/// declare these capabilities when they start, as revisions up to 2025-11-25
/// require) and to the source that runs the calls
/// ([`SourceBuilder::handlers`](crate::SourceBuilder::handlers));
/// [`HubConfig::connect_with`](crate::HubConfig::connect_with) does both, and
/// a source given none takes its servers'. A capability is declared exactly
/// when its handler is configured: without any, servers ask nothing.
///
/// ```
/// use mcp_adapters::mcp::{CreateMessageResult, ElicitResult, Root};
/// use mcp_adapters::exec::{Handlers, InputAnswer, Roots, Sampling, SamplingAnswer};
///
/// let handlers = Handlers::new()
///     .input(|questions| Box::pin(async move {
///         // Show `questions.requests` to the person; here, everything is declined.
///         InputAnswer::Decline(format!("{} asked; nobody is here", questions.server_id))
///     }))
///     .sampling(Sampling::new(|request| Box::pin(async move {
///         // Send `request.params` to your model.
///         SamplingAnswer::Respond(CreateMessageResult::text("my-model", "..."))
///     })).max_tokens(1024))
///     .roots(Roots::new([Root::new("file:///home/me/project")?]));
/// let features = handlers.features();
/// assert!(features.elicitation_form && features.sampling && features.roots);
/// assert!(!features.sampling_tools);
/// # Ok::<(), mcp_adapters::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct Handlers {
    pub(crate) input: Option<InputHandler>,
    pub(crate) sampling: Option<Arc<Sampling>>,
    pub(crate) roots: Option<Roots>,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers")
            .field("features", &self.features())
            .finish_non_exhaustive()
    }
}

impl Handlers {
    /// No handler: the client declares nothing, and servers ask nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers elicitations (form and URL) and any other question a round
    /// asks that the library does not answer itself; see [`InputQuestions`].
    pub fn input<F>(mut self, handler: F) -> Self
    where
        F: Fn(InputQuestions) -> BoxFuture<'static, InputAnswer> + Send + Sync + 'static,
    {
        self.input = Some(Arc::new(handler));
        self
    }

    /// Answers sampling requests with the application's model.
    pub fn sampling(mut self, sampling: Sampling) -> Self {
        self.sampling = Some(Arc::new(sampling));
        self
    }

    /// The roots the client offers; see [`Roots::set`] to change them.
    pub fn roots(mut self, roots: Roots) -> Self {
        self.roots = Some(roots);
        self
    }

    /// The roots, if configured.
    pub fn roots_list(&self) -> Option<&Roots> {
        self.roots.as_ref()
    }

    /// Whether an input handler is configured.
    pub fn has_input(&self) -> bool {
        self.input.is_some()
    }

    /// What a client declares for these handlers.
    pub fn features(&self) -> ClientFeatures {
        let sampling = self.sampling.as_deref();
        ClientFeatures {
            elicitation_form: self.input.is_some(),
            elicitation_url: self.input.is_some(),
            sampling: sampling.is_some(),
            sampling_tools: sampling.is_some_and(|s| s.tools),
            sampling_context: sampling.is_some_and(|s| s.context),
            roots: self.roots.is_some(),
        }
    }
}

/// The client capabilities a set of [`Handlers`] declares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientFeatures {
    /// `elicitation.form`: an input handler.
    pub elicitation_form: bool,
    /// `elicitation.url`: an input handler.
    pub elicitation_url: bool,
    /// `sampling`: a sampling handler.
    pub sampling: bool,
    /// `sampling.tools`: the sampling handler takes tool use ([`Sampling::with_tools`]).
    pub sampling_tools: bool,
    /// `sampling.context`: `includeContext` is passed through ([`Sampling::include_context`]).
    pub sampling_context: bool,
    /// `roots` (with `listChanged` where the revision has it).
    pub roots: bool,
}

/// Answers a sampling request; see [`Sampling::new`].
pub type SamplingHandler =
    Arc<dyn Fn(SamplingRequest) -> BoxFuture<'static, SamplingAnswer> + Send + Sync>;

/// Sampling: the handler that asks the application's model, and the rules
/// every request goes through first.
///
/// A server's sampling request is untrusted input: its messages and system
/// prompt are the server's words, sent to the application's model at the
/// application's cost. So, before the handler sees a request:
///
/// - the [`policy`](Self::policy) decides (allow by default; `ask` goes to
///   the source's approver, which sees the request in
///   [`ApprovalRequest::sampling`]), with rules over `server/tool`, `tool`
///   being the call's tool (empty for a request outside any call or one that
///   cannot be attributed);
/// - at most [`max_requests_per_call`](Self::max_requests_per_call) requests
///   per call are answered ([`DEFAULT_MAX_SAMPLING_REQUESTS`]);
/// - `maxTokens` is lowered to [`max_tokens`](Self::max_tokens) when set;
/// - `includeContext` other than `none` is treated as `none`, unless
///   [`include_context`](Self::include_context) opts in;
/// - a request that offers tools is refused unless the handler takes tool
///   use ([`with_tools`](Self::with_tools)), as MCP requires.
///
/// Then the handler has [`ExecOptions::input_timeout`](crate::ExecOptions::input_timeout)
/// to answer, while the call's own timeout waits.
#[derive(Clone)]
pub struct Sampling {
    handler: SamplingHandler,
    tools: bool,
    context: bool,
    max_tokens: Option<u64>,
    max_requests: usize,
    policy: Policy,
}

impl std::fmt::Debug for Sampling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampling")
            .field("tools", &self.tools)
            .field("context", &self.context)
            .field("max_tokens", &self.max_tokens)
            .field("max_requests", &self.max_requests)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Sampling {
    /// Sampling answered by `handler`, for every server, with the defaults
    /// above.
    pub fn new<F>(handler: F) -> Self
    where
        F: Fn(SamplingRequest) -> BoxFuture<'static, SamplingAnswer> + Send + Sync + 'static,
    {
        Sampling {
            handler: Arc::new(handler),
            tools: false,
            context: false,
            max_tokens: None,
            max_requests: DEFAULT_MAX_SAMPLING_REQUESTS,
            policy: Policy::allow_all(),
        }
    }

    /// The handler takes requests that offer tools (`tools`, `toolChoice`) and
    /// answers with `tool_use` blocks: declares `sampling.tools`.
    pub fn with_tools(mut self) -> Self {
        self.tools = true;
        self
    }

    /// Passes `includeContext` through to the handler (declares
    /// `sampling.context`); without it, the handler always sees `none`.
    pub fn include_context(mut self) -> Self {
        self.context = true;
        self
    }

    /// Lowers a request's `maxTokens` to `tokens` when it asks for more.
    pub fn max_tokens(mut self, tokens: u64) -> Self {
        self.max_tokens = Some(tokens);
        self
    }

    /// Answers at most `requests` sampling requests per call; later ones are
    /// refused. 0 refuses every request made during a call.
    pub fn max_requests_per_call(mut self, requests: usize) -> Self {
        self.max_requests = requests;
        self
    }

    /// Which servers (and calls) may sample: rules over `server/tool` as for
    /// calls (see [`Policy`]), the default [`Policy::allow_all`].
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }
}

/// A sampling request for the handler: the server's parameters after the
/// rules of [`Sampling`] (`maxTokens` capped, `includeContext` as allowed),
/// and the call it belongs to.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SamplingRequest {
    /// The server that asked.
    pub server_id: String,
    /// The call the request belongs to.
    pub call: Attribution,
    /// What to send to the model: turn it into a request body with
    /// [`Provider::sampling_request`](crate::Provider::sampling_request), and
    /// pick the model with [`ModelPreferences::pick`](crate::mcp::ModelPreferences::pick).
    pub params: CreateMessageParams,
}

/// A sampling handler's answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SamplingAnswer {
    /// The model's message.
    Respond(CreateMessageResult),
    /// No completion: the server is told the request was rejected (up to
    /// 2025-11-25, error `-1`); in an input round, the call ends with an error
    /// naming `reason`.
    Decline(String),
    /// The same, and the turn halts (as
    /// [`Approval::DenyAndHalt`](crate::Approval::DenyAndHalt)).
    Cancel(String),
}

/// The roots a client offers (`roots/list`): `file://` URIs.
///
/// Cloning shares the list: [`set`](Self::set) changes it for every client
/// given these roots, and those whose session declared `roots.listChanged`
/// (revisions up to 2025-11-25) send `notifications/roots/list_changed`. In a
/// 2026-07-28 session the roots are answered inside `input_required` rounds.
#[derive(Clone)]
pub struct Roots {
    list: Arc<watch::Sender<Arc<Vec<Root>>>>,
}

impl std::fmt::Debug for Roots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Roots").field(&self.get()).finish()
    }
}

impl Roots {
    /// Roots offering `roots`.
    pub fn new(roots: impl IntoIterator<Item = Root>) -> Self {
        Roots {
            list: Arc::new(watch::Sender::new(Arc::new(roots.into_iter().collect()))),
        }
    }

    /// The current roots.
    pub fn get(&self) -> Vec<Root> {
        self.list.borrow().as_ref().clone()
    }

    /// Replaces the roots; clients tell their servers.
    pub fn set(&self, roots: impl IntoIterator<Item = Root>) {
        self.list
            .send_replace(Arc::new(roots.into_iter().collect()));
    }

    /// Sees every change (an MCP client announces them).
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn watch(&self) -> watch::Receiver<Arc<Vec<Root>>> {
        self.list.subscribe()
    }
}

/// What is known of a call that a server's question belongs to.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CallInfo {
    /// The tool's MCP name.
    pub tool: String,
    /// The name the model called.
    pub exposed_name: String,
    /// The call's id, if any.
    pub call_id: Option<String>,
    /// The arguments sent (after the `before` hook).
    pub arguments: Map<String, Value>,
    /// Who the call is made for.
    pub principal: Option<String>,
    /// Servers whose output is already in the model's context.
    pub taint: BTreeSet<String>,
}

/// Which call a server's question belongs to.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Attribution {
    /// This call's.
    Call(CallInfo),
    /// One of these calls', but the transport cannot say which: a request a
    /// stdio server (revisions up to 2025-11-25) sent while several of its
    /// calls were running. Never guessed.
    Ambiguous(Vec<CallInfo>),
    /// No call's: the server asked outside any call (at start-up, say, or a
    /// request on streamable HTTP's standalone stream).
    NoCall,
}

impl Attribution {
    /// The call, when the question belongs to exactly one.
    pub fn call(&self) -> Option<&CallInfo> {
        match self {
            Attribution::Call(info) => Some(info),
            _ => None,
        }
    }
}

/// How a server asked a round of questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Asking {
    /// In an `input_required` result (MCP 2026-07-28, or a task's status):
    /// the requests are keyed by the server's ids.
    InputRequired,
    /// As a request the server sent during the call (revisions up to
    /// 2025-11-25): one request, keyed by its JSON-RPC id.
    Request,
}

/// The handlers and the approver a source answers with.
pub(crate) struct Governor {
    pub(crate) handlers: Handlers,
    pub(crate) approver: Option<Approver>,
}

/// One call's share of the rules: its description, its bounds and what it
/// has used of them, its clock and its turn's halt.
pub(crate) struct CallState {
    info: Mutex<CallInfo>,
    max_rounds: usize,
    input_timeout: Duration,
    used: Mutex<Used>,
    clock: Mutex<Option<Arc<CallClock>>>,
    halt: Halt,
}

#[derive(Default)]
struct Used {
    requests: usize,
    samplings: usize,
}

impl CallState {
    pub(crate) fn new(
        info: CallInfo,
        max_rounds: Option<usize>,
        input_timeout: Option<Duration>,
        halt: Halt,
    ) -> Arc<Self> {
        Arc::new(CallState {
            info: Mutex::new(info),
            max_rounds: max_rounds.unwrap_or(DEFAULT_MAX_INPUT_ROUNDS),
            input_timeout: input_timeout.unwrap_or(DEFAULT_INPUT_TIMEOUT),
            used: Mutex::new(Used::default()),
            clock: Mutex::new(None),
            halt,
        })
    }

    fn info(&self) -> CallInfo {
        match self.info.lock() {
            Ok(info) => info.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The clock of the call's request now on the wire.
    pub(crate) fn set_clock(&self, clock: Arc<CallClock>) {
        if let Ok(mut slot) = self.clock.lock() {
            *slot = Some(clock);
        }
    }

    fn pause(&self) -> Option<Paused> {
        let clock = self.clock.lock().ok()?.clone()?;
        Some(clock.pause())
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
/// [`CallContext::answerer`](crate::CallContext::answerer) for each call, and
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
    server_id: String,
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
    pub(crate) fn for_call(
        governor: Arc<Governor>,
        server_id: impl Into<String>,
        call: Arc<CallState>,
    ) -> Self {
        Answerer {
            governor,
            server_id: server_id.into(),
            target: Target::One(call),
        }
    }

    pub(crate) fn for_server(governor: Arc<Governor>, server_id: impl Into<String>) -> Self {
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
            server_id,
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
    pub(crate) fn set_arguments(&self, arguments: &Map<String, Value>) {
        if let Target::One(state) = &self.target
            && let Ok(mut info) = state.info.lock()
        {
            info.arguments = arguments.clone();
        }
    }

    /// The server whose questions this answers.
    pub fn server_id(&self) -> &str {
        &self.server_id
    }

    /// The call the questions belong to.
    pub fn attribution(&self) -> Attribution {
        match &self.target {
            Target::One(state) => Attribution::Call(state.info()),
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
        self.states().iter().any(|s| s.halt.is_set())
    }

    fn states(&self) -> Vec<&Arc<CallState>> {
        match &self.target {
            Target::One(state) => vec![state],
            Target::Ambiguous(states) => states.iter().collect(),
            Target::NoCall => Vec::new(),
        }
    }

    fn halt(&self) {
        for state in self.states() {
            state.halt.set();
        }
    }

    /// Stops the clocks of the calls concerned while the application answers.
    fn pause(&self) -> Vec<Paused> {
        self.states().iter().filter_map(|s| s.pause()).collect()
    }

    fn input_timeout(&self) -> Duration {
        match &self.target {
            Target::One(state) => state.input_timeout,
            Target::Ambiguous(states) => states
                .iter()
                .map(|s| s.input_timeout)
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
            let answer = self
                .ask(questions, Asking::InputRequired, round)
                .await
                .map_err(|why| not_completed(asked, &why))?;
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
            return Err(Error::new(
                ErrorKind::Input,
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
            server_id: self.server_id.clone(),
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
        let tool = call.map_or("", |c| c.tool.as_str());
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
                    server_id: self.server_id.clone(),
                    tool: tool.to_owned(),
                    exposed_name: call.map(|c| c.exposed_name.clone()).unwrap_or_default(),
                    call_id: call.and_then(|c| c.call_id.clone()),
                    arguments: call.map(|c| c.arguments.clone()).unwrap_or_default(),
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
        if !state.count(state.max_rounds, |u| &mut u.requests) {
            return Err(Error::new(
                ErrorKind::InputRequired,
                format!(
                    "the server asked for input more than {} times during this call (the bound on \
                     input rounds)",
                    state.max_rounds
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
            return Err(NoAnswer::Refused("no input handler is configured".into()));
        };
        let questions = InputQuestions {
            server_id: self.server_id.clone(),
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
}

impl std::ops::Deref for NoAnswer {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            NoAnswer::Refused(s)
            | NoAnswer::Declined(s)
            | NoAnswer::Cancelled(s)
            | NoAnswer::Late(s) => s,
        }
    }
}
