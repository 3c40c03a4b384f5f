//! The library's one error type.
//!
//! Every fallible function returns [`Error`]. Its [`kind`](Error::kind) says what
//! went wrong; its [`Display`](std::fmt::Display) says where (a spec file and line,
//! a path inside the spec, a JSON pointer into a schema, a tool or a call id) and
//! reads as a sentence a person, or a model, can act on. What it wraps (a
//! `serde_json`, `jsonschema`, I/O or MCP SDK error) is its
//! [`source`](std::error::Error::source); the alternate form (`{:#}`) adds the
//! chain of causes to the sentence.
//!
//! No URL in an error's text carries its userinfo or its query: a server's
//! URL with `?api_key=...`, a command line with `postgresql://user:password@...`
//! read `https://host/path` and `postgresql://host/...` in the message, in
//! the causes the alternate form and `Debug` write, and so in every log line
//! and answer made of them. (What the wrapped error holds is its own: an
//! application that walks the chain of sources and prints each one itself
//! prints them as they are.)

use std::error::Error as _;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// What kind of failure an [`Error`] is. Serialized in `snake_case`
/// (`unknown_tool`), as a [`TurnState`](crate::exec::TurnState) keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// The server could not be reached or failed to list its tools; a call
    /// that meets this was not sent.
    Unavailable,
    /// The server went away while the call was in flight: it may or may not
    /// have run, and it was not sent again (unless the application opted in
    /// for tools that say they are safe to repeat).
    Interrupted,
    /// The server (or a hook) failed while handling the call.
    Server,
    /// The call completed, but its structured result breaks the tool's
    /// `outputSchema` (see
    /// [`ExecOptions::output_schema`](crate::ExecOptions::output_schema)).
    InvalidResult,
    /// The server requires sign-in (OAuth, the `oauth` feature) and it did not
    /// complete: it was refused, timed out or failed, or the server refused
    /// the token it led to. The request was not run.
    Unauthorized,
    /// The tool asked for input (MCP `input_required`) and the call ended
    /// without it: no input handler, the handler declined, cancelled or did
    /// not answer in time, or the server asked for more rounds than allowed.
    InputRequired,
    /// Reading a file failed.
    Io,
    /// A model stream reported an error, broke off before it was complete,
    /// or could not be read in its framing.
    Stream,
    /// A durable turn store could not be opened, migrated, read or written
    /// (see [`store`](crate::store)).
    Store,
    /// A durable turn is held by another worker's lease: only that worker
    /// may go on with it until it releases it or its lease runs out.
    Held,
    /// The worker's lease on a durable turn was lost (it ran out, or
    /// another worker took the turn over): it may keep no more checkpoints
    /// of the turn, and so sends nothing more for it.
    LeaseLost,
}

/// Where an [`Error`] happened, as precisely as it is known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Location {
    /// The file being read (a spec, a rules file, a JSON input).
    pub file: Option<PathBuf>,
    /// The 1-based line in `file`, where the parser knows it.
    pub line: Option<usize>,
    /// A path inside the document: a JSON pointer such as `/results/media/image`.
    pub path: Option<String>,
    /// The tool concerned (an exposed name or an MCP name).
    pub tool: Option<String>,
    /// The call concerned.
    pub call_id: Option<String>,
}

/// The cause an [`Error`] wraps.
type Cause = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// The library's error: a [`kind`](Error::kind), a message, a [`Location`] and
/// the error it wraps, if any.
#[derive(Clone)]
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Clone)]
struct Inner {
    kind: ErrorKind,
    message: String,
    location: Location,
    source: Option<Cause>,
    /// The server whose failure this is, for what a model is told.
    server: Option<String>,
    /// The message is the library's own words, with nothing of a server's
    /// (its output, its configuration): a model may read it as it is.
    plain: bool,
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error of `kind` with `message`, no location and no cause.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            inner: Box::new(Inner {
                kind,
                message: without_url_secrets(message.into()),
                location: Location::default(),
                source: None,
                server: None,
                plain: false,
            }),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    /// The message, without its location or causes.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// Where it happened.
    pub fn location(&self) -> &Location {
        &self.inner.location
    }

