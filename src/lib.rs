//! mcp-adapters: connects MCP tools to LLM tool calling.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod error;
pub mod mcp;

pub use error::{Error, ErrorKind, Location, Result};
pub mod calls;
pub mod describe;
pub mod exec;
pub mod listing;
pub mod media;
pub mod results;
pub mod spec;
pub mod strict;
pub mod toolset;
