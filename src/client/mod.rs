//! Real MCP servers, through the official Rust SDK (the `rmcp` feature).

mod changes;
mod convert;
#[cfg(feature = "rmcp-http")]
mod http;
mod hub;
mod requests;
mod session;
mod stdio;
mod tasks;

pub use session::{ClientOptions, Lifecycle, McpClient};
