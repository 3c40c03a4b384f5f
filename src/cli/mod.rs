//! Command-line parsing and dispatch.

mod answers;
mod asks;
mod commands;
mod decisions;
mod demo;
mod input;
mod live;
mod output;
mod report;
mod run;
mod shown;
mod signals;
mod signin;
mod state;
mod stored;
mod strict;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use mcp_adapters::StrictMode;
use mcp_adapters::results::{Shape, StructuredMode};
use mcp_adapters::stream::Framing;

/// Lists MCP tools in an LLM provider's format, reads tool calls from model
/// responses and answers them, driven by YAML provider specs.
#[derive(Debug, Parser)]
#[command(name = "mcp-adapters", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Each command's help ends with examples of it, kept in `examples/` as the
/// text the help prints.
#[derive(Debug, Subcommand)]
enum Command {
    /// Lists the providers: a JSON array with each spec's id, title and options.
    #[command(
        after_help = include_str!("../../docs/cli-examples/providers.txt")
    )]
    Providers {
        #[command(flatten)]
        specs: SpecsArg,
    },
    /// Lists MCP tools (tools/list results) in a provider's format.
    #[command(
        after_help = include_str!("../../docs/cli-examples/tools.txt")
    )]
    Tools(ToolsArgs),
    /// Ranks tools (tools/list results) for a natural-language query, as the
    /// library's tool search answers a model: prints the tools found, best first.
    #[command(
        after_help = include_str!("../../docs/cli-examples/search-tools.txt")
    )]
    SearchTools(SearchToolsArgs),
    /// Reads the tool calls from a model response.
    #[command(
        after_help = include_str!("../../docs/cli-examples/calls.txt")
    )]
    Calls(CallsArgs),
    /// Lists live servers' tools, runs the calls in a model response against
    /// them and prints the answers. Without servers and RESPONSE: the whole
    /// cycle on a bundled demo server and a recorded response.
    #[command(
        after_help = include_str!("../../docs/cli-examples/run.txt")
    )]
    Run(RunArgs),
    /// Answers one call with an MCP CallToolResult (or a failure) in a provider's format.
    ///
    /// Prints the answer. When the answer sends media after the tool results (the spec's
    /// `follow_up` rules, as with `--option media=full` for openai-chat, mistral, gemini or
    /// bedrock-converse), prints a JSON array instead: the answer, then the follow-up items, in
    /// the order to append them (see the agent loop's table in docs/agent-loop.md for where
    /// each provider's go).
    #[command(
        after_help = include_str!("../../docs/cli-examples/result.txt")
    )]
    Result(ResultArgs),
    /// Converts a JSON Schema (or a tool's inputSchema) to a strict subset: prints
    /// {"schema", "null_paths"}, or {"error": {"path", "reason"}} and exits 1.
    #[command(
        after_help = include_str!("../../docs/cli-examples/strict-schema.txt")
    )]
    StrictSchema(StrictSchemaArgs),
    /// Shows, per tool and provider, whether it lists as is, converts to strict,
    /// falls back or is excluded, and why; renamed and dropped tools too; then the
    /// options each provider offers (`--option NAME=VALUE`) and what they change.
    #[command(
        after_help = include_str!("../../docs/cli-examples/check.txt")
    )]
    Check(CheckArgs),
    /// Lists the durable turns in a store (`sqlite:PATH`, `postgres://...`) and
    /// records decisions for their waiting calls without resuming them: a
    /// worker (`run --resume URL`) takes a turn up once every call it waits on
    /// is decided.
    #[command(
        after_help = include_str!("../../docs/cli-examples/turns.txt")
    )]
    Turns(TurnsArgs),
}

#[derive(Debug, Args)]
struct TurnsArgs {
    #[command(subcommand)]
    action: TurnsAction,
}

