//! The server's answers read as the official MCP SDKs read them, and a log
//! of the handshake for the errors that say why a session did not start.
//!
//! The official SDK for Rust (rmcp 3.11) requires every field of a
//! `server/discover` result, where the TypeScript and Python SDKs give
//! `resultType` (`"complete"`), `ttlMs` (0) and `cacheScope` (`"private"`)
//! their defaults when a server leaves them out (or, for the two cache
//! hints, sends them malformed); the Python SDK does the same for the cache
//! hints of `tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list` and `resources/read`, and for the
//! `resultType` of every result. [`Tolerant`] wraps a session's transport:
//! it fills those defaults in before the SDK reads each answer, and notes
//! each field it filled once per server ([`Notes`]). An answer to
//! `server/discover` that cannot be read even so is, when the lifecycle may
//! fall back, handed to the SDK as an error answer, so that it starts the
//! session with `initialize` instead.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::Either;
use rmcp::model::{
    CacheScope, ClientJsonRpcMessage, ClientNotification, CustomResult, DiscoverResult, ErrorCode,
    ErrorData, Implementation, InitializeResult, JsonRpcError, JsonRpcResponse, JsonRpcVersion2_0,
    ProtocolVersion, RequestId, ServerJsonRpcMessage, ServerResult, SubscriptionsListenResult,
};
use rmcp::service::{ClientInitializeError, RoleClient};
use rmcp::transport::Transport;
use serde_json::Value;

use super::session::{EXITED_WITHIN, Process};
use super::stdio::{Tap, id_json};
use crate::error::{Error, ErrorKind};
use crate::listing::Defaulted;

/// `server/discover`'s method name.
pub(super) const DISCOVER: &str = "server/discover";
/// `initialize`'s method name.
pub(super) const INITIALIZE: &str = "initialize";
const LISTEN: &str = "subscriptions/listen";
const LIST_TOOLS: &str = "tools/list";

/// The fields a server left out of its answers, each once, across the
/// client's sessions.
#[derive(Debug, Default)]
pub(super) struct Notes(Mutex<BTreeMap<&'static str, Defaulted>>);

impl Notes {
    /// Notes that the server's answer to `method` lacked `field` (or sent
    /// `sent` for it), read as `read_as`. `server` names it in the note.
    fn note(
        &self,
        server: &str,
        method: &str,
        field: &'static str,
        sent: Option<&Value>,
        read_as: Value,
    ) {
        let Ok(mut notes) = self.0.lock() else {
            return;
        };
        let entry = notes.entry(field).or_insert_with(|| {
            tracing::info!(server = %server, field, method,
                "a server's answer lacked a field: read with the official SDKs' default");
            Defaulted::new(server, field, read_as)
        });
        if !entry.methods.iter().any(|m| m == method) {
            entry.methods.push(method.to_owned());
        }
        if entry.sent.is_none() {
            entry.sent = sent.cloned();
        }
    }

    /// Every field noted so far, by name.
    pub(super) fn all(&self) -> Vec<Defaulted> {
        self.0
            .lock()
            .map(|notes| notes.values().cloned().collect())
            .unwrap_or_default()
    }
}

/// What came of one handshake request.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Answer {
    /// The server answered nothing (yet).
    Nothing,
    /// The answer was read.
    Read,
    /// The answer could not be read: why, naming the fields.
    Unreadable(String),
    /// The server answered with a JSON-RPC error.
    Error { code: i32, message: String },
}

/// One handshake request and its answer.
#[derive(Debug, Clone)]
pub(super) struct Step {
    pub(super) method: &'static str,
    pub(super) answer: Answer,
}

