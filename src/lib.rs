//! # mcp-adapters
//!
//! Connects MCP (Model Context Protocol) tools to LLM tool calling. Given the
//! tools of one or more MCP servers and a model's responses, the library
//!
//! 1. lists the tools in a provider's format ([`Provider::list_tools`]), under
//!    names every provider accepts ([`toolset`]), with descriptions cleaned of
//!    invisible characters ([`describe`]) and, where the provider has a strict
//!    mode, strict schemas whose optional properties became nullable ([`strict`]);
//! 2. reads the tool calls out of a model response ([`Provider::extract_calls`]),
//!    answering calls to unknown tools or with non-object arguments with an
//!    error, and sending nothing for them;
//! 3. runs the other calls through a governed pipeline: policy, approval,
//!    validation, hooks, per-call timeout, concurrency limit ([`exec`]);
//! 4. answers every call, in the model's order, in the provider's result shape,
//!    media included ([`Provider::answer`], [`media`]).
//!
//! It never calls an LLM: you send the requests with your own HTTP client.
//!
//! Everything that differs between providers lives in YAML specs (built in:
//! `anthropic`, `openai-chat`, `openai-responses`, `gemini`, and more), loaded
//! once into a [`Registry`] and interpreted by one generic engine; a folder of
//! your own specs adds or replaces providers ([`Registry::with_dir`]).
//!
//! ## The pure functions
//!
//! ```
//! use mcp_adapters::listing::ListOptions;
//! use mcp_adapters::mcp::{CallToolResult, Tool};
//! use mcp_adapters::results::{Outcome, ResultOptions};
//! use mcp_adapters::spec::Registry;
//! use mcp_adapters::toolset::ToolSet;
//! use serde_json::json;
//!
//! let tools = vec![Tool::new(
//!     "search",
//!     "Searches the notes",
//!     json!({"type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["q"]}),
//! )];
//! let toolset = ToolSet::client().server("notes", tools).build()?;
//! let provider = Registry::builtin()?.get("openai-chat")?;
//!
//! // 1. The `tools` request parameter.
//! let listing = provider.list_tools(&toolset, &ListOptions::new())?;
//! assert_eq!(listing.tools[0]["function"]["strict"], true);
//!
//! // 2. The model called the tool (strict mode made it send `null` for `limit`).
//! let response = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
//!     {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"rust\", \"limit\": null}"}}
//! ]}}]});
//! let extracted = provider.extract_calls(&response, &toolset, &listing.null_paths)?;
//! let call = &extracted.calls[0];
//! assert_eq!(call.arguments, json!({"q": "rust"}).as_object().unwrap().clone());
//!
//! // 3. Run it against the server yourself (or let `exec` do it), then 4. answer.
//! let result = CallToolResult::text("2 notes found");
//! let answer = provider.answer(call.call_id.as_deref(), &call.exposed_name, Outcome::Result(&result), &ResultOptions::default())?;
//! assert_eq!(answer, json!({"role": "tool", "tool_call_id": "call_1", "content": "2 notes found"}));
//! # Ok::<(), mcp_adapters::Error>(())
//! ```
//!
//! For the whole agent loop (listing from live servers, concurrent governed
//! execution, halting, taint across turns) see [`exec`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod calls;
#[cfg(feature = "rmcp")]
pub mod client;
pub mod config;
pub mod describe;
pub mod error;
pub mod exec;
pub mod json;
pub mod listing;
pub mod mcp;
pub mod media;
pub mod results;
pub mod spec;
pub mod strict;
pub mod toolset;

#[cfg(feature = "rmcp")]
pub use client::{ClientOptions, McpClient};
pub use config::{HubConfig, ServerConfig};
pub use error::{Error, ErrorKind, Location, Result};
pub use spec::{Provider, Registry};