#[derive(Debug, Subcommand)]
enum TurnsAction {
    /// Prints the turns not ended, oldest first, as JSON: each with its id,
    /// status (`waiting`, or `running` under a worker), the worker holding
    /// it, whether a worker would take it up now (`ready`), and what it waits
    /// for (`waits`: the call, `waits_for`, the tool and arguments, and the
    /// decision recorded).
    List {
        /// The store: `sqlite:PATH` or `postgres://...`.
        #[arg(value_name = "URL")]
        store: String,
    },
    /// Records decisions for the calls a turn waits on (approvals now;
    /// a tool's questions are answered by the worker's --answers).
    Decide {
        /// The store: `sqlite:PATH` or `postgres://...`.
        #[arg(value_name = "URL")]
        store: String,
        /// The turn's id.
        #[arg(long, value_name = "ID")]
        turn: String,
        /// Approve the waiting call ID (its id, or #INDEX; repeatable).
        #[arg(long = "approve-call", value_name = "ID")]
        approve_calls: Vec<String>,
        /// Deny the waiting call ID (repeatable): the model is told --reason.
        #[arg(long = "deny-call", value_name = "ID")]
        deny_calls: Vec<String>,
        /// What the model is told of a denied call.
        #[arg(long, value_name = "TEXT", default_value = "a person denied the call")]
        reason: String,
    },
}

#[derive(Debug, Args)]
struct StrictSchemaArgs {
    #[command(flatten)]
    specs: SpecsArg,
    /// The rules to apply (see `providers/rules/`); default: the rules most providers use.
    #[arg(long, value_name = "ID", conflicts_with = "provider")]
    rules: Option<String>,
    /// Apply this provider's strict rules.
    #[arg(long, value_name = "ID")]
    provider: Option<String>,
    /// A JSON Schema, or a tool with an inputSchema; `-` reads stdin.
    file: String,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// Providers to check (repeatable); default: all.
    #[arg(long = "provider", value_name = "ID")]
    providers: Vec<String>,
    #[command(flatten)]
    specs: SpecsArg,
    #[command(flatten)]
    toolset: ToolsetArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// tools/list results, as FILE or NAME=FILE.
    #[arg(required = true)]
    files: Vec<String>,
}

#[derive(Debug, Args)]
struct SpecsArg {
    /// A folder of provider specs (*.yaml, and rules/*.yaml) added to the built-in ones;
    /// a spec with a built-in's id replaces it.
    #[arg(long, value_name = "DIR")]
    specs: Option<PathBuf>,
}

/// Deferred loading: which tools stay out of the prompt until a search finds them.
#[derive(Debug, Args)]
struct DeferArgs {
    /// Defer the tools whose `server/tool` matches this glob (repeatable): they are
    /// found with a search instead of being loaded into the prompt.
    #[arg(long, value_name = "GLOB")]
    defer: Vec<String>,
    /// Keep the tools whose `server/tool` matches this glob loaded, even when a
    /// --defer glob matches them (repeatable).
    #[arg(long, value_name = "GLOB")]
    load: Vec<String>,
    /// Who answers searches: client (the provider's client-side search shape),
    /// library (the library's search_tools function tool) or server:NAME (one
    /// of the provider's own search tools, see `providers`); default: client
    /// where the provider has it, library otherwise.
    #[arg(long, value_name = "MODE")]
    search: Option<String>,
    /// An exposed name a search found earlier (repeatable, in the order found):
    /// listed after the loaded tools where the library's search tool is used.
    #[arg(long, value_name = "NAME")]
    found: Vec<String>,
}

#[derive(Debug, Args)]
struct SearchToolsArgs {
    #[command(flatten)]
    toolset: NamingArgs,
    /// tools/list results, as FILE (server id: the file's stem) or NAME=FILE.
    #[arg(long = "tools", value_name = "FILE", num_args = 1.., required = true)]
    tools: Vec<String>,
    /// What the tool should do, in a few words.
    #[arg(long)]
    query: String,
    /// How many tools to print at most.
    #[arg(long, default_value_t = 5)]
    limit: usize,
}

/// How a listing is made: the naming and filters of its toolset, and strict mode.
#[derive(Debug, Args)]
struct ToolsetArgs {
    #[command(flatten)]
    naming: NamingArgs,
    /// Strict-mode schemas (providers with strict rules only; default: the spec's).
    #[arg(long, value_name = "MODE")]
    strict: Option<StrictArg>,
    #[command(flatten)]
    select: SelectArg,
}

/// `--select`: result selection.
#[derive(Debug, Args, Default)]
struct SelectArg {
    /// Result selection: every listed tool gains an optional argument (named
    /// NAME, `jq_filter` by default) taking a jq filter, run with jaq on the
    /// tool's JSON result; the model reads the filter's output, and no server
    /// sees the argument. A tool that has a property of that name keeps its own.
    /// Give the name as `--select=NAME`.
    #[arg(long, value_name = "NAME", num_args = 0..=1, require_equals = true, default_missing_value = mcp_adapters::select::SELECT_ARGUMENT)]
    select: Option<String>,
}

