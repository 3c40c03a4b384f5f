//! mcp-adapters: connects MCP tools to LLM tool calling.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod error;
pub mod mcp;

#[cfg(feature = "rmcp")]
pub use client::{ClientOptions, McpClient};
pub use config::{HubConfig, ServerConfig};
pub use error::{Error, ErrorKind, Location, Result};
pub mod calls;
#[cfg(feature = "rmcp")]
pub mod client;
pub mod config;
pub mod describe;
pub mod exec;
pub mod listing;
pub mod media;
pub mod results;
pub mod spec;
pub mod strict;
pub mod toolset;