/// What a session's transport saw, for the errors about its start.
#[derive(Debug, Default)]
pub(super) struct Exchange {
    /// The handshake requests in flight, and `subscriptions/listen` (whose
    /// final answer the SDK reads strictly), by id.
    pending: HashMap<RequestId, &'static str>,
    /// The `server/discover` the SDK stopped waiting for (it sent
    /// `initialize` after 10 s).
    stalled: Option<RequestId>,
    /// The requests whose answers are left unread: the stalled discovery's
    /// when `initialize` was answered first, `initialize`'s when the
    /// discovery's answer came first and started the session.
    unread: Vec<RequestId>,
    /// The session was started by a late discovery answer: the SDK's
    /// `notifications/initialized` is not sent.
    started_late: bool,
    /// The handshake requests sent, in order, with their answers.
    pub(super) steps: Vec<Step>,
    /// How many messages the server sent.
    pub(super) received: usize,
    /// The server ended the connection (its output closed) before the
    /// session stopped reading it.
    pub(super) ended: bool,
    /// The session speaks MCP 2026-07-28 or later (its results must carry
    /// the fields noted when absent).
    modern: bool,
}

/// A session's transport, reading the server's answers as the official SDKs do.
pub(super) struct Tolerant<T> {
    inner: T,
    server: String,
    exchange: Arc<Mutex<Exchange>>,
    notes: Arc<Notes>,
    /// An unreadable `server/discover` answer is handed on as an error
    /// answer, so that the SDK falls back to `initialize`.
    fall_back: bool,
    /// The stdio tap, told of each `tools/list` request before it is sent
    /// (it reads the answer's tools from the bytes).
    tap: Option<Tap>,
}

impl<T> Tolerant<T> {
    pub(super) fn new(
        inner: T,
        server: &str,
        exchange: Arc<Mutex<Exchange>>,
        notes: Arc<Notes>,
        fall_back: bool,
        tap: Option<Tap>,
    ) -> Self {
        Tolerant {
            inner,
            server: server.to_owned(),
            exchange,
            notes,
            fall_back,
            tap,
        }
    }

    /// Notes what is sent: the handshake requests, and the listen request.
    /// `false` for a message not to send.
    fn sent(&self, message: &ClientJsonRpcMessage) -> bool {
        let request = match message {
            ClientJsonRpcMessage::Request(request) => request,
            ClientJsonRpcMessage::Notification(notification) => {
                let initialized = matches!(
                    notification.notification,
                    ClientNotification::InitializedNotification(_)
                );
                return !(initialized && self.exchange.lock().is_ok_and(|e| e.started_late));
            }
            _ => return true,
        };
        let method = match request.request.method() {
            DISCOVER => DISCOVER,
            INITIALIZE => INITIALIZE,
            LISTEN => LISTEN,
            LIST_TOOLS => {
                if let Some(tap) = &self.tap {
                    tap.expect_list(id_json(&request.id));
                }
                return true;
            }
            _ => return true,
        };
        if let Ok(mut exchange) = self.exchange.lock() {
            if method == INITIALIZE {
                // The SDK gave up waiting for `server/discover` (a server
                // slow to start): its answer may still come.
                let stalled = exchange
                    .pending
                    .iter()
                    .find(|(_, m)| **m == DISCOVER)
                    .map(|(id, _)| id.clone());
                if let Some(id) = stalled {
                    exchange.pending.remove(&id);
                    exchange.stalled = Some(id);
                }
            }
            exchange.pending.insert(request.id.clone(), method);
            if method != LISTEN {
                exchange.steps.push(Step {
                    method,
                    answer: Answer::Nothing,
                });
            }
        }
        true
    }

