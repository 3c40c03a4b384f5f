//! Real MCP servers, through the official Rust SDK (the `rmcp` feature).
//!
//! [`McpClient`] implements [`Server`](crate::exec::Server) over an rmcp
//! session: it spawns a stdio server ([`McpClient::spawn`]) or connects to a
//! streamable HTTP one ([`McpClient::connect_http`], the `rmcp-http`
//! feature), initializes it, lists its tools one page per call and calls
//! tools. For each call it
//!
//! - sends [`CallContext::meta`](crate::exec::CallContext::meta) as the
//!   request's `_meta` (the SDK adds a `progressToken` to every request);
//! - routes the server's `notifications/progress` for that token to
//!   [`CallContext::progress`](crate::exec::CallContext::progress);
//! - sends `notifications/cancelled` when the call's future is dropped before
//!   the answer arrives (a timeout in [`Source::execute_tool_calls`](crate::exec::Source::execute_tool_calls));
//! - answers [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable) when the
//!   server exits or the connection closes before it answered, so a crashed
//!   server never leaves a call hanging.
//!
//! [`HubConfig::connect`](crate::config::HubConfig::connect) starts every
//! server of a configuration and returns a [`SourceBuilder`](crate::exec::SourceBuilder).
//! The [`convert`] impls turn the SDK's `Tool`, `CallToolResult` and
//! `ContentBlock` into this crate's types and back.

pub mod convert;
mod hub;
mod session;
mod stdio;

pub use hub::FailedServer;
pub use session::{ClientOptions, McpClient};
