//! mcp-adapters: connects MCP tools to LLM tool calling.
#![forbid(unsafe_code)]

pub mod strict;