    /// The answer to a `server/discover` the SDK stopped waiting for. A
    /// server that speaks 2026-07-28 may refuse the `initialize` sent
    /// since: while `initialize` is unanswered, a readable discovery result
    /// answers it instead (with the revision the SDK starts a session of
    /// without a handshake), and the real answer to `initialize` is left
    /// unread. Otherwise (or for an error answer) `None`: left unread.
    fn late_discovery(
        &self,
        exchange: &mut Exchange,
        message: ServerJsonRpcMessage,
    ) -> Option<ServerJsonRpcMessage> {
        exchange.stalled = None;
        let ServerJsonRpcMessage::Response(response) = message else {
            return None;
        };
        let initialize = exchange
            .pending
            .iter()
            .find(|(_, m)| **m == INITIALIZE)
            .map(|(id, _)| id.clone())?;
        let (ServerResult::DiscoverResult(discovered), Answer::Read) =
            self.discover_result(response.result)
        else {
            return None;
        };
        let modern = ProtocolVersion::V_2026_07_28;
        if !discovered.supported_versions.contains(&modern) {
            return None;
        }
        tracing::debug!(server = %self.server,
            "server/discover was answered after initialize was sent: the session starts from it");
        let mut result = InitializeResult::new(discovered.capabilities.clone());
        result.protocol_version = modern;
        result.server_info = discovered
            .server_info()
            .unwrap_or_else(|| Implementation::new(self.server.clone(), "unknown"));
        result.instructions = discovered.instructions.clone();
        exchange.pending.remove(&initialize);
        exchange.unread.push(initialize.clone());
        exchange.started_late = true;
        exchange.modern = true;
        exchange.answered(DISCOVER, Answer::Read);
        exchange.answered(INITIALIZE, Answer::Read);
        Some(ServerJsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: initialize,
            result: ServerResult::InitializeResult(result),
        }))
    }

    /// The message as the SDK should read it; `None` for the answer to a
    /// `server/discover` the SDK stopped waiting for.
    fn received(&self, message: ServerJsonRpcMessage) -> Option<ServerJsonRpcMessage> {
        let Ok(mut exchange) = self.exchange.lock() else {
            return Some(message);
        };
        exchange.received += 1;
        let id = match &message {
            ServerJsonRpcMessage::Response(response) => Some(&response.id),
            ServerJsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        if let Some(at) = id.and_then(|id| exchange.unread.iter().position(|u| u == id)) {
            exchange.unread.swap_remove(at);
            return None;
        }
        if id.is_some() && id == exchange.stalled.as_ref() {
            return self.late_discovery(&mut exchange, message);
        }
        Some(match message {
            ServerJsonRpcMessage::Response(response) => self.response(&mut exchange, response),
            ServerJsonRpcMessage::Error(error) => {
                let method = error.id.as_ref().and_then(|id| exchange.pending.remove(id));
                if let Some(method) = method.filter(|m| *m != LISTEN) {
                    if method == INITIALIZE {
                        exchange.initialize_answered();
                    }
                    let answer = Answer::Error {
                        code: error.error.code.0,
                        message: error.error.message.to_string(),
                    };
                    exchange.answered(method, answer);
                }
                ServerJsonRpcMessage::Error(error)
            }
            other => other,
        })
    }

    /// A result as the SDK should read it.
    fn response(
        &self,
        exchange: &mut Exchange,
        mut response: JsonRpcResponse<ServerResult>,
    ) -> ServerJsonRpcMessage {
        match exchange.pending.remove(&response.id) {
            Some(DISCOVER) => {
                let (result, answer) = self.discover_result(response.result);
                let unreadable = match &answer {
                    Answer::Unreadable(why) => Some(why.clone()),
                    _ => None,
                };
                exchange.modern = answer == Answer::Read;
                exchange.answered(DISCOVER, answer);
                if let Some(why) = unreadable.filter(|_| self.fall_back) {
                    let message = format!("the answer to {DISCOVER} could not be read: {why}");
                    let error = ErrorData::new(ErrorCode::INTERNAL_ERROR, message, None);
                    return ServerJsonRpcMessage::Error(JsonRpcError::new(
                        Some(response.id),
                        error,
                    ));
                }
                response.result = result;
            }
            Some(INITIALIZE) => {
                exchange.initialize_answered();
                let answer = match &response.result {
                    ServerResult::InitializeResult(result) => {
                        exchange.modern = !result.protocol_version.has_initialize();
                        Answer::Read
                    }
                    other => Answer::Unreadable(why_unreadable::<InitializeResult>(other)),
                };
                exchange.answered(INITIALIZE, answer);
            }
            Some(_) => response.result = self.listen_result(response.result),
            None if exchange.modern => self.fill_defaults(&mut response.result),
            None => {}
        }
        ServerJsonRpcMessage::Response(response)
    }

    /// A `server/discover` result with the defaults filled in, and what
    /// came of reading it.
    fn discover_result(&self, result: ServerResult) -> (ServerResult, Answer) {
        if matches!(result, ServerResult::DiscoverResult(_)) {
            return (result, Answer::Read);
        }
        let mut value = result_value(&result);
        let filled = fill(&mut value, DISCOVER_DEFAULTS);
        match serde_json::from_value::<DiscoverResult>(value) {
            Ok(read) => {
                for (field, sent, read_as) in filled {
                    self.notes
                        .note(&self.server, DISCOVER, field, sent.as_ref(), read_as);
                }
                (ServerResult::DiscoverResult(read), Answer::Read)
            }
            Err(e) => (result, Answer::Unreadable(e.to_string())),
        }
    }

    /// The final answer to `subscriptions/listen`, whose `resultType` the
    /// SDK requires.
    fn listen_result(&self, result: ServerResult) -> ServerResult {
        if !matches!(result, ServerResult::CustomResult(_)) {
            return result;
        }
        let mut value = result_value(&result);
        let filled = fill(&mut value, &[RESULT_TYPE]);
        match serde_json::from_value::<SubscriptionsListenResult>(value) {
            Ok(read) => {
                for (field, sent, read_as) in filled {
                    self.notes
                        .note(&self.server, LISTEN, field, sent.as_ref(), read_as);
                }
                ServerResult::SubscriptionsListenResult(read)
            }
            Err(_) => result,
        }
    }

    /// On a 2026-07-28 session: the cache hints and `resultType` a result
    /// lacks, noted, and the cache hints filled in (the SDK reads an absent
    /// `resultType` as `"complete"` already).
    fn fill_defaults(&self, result: &mut ServerResult) {
        let note = |method: &str, field: &'static str, read_as: Value| {
            self.notes.note(&self.server, method, field, None, read_as);
        };
        macro_rules! cacheable {
            ($r:expr, $method:expr) => {{
                if $r.ttl_ms.is_none() {
                    $r.ttl_ms = Some(0);
                    note($method, "ttlMs", Value::from(0));
                }
                if $r.cache_scope.is_none() {
                    $r.cache_scope = Some(CacheScope::Private);
                    note($method, "cacheScope", Value::from("private"));
                }
                ($method, $r.result_type.is_none())
            }};
        }
        let (method, no_type) = match result {
            ServerResult::ListToolsResult(r) => cacheable!(r, "tools/list"),
            ServerResult::ListPromptsResult(r) => cacheable!(r, "prompts/list"),
            ServerResult::ListResourcesResult(r) => cacheable!(r, "resources/list"),
            ServerResult::ListResourceTemplatesResult(r) => {
                cacheable!(r, "resources/templates/list")
            }
            ServerResult::ReadResourceResult(r) => cacheable!(r, "resources/read"),
            ServerResult::CallToolResult(r) => ("tools/call", r.result_type.is_none()),
            ServerResult::GetPromptResult(r) => ("prompts/get", r.result_type.is_none()),
            ServerResult::CompleteResult(r) => ("completion/complete", r.result_type.is_none()),
            _ => return,
        };
        if no_type {
            note(method, "resultType", Value::from("complete"));
        }
    }
}

