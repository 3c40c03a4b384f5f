//! The user guide: the chapters under `docs/`, one module each, in the order a
//! new user reads them.
//!
//! | chapter | what it covers |
//! |---|---|
//! | [`agent_loop`] | the pure functions, live MCP servers, the agent loop for every provider, results, options and policy, a hub with deferred loading, names, strict mode and null paths, media, errors |
//! | [`streaming`] | calls run as a streamed response completes them, and the assistant message for the history |
//! | [`calls_from_code`] | programs the model writes that call the application's tools: the callers rule, what a response holds, answers for a program |
//! | [`code_mode`] | the model's program run here, in a sandbox, on any provider: the code tool, its limits, approvals inside a program, replays |
//! | [`server_requests`] | what servers ask: elicitation, sampling, roots, tasks, and sampling requests in a provider's format |
//! | [`sign_in`] | servers behind OAuth 2.1 |
//! | [`resilience`] | the toolset stays true, and a server that dies comes back |
//! | [`durable_turns`] | turns suspended where a call waits, handed over and resumed in another process, nothing sent twice |
//! | [`command_line`] | every command and flag of `mcp-adapters`, and the MCP conformance suite |
//! | [`interop`] | the matrix of popular third-party servers the tests list and call |
//! | [`security`] | the threat model: what the library defends against, what it leaves to the user, its limits |
//! | [`architecture`] | the source layout, the dependencies and what is written here instead, performance |
//! | [`spec_authors_guide`] | describing a provider in YAML |
//!
//! These modules hold documentation only, and every Rust example in them is a
//! doctest (those of a chapter that needs the `rmcp`, `oauth` or `code-mode` feature run
//! with that feature on). The chapters' links point at the Markdown files and
//! the sources in the repository, as they read on GitHub; here, the table above
//! leads from chapter to chapter.

#[cfg_attr(
    any(not(doctest), feature = "rmcp"),
    doc = include_str!("../docs/agent-loop.md")
)]
#[cfg_attr(
    all(doctest, not(feature = "rmcp")),
    doc = "The agent loop (its examples need the `rmcp` feature)."
)]
pub mod agent_loop {}

#[doc = include_str!("../docs/streaming.md")]
pub mod streaming {}

#[doc = include_str!("../docs/calls-from-code.md")]
pub mod calls_from_code {}

#[cfg_attr(
    any(not(doctest), feature = "code-mode"),
    doc = include_str!("../docs/code-mode.md")
)]
#[cfg_attr(
    all(doctest, not(feature = "code-mode")),
    doc = "Code mode (its examples need the `code-mode` feature)."
)]
pub mod code_mode {}

#[cfg_attr(
    any(not(doctest), feature = "rmcp"),
    doc = include_str!("../docs/server-requests.md")
)]
#[cfg_attr(
    all(doctest, not(feature = "rmcp")),
    doc = "What servers ask (its examples need the `rmcp` feature)."
)]
pub mod server_requests {}

#[cfg_attr(
    any(not(doctest), feature = "oauth"),
    doc = include_str!("../docs/sign-in.md")
)]
#[cfg_attr(
    all(doctest, not(feature = "oauth")),
    doc = "Servers that require sign-in (its examples need the `oauth` feature)."
)]
pub mod sign_in {}

#[doc = include_str!("../docs/resilience.md")]
pub mod resilience {}

#[doc = include_str!("../docs/durable-turns.md")]
pub mod durable_turns {}

#[doc = include_str!("../docs/command-line.md")]
pub mod command_line {}

#[doc = include_str!("../docs/interop.md")]
pub mod interop {}

#[doc = include_str!("../docs/security.md")]
pub mod security {}

#[doc = include_str!("../docs/architecture.md")]
pub mod architecture {}

#[doc = include_str!("../docs/spec-authors-guide.md")]
pub mod spec_authors_guide {}
