//! # mcp-adapters
//!
//! Connects MCP (Model Context Protocol) tools to LLM tool calling. You hold
//! one or more MCP servers and talk to a model through some provider's API;
//! given the servers' tools and the model's responses, this crate lists the
//! tools in the provider's format, reads the calls out of each response, runs
//! them through a governed pipeline and answers every one in the provider's
//! result shape. It never calls an LLM: you send the requests with your own
//! HTTP client.
//!
//! Everything that differs between providers (Anthropic Messages, OpenAI Chat
//! Completions and Responses, Gemini, Bedrock Converse, Mistral, Ollama, and
//! any provider you describe) lives in YAML specs, loaded once into a
//! [`Registry`] and interpreted by one generic engine.
//!
//! ## The pipeline, in order
//!
//! | step | what | where |
//! |---|---|---|
//! | 1 | the servers' tools, as MCP sends them | [`Tool`], [`mcp::parse_tools_list`], the [`mcp`] model |
//! | 2 | the tools a model is offered, under names every provider accepts | [`ToolSet`], its report in [`toolset`] |
//! | 3 | a provider's wire format | [`Registry::builtin`], [`Registry::with_dir`], [`Provider`] |
//! | 4 | the `tools` request parameter, strict schemas and their null paths | [`Provider::list_tools`] → [`Listing`], its options and report in [`listing`] |
//! | 5 | the calls in a model response; unknown tools and bad arguments answered, never sent | [`Provider::extract_calls`] → [`Extracted`] of [`ToolCall`]s and [`RejectedCall`]s |
//! | 5′ | the same calls assembled from a streamed response as it arrives, each handed out the moment it is complete, and the assistant message for the history | [`Provider::stream`] → [`stream::CallStream`] → [`stream::Streamed`]; [`Source::execute_stream`] → [`exec::StreamedExecution`] |
//! | 6 | running calls under a policy, concurrently, each with a timeout, answering what servers ask on the way (elicitation, sampling, roots; in `input_required` rounds or as requests during a call) | [`Source`], [`Policy`], [`ExecOptions`]; the handlers for what servers ask in [`exec`] |
//! | 6′ | an MCP sampling request as a provider's request body, and the response back | [`Provider::sampling_request`] → [`sampling::PreparedSampling`], [`Provider::sampling_result`] |
//! | 7 | answering every call, in the model's order, in the provider's shape, and (option `media` = `full`) the media a tool result cannot carry right after | [`Provider::answer`], [`Provider::answer_all`] → [`Turn`], [`Execution`]; [`results`] |
//!
//! Steps 1–5 and 7 are pure functions over JSON values; step 6 is async and
//! talks to servers through the [`Server`] trait: [`InProcessServer`] for Rust
//! closures, and (feature `rmcp`) [`McpClient`] for real stdio or HTTP servers,
//! started from an `mcpServers` file with [`HubConfig`]. The strict-schema
//! converter is usable on its own ([`strict`]).
//!
//! The crate root holds the names of that pipeline; the rest lives in public
//! modules by concern: [`exec`] (execution, its policy and the handlers for
//! what servers ask), [`client`] and [`client::auth`] (the MCP client and its
//! sign-in), [`stream`], [`search`] (deferred loading), [`toolset`] and
//! [`listing`] (names and reports), [`results`], [`sampling`], [`spec`],
//! [`mcp`] (MCP's wire model) and [`strict`]. The [`guide`] has a chapter per
//! topic, from the agent loop to the command line.
//!
//! ## The pure functions
//!
//! ```
//! use mcp_adapters::{CallToolResult, ListOptions, Outcome, Registry, ResultOptions, Tool, ToolSet};
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
//! // The `tools` request parameter.
//! let listing = provider.list_tools(&toolset, &ListOptions::new())?;
//! assert_eq!(listing.tools[0]["function"]["strict"], true);
//!
//! // The model called the tool (strict mode made it send `null` for `limit`).
//! let response = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
//!     {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"rust\", \"limit\": null}"}}
//! ]}}]});
//! let extracted = provider.extract_calls(&response, &listing)?;
//! let call = &extracted.calls[0];
//! assert_eq!(call.arguments, json!({"q": "rust"}).as_object().unwrap().clone());
//!
//! // Run it against the server yourself (or let a `Source` do it), then answer.
//! let result = CallToolResult::text("2 notes found");
//! let answer = provider.answer(call.call_id.as_deref(), &call.exposed_name, Outcome::Completed(&result), &ResultOptions::new())?;
//! assert_eq!(answer, json!({"role": "tool", "tool_call_id": "call_1", "content": "2 notes found"}));
//! # Ok::<(), mcp_adapters::Error>(())
//! ```
//!
//! ## The agent loop
//!
//! ```
//! use mcp_adapters::{CallToolResult, ExecOptions, InProcessServer, ListOptions, Policy, Registry, Source, Status, Tool};
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
//! let listing = hub.tools(provider, &ListOptions::new()).await?;
//! assert_eq!(listing.tools[0]["name"], "weather__forecast");
//!
//! // ... send listing.tools to the model; it answers with a tool_use block:
//! let response = json!({"content": [
//!     {"type": "tool_use", "id": "toolu_1", "name": "weather__forecast", "input": {"city": "Oslo"}}
//! ]});
//! let run = hub.execute_tool_calls(provider, &response, &listing, &ExecOptions::new()).await?;
//! assert_eq!(run.status, Status::Ok);
//! assert_eq!(run.turn.results[0]["content"][0]["text"], "Sunny in \"Oslo\"");
//! // next user turn: {"role": "user", "content": run.turn.results}, then run.turn.follow_ups
//! // (empty for Anthropic; see `Turn` for where each provider's go)
//! # Ok::<(), mcp_adapters::Error>(())
//! # }).unwrap();
//! ```
//!
//! ## Errors
//!
//! Every fallible function returns [`Error`]: a [`kind`](Error::kind), a
//! message, a [`Location`] (spec file and line, JSON pointer, tool, call id)
//! and the error it wraps as its [`source`](std::error::Error::source). Bad
//! input never panics; calls that cannot run are answered with an error the
//! model can read.
//!
//! ## Cargo features
//!
//! None by default. `rmcp` adds [`McpClient`] (stdio servers through the
//! official Rust SDK), `rmcp-http` its streamable HTTP transport, `oauth`
//! sign-in for HTTP servers behind OAuth 2.1 ([`client::auth`], with
//! [`ClientOptions::oauth`]), `eventstream` the binary `application/vnd.amazon.eventstream` framing
//! ([`stream::Framing::EventStream`]), `cli` the `mcp-adapters` command.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
// Docs link to the client and sign-in wherever they matter, and those exist
// only with the `rmcp` and `oauth` features: links are checked on the build
// with every feature, the one docs.rs makes (CI denies its warnings).
#![cfg_attr(not(feature = "oauth"), allow(rustdoc::broken_intra_doc_links))]

