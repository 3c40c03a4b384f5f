//! Execution: the agent-loop half of the library.
//!
//! The files read downward: each imports only files on the floors below its
//! own. `tests/layers_exec.rs` holds the table and checks it; from the ground
//! up:
//!
//! - `clock`, `future`: a call's deadline and the turn's halt; the boxed future.
//! - `policy`: which calls run, and the approver.
//! - `asks`: what the application configures to answer servers (handlers,
//!   sampling, roots) and what its handlers are given and answer.
//! - `answerer`: the machinery that answers, under the source's rules.
//! - `server`: the trait through which the library talks to servers.
//! - `cache`, `hooks`, `inprocess`, `options`: the parts a source holds or is
//!   given, and the in-process server.
//! - `input`, `turn`: a call's requests, round after round; a turn's answers
//!   and the record of each call.
//! - `source`: hubs and clients.
//! - `run`: running a turn's calls.
//! - `stream`: running calls while the model streams.

mod answerer;
mod asks;
mod cache;
mod clock;
mod future;
mod hooks;
mod inprocess;
mod input;
mod options;
mod policy;
mod run;
mod server;
mod source;
mod stream;
mod turn;

pub use answerer::Answerer;
pub use asks::{
    Asking, Attribution, CallInfo, ClientFeatures, DEFAULT_INPUT_TIMEOUT, DEFAULT_MAX_INPUT_ROUNDS,
    DEFAULT_MAX_SAMPLING_REQUESTS, Handlers, InputAnswer, InputHandler, InputQuestions, Roots,
    Sampling, SamplingAnswer, SamplingHandler, SamplingRequest,
};
pub use future::BoxFuture;
pub use hooks::Hooks;
pub use inprocess::InProcessServer;
pub use options::{CallStart, DEFAULT_CALL_TIMEOUT, ExecOptions};
pub use policy::{Action, Approval, ApprovalRequest, Approver, Policy};
pub use server::{CallContext, Progress, ProgressFn, Server, ServerState, ToolsPage};
pub use source::{Source, SourceBuilder};
pub use stream::StreamedExecution;
pub use turn::{CallRecord, Execution, Status};