impl Exchange {
    /// `initialize` was answered first: a stalled discovery's answer is
    /// left unread.
    fn initialize_answered(&mut self) {
        if let Some(stalled) = self.stalled.take() {
            self.unread.push(stalled);
        }
    }

    /// Records the answer to the last `method` sent.
    fn answered(&mut self, method: &str, answer: Answer) {
        if let Some(step) = self.steps.iter_mut().rev().find(|s| s.method == method) {
            step.answer = answer;
        }
    }
}

/// A session that did not start: what it was waiting for and the SDK's error.
pub(super) struct StartFailure<'a> {
    pub(super) name: &'a str,
    /// How long the handshake had.
    pub(super) waited: Duration,
    /// The SDK's error; `None` when the handshake ran out of time.
    pub(super) error: Option<ClientInitializeError>,
}

impl StartFailure<'_> {
    /// The error that says why: the handshake requests whose answers were
    /// refused or missing, then what the server's process did, in order,
    /// and its last stderr lines.
    pub(super) async fn describe(
        self,
        exchange: &Mutex<Exchange>,
        process: Option<&mut Process>,
    ) -> Error {
        let (story, named, ended, first) = match exchange.lock() {
            Ok(exchange) => (
                exchange.story(self.error.is_none().then_some(self.waited)),
                exchange.names_the_cause(),
                exchange.ended,
                exchange.steps.first().map_or(DISCOVER, |s| s.method),
            ),
            Err(_) => (None, false, false, DISCOVER),
        };
        let mut message = format!("server `{}`", self.name);
        let cause = story.or_else(|| self.error.as_ref().map(ToString::to_string));
        let (mut cause, answered) = match cause {
            Some(cause) => (cause, true),
            None => (String::new(), false),
        };
        let mut stderr = String::new();
        if let Some(process) = process {
            let how = process.how_ended(EXITED_WITHIN).await;
            let command = &process.command;
            cause = match (how, ended, answered) {
                (Some(how), _, false) => format!("`{command}` {how} before answering `{first}`"),
                (Some(how), true, true) => format!("{cause}; `{command}` then {how}"),
                (Some(how), false, true) => {
                    format!("{cause}; the connection was closed, and `{command}` then {how}")
                }
                (None, true, _) => format!("{cause}; `{command}` closed its output"),
                (None, false, _) if cause.is_empty() => {
                    format!("the handshake failed while `{command}` ran (it was stopped)")
                }
                (None, false, _) => {
                    format!("{cause}; `{command}` was still running (it was stopped)")
                }
            };
            stderr = process.stderr.describe();
        } else if cause.is_empty() {
            cause = "the handshake failed".to_owned();
        } else if ended {
            cause.push_str("; the connection closed");
        }
        message.push_str(": ");
        message.push_str(&cause);
        message.push_str(&stderr);
        let error = Error::new(ErrorKind::Unavailable, message);
        match self.error {
            // The SDK's error adds nothing where the answers name the cause.
            Some(e) if !named => error.with_source(e),
            _ => error,
        }
    }
}