/// The limits of `--select` filters.
#[derive(Debug, Args, Default)]
struct SelectLimitArgs {
    /// The most terms a selection filter may evaluate (default: 10000000).
    #[arg(long, value_name = "N")]
    select_steps: Option<u64>,
    /// The most milliseconds a selection filter may run (default: 5000).
    #[arg(long, value_name = "MS")]
    select_time_ms: Option<u64>,
    /// The most bytes a selection filter may output (default: 1048576).
    #[arg(long, value_name = "BYTES")]
    select_output_bytes: Option<usize>,
    /// The most bytes of values a selection filter may build (default: 268435456).
    #[arg(long, value_name = "BYTES")]
    select_memory_bytes: Option<usize>,
}

/// The callers rule: which tools code the model writes may call (the
/// provider's programmatic tool calling). None by default.
#[derive(Debug, Args, Default)]
struct ProgrammaticArgs {
    /// Open the tools whose `server/tool` matches this glob to programs the
    /// model writes, as well as to the model (repeatable): the listing adds
    /// the provider's code-execution tool and says who may call each tool
    /// (providers with programmatic tool calling only: openai-responses,
    /// anthropic). A program's call to any other tool is refused, never sent.
    #[arg(long = "programmatic", value_name = "GLOB")]
    open: Vec<String>,
    /// Open the tools matching this glob to programs only (repeatable): the
    /// model does not call them directly, and a direct call is refused.
    #[arg(long = "programmatic-only", value_name = "GLOB")]
    only: Vec<String>,
    /// Open every tool annotated `readOnlyHint: true` to programs too.
    #[arg(long = "programmatic-read-only")]
    read_only: bool,
}

/// The naming and filters of a toolset.
#[derive(Debug, Args)]
struct NamingArgs {
    /// Name tools `server__tool` even for one server.
    #[arg(long)]
    hub: bool,
    /// Put this before every exposed name.
    #[arg(long, value_name = "P")]
    prefix: Option<String>,
    /// Keep only tools whose `server/tool` matches this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    allow: Vec<String>,
    /// Leave out tools whose `server/tool` matches this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    deny: Vec<String>,
    /// Leave out tools whose input schema holds a property name, an enum or const
    /// value (or any string but descriptions and titles, which are cleaned)
    /// with an invisible or control character; without it they are offered
    /// and reported (`report.hidden`, and on stderr).
    #[arg(long)]
    refuse_hidden: bool,
    /// Bind an argument of the tools a glob names to a value of the application's
    /// (repeatable): `SERVER/TOOL:/POINTER=VALUE`, VALUE being text, `env:NAME` (the
    /// environment variable NAME, which must be set), `json:JSON` (a number, an
    /// object...) or `text:TEXT` (text that starts like a prefix). The model is not
    /// shown the argument, a call that writes it is refused and not sent, and the
    /// value is written before the call is checked and sent. A policy file's `bind:`
    /// and a --config entry's `"bind"` take the same rules.
    #[arg(long, value_name = "RULE")]
    bind: Vec<String>,
}

/// `--strict`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum StrictArg {
    /// Strict where the schema converts; the others non-strict, reported as fallbacks.
    Auto,
    /// Every tool strict; a tool whose schema cannot be converted is left out.
    True,
    /// No tool strict; schemas as the server wrote them.
    False,
}

impl From<StrictArg> for StrictMode {
    fn from(arg: StrictArg) -> Self {
        match arg {
            StrictArg::Auto => StrictMode::Auto,
            StrictArg::True => StrictMode::On,
            StrictArg::False => StrictMode::Off,
        }
    }
}

/// `--output-schema`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum OutputSchemaArg {
    /// A result that breaks its tool's outputSchema is answered as an error naming where and why.
    Enforce,
    /// Such a result is answered as it is, with a warning on stderr.
    Warn,
    /// Structured results are not checked.
    Off,
}

impl From<OutputSchemaArg> for mcp_adapters::exec::OutputSchemaCheck {
    fn from(arg: OutputSchemaArg) -> Self {
        match arg {
            OutputSchemaArg::Enforce => Self::Enforce,
            OutputSchemaArg::Warn => Self::Warn,
            OutputSchemaArg::Off => Self::Off,
        }
    }
}

