//! Real MCP servers, through the official Rust SDK (the `rmcp` feature).

mod changes;
mod convert;
mod hub;
mod requests;
mod session;
mod stdio;

pub use session::{ClientOptions, Lifecycle, McpClient};