mod budget;
pub mod callers;
mod calls;
#[cfg(feature = "rmcp")]
pub mod client;
pub mod code;
mod config;
mod deferred;
mod describe;
mod error;
pub mod exec;
mod files;
pub mod guide;
pub mod hosted;
mod json;
pub mod listing;
pub mod mcp;
mod media;
pub mod programs;
pub mod results;
pub mod sampling;
pub mod search;
pub mod select;
pub mod spec;
pub mod store;
pub mod stream;
pub mod strict;
pub mod telemetry;
pub mod toolset;

pub use calls::{Extracted, RejectedCall, ToolCall};
#[cfg(feature = "rmcp")]
pub use client::{ClientOptions, McpClient};
pub use config::{HubConfig, ServerArgs, ServerConfig, ServerOAuth};
pub use error::{Error, ErrorKind, Location, Result};
pub use exec::{ExecOptions, Execution, InProcessServer, Policy, Server, Source, Status};
pub use listing::{ListOptions, Listing, StrictMode};
pub use mcp::{CallToolResult, Content, Tool};
pub use results::{Outcome, ResultOptions, Turn};
pub use select::SelectLimits;
pub use spec::{Provider, Registry};
pub use toolset::ToolSet;

/// The README's examples, compiled as doc tests (they use the `oauth` feature).
#[cfg(all(doctest, feature = "oauth"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