/// `--structured`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum StructuredArg {
    /// structuredContent only when content is empty.
    Auto,
    /// structuredContent instead of content.
    Prefer,
    /// structuredContent after content.
    Append,
    /// Never structuredContent.
    Ignore,
}

impl From<StructuredArg> for StructuredMode {
    fn from(arg: StructuredArg) -> Self {
        match arg {
            StructuredArg::Auto => StructuredMode::Auto,
            StructuredArg::Prefer => StructuredMode::Prefer,
            StructuredArg::Append => StructuredMode::Append,
            StructuredArg::Ignore => StructuredMode::Ignore,
        }
    }
}

/// `--shape`.
#[derive(Debug, Clone, Copy, Default, ValueEnum)]
enum ShapeArg {
    /// Media no model takes become text placeholders first.
    #[default]
    Llm,
    /// Content goes to the provider mapping as the server sent it.
    None,
}

impl From<ShapeArg> for Shape {
    fn from(arg: ShapeArg) -> Self {
        match arg {
            ShapeArg::Llm => Shape::Llm,
            ShapeArg::None => Shape::None,
        }
    }
}

#[derive(Debug, Args)]
struct ToolsArgs {
    /// The provider id (see `providers`).
    #[arg(long)]
    provider: String,
    #[command(flatten)]
    specs: SpecsArg,
    #[command(flatten)]
    toolset: ToolsetArgs,
    /// Set the provider's `cache_control` option (for example `last`).
    #[arg(long, value_name = "VALUE")]
    cache_control: Option<String>,
    /// Set a provider option (repeatable).
    #[arg(long = "option", value_name = "NAME=VALUE")]
    options: Vec<String>,
    #[command(flatten)]
    deferral: DeferArgs,
    #[command(flatten)]
    programmatic: ProgrammaticArgs,
    #[command(flatten)]
    live: LiveArgs,
    #[command(flatten)]
    asks: AsksArgs,
    /// Print one server's tools as MCP lists them (a tools/list result, after
    /// --allow and --deny), for `check`, `calls --tools` and `search-tools --tools`,
    /// instead of the provider's definitions.
    #[arg(long, conflicts_with_all = ["cache_control", "options", "defer", "load", "search", "found", "strict", "select", "open", "only", "read_only"])]
    raw: bool,
    #[command(flatten)]
    hosted: HostedArgs,
    /// A policy file (as for `run`), with live servers: the tools it can never
    /// run (no `allow` or `ask` rule can match them) are left out of the listing,
    /// and `report.dropped` names each with `"reason": "denied_by_policy"`; for
    /// hosted servers, it says which tools they may run and which the provider
    /// must ask about (without one, every tool).
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// tools/list results, as FILE (server id: the file's stem) or NAME=FILE.
    /// Without any (and without --server or --config), a bundled demo server's tools.
    files: Vec<String>,
}

/// Servers the provider calls itself.
#[derive(Debug, Args)]
struct HostedArgs {
    /// A remote MCP server for the provider to call itself, inside its API
    /// request: NAME=URL (repeatable). `--config` entries with `"hosted": true`
    /// ask the same, with their headers. The listing adds a declaration for
    /// each (and the top-level `request` fields and `headers` the provider
    /// needs); a server the provider cannot host as the policy requires
    /// (stdio, http, a provider without hosted MCP, an `ask` where it has no
    /// approval step) runs here instead, with the reason on stderr and in
    /// `report.hosted_local`.
    #[arg(long = "hosted", value_name = "NAME=URL")]
    hosted: Vec<String>,
    /// Let a hosted server's headers and a URL's user or query, which may carry
    /// credentials, go to the provider (off: such a server runs here).
    #[arg(long)]
    pass_credentials: bool,
}