impl Exchange {
    /// What the server answered to each handshake request that went
    /// wrong, or that it answered nothing (`waited`: the handshake ran out
    /// of time); `None` when no answer was refused and none is missing.
    fn story(&self, waited: Option<Duration>) -> Option<String> {
        let sent = || {
            let methods: Vec<String> = self
                .steps
                .iter()
                .map(|s| format!("`{}`", s.method))
                .collect();
            methods.join(", then ")
        };
        if self.received == 0 {
            return waited.map(|waited| {
                format!(
                    "it answered nothing within {} ms (it was sent {})",
                    waited.as_millis(),
                    sent()
                )
            });
        }
        let mut parts = Vec::new();
        for step in &self.steps {
            let method = step.method;
            match &step.answer {
                Answer::Read => {}
                Answer::Unreadable(why) => {
                    parts.push(format!(
                        "its answer to `{method}` could not be read ({why})"
                    ));
                }
                Answer::Error { code, message } => {
                    parts.push(format!(
                        "it answered `{method}` with error {code}: {message}"
                    ));
                }
                Answer::Nothing => match waited {
                    Some(waited) => parts.push(format!(
                        "it answered nothing to `{method}` within {} ms",
                        waited.as_millis()
                    )),
                    None if self.ended => parts.push(format!("it answered nothing to `{method}`")),
                    None => {}
                },
            }
        }
        (!parts.is_empty()).then(|| parts.join(", and "))
    }

    /// Whether the last handshake answer was refused: the answers then say
    /// why the session did not start.
    fn names_the_cause(&self) -> bool {
        self.steps
            .last()
            .is_some_and(|s| matches!(s.answer, Answer::Unreadable(_) | Answer::Error { .. }))
    }
}

/// A field the official SDKs default, and its default.
struct FieldDefault {
    name: &'static str,
    default: fn() -> Value,
    /// Whether a value the server sent is readable.
    valid: fn(&Value) -> bool,
}

const RESULT_TYPE: FieldDefault = FieldDefault {
    name: "resultType",
    default: || Value::from("complete"),
    valid: Value::is_string,
};

