//! Code mode: one tool through which the model writes a program instead of
//! making call after call. The program is JavaScript; it runs here, in an
//! embedded QuickJS sandbox, and each tool call it makes
//! (`await tools.name(args)`) goes through the same governed pipeline as a
//! model's call. What the model reads is what the program returns and
//! writes to its console. The guide's chapter is `docs/code-mode.md`.
//!
//! Turn it on with [`SourceBuilder::code_mode`](crate::exec::SourceBuilder::code_mode)
//! (on the command line, `--code-mode`); the tools a program may call are
//! those the policy's [callers rule](crate::callers) opens to code.
//!
//! ```
//! use mcp_adapters::code::CodeMode;
//! use std::time::Duration;
//!
//! let mode = CodeMode::new()
//!     .time_limit(Duration::from_secs(10))
//!     .max_calls(200);
//! assert_eq!(mode.limits().max_calls, 200);
//! ```

#[cfg(feature = "code-mode")]
pub(crate) mod sandbox;
mod typescript;
#[cfg(feature = "code-mode")]
mod values;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::mcp::Tool;

/// The name of the code tool, as the model sees it and as policies name it
/// (`mcp-adapters/run_code`).
pub const CODE_TOOL_NAME: &str = "run_code";

/// Code mode's settings: the limits each program runs within.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CodeMode {
    limits: CodeLimits,
}

impl CodeMode {
    /// Code mode with the default limits ([`CodeLimits`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// The limits each program runs within.
    pub fn limits(&self) -> &CodeLimits {
        &self.limits
    }

    /// The wall time a program may take, its calls included (default 30 s).
    pub fn time_limit(mut self, time: Duration) -> Self {
        self.limits.time = time;
        self
    }

    /// The memory the program's JavaScript heap may take (default 64 MiB).
    pub fn memory_limit(mut self, bytes: usize) -> Self {
        self.limits.memory_bytes = bytes;
        self
    }

    /// How many tool calls a program may make (default 500).
    pub fn max_calls(mut self, calls: usize) -> Self {
        self.limits.max_calls = calls;
        self
    }

    /// How many bytes a program's return value (as JSON) and console output
    /// may take together (default 64 KiB).
    pub fn max_output_bytes(mut self, bytes: usize) -> Self {
        self.limits.output_bytes = bytes;
        self
    }

    /// How deep the program's JavaScript stack may grow, in bytes (default
    /// 1 MiB).
    pub fn stack_limit(mut self, bytes: usize) -> Self {
        self.limits.stack_bytes = bytes;
        self
    }
}

/// The limits a program runs within. A program that breaks one is stopped,
/// whatever it catches, and the model is told which limit it broke; no
/// further call of it is sent.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct CodeLimits {
    /// Wall time, the calls' time included (default 30 s): QuickJS's
    /// interrupt handler stops the program while it runs, a timer while it
    /// waits for its calls.
    pub time: Duration,
    /// The JavaScript heap (default 64 MiB).
    pub memory_bytes: usize,
    /// Tool calls (default 500).
    pub max_calls: usize,
    /// The return value as JSON and the console output together (default
    /// 64 KiB).
    pub output_bytes: usize,
    /// The JavaScript stack (default 1 MiB).
    pub stack_bytes: usize,
}

/// The default wall time of a program.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(30);
/// The default memory of a program.
pub const DEFAULT_MEMORY_LIMIT: usize = 64 * 1024 * 1024;
/// The default number of calls a program may make.
pub const DEFAULT_MAX_CALLS: usize = 500;
/// The default output of a program.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// The default stack of a program.
pub const DEFAULT_STACK_LIMIT: usize = 1024 * 1024;

impl Default for CodeLimits {
    fn default() -> Self {
        CodeLimits {
            time: DEFAULT_TIME_LIMIT,
            memory_bytes: DEFAULT_MEMORY_LIMIT,
            max_calls: DEFAULT_MAX_CALLS,
            output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            stack_bytes: DEFAULT_STACK_LIMIT,
        }
    }
}

/// A limit a program broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Limit {
    /// Its wall time.
    Time,
    /// Its memory.
    Memory,
    /// Its stack (recursion too deep).
    Stack,
    /// Its number of tool calls.
    Calls,
    /// Its output.
    Output,
}

impl Limit {
    /// What the model is told.
    #[cfg(feature = "code-mode")]
    pub(crate) fn describe(self, limits: &CodeLimits) -> String {
        match self {
            Limit::Time => format!(
                "the program ran longer than its time limit ({} ms) and was stopped",
                limits.time.as_millis()
            ),
            Limit::Memory => format!(
                "the program used more memory than its limit ({} bytes) and was stopped",
                limits.memory_bytes
            ),
            Limit::Stack => format!(
                "the program's recursion went deeper than its stack limit ({} bytes) and it was stopped",
                limits.stack_bytes
            ),
            Limit::Calls => format!(
                "the program made more tool calls than its limit ({}) and was stopped",
                limits.max_calls
            ),
            Limit::Output => format!(
                "the program's return value and console output were larger than its output limit \
                 ({} bytes) and it was stopped",
                limits.output_bytes
            ),
        }
    }
}

/// A program's sources of variation, kept in its journal so that a replay
/// takes the same path: `Math.random`'s seed and the time `Date` gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Variation {
    pub(crate) seed: u32,
    /// Milliseconds since the Unix epoch.
    pub(crate) clock_ms: i64,
}

impl Variation {
    /// Fresh ones, for a program's first run.
    #[cfg(feature = "code-mode")]
    pub(crate) fn fresh() -> Self {
        let seed = uuid::Uuid::new_v4().as_u128() as u32;
        let clock_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Variation { seed, clock_ms }
    }
}

/// The code tool's definition: what it does, its limits, and the
/// TypeScript declarations of `tools` (each under the name the program
/// calls it by).
pub(crate) fn code_tool<'a>(
    limits: &CodeLimits,
    tools: impl IntoIterator<Item = (&'a str, &'a Tool)>,
) -> Tool {
    let declarations = typescript::declarations(tools);
    let description = format!(
        "Runs a JavaScript program and answers with the value it returns and what it writes with \
         console.log. The program is the body of an async function: use `await` and `return`. \
         Call tools with `await tools.name(args)` (`tools[\"name\"](args)` for a name that is \
         not an identifier), several at once with `Promise.all`. A tool with a declared result \
         type resolves to that value; any other resolves to its text (a string). A failed call \
         throws an Error named `ToolError` that the program may catch (`kind` says why; \
         `result` holds the tool's error result). Prefer one program to many separate calls \
         when a task takes several calls or their results need filtering: only the return \
         value and the console output come back, so return just what is needed. There is no \
         file system, network, module loading, `require`, `process` or timers. Limits: {} s, \
         {} tool calls, {} bytes of return value and console output.\n\n```ts\n{declarations}```",
        limits.time.as_secs_f64(),
        limits.max_calls,
        limits.output_bytes,
    );
    Tool::new(
        CODE_TOOL_NAME,
        description,
        serde_json::json!({
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "The JavaScript program: the body of an async function, its result given with `return`."
                }
            },
            "required": ["code"],
            "additionalProperties": false
        }),
    )
}