#[derive(Debug, Args)]
struct LiveArgs {
    /// A live MCP server to start: NAME='COMMAND ARGS' (split with shell-words rules; repeatable).
    #[arg(long = "server", value_name = "NAME=COMMAND")]
    servers: Vec<String>,
    /// An `mcpServers` JSON file naming the servers to start.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Keep the sign-ins of HTTP servers that require one (OAuth tokens, and
    /// the DPoP keys DPoP-bound ones are bound to) in FILE between runs,
    /// readable by its owner only. Without it they last one run.
    #[arg(long, value_name = "FILE")]
    token_store: Option<PathBuf>,
    /// How long to wait for a sign-in in the browser, in seconds (default 300).
    #[arg(long, value_name = "SECS")]
    sign_in_timeout: Option<u64>,
    /// Sign in to the HTTP servers that require it with the workload's JWT in
    /// FILE (a Kubernetes projected token, a CI job's OIDC token), read anew
    /// at each sign-in, as an OAuth JWT bearer grant: no browser. An
    /// `mcpServers` entry's `"oauth": {"workloadToken": FILE}` names one for
    /// its server alone.
    #[arg(long, value_name = "FILE")]
    workload_token: Option<PathBuf>,
    /// DPoP-bound tokens (RFC 9449), which a thief cannot use without the
    /// key: with the servers that support them, with every server (a Bearer
    /// token is refused), or never (a server that requires them fails).
    #[arg(long, value_name = "MODE", value_enum, default_value_t)]
    dpop: signin::DpopArg,
    /// How long a server has to start and answer its first request
    /// (`initialize`, or `server/discover` from 2026-07-28), and to answer each
    /// `tools/list` page, in seconds; a sign-in is not counted.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    startup_timeout: u64,
    /// Code mode: offer the model the library's `run_code` tool, through which
    /// it writes one JavaScript program that calls the tools open to code
    /// (--programmatic GLOB, or the policy file's `programmatic:`), on any
    /// provider. The program runs here, in a QuickJS sandbox (30 s, 64 MiB,
    /// 500 calls, 64 KiB of output); each call it makes goes through the
    /// policy like the model's own. An error while no tool is open to code.
    #[arg(long)]
    code_mode: bool,
    /// Offer the model the servers' resources: the library's `list_resources`
    /// and `read_resource` tools (the policy also decides on
    /// `SERVER/resources/list` and `SERVER/resources/read`).
    #[arg(long)]
    resources: bool,
    /// Offer the model the servers' prompts: the library's `list_prompts` and
    /// `get_prompt` tools (policy names `SERVER/prompts/list`, `SERVER/prompts/get`).
    #[arg(long)]
    prompts: bool,
    /// Offer the model the servers' skills (the MCP Skills extension): the
    /// library's `load_skill` tool, whose description lists each skill; the
    /// model loads one and reads its files, each verified against the
    /// skill's manifest (policy names `SERVER/skills/list`, `SERVER/skills/load`).
    #[arg(long)]
    skills: bool,
    /// Export the MCP spans and the duration histogram to an OpenTelemetry
    /// receiver at URL, over OTLP/HTTP with protobuf bodies (`{URL}/v1/traces`,
    /// `{URL}/v1/metrics`), such as `http://localhost:4318`. Without it, the
    /// standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`)
    /// variable, when set, says where.
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
    /// Export these crates' spans and events too, each up to its level, as
    /// `RUST_LOG` names them (`rmcp=debug`). For debugging only: the MCP
    /// SDK's debug and trace events carry tool arguments, results and
    /// sign-in codes. Without it only the library's spans and measurements
    /// are exported.
    #[arg(long, value_name = "TARGETS")]
    otlp_include: Option<String>,
    /// Go on without the servers that did not start (each is named on stderr,
    /// with why; the model, offered none of their tools, is answered "unknown
    /// tool" for a call to one), as long as one did. Without it, a server that did not start is an error.
    #[arg(long)]
    keep_going: bool,
}

/// What the command line answers when servers ask; the clients declare
/// exactly that, and without these flags nothing.
#[derive(Debug, Args)]
struct AsksArgs {
    /// Canned answers to what servers ask (JSON or YAML), each section optional:
    /// `answers:` [{"tool": GLOB, "key": KEY, "action": "accept"|"decline"|"cancel",
    /// "content": {...}}] for elicitations (forms get their declared defaults for the
    /// fields `content` leaves out), and `sampling:` [{"tool": GLOB, "result":
    /// CreateMessageResult} or {"tool": GLOB, "action": "decline"|"cancel"}] for
    /// completions; globs over `server/tool`, the first match answering. `decline`
    /// answers the question; `cancel` halts the turn, in either section and at any
    /// revision. Declares elicitation only with `answers:` rules, sampling only
    /// with `sampling:` rules.
    /// A question no rule answers is declined, and stderr says so (with `run
    /// --suspend`, a tool's `input_required` question waits instead).
    #[arg(long, value_name = "FILE")]
    answers: Option<PathBuf>,
    /// A directory or file servers may work in (repeatable; it must exist): declares
    /// roots and answers `roots/list` with these, as canonical `file://` URIs.
    #[arg(long = "root", value_name = "PATH")]
    roots: Vec<PathBuf>,
}