/// The discovery result's defaults: an absent `resultType` is
/// `"complete"`; an absent or malformed `ttlMs` is 0 and `cacheScope`
/// `"private"` (the TypeScript SDK's reading; the specification says a
/// negative `ttlMs` is treated as 0).
const DISCOVER_DEFAULTS: &[FieldDefault] = &[
    RESULT_TYPE,
    FieldDefault {
        name: "ttlMs",
        default: || Value::from(0),
        valid: |v| v.is_u64(),
    },
    FieldDefault {
        name: "cacheScope",
        default: || Value::from("private"),
        valid: |v| matches!(v.as_str(), Some("public" | "private")),
    },
];

/// Fills each field of `defaults` that `value` lacks or sent malformed:
/// `(field, what was sent, what it is read as)` for each.
fn fill(value: &mut Value, defaults: &[FieldDefault]) -> Vec<(&'static str, Option<Value>, Value)> {
    let Some(object) = value.as_object_mut() else {
        return Vec::new();
    };
    let mut filled = Vec::new();
    for field in defaults {
        let sent = match object.get(field.name) {
            None | Some(Value::Null) => None,
            Some(v) if (field.valid)(v) => continue,
            Some(v) => Some(v.clone()),
        };
        let read_as = (field.default)();
        object.insert(field.name.to_owned(), read_as.clone());
        filled.push((field.name, sent, read_as));
    }
    filled
}

/// A result the SDK did not read as the type asked for, as JSON.
fn result_value(result: &ServerResult) -> Value {
    match result {
        ServerResult::CustomResult(CustomResult(value)) => value.clone(),
        other => serde_json::to_value(other).unwrap_or(Value::Null),
    }
}

/// Why `result` is not a `T`, as serde says it (the fields missing or wrong).
fn why_unreadable<T: serde::de::DeserializeOwned>(result: &ServerResult) -> String {
    let value = result_value(result);
    if !value.is_object() {
        let kind = crate::json::type_name(&value);
        return format!("it is {kind}, not an object");
    }
    match serde_json::from_value::<T>(value) {
        Err(e) => e.to_string(),
        Ok(_) => "it was read as another kind of result".to_owned(),
    }
}

impl<T> Transport<RoleClient> for Tolerant<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if self.sent(&item) {
            Either::Left(self.inner.send(item))
        } else {
            Either::Right(std::future::ready(Ok(())))
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        // Cancel-safe as the inner transport is: nothing is awaited once a
        // message is in.
        loop {
            let Some(message) = self.inner.receive().await else {
                if let Ok(mut exchange) = self.exchange.lock() {
                    exchange.ended = true;
                }
                return None;
            };
            if let Some(message) = self.received(message) {
                return Some(message);
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_discovery_defaults_fill_what_is_absent_or_malformed_only() {
        let mut value = json!({"resultType": "complete", "ttlMs": -5, "supportedVersions": []});
        let filled = fill(&mut value, DISCOVER_DEFAULTS);
        assert_eq!(
            filled,
            vec![
                ("ttlMs", Some(json!(-5)), json!(0)),
                ("cacheScope", None, json!("private")),
            ]
        );
        assert_eq!(value["ttlMs"], 0);
        assert_eq!(value["cacheScope"], "private");
        let mut whole = json!({"resultType": "complete", "ttlMs": 5, "cacheScope": "public"});
        assert!(fill(&mut whole, DISCOVER_DEFAULTS).is_empty());
        assert!(fill(&mut json!("text"), DISCOVER_DEFAULTS).is_empty());
    }

    #[test]
    fn a_field_is_noted_once_with_every_method_that_lacked_it() {
        let notes = Notes::default();
        notes.note("s", DISCOVER, "ttlMs", None, json!(0));
        notes.note("s", "tools/list", "ttlMs", None, json!(0));
        notes.note("s", DISCOVER, "ttlMs", None, json!(0));
        let all = notes.all();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].methods, vec![DISCOVER, "tools/list"]);
        assert_eq!(all[0].server_id, "s");
    }
}
