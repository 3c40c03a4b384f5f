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
//! This file holds what the application configures and what its handlers
//! are given and answer. Everything goes through an
//! [`Answerer`](crate::exec::Answerer) (`answerer.rs`), which applies the governed
//! pipeline's rules: bounds on rounds and on the time to answer, the call's
//! timeout stopped while the application answers, the sampling rules and caps,
//! and a halt when a handler cancels.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::future::BoxFuture;
use super::policy::Policy;
use crate::calls::ToolCall;
use crate::mcp::{CreateMessageParams, CreateMessageResult, InputRequests, InputResponses, Root};

/// The default bound on the sampling requests one call's server may make: 10.
pub const DEFAULT_MAX_SAMPLING_REQUESTS: usize = 10;

/// The default bound on input rounds per call: 10, as the official SDKs.
pub const DEFAULT_MAX_INPUT_ROUNDS: usize = 10;

/// The default bound on the time an input handler takes to answer one
/// round: 600 s, so that a person can answer.
pub const DEFAULT_INPUT_TIMEOUT: Duration = Duration::from_secs(600);

/// What the application can answer when a server asks: questions for a person
/// ([`input`](Self::input)), completions from its model
/// ([`sampling`](Self::sampling)) and its roots ([`roots`](Self::roots)).
///
/// Give the same `Handlers` to the MCP clients
/// ([`ClientOptions::handlers`](crate::ClientOptions::handlers), so that they
/// declare these capabilities when they start, as revisions up to 2025-11-25
/// require) and to the source that runs the calls
/// ([`SourceBuilder::handlers`](crate::exec::SourceBuilder::handlers));
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
    pub(super) input: Option<InputHandler>,
    pub(super) sampling: Option<Arc<Sampling>>,
    pub(super) roots: Option<Roots>,
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
///   [`ApprovalRequest::sampling`](crate::exec::ApprovalRequest::sampling)), with
///   rules over `server/tool`, `tool` being the call's tool (empty for a
///   request outside any call or one that cannot be attributed);
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
    pub(super) handler: SamplingHandler,
    pub(super) tools: bool,
    pub(super) context: bool,
    pub(super) max_tokens: Option<u64>,
    pub(super) max_requests: usize,
    pub(super) policy: Policy,
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
    /// [`Approval::DenyAndHalt`](crate::exec::Approval::DenyAndHalt)).
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
    /// The call: its server, the tool's name there, the name the model
    /// called, its id and the arguments sent (after the `before` hook).
    pub call: ToolCall,
    /// Who the call is made for.
    pub principal: Option<String>,
    /// Servers whose output is already in the model's context.
    pub taint: BTreeSet<String>,
}

/// Which call a server's question belongs to.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Attribution {
    /// This call's (boxed: a call is large, and the other variants small).
    Call(Box<CallInfo>),
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
            Attribution::Call(info) => Some(info.as_ref()),
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
        self.call.call().map(|c| c.call.tool.as_str())
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
    /// and the turn halts (as [`Approval::DenyAndHalt`](crate::exec::Approval::DenyAndHalt)).
    Cancel(String),
    /// No answer now: with [`ExecOptions::suspend`](crate::exec::ExecOptions::suspend)
    /// the call waits for the answers of an `input_required` round and the
    /// turn is suspended, to be resumed once they are there. A question
    /// that cannot wait (an `elicitation/create` request of a revision up to
    /// 2025-11-25, which lives on its connection) is declined; without
    /// `suspend`, the round is declined too, saying no answer came.
    Later,
}

/// Answers the questions of tools that ask for input; see
/// [`SourceBuilder::input_handler`](crate::exec::SourceBuilder::input_handler).
pub type InputHandler =
    Arc<dyn Fn(InputQuestions) -> BoxFuture<'static, InputAnswer> + Send + Sync>;