impl AsksArgs {
    /// Whether any of the flags is given.
    fn given(&self) -> bool {
        self.answers.is_some() || !self.roots.is_empty()
    }
}

#[derive(Debug, Args)]
struct RunArgs {
    /// The provider id.
    #[arg(long)]
    provider: String,
    #[command(flatten)]
    specs: SpecsArg,
    #[command(flatten)]
    live: LiveArgs,
    /// A policy file (JSON or YAML): {"allow": [globs], "ask": [...], "deny": [...],
    /// "default": "allow"|"deny"}, globs over `server/tool`. `ask` is answered deny
    /// (there is no one to ask), unless --approve-call or --deny-call decides the
    /// call, or --suspend lets it wait. Without one, every offered tool may be called.
    /// `programmatic`, `programmatic_only` ([globs]) and `programmatic_read_only`
    /// (true) open tools to programs the model writes, as --programmatic does.
    /// `bind` ([rules]) binds arguments, as --bind does.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Bind an argument of the tools a glob names to a value of the application's
    /// (repeatable): `SERVER/TOOL:/POINTER=VALUE`, VALUE being text, `env:NAME` (the
    /// environment variable NAME, which must be set), `json:JSON` (a number, an
    /// object...) or `text:TEXT` (text that starts like a prefix). The model is not
    /// shown the argument, a call that writes it is refused and not sent, and the
    /// value is written before the call is checked and sent. A policy file's `bind:`
    /// and a --config entry's `"bind"` take the same rules.
    #[arg(long, value_name = "RULE")]
    bind: Vec<String>,
    #[command(flatten)]
    asks: AsksArgs,
    /// When a call waits for an answer the command line does not have (a policy
    /// `ask` not decided by --approve-call/--deny-call, a tool's question no
    /// --answers rule answers, a task still working on a server reached over
    /// HTTP), or SIGINT/SIGTERM stops the run before some of the turn's calls
    /// are sent, write the turn's state to FILE, list what waits on stderr
    /// and in `waiting`, and exit with status 3 (130/143 after a signal); the
    /// later RESPONSEs are not played. Resume it with --resume FILE, once.
    /// A store's URL instead of FILE (`sqlite:PATH`, `postgres://...`) puts
    /// the turn in the store, its state kept before each request goes out:
    /// record decisions with `mcp-adapters turns decide`, and a worker
    /// (`run --resume URL`) takes it up.
    #[arg(long, value_name = "FILE|URL")]
    suspend: Option<PathBuf>,
    /// Resume the turn suspended in FILE, with the same --provider and
    /// servers, the answers now given (--approve-call, --deny-call,
    /// --answers): calls already sent are not sent again. RESPONSEs given
    /// with it are played after it, as the turns that follow. With a store's
    /// URL: claim the turn --turn names, or the oldest turn whose waits are
    /// all decided (`turns decide`) or whose worker's lease ran out, under a
    /// lease this worker renews; the decisions recorded in the store are
    /// applied, and a turn that waits again goes back to the store. Exits
    /// with status 4 when no turn is ready, and with 1 when another worker
    /// holds the turn named (nothing is sent then).
    #[arg(long, value_name = "FILE|URL", conflicts_with = "stream")]
    resume: Option<PathBuf>,
    /// The turn of the --resume store to take up (its id, as `turns list`
    /// and `run --suspend URL` print it).
    #[arg(long, value_name = "ID")]
    turn: Option<String>,
    /// The length of this worker's lease on a stored turn, in seconds
    /// (default 30): renewed every third of it while the turn runs, and
    /// taken over by another worker once it ran out.
    #[arg(long, value_name = "SECONDS")]
    lease: Option<f64>,
    /// This worker's name in the store (default: HOST:PID).
    #[arg(long, value_name = "NAME")]
    worker: Option<String>,
    /// Bind the --suspend document to its content with a MAC (HMAC-SHA256) under
    /// the key in FILE (at least 16 bytes), and refuse a --resume document that
    /// does not match it, naming what changed. Without it, the
    /// MCP_ADAPTERS_STATE_KEY environment variable, when set, holds the key.
    #[arg(long, value_name = "FILE")]
    state_key_file: Option<PathBuf>,
    /// Put this before every exposed name.
    #[arg(long, value_name = "P")]
    prefix: Option<String>,
    /// Leave out tools whose input schema holds a name or value with an invisible
    /// or control character (as for `tools --refuse-hidden`).
    #[arg(long)]
    refuse_hidden: bool,
    /// Approve the call ID where the policy asks (repeatable): the provider's call
    /// id, `#INDEX` (its position in the response) for a call that has no id, a
    /// hosted call's approval request id, or a code-mode program's call as
    /// `waiting` names it, PROGRAM/N (the id of the model's `run_code` call and
    /// the call's place among the program's calls, from 0: `toolu_01/2`). Each names one call of one turn: with
    /// several RESPONSEs write TURN:ID (`2:toolu_01`, `1:#0`; turns count from 1),
    /// or an id only one turn has.
    #[arg(long = "approve-call", value_name = "ID")]
    approve_calls: Vec<String>,
    /// Deny the call ID where the policy asks (repeatable; named as for
    /// --approve-call).
    #[arg(long = "deny-call", value_name = "ID")]
    deny_calls: Vec<String>,
    /// Bound on a call's first request, and on each input round's server time, in
    /// milliseconds (default 300000).
    #[arg(long, value_name = "MS")]
    call_timeout: Option<u64>,
    /// Calls run at once (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    max_concurrency: Option<usize>,
    /// Calls run at once on any one server (default: no bound but
    /// --max-concurrency). A call whose tool an --answers rule names runs
    /// alone on its server whatever this says.
    #[arg(long, value_name = "N")]
    max_server_concurrency: Option<usize>,
    /// What to do with a result whose structuredContent breaks its tool's outputSchema
    /// (default: enforce).
    #[arg(long, value_name = "CHECK")]
    output_schema: Option<OutputSchemaArg>,
    /// The most tokens one call's answer may send the model, counted as the
    /// provider's spec says: a longer text keeps its head and tail with a
    /// notice between them, and the listing offers `read_result`, with which
    /// the model reads on in a later turn of the same run.
    #[arg(long, value_name = "N")]
    max_result_tokens: Option<u64>,
    /// The most tokens all of a turn's answers may send the model together,
    /// shared fairly among the calls (offers `read_result` too).
    #[arg(long, value_name = "N")]
    max_turn_tokens: Option<u64>,
    /// Strict-mode schemas (providers with strict rules only; default: the spec's).
    #[arg(long, value_name = "MODE")]
    strict: Option<StrictArg>,
    #[command(flatten)]
    select: SelectArg,
    #[command(flatten)]
    select_limits: SelectLimitArgs,
    #[command(flatten)]
    programmatic: ProgrammaticArgs,
    /// Validate arguments against each tool's inputSchema before sending.
    #[arg(long)]
    validate: bool,
    #[command(flatten)]
    stream: StreamArgs,
    /// Set a provider option (repeatable), for the listing and the answers: `media=full`
    /// answers with every medium the API takes, and prints `follow_ups` when there are any.
    #[arg(long = "option", value_name = "NAME=VALUE")]
    options: Vec<String>,
    /// Print each turn as one line of JSON (NDJSON) instead of a JSON
    /// array (or, for one turn, instead of pretty JSON).
    #[arg(long)]
    ndjson: bool,
    /// The model responses, played as successive turns over the same servers
    /// (each turn's servers taint the next), all read and checked before the
    /// first runs; `-` reads stdin. Without servers and RESPONSE, a bundled one.
    #[arg(value_name = "RESPONSE")]
    response: Vec<String>,
}

