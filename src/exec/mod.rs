//! Execution: running a model's calls against MCP servers, and answering what
//! the servers ask on the way.
//!
//! A [`Source`] (a hub of named servers, or one client) lists the tools and
//! runs a turn's calls ([`Source::execute_tool_calls`],
//! [`Source::execute_stream`]) under its [`Policy`], [`Approver`] and
//! [`Hooks`], with the [`ExecOptions`] of the turn; the answers come back as
//! an [`Execution`], with a [`CallRecord`] per call. Servers are reached
//! through the [`Server`] trait: [`InProcessServer`] for Rust closures, and
//! the MCP client of [`crate::client`] for real ones. What servers ask of the
//! client (elicitation, sampling, roots, `input_required` rounds) is answered
//! by the [`Handlers`] the application configures ([`Sampling`], [`Roots`], an
//! input handler), each question told which call it belongs to
//! ([`Attribution`]).

// The files read downward: each imports only files on the floors below its
// own (tests/layers.rs holds the table and checks it). From the ground up:
//
// - `clock`, `future`, `gate`, `keys`, `kept`: a call's deadline, the
//   turn's halt and the application's interrupt; the boxed future; who may
//   be in flight on a server at once; the calls' idempotency keys; the texts
//   budgets cut.
// - `policy`, `durable`: which calls run, and the approver; a suspended
//   turn's state.
// - `asks`: what the application configures to answer servers (handlers,
//   sampling, roots) and what its handlers are given and answer.
// - `answerer`: the machinery that answers, under the source's rules.
// - `server`: the trait through which the library talks to servers.
// - `skills`: skills listed, loaded and verified against their manifests.
// - `cache`, `hooks`, `inprocess`, `options`: the parts a source holds or is
//   given, and the in-process server.
// - `input`, `turn`: a call's requests, round after round; the record of
//   each call and of the turn.
// - `answering`, `source`: a turn's answers, shaped in the model's order;
//   hubs and clients.
// - `check`, `turn_run`: arguments and results held to the tool's schemas;
//   what a turn's calls share.
// - `approve`: the policy's and the approver's decisions on a call.
// - `call`: one call through the pipeline.
// - `approvals`, `program`: the provider's hosted calls and their approval
//   requests; a code-mode program, its calls through the pipeline.
// - `run`: running a turn's calls.
// - `stream`, `resume`: running calls while the model streams; taking up a
//   suspended turn.

mod answerer;
mod answering;
mod approvals;
mod approve;
mod asks;
mod cache;
mod call;
pub mod catalogs;
mod check;
mod clock;
pub(crate) mod durable;
mod future;
mod gate;
mod hooks;
mod inprocess;
mod input;
mod kept;
mod keys;
mod options;
mod policy;
#[cfg(feature = "code-mode")]
mod program;
mod resume;
mod run;
mod seal;
mod server;
pub mod skills;
mod source;
mod stream;
mod turn;
mod turn_run;

pub use answerer::Answerer;
pub use asks::{
    Asking, Attribution, CallInfo, ClientFeatures, DEFAULT_INPUT_TIMEOUT, DEFAULT_MAX_INPUT_ROUNDS,
    DEFAULT_MAX_SAMPLING_REQUESTS, Handlers, InputAnswer, InputHandler, InputQuestions, Roots,
    Sampling, SamplingAnswer, SamplingHandler, SamplingRequest,
};
pub use clock::Interrupt;
pub use durable::{
    Checkpoint, IDEMPOTENCY_KEY, IdempotencyKey, TURN_STATE_FORMAT, TURN_STATE_VERSION, TurnState,
    Wait, Waiting,
};
pub use future::BoxFuture;
pub use hooks::Hooks;
pub use inprocess::InProcessServer;
pub use options::{CallStart, DEFAULT_CALL_TIMEOUT, ExecOptions, OutputSchemaCheck};
pub use policy::{Action, Approval, ApprovalRequest, Approver, OrderChange, Policy};
pub use seal::StateKey;
pub use server::{
    CallContext, Progress, ProgressFn, Server, ServerState, ToolsPage, UnreadableTool,
};
pub use source::{Source, SourceBuilder};
pub use stream::StreamedExecution;
pub use turn::{CallOutcome, CallRecord, Execution, Status};
