//! Execution: the agent-loop half of the library.

mod asks;
mod cache;
mod clock;
mod inprocess;
mod input;
mod policy;
mod run;
mod server;
mod source;
mod stream;
mod turn;

pub use asks::{
    Answerer, Asking, Attribution, CallInfo, ClientFeatures, DEFAULT_MAX_SAMPLING_REQUESTS,
    Handlers, Roots, Sampling, SamplingAnswer, SamplingHandler, SamplingRequest,
};
pub use inprocess::InProcessServer;
pub use input::{
    DEFAULT_INPUT_TIMEOUT, DEFAULT_MAX_INPUT_ROUNDS, InputAnswer, InputHandler, InputQuestions,
};
pub use policy::{Action, Approval, ApprovalRequest, Approver, Policy};
pub use run::{CallRecord, CallStart, DEFAULT_CALL_TIMEOUT, ExecOptions, Execution, Status};
pub use server::{BoxFuture, CallContext, Progress, ProgressFn, Server, ServerState, ToolsPage};
pub use source::{Hooks, Source, SourceBuilder};
pub use stream::StreamedExecution;