#[derive(Debug, Args)]
struct CallsArgs {
    /// The provider id.
    #[arg(long)]
    provider: String,
    #[command(flatten)]
    specs: SpecsArg,
    #[command(flatten)]
    toolset: ToolsetArgs,
    /// The tools offered to the model: a tools/list result, as FILE or NAME=FILE
    /// (repeat the flag for each server).
    #[arg(long = "tools", value_name = "FILE", required = true)]
    tools: Vec<String>,
    #[command(flatten)]
    programmatic: ProgrammaticArgs,
    #[command(flatten)]
    stream: StreamArgs,
    /// The model response (or message, or list of items); `-` reads stdin.
    #[arg(required_unless_present = "stream")]
    response: Option<String>,
}

#[derive(Debug, Args)]
struct StreamArgs {
    /// A recorded streamed response (the HTTP body as received; `-` reads stdin),
    /// instead of a RESPONSE: `calls` prints its calls and the assembled assistant
    /// `message`; `run` runs each call as the stream completes it and adds `message`
    /// (repeatable for `run`: the streams are played as successive turns).
    #[arg(long, value_name = "FILE", conflicts_with = "response")]
    stream: Vec<String>,
    /// How the stream's bytes are framed (default: detected from the bytes, or the spec's).
    #[arg(long, value_name = "FRAMING", requires = "stream")]
    framing: Option<FramingArg>,
}