    /// Sets the error this one wraps (its [`source`](std::error::Error::source)).
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.inner.source = Some(Arc::new(source));
        self
    }

    /// Sets the file.
    pub fn with_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.inner.location.file = Some(file.into());
        self
    }

    /// Sets the line (1-based).
    pub fn with_line(mut self, line: usize) -> Self {
        self.inner.location.line = Some(line);
        self
    }

    /// Sets the path inside the document.
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.inner.location.path = Some(path.into());
        self
    }

    /// Sets the tool.
    pub fn with_tool(mut self, tool: impl Into<String>) -> Self {
        self.inner.location.tool = Some(tool.into());
        self
    }

    /// Sets the call id.
    pub fn with_call_id(mut self, call_id: impl Into<String>) -> Self {
        self.inner.location.call_id = Some(call_id.into());
        self
    }

    /// The same error with another message (kind, location and cause kept).
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn with_message(mut self, message: impl Into<String>) -> Self {
        self.inner.message = without_url_secrets(message.into());
        self
    }

    /// The message followed by each cause (`message: cause: cause`), without
    /// the location: what a model is told when a call fails.
    pub(crate) fn message_with_causes(&self) -> String {
        let mut out = self.inner.message.clone();
        push_causes(&mut out, self.source());
        out
    }

    /// Names the server whose failure this is, unless one is named already.
    pub(crate) fn of_server(mut self, server: &str) -> Self {
        self.set_server(server);
        self
    }

    /// [`of_server`](Self::of_server) where the error lies.
    pub(crate) fn set_server(&mut self, server: &str) {
        if self.inner.server.is_none() {
            self.inner.server = Some(server.to_owned());
        }
    }

    /// Says the message is the library's own words, with nothing of a
    /// server's: a model is told it as it is, whatever the kind.
    pub(crate) fn plain(mut self) -> Self {
        self.inner.plain = true;
        self
    }

    /// What a model is told of this error. A failure of the server itself
    /// (it could not be started or reached, it went away during the
    /// request, its sign-in did not complete) is told by its kind and the
    /// server's name only, and that the application's log has the rest: the
    /// message may quote the server's stderr, its command line or its URL,
    /// which stay with the application (the error's message and causes, the
    /// call's record, the log). Anything else is its message and causes.
    pub(crate) fn told_to_model(&self) -> String {
        let inner = &self.inner;
        let server = match &inner.server {
            Some(name) => format!("server `{name}`"),
            None => "the tool's server".to_owned(),
        };
        match inner.kind {
            _ if inner.plain => self.message_with_causes(),
            ErrorKind::Unavailable => format!(
                "{server} is unavailable (it could not be started or reached, or it stopped), so \
                 the request was not sent; the application's log has the details"
            ),
            ErrorKind::Interrupted => format!(
                "{server} did not answer: it went away while it handled the request (it exited, \
                 crashed or dropped the connection), so the request may or may not have run; it \
                 was not sent again, and the application's log has the details"
            ),
            ErrorKind::Unauthorized => format!(
                "{server} requires a sign-in that did not complete, so the request was not run; \
                 the application's log has the details"
            ),
            _ => self.message_with_causes(),
        }
    }

    pub(crate) fn input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Input, message)
    }

    pub(crate) fn spec(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Spec, message)
    }

    pub(crate) fn io(source: std::io::Error, file: impl Into<PathBuf>) -> Self {
        let file = file.into();
        Self::new(ErrorKind::Io, format!("cannot read {}", file.display()))
            .with_source(source)
            .with_file(file)
    }
}

