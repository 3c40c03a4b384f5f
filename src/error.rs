//! The library's one error type.
//!
//! Every fallible function returns [`Error`]. Its [`kind`](Error::kind) says what
//! went wrong; its [`Display`](std::fmt::Display) says where (a spec file and line,
//! a path inside the spec, a JSON pointer into a schema, a tool or a call id) and
//! reads as a sentence a person, or a model, can act on.

use std::fmt;
use std::path::PathBuf;

/// What kind of failure an [`Error`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A provider spec or rules file is malformed (syntax, schema or semantics).
    Spec,
    /// No provider spec has the requested id.
    UnknownProvider,
    /// Input data (a `tools/list` result, a model response, a `CallToolResult`) is malformed.
    Input,
    /// A schema cannot be converted to a provider's strict subset.
    Strict,
    /// A call named a tool that the toolset does not hold.
    UnknownTool,
    /// A call's arguments are not an object, not valid JSON, or fail the tool's schema.
    InvalidArguments,
    /// The policy or an approver denied the call.
    Denied,
    /// The call took longer than its timeout.
    Timeout,
    /// The server could not be reached, failed to list its tools, or went away.
    Unavailable,
    /// The server (or a hook) failed while handling the call.
    Server,
    /// Reading a file failed.
    Io,
}

/// Where an [`Error`] happened, as precisely as it is known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Location {
    /// The file being read (a spec, a rules file, a JSON input).
    pub file: Option<PathBuf>,
    /// The 1-based line in `file`, where the parser knows it.
    pub line: Option<usize>,
    /// A path inside the document: a spec path such as `results.media.image`, or a JSON pointer.
    pub path: Option<String>,
    /// The tool concerned (an exposed name or an MCP name).
    pub tool: Option<String>,
    /// The call concerned.
    pub call_id: Option<String>,
}

/// The library's error: a [`kind`](Error::kind), a message and a [`Location`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    location: Box<Location>,
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error of `kind` with `message` and no location.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            location: Box::default(),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message without its location.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where it happened.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Sets the file.
    pub fn with_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.location.file = Some(file.into());
        self
    }

    /// Sets the line (1-based).
    pub fn with_line(mut self, line: usize) -> Self {
        self.location.line = Some(line);
        self
    }

    /// Sets the path inside the document.
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.location.path = Some(path.into());
        self
    }

    /// Sets the tool.
    pub fn with_tool(mut self, tool: impl Into<String>) -> Self {
        self.location.tool = Some(tool.into());
        self
    }

    /// Sets the call id.
    pub fn with_call_id(mut self, call_id: impl Into<String>) -> Self {
        self.location.call_id = Some(call_id.into());
        self
    }

    pub(crate) fn input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Input, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let loc = &self.location;
        if let Some(file) = &loc.file {
            write!(f, "{}", file.display())?;
            if let Some(line) = loc.line {
                write!(f, ":{line}")?;
            }
            f.write_str(": ")?;
        }
        if let Some(path) = &loc.path {
            write!(f, "at {path}: ")?;
        }
        if let Some(tool) = &loc.tool {
            write!(f, "tool `{tool}`: ")?;
        }
        if let Some(call_id) = &loc.call_id {
            write!(f, "call `{call_id}`: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
