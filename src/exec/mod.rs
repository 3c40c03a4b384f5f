//! Execution: the agent-loop half of the library.

mod inprocess;
mod policy;
mod run;
mod server;
mod source;
mod stream;
mod turn;

pub use inprocess::InProcessServer;
pub use policy::{Action, Approval, ApprovalRequest, Approver, Policy};
pub use run::{CallRecord, CallStart, DEFAULT_CALL_TIMEOUT, ExecOptions, Execution, Status};
pub use server::{BoxFuture, CallContext, Progress, ProgressFn, Server, ToolsPage};
pub use source::{Hooks, Source, SourceBuilder};
pub use stream::StreamedExecution;
