//! Real MCP servers, through the official Rust SDK (the `rmcp` feature).

#[cfg(feature = "oauth")]
pub mod auth;
mod changes;
mod convert;
mod handler;
mod hosted;
#[cfg(feature = "rmcp-http")]
mod http;
mod hub;
mod lines;
mod live;
mod options;
mod requests;
mod session;
mod stdio;
mod tasks;
mod tolerant;

pub use hosted::{HostedOptions, HostedSplit, split_hosted};
#[doc(hidden)]
pub use lines::check_stdio_framing;
pub use live::McpClient;
pub use options::{ClientOptions, Lifecycle, Reconnect};
