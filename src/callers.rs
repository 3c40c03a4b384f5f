//! Who calls a tool: the model itself, or code the model wrote.
//!
//! Some providers let the model write a program that calls the
//! application's tools in a loop, in parallel, and filters what they return
//! before the model reads anything (programmatic tool calling: the spec's
//! `programmatic:` section says how). Each call then says who made it
//! ([`Caller`]), and each tool says who may call it ([`Callers`]).
//!
//! Which tools code may call is one rule of the policy, the **callers
//! rule** ([`CallersRule`]): by default no tool is open to code, and
//! nothing changes for an application that does not open any. The
//! application opens tools by glob over `server/tool` (MCP names; a glob
//! without `/` names a tool on any server, as the policy's globs do), to
//! code as well as the model ([`CallersRule::open`]) or to code only
//! ([`CallersRule::only`]), and may open every tool its server annotates
//! `readOnlyHint: true` ([`CallersRule::read_only`]). The rule lives in the
//! [`Policy`](crate::Policy) (`Policy::programmatic`), in a policy file
//! (`programmatic:`, `programmatic_only:`, `programmatic_read_only:`) and on
//! the command line (`--programmatic GLOB`); a listing declares what it
//! says ([`ListOptions::callers`](crate::ListOptions::callers)), and what a
//! listing declares is enforced: a call from code to a tool not open to
//! code, and a call from the model to a tool open to code only, are
//! rejected and never sent, whatever the provider did (its own
//! `allowed_callers` is not a boundary its API enforces).
//!
//! ```
//! use mcp_adapters::callers::{Callers, CallersRule};
//! use mcp_adapters::Tool;
//!
//! let rule = CallersRule::new()
//!     .open("inventory/get_*")?
//!     .only("inventory/get_demand")?
//!     .read_only(true);
//! let tool = |name: &str, annotations: serde_json::Value| -> Tool {
//!     serde_json::from_value(serde_json::json!({
//!         "name": name, "inputSchema": {"type": "object"}, "annotations": annotations,
//!     }))
//!     .unwrap()
//! };
//! assert_eq!(rule.callers("inventory", &tool("get_stock", serde_json::json!({}))), Callers::ModelAndCode);
//! assert_eq!(rule.callers("inventory", &tool("get_demand", serde_json::json!({}))), Callers::Code);
//! assert_eq!(rule.callers("files", &tool("read", serde_json::json!({"readOnlyHint": true}))), Callers::ModelAndCode);
//! assert_eq!(rule.callers("files", &tool("write", serde_json::json!({}))), Callers::Model);
//! # Ok::<(), mcp_adapters::Error>(())
//! ```

use globset::GlobMatcher;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::mcp::Tool;
use crate::toolset::compile_tool_glob;

/// Who made a call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Caller {
    /// The model, directly (a call with no caller, or the provider's
    /// "direct" caller).
    #[default]
    Model,
    /// A program the model wrote, which the provider runs and which waits
    /// for the answer.
    Program(Box<ProgramCaller>),
    /// A program the model wrote through the library's code tool, which
    /// the library runs in its sandbox ([code mode](crate::code)).
    Code(Box<CodeCaller>),
}

/// The code-mode program that made a call, and which of its calls it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CodeCaller {
    /// The program's id: the id of the model's call to the code tool (or
    /// `#INDEX` when it has none).
    pub program_id: String,
    /// The position of that call in the model's response.
    pub program_index: usize,
    /// The call's place among the program's calls, from 0, in the order
    /// the program made them.
    pub seq: usize,
}

/// The program that made a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProgramCaller {
    /// The program's id: the id the provider's program item (or
    /// code-execution block) has, which the call's caller names.
    pub program_id: String,
    /// The caller as the provider sent it, carried back with the answer
    /// where the provider asks for it.
    pub sent: Value,
}

impl Caller {
    /// A call made by the program `program_id`, its caller `sent` as the
    /// provider wrote it.
    pub fn program(program_id: impl Into<String>, sent: Value) -> Self {
        Caller::Program(Box::new(ProgramCaller {
            program_id: program_id.into(),
            sent,
        }))
    }
}

impl Caller {
    /// Whether the model made the call itself.
    pub fn is_model(&self) -> bool {
        matches!(self, Caller::Model)
    }

    /// The program that made the call, if one did.
    pub fn program_id(&self) -> Option<&str> {
        match self {
            Caller::Program(program) => Some(&program.program_id),
            Caller::Code(code) => Some(&code.program_id),
            Caller::Model => None,
        }
    }

