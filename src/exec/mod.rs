//! Execution: the agent-loop half of the library.
//!
//! Two calls do the work: [`Source::tools`] lists a hub's (or a client's)
//! tools in a provider's format, and [`Source::execute_tool_calls`] runs the
//! calls a model made through the governed pipeline (policy, approval,
//! validation, hooks, per-call timeout, concurrency limit) and answers every
//! one in the model's order, in the provider's shape.
//!
//! # Limits
//!
//! There is no cap on the calls in one response: each is answered, at most
//! [`ExecOptions::max_concurrency`] run at once, each bounded by its timeout
//! (10,000 calls against an in-process server take under a second). The
//! limits of [`calls`](crate::calls), [`results`](crate::results) and
//! [`toolset`](crate::toolset) apply. [`InProcessServer`] clones its tool
//! list on every listing; a tool built in memory deeper than serde_json can
//! clone is its author's concern.
//!
//! ```
//! use mcp_adapters::exec::{ExecOptions, InProcessServer, Policy, Source, Status};
//! use mcp_adapters::listing::ListOptions;
//! use mcp_adapters::mcp::{CallToolResult, Tool};
//! use mcp_adapters::spec::Registry;
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let weather = InProcessServer::new().tool(
//!     Tool::new("forecast", "Weather forecast", json!({"type": "object", "properties": {"city": {"type": "string"}}})),
//!     |args, _ctx| async move { Ok(CallToolResult::text(format!("Sunny in {}", args["city"]))) },
//! );
//! let hub = Source::hub()
//!     .server("weather", weather)
//!     .policy(Policy::new().allow("weather/*")?)
//!     .build()?;
//! let provider = Registry::builtin()?.get("anthropic")?;
//! let listing = hub.tools(provider, &ListOptions::new(), false).await?;
//! assert_eq!(listing.tools[0]["name"], "weather__forecast");
//!
//! // ... send listing.tools to the model; it answers with a tool_use block:
//! let response = json!({"content": [
//!     {"type": "tool_use", "id": "toolu_1", "name": "weather__forecast", "input": {"city": "Oslo"}}
//! ]});
//! let run = hub.execute_tool_calls(provider, &response, &ExecOptions::from_listing(&listing)).await?;
//! assert_eq!(run.status, Status::Ok);
//! assert_eq!(run.results[0]["content"][0]["text"], "Sunny in \"Oslo\"");
//! // next user turn: {"role": "user", "content": run.results}
//! # Ok::<(), mcp_adapters::Error>(())
//! # }).unwrap();
//! ```

mod inprocess;
mod policy;
mod run;
mod server;
mod source;

pub use inprocess::InProcessServer;
pub use policy::{Action, Approval, ApprovalRequest, Approver, Policy};
pub use run::{CallRecord, DEFAULT_CALL_TIMEOUT, ExecOptions, Execution, Status};
pub use server::{
    BoxFuture, CallContext, MAX_PAGES, Progress, ProgressFn, Server, ToolsPage, list_all_tools,
};
pub use source::{Hooks, Source, SourceBuilder, ToolsListing};