/// `--framing`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum FramingArg {
    /// Server-sent events (`event:` / `data:` lines).
    Sse,
    /// Newline-delimited JSON.
    Ndjson,
    /// JSON values one after another (events an SDK decoded).
    Json,
    /// Binary application/vnd.amazon.eventstream frames.
    Eventstream,
}

impl From<FramingArg> for Framing {
    fn from(arg: FramingArg) -> Self {
        match arg {
            FramingArg::Sse => Framing::Sse,
            FramingArg::Ndjson => Framing::Ndjson,
            FramingArg::Json => Framing::Json,
            FramingArg::Eventstream => Framing::EventStream,
        }
    }
}

#[derive(Debug, Args)]
struct ResultArgs {
    /// The provider id.
    #[arg(long)]
    provider: String,
    #[command(flatten)]
    specs: SpecsArg,
    /// The call's id (omit for a provider whose calls may lack one).
    #[arg(long, value_name = "ID")]
    call_id: Option<String>,
    /// The exposed tool name the model called.
    #[arg(long, value_name = "EXPOSED")]
    name: String,
    /// How structuredContent is used (default: the spec's).
    #[arg(long, value_name = "MODE")]
    structured: Option<StructuredArg>,
    /// Whether results are shaped for a model first.
    #[arg(long, value_name = "SHAPE", value_enum, default_value_t = ShapeArg::Llm)]
    shape: ShapeArg,
    /// Put this before the text of an error answer.
    #[arg(long, value_name = "S")]
    error_prefix: Option<String>,
    /// The most tokens the answer may send the model, counted as the
    /// provider's spec says: a longer text keeps its head and tail with a
    /// notice between them.
    #[arg(long, value_name = "N")]
    max_result_tokens: Option<u64>,
    /// Set a provider option (repeatable), such as `media=full` (see `providers`).
    #[arg(long = "option", value_name = "NAME=VALUE")]
    options: Vec<String>,
    /// Answer a failed call with this message instead of a result.
    #[arg(long, value_name = "MESSAGE", conflicts_with = "file")]
    error: Option<String>,
    /// An MCP CallToolResult; `-` reads stdin.
    #[arg(required_unless_present = "error")]
    file: Option<String>,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Providers { specs } => commands::providers(&specs),
        Command::Tools(args) => match commands::tools(&args) {
            Ok(printed) => {
                printed.print();
                return ExitCode::SUCCESS;
            }
            Err(e) => Err(e),
        },
        Command::SearchTools(args) => commands::search_tools(&args),
        Command::Calls(args) => commands::calls(&args),
        Command::Run(args) => return run::main(&args),
        Command::Turns(args) => return stored::turns(&args),
        Command::Result(args) => commands::result(&args),
        Command::StrictSchema(args) => match strict::strict_schema(&args) {
            Ok((value, converted)) => {
                print_json(&value);
                return if converted {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                };
            }
            Err(e) => Err(e),
        },
        Command::Check(args) => match strict::check(&args) {
            Ok((value, table)) => {
                if args.json {
                    print_json(&value);
                } else {
                    use std::io::Write;
                    let _ = std::io::stdout().lock().write_all(table.as_bytes());
                }
                return ExitCode::SUCCESS;
            }
            Err(e) => Err(e),
        },
    };
    match outcome {
        Ok(value) => {
            print_json(&value);
            if value.get("status").and_then(serde_json::Value::as_str) == Some("suspended") {
                // The turn waits: its state is in the --suspend file.
                return ExitCode::from(3);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}", shown::escaped(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

/// Prints pretty JSON; a closed stdout (`| head`) ends quietly.
fn print_json(value: &serde_json::Value) {
    use std::io::Write;
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}