    /// `model`, `program` or `code` (a code-mode program), as traces and
    /// the command line name it.
    pub fn kind(&self) -> &'static str {
        match self {
            Caller::Model => "model",
            Caller::Program(_) => "program",
            Caller::Code(_) => "code",
        }
    }

    /// The code-mode program that made the call, if one did.
    pub fn code(&self) -> Option<&CodeCaller> {
        match self {
            Caller::Code(code) => Some(code),
            _ => None,
        }
    }
}

/// Who may call a tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Callers {
    /// The model only (every tool, unless the callers rule opens it).
    #[default]
    Model,
    /// The model, and code the model writes.
    ModelAndCode,
    /// Code the model writes, only: the model does not call it directly.
    Code,
}

impl Callers {
    /// Whether the model may call the tool directly.
    pub fn model(self) -> bool {
        matches!(self, Callers::Model | Callers::ModelAndCode)
    }

    /// Whether code the model writes may call the tool.
    pub fn code(self) -> bool {
        matches!(self, Callers::ModelAndCode | Callers::Code)
    }

    /// Whether `caller` may call the tool.
    pub fn admit(self, caller: &Caller) -> bool {
        match caller {
            Caller::Model => self.model(),
            Caller::Program(_) | Caller::Code(_) => self.code(),
        }
    }
}

/// The callers rule: which tools code the model writes may call, and
/// which of them only code may call. By default no tool is open to code.
/// See the [module](self) documentation.
#[derive(Debug, Clone, Default)]
pub struct CallersRule {
    open: Vec<(String, GlobMatcher)>,
    only: Vec<(String, GlobMatcher)>,
    read_only: bool,
}

impl PartialEq for CallersRule {
    fn eq(&self, other: &Self) -> bool {
        self.open_globs().eq(other.open_globs())
            && self.only_globs().eq(other.only_globs())
            && self.read_only == other.read_only
    }
}

impl CallersRule {
    /// No tool open to code.
    pub fn new() -> Self {
        Self::default()
    }

    /// Opens the tools whose `server/tool` matches `glob` to code, the
    /// model still calling them directly too.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) for an invalid glob.
    pub fn open(mut self, glob: &str) -> Result<Self> {
        self.open.push((glob.to_owned(), compile_tool_glob(glob)?));
        Ok(self)
    }

    /// Opens the tools whose `server/tool` matches `glob` to code only:
    /// the model does not call them directly (a listing declares them for
    /// code alone, and a direct call to one is rejected). Wins over
    /// [`open`](Self::open) and [`read_only`](Self::read_only).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) for an invalid glob.
    pub fn only(mut self, glob: &str) -> Result<Self> {
        self.only.push((glob.to_owned(), compile_tool_glob(glob)?));
        Ok(self)
    }

    /// Opens every tool its server annotates `readOnlyHint: true` to code
    /// as well as the model (`true`), or not (`false`, the default). The
    /// annotation is the server's word: a policy that does not trust the
    /// server names its tools instead.
    pub fn read_only(mut self, on: bool) -> Self {
        self.read_only = on;
        self
    }

    /// Whether the rule opens no tool to code at all.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty() && self.only.is_empty() && !self.read_only
    }

    /// The globs that open tools to code and the model, as given.
    pub fn open_globs(&self) -> impl Iterator<Item = &str> {
        self.open.iter().map(|(g, _)| g.as_str())
    }

    /// The globs that open tools to code only, as given.
    pub fn only_globs(&self) -> impl Iterator<Item = &str> {
        self.only.iter().map(|(g, _)| g.as_str())
    }

    /// Whether tools annotated `readOnlyHint: true` are open to code.
    pub fn opens_read_only(&self) -> bool {
        self.read_only
    }

    /// Who may call `tool` of `server_id`.
    pub fn callers(&self, server_id: &str, tool: &Tool) -> Callers {
        if self.is_empty() {
            return Callers::Model;
        }
        let path = format!("{server_id}/{}", tool.name);
        if self.only.iter().any(|(_, m)| m.is_match(&path)) {
            return Callers::Code;
        }
        let read_only = self.read_only
            && tool
                .annotations
                .as_ref()
                .and_then(|a| a.get("readOnlyHint"))
                .and_then(Value::as_bool)
                == Some(true);
        if read_only || self.open.iter().any(|(_, m)| m.is_match(&path)) {
            Callers::ModelAndCode
        } else {
            Callers::Model
        }
    }
}