/// Appends `: cause` for each error in the chain starting at `source`,
/// skipping a cause whose text the message already ends with.
fn push_causes(out: &mut String, mut source: Option<&(dyn std::error::Error + 'static)>) {
    while let Some(cause) = source {
        let text = without_url_secrets(cause.to_string());
        if !text.is_empty() && !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
}

/// `text` with every URL's userinfo, query and fragment taken out
/// (`scheme://user:pass@host/path?key=v#f` becomes `scheme://host/path`).
/// A URL runs from its scheme to the first space, quote, bracket or angle
/// bracket.
pub(crate) fn without_url_secrets(text: String) -> String {
    if memchr::memmem::find(text.as_bytes(), b"://").is_none() {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("://") {
        let (before, after) = (&rest[..at + 3], &rest[at + 3..]);
        out.push_str(before);
        let end = after
            .find(|c: char| {
                c.is_whitespace()
                    || matches!(
                        c,
                        '"' | '\'' | '`' | '<' | '>' | '(' | ')' | '[' | ']' | '{' | '}' | '\\'
                    )
            })
            .unwrap_or(after.len());
        let url = &after[..end];
        let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
        let authority = &url[..authority_end];
        out.push_str(
            authority
                .rsplit_once('@')
                .map_or(authority, |(_, host)| host),
        );
        let path = &url[authority_end..];
        out.push_str(&path[..path.find(['?', '#']).unwrap_or(path.len())]);
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Error");
        s.field("kind", &self.inner.kind)
            .field("message", &self.inner.message);
        if self.inner.location != Location::default() {
            s.field("location", &self.inner.location);
        }
        if self.inner.source.is_some() {
            // The causes as they write themselves, URLs cleaned: their own
            // `Debug` may quote a URL whole.
            let mut causes = String::new();
            push_causes(&mut causes, self.source());
            s.field("causes", &causes.trim_start_matches(": "));
        }
        s.finish()
    }
}

/// `file:line: at /path: tool `t`: call `c`: message`; with `{:#}`, the causes follow.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let loc = &self.inner.location;
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
        if f.alternate() {
            f.write_str(&self.message_with_causes())
        } else {
            f.write_str(&self.inner.message)
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// A problem found in a spec or rules document: the JSON pointer where, and
/// what. The spec loader turns it into an [`Error`] naming the file and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub path: String,
    pub message: String,
}

impl Problem {
    pub(crate) fn at(path: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            path: path.into(),
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_its_cause() {
        let cause = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        let err = Error::input("the arguments are not valid JSON")
            .with_source(cause)
            .with_tool("t");
        assert!(err.source().is_some());
        assert_eq!(
            err.to_string(),
            "tool `t`: the arguments are not valid JSON"
        );
        assert_eq!(
            format!("{err:#}"),
            "tool `t`: the arguments are not valid JSON: EOF while parsing an object at line 1 column 1"
        );
        assert_eq!(
            err.message_with_causes(),
            "the arguments are not valid JSON: EOF while parsing an object at line 1 column 1"
        );
    }

    #[test]
    fn a_server_failure_is_told_by_its_kind_and_name_only() {
        let crashed = Error::new(
            ErrorKind::Unavailable,
            "server `db` is down: `db --password K1` exited with status 1; its stderr ended with:\nK2",
        )
        .of_server("db");
        let told = crashed.told_to_model();
        assert!(told.starts_with("server `db` is unavailable"), "{told}");
        assert!(!told.contains("K1") && !told.contains("K2"), "{told}");
        // The application keeps the whole message.
        assert!(format!("{crashed:#}").contains("K2"));
        let gone = Error::new(ErrorKind::Interrupted, "stderr: K3");
        assert!(
            gone.told_to_model()
                .starts_with("the tool's server did not answer")
        );
        // The library's own words, and other kinds, are told as they are.
        let plain =
            Error::new(ErrorKind::Unavailable, "the turn's state could not be kept").plain();
        assert_eq!(plain.told_to_model(), "the turn's state could not be kept");
        let denied =
            Error::new(ErrorKind::Denied, "denied by policy (rule `db/*`)").of_server("db");
        assert_eq!(denied.told_to_model(), "denied by policy (rule `db/*`)");
    }

    #[test]
    fn no_url_keeps_its_userinfo_or_query() {
        let clean = |t: &str| without_url_secrets(t.to_owned());
        assert_eq!(
            clean("cannot reach `https://mcp.example/v1/mcp?api_key=K1#frag`: refused"),
            "cannot reach `https://mcp.example/v1/mcp`: refused"
        );
        assert_eq!(
            clean("`db postgresql://admin:P4SS@db.local:5432/app --api-key K2` exited"),
            "`db postgresql://db.local:5432/app --api-key K2` exited"
        );
        assert_eq!(
            clean("error sending request for url (http://u@127.0.0.1:9/mcp?k=K3)"),
            "error sending request for url (http://127.0.0.1:9/mcp)"
        );
        assert_eq!(clean("no url here"), "no url here");
        assert_eq!(clean("a://"), "a://");
        // In the message, the causes and the Debug output alike.
        let cause = std::io::Error::other("GET https://x.example/?token=K4 failed");
        let err = Error::new(ErrorKind::Unavailable, "at http://me:K5@x.example/mcp?q=K6")
            .with_source(cause);
        for text in [
            format!("{err:#}"),
            format!("{err:?}"),
            err.message_with_causes(),
        ] {
            for secret in ["K4", "K5", "K6"] {
                assert!(!text.contains(secret), "{text}");
            }
            assert!(text.contains("x.example"), "{text}");
        }
    }

    #[test]
    fn a_cause_the_message_already_ends_with_is_not_repeated() {
        let io = std::io::Error::other("disk on fire");
        let err = Error::new(ErrorKind::Io, "reading x: disk on fire").with_source(io);
        assert_eq!(err.message_with_causes(), "reading x: disk on fire");
    }
}
