//! Results that are not (yet) a tool's answer: `resultType` (MCP 2026-07-28),
//! multi-round-trip requests (`input_required`) and task handles (`task`, the
//! tasks extension), and the cache hints of a tool list.
//!
//! A server may answer `tools/call` with `resultType: "input_required"`: it
//! names the questions it needs answered (`inputRequests`, a map keyed by ids
//! the server chose) and an opaque `requestState`; the client calls the same
//! tool again with the same arguments, the answers (`inputResponses`, keyed
//! the same way) and the request state, until the result is complete.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::sampling::{CreateMessageParams, CreateMessageResult, ListRootsResult};
use super::{CallToolResult, Object};
use crate::error::{Error, Result};

/// What kind of result a server sent (`resultType`).
///
/// Results from revisions before 2026-07-28 carry no `resultType`; an absent
/// one means [`ResultType::Complete`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ResultType {
    /// `"complete"`: the result is the answer.
    #[default]
    Complete,
    /// `"input_required"`: the server needs answers before it can complete.
    InputRequired,
    /// `"task"`: the server started a task (the tasks extension).
    Task,
    /// A value this library does not know, as sent.
    Other(String),
}

impl ResultType {
    /// The wire value.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Task => "task",
            ResultType::Other(other) => other,
        }
    }

    /// The `resultType` of a result object; absent (or not a string) is `Complete`.
    pub fn of(result: &Value) -> ResultType {
        match result.get("resultType").and_then(Value::as_str) {
            None => ResultType::Complete,
            Some(s) => ResultType::from(s),
        }
    }
}

impl From<&str> for ResultType {
    fn from(s: &str) -> Self {
        match s {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            "task" => ResultType::Task,
            other => ResultType::Other(other.to_owned()),
        }
    }
}

impl std::fmt::Display for ResultType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Ok(ResultType::from(s.as_str()))
    }
}

/// A server's answer to `tools/call`: the result, or a request for input, or a task.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallToolResponse {
    /// The tool's result (`resultType` `complete` or absent).
    Complete(CallToolResult),
    /// The server needs answers before the call can complete.
    InputRequired(InputRequiredResult),
    /// The server started a task for the call (the tasks extension).
    Task(CreateTaskResult),
    /// A result of a `resultType` this library does not know, kept as sent.
    Other(Object),
}

impl CallToolResponse {
    /// Reads a `tools/call` result by its `resultType`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when the value is not an
    /// object, or is not a well-formed result of the type it says it is.
    pub fn from_value(value: Value) -> Result<Self> {
        let Value::Object(map) = value else {
            return Err(Error::input("a tools/call result must be an object"));
        };
        let kind = ResultType::of_object(&map);
        if let ResultType::Other(_) = kind {
            return Ok(CallToolResponse::Other(map));
        }
        let value = Value::Object(map);
        let malformed = |what: &str, e: serde_json::Error| {
            Error::input(format!("malformed {what} result")).with_source(e)
        };
        Ok(match kind {
            ResultType::InputRequired => CallToolResponse::InputRequired(
                serde_json::from_value(value).map_err(|e| malformed("input_required", e))?,
            ),
            ResultType::Task => CallToolResponse::Task(
                serde_json::from_value(value).map_err(|e| malformed("task", e))?,
            ),
            _ => CallToolResponse::Complete(
                serde_json::from_value(value).map_err(|e| malformed("tool", e))?,
            ),
        })
    }

    /// The result's type.
    pub fn result_type(&self) -> ResultType {
        match self {
            CallToolResponse::Complete(_) => ResultType::Complete,
            CallToolResponse::InputRequired(_) => ResultType::InputRequired,
            CallToolResponse::Task(_) => ResultType::Task,
            CallToolResponse::Other(map) => ResultType::of_object(map),
        }
    }
}

impl ResultType {
    fn of_object(map: &Object) -> ResultType {
        match map.get("resultType").and_then(Value::as_str) {
            None => ResultType::Complete,
            Some(s) => ResultType::from(s),
        }
    }
}

impl From<CallToolResult> for CallToolResponse {
    fn from(result: CallToolResult) -> Self {
        CallToolResponse::Complete(result)
    }
}

impl From<InputRequiredResult> for CallToolResponse {
    fn from(result: InputRequiredResult) -> Self {
        CallToolResponse::InputRequired(result)
    }
}

impl Serialize for CallToolResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            CallToolResponse::Complete(r) => r.serialize(serializer),
            CallToolResponse::InputRequired(r) => r.serialize(serializer),
            CallToolResponse::Task(r) => r.serialize(serializer),
            CallToolResponse::Other(r) => r.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for CallToolResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        CallToolResponse::from_value(value)
            .map_err(|e| serde::de::Error::custom(e.message_with_causes()))
    }
}

/// A `resultType` tag that reads and writes exactly one value.
macro_rules! tag {
    ($name:ident, $value:literal) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        struct $name;

        impl Serialize for $name {
            fn serialize<S: Serializer>(
                &self,
                serializer: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str($value)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(
                deserializer: D,
            ) -> std::result::Result<Self, D::Error> {
                let s = String::deserialize(deserializer)?;
                if s == $value {
                    Ok($name)
                } else {
                    Err(serde::de::Error::custom(format!(
                        "expected resultType `{}`, got `{s}`",
                        $value
                    )))
                }
            }
        }
    };
}

tag!(InputRequiredTag, "input_required");
tag!(TaskTag, "task");

/// The questions of a round, keyed by the ids the server chose.
pub type InputRequests = BTreeMap<String, InputRequest>;

/// The answers to a round's questions, keyed as the questions were.
pub type InputResponses = BTreeMap<String, InputResponse>;

/// `resultType: "input_required"`: what the server needs before the call can
/// complete.
///
/// The client answers [`input_requests`](Self::input_requests) and calls the
/// tool again with the same arguments, the answers and
/// [`request_state`](Self::request_state) echoed as sent. A result with no
/// questions and only a request state asks to be called again as it is.
///
/// ```
/// use mcp_adapters::mcp::{InputRequest, InputRequiredResult};
/// use serde_json::json;
///
/// let asked = InputRequiredResult::new()
///     .ask("confirm", InputRequest::form("Delete note `todo`?",
///         json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}})))
///     .with_request_state("step-1");
/// assert_eq!(serde_json::to_value(&asked).unwrap()["resultType"], "input_required");
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputRequiredResult {
    #[serde(rename = "resultType")]
    result_type: InputRequiredTag,
    /// The questions, keyed by the server's ids.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub input_requests: InputRequests,
    /// Opaque state to echo, exactly as sent, on the next request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
    /// Fields this library does not interpret, kept as sent.
    #[serde(flatten)]
    pub extra: Object,
}

impl InputRequiredResult {
    /// A result with no questions and no request state yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the question `request` under `key`.
    pub fn ask(mut self, key: impl Into<String>, request: impl Into<InputRequest>) -> Self {
        self.input_requests.insert(key.into(), request.into());
        self
    }

    /// Sets the request state.
    pub fn with_request_state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }
}

/// One question of an [`InputRequiredResult`]: a request the client fulfils
/// before the call is retried.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputRequest {
    /// `elicitation/create`: a question for the user.
    Elicitation(Elicitation),
    /// `sampling/createMessage`: a completion from the client's model.
    Sampling(Box<CreateMessageParams>),
    /// `roots/list`: the client's roots; the value holds the request's
    /// `params` (only `_meta`, if anything).
    ListRoots(Object),
    /// Any other request (a method this library does not know, or a request
    /// of a known method it cannot read), kept as sent.
    Other(Value),
}

impl InputRequest {
    /// A form elicitation: `message` and the JSON Schema of the answer's content.
    pub fn form(message: impl Into<String>, requested_schema: Value) -> Self {
        InputRequest::Elicitation(Elicitation::Form(FormElicitation {
            message: message.into(),
            requested_schema,
            meta: None,
            extra: Object::new(),
        }))
    }

    /// A URL elicitation: `message` and a page the user opens.
    pub fn url(message: impl Into<String>, url: impl Into<String>) -> Self {
        InputRequest::Elicitation(Elicitation::Url(UrlElicitation {
            message: message.into(),
            url: url.into(),
            meta: None,
            extra: Object::new(),
        }))
    }

    /// A sampling request.
    pub fn sampling(params: CreateMessageParams) -> Self {
        InputRequest::Sampling(Box::new(params))
    }

    /// A request for the client's roots.
    pub fn list_roots() -> Self {
        InputRequest::ListRoots(Object::new())
    }

    /// The request's `method` as sent (empty when it has none).
    pub fn method(&self) -> &str {
        match self {
            InputRequest::Elicitation(_) => "elicitation/create",
            InputRequest::Sampling(_) => "sampling/createMessage",
            InputRequest::ListRoots(_) => "roots/list",
            InputRequest::Other(v) => v.get("method").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// Reads a request; one of an unknown kind, or malformed, is kept as [`InputRequest::Other`].
    pub fn from_value(value: Value) -> Self {
        match value.get("method").and_then(Value::as_str) {
            Some("elicitation/create") => {}
            Some("sampling/createMessage") => {
                return match value
                    .get("params")
                    .cloned()
                    .map(CreateMessageParams::from_value)
                {
                    Some(Ok(params)) => InputRequest::Sampling(Box::new(params)),
                    _ => InputRequest::Other(value),
                };
            }
            Some("roots/list") => {
                return match value.get("params") {
                    None | Some(Value::Null) => InputRequest::ListRoots(Object::new()),
                    Some(Value::Object(params)) => InputRequest::ListRoots(params.clone()),
                    Some(_) => InputRequest::Other(value),
                };
            }
            _ => return InputRequest::Other(value),
        }
        let Some(params) = value.get("params") else {
            return InputRequest::Other(value);
        };
        let parsed = match params.get("mode").and_then(Value::as_str) {
            None | Some("form") => FormElicitation::deserialize(params)
                .ok()
                .map(Elicitation::Form),
            Some("url") => UrlElicitation::deserialize(params)
                .ok()
                .map(Elicitation::Url),
            Some(_) => None,
        };
        match parsed {
            Some(elicitation) => InputRequest::Elicitation(elicitation),
            None => InputRequest::Other(value),
        }
    }
}

impl From<Elicitation> for InputRequest {
    fn from(elicitation: Elicitation) -> Self {
        InputRequest::Elicitation(elicitation)
    }
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            InputRequest::Elicitation(e) => {
                let mut params = match e {
                    Elicitation::Form(f) => serde_json::to_value(f),
                    Elicitation::Url(u) => serde_json::to_value(u),
                }
                .map_err(serde::ser::Error::custom)?;
                if let Value::Object(map) = &mut params {
                    let mode = match e {
                        Elicitation::Form(_) => "form",
                        Elicitation::Url(_) => "url",
                    };
                    map.insert("mode".into(), Value::String(mode.into()));
                }
                serde_json::json!({"method": "elicitation/create", "params": params})
                    .serialize(serializer)
            }
            InputRequest::Sampling(params) => {
                serde_json::json!({"method": "sampling/createMessage", "params": params})
                    .serialize(serializer)
            }
            InputRequest::ListRoots(params) if params.is_empty() => {
                serde_json::json!({"method": "roots/list"}).serialize(serializer)
            }
            InputRequest::ListRoots(params) => {
                serde_json::json!({"method": "roots/list", "params": params}).serialize(serializer)
            }
            InputRequest::Other(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        Ok(InputRequest::from_value(Value::deserialize(deserializer)?))
    }
}

/// An `elicitation/create` request: a question for the user.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Elicitation {
    /// `mode: "form"` (or no mode): fill in a form.
    Form(FormElicitation),
    /// `mode: "url"`: open a page (sign in, pay) outside the client.
    Url(UrlElicitation),
}

impl Elicitation {
    /// The question's text.
    pub fn message(&self) -> &str {
        match self {
            Elicitation::Form(f) => &f.message,
            Elicitation::Url(u) => &u.message,
        }
    }
}

/// A form elicitation: a message and the JSON Schema of the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FormElicitation {
    /// The question's text.
    pub message: String,
    /// The JSON Schema the answer's `content` follows (an object of primitive properties).
    pub requested_schema: Value,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
    /// Fields this library does not interpret, kept as sent.
    #[serde(flatten)]
    pub extra: Object,
}

impl FormElicitation {
    /// The `default` of every property of the schema that gives one
    /// (SEP-1034): what a form shows before the person changes anything, and
    /// what an accepted answer sends for the fields left alone.
    ///
    /// ```
    /// use mcp_adapters::mcp::{Elicitation, InputRequest};
    /// use serde_json::json;
    ///
    /// let InputRequest::Elicitation(Elicitation::Form(form)) = InputRequest::form("Who?", json!({
    ///     "type": "object",
    ///     "properties": {"name": {"type": "string", "default": "John Doe"}, "age": {"type": "integer"}}
    /// })) else { unreachable!() };
    /// assert_eq!(serde_json::Value::Object(form.defaults()), json!({"name": "John Doe"}));
    /// ```
    pub fn defaults(&self) -> Object {
        let Some(properties) = self
            .requested_schema
            .get("properties")
            .and_then(Value::as_object)
        else {
            return Object::new();
        };
        properties
            .iter()
            .filter_map(|(name, schema)| schema.get("default").map(|d| (name.clone(), d.clone())))
            .collect()
    }

    /// The names of the schema's properties, in its order.
    pub fn fields(&self) -> Vec<&str> {
        self.requested_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

/// A URL elicitation: a message and a page the user opens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UrlElicitation {
    /// The question's text.
    pub message: String,
    /// The page to open.
    pub url: String,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
    /// Fields this library does not interpret, kept as sent.
    #[serde(flatten)]
    pub extra: Object,
}

/// One answer in `inputResponses`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputResponse {
    /// The answer to an elicitation.
    Elicitation(ElicitResult),
    /// The answer to a sampling request: the model's message.
    Sampling(CreateMessageResult),
    /// The answer to a request for the roots.
    Roots(ListRootsResult),
    /// The answer to another kind of request, sent as given.
    Other(Value),
}

impl InputResponse {
    /// The content of an accepted elicitation, if this is one.
    pub fn accepted_content(&self) -> Option<&Value> {
        match self {
            InputResponse::Elicitation(ElicitResult {
                action: ElicitAction::Accept,
                content,
                ..
            }) => content.as_ref(),
            _ => None,
        }
    }

    /// Reads an answer: an elicitation result (`action`, `content`), a
    /// sampling result (`role`, `content`, `model`), a roots result
    /// (`roots`), or any other value as sent.
    pub fn from_value(value: Value) -> Self {
        if let Ok(result) = ElicitResult::deserialize(&value) {
            return InputResponse::Elicitation(result);
        }
        if value.get("roots").is_some()
            && let Ok(result) = ListRootsResult::deserialize(&value)
        {
            return InputResponse::Roots(result);
        }
        if value.get("model").is_some()
            && let Ok(result) = CreateMessageResult::deserialize(&value)
        {
            return InputResponse::Sampling(result);
        }
        InputResponse::Other(value)
    }
}

impl From<ElicitResult> for InputResponse {
    fn from(result: ElicitResult) -> Self {
        InputResponse::Elicitation(result)
    }
}

impl From<CreateMessageResult> for InputResponse {
    fn from(result: CreateMessageResult) -> Self {
        InputResponse::Sampling(result)
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(result: ListRootsResult) -> Self {
        InputResponse::Roots(result)
    }
}

impl Serialize for InputResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            InputResponse::Elicitation(r) => r.serialize(serializer),
            InputResponse::Sampling(r) => r.serialize(serializer),
            InputResponse::Roots(r) => r.serialize(serializer),
            InputResponse::Other(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for InputResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        Ok(InputResponse::from_value(Value::deserialize(deserializer)?))
    }
}

/// The answer to an elicitation.
///
/// ```
/// use mcp_adapters::mcp::ElicitResult;
/// use serde_json::json;
///
/// let yes = ElicitResult::accept(json!({"confirm": true}));
/// assert_eq!(serde_json::to_value(&yes).unwrap(), json!({"action": "accept", "content": {"confirm": true}}));
/// assert_eq!(serde_json::to_value(ElicitResult::decline()).unwrap(), json!({"action": "decline"}));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The form's content, when the user accepted a form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
}

impl ElicitResult {
    /// The user accepted, with the form's `content` (an object following the requested schema).
    pub fn accept(content: Value) -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
            meta: None,
        }
    }

    /// The user accepted an elicitation that has no content (a URL elicitation).
    pub fn accept_without_content() -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: None,
            meta: None,
        }
    }

    /// The user explicitly said no.
    pub fn decline() -> Self {
        ElicitResult {
            action: ElicitAction::Decline,
            content: None,
            meta: None,
        }
    }

    /// The user dismissed the question without choosing.
    pub fn cancel() -> Self {
        ElicitResult {
            action: ElicitAction::Cancel,
            content: None,
            meta: None,
        }
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ElicitAction {
    /// Submitted the form, or confirmed.
    Accept,
    /// Explicitly said no.
    Decline,
    /// Dismissed it without choosing.
    Cancel,
}

/// `resultType: "task"`: the server started a task for the call (the tasks
/// extension, `io.modelcontextprotocol/tasks`); the result is polled with
/// `tasks/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateTaskResult {
    #[serde(rename = "resultType")]
    result_type: TaskTag,
    /// The task's id.
    pub task_id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`, as sent.
    pub status: String,
    /// A message about the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// How often to poll, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
    /// Fields this library does not interpret (`createdAt`, `ttlMs`, ...), kept as sent.
    #[serde(flatten)]
    pub extra: Object,
}

/// Who may reuse a cached list (`cacheScope`, MCP 2026-07-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CacheScope {
    /// Any client or intermediary may reuse it, across authorization contexts.
    Public,
    /// It may be reused only within the same authorization context.
    Private,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_absent_result_type_is_complete() {
        let r = CallToolResponse::from_value(json!({"content": []})).unwrap();
        assert!(matches!(r, CallToolResponse::Complete(_)));
        assert_eq!(r.result_type(), ResultType::Complete);
    }

    #[test]
    fn input_required_keeps_typed_and_unknown_requests() {
        let wire = json!({
            "resultType": "input_required",
            "inputRequests": {
                "confirm": {"method": "elicitation/create", "params": {
                    "message": "Delete?", "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}}}},
                "login": {"method": "elicitation/create", "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/a"}},
                "sample": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}},
                "bad_sample": {"method": "sampling/createMessage", "params": {"messages": []}},
                "where": {"method": "roots/list"},
                "odd": {"method": "elicitation/create", "params": {"mode": "telepathy"}},
                "new": {"method": "x/unknown"}
            },
            "requestState": "opaque",
            "_meta": {"k": 1},
            "later": true
        });
        let CallToolResponse::InputRequired(r) =
            CallToolResponse::from_value(wire.clone()).unwrap()
        else {
            panic!("not input_required")
        };
        assert_eq!(r.request_state.as_deref(), Some("opaque"));
        let kinds: Vec<(&str, &str)> = r
            .input_requests
            .iter()
            .map(|(k, v)| {
                let kind = match v {
                    InputRequest::Elicitation(Elicitation::Form(_)) => "form",
                    InputRequest::Elicitation(Elicitation::Url(_)) => "url",
                    InputRequest::Sampling(_) => "sampling",
                    InputRequest::ListRoots(_) => "roots",
                    InputRequest::Other(_) => "other",
                    #[allow(unreachable_patterns)]
                    _ => "?",
                };
                (k.as_str(), kind)
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("bad_sample", "other"),
                ("confirm", "form"),
                ("login", "url"),
                ("new", "other"),
                ("odd", "other"),
                ("sample", "sampling"),
                ("where", "roots")
            ]
        );
        let mut back = serde_json::to_value(&r).unwrap();
        // A form without `mode` is written with it.
        back["inputRequests"]["confirm"]["params"]
            .as_object_mut()
            .unwrap()
            .remove("mode");
        let mut expected = wire;
        expected["inputRequests"]["confirm"]["params"]
            .as_object_mut()
            .unwrap()
            .remove("mode");
        assert_eq!(back, expected);
    }

    #[test]
    fn tasks_and_unknown_types_are_not_results() {
        let task = json!({"resultType": "task", "taskId": "t1", "status": "working",
            "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": null});
        let CallToolResponse::Task(t) = CallToolResponse::from_value(task.clone()).unwrap() else {
            panic!()
        };
        assert_eq!((t.task_id.as_str(), t.status.as_str()), ("t1", "working"));
        assert_eq!(serde_json::to_value(&t).unwrap(), task);
        let odd = CallToolResponse::from_value(json!({"resultType": "later"})).unwrap();
        assert_eq!(odd.result_type(), ResultType::Other("later".into()));
        assert!(
            CallToolResponse::from_value(
                json!({"resultType": "input_required", "inputRequests": 3})
            )
            .is_err()
        );
    }

    #[test]
    fn a_completed_result_refuses_another_result_type() {
        let err = serde_json::from_value::<CallToolResult>(
            json!({"resultType": "input_required", "requestState": "s"}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("input_required"), "{err}");
        let ok: CallToolResult =
            serde_json::from_value(json!({"resultType": "complete", "content": []})).unwrap();
        assert_eq!(ok.extra["resultType"], "complete");
    }

    #[test]
    fn responses_round_trip() {
        let accept = InputResponse::from_value(json!({"action": "accept", "content": {"a": 1}}));
        assert_eq!(accept.accepted_content(), Some(&json!({"a": 1})));
        let roots = InputResponse::from_value(json!({"roots": []}));
        assert!(matches!(roots, InputResponse::Roots(_)));
        let sampled = InputResponse::from_value(
            json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}),
        );
        assert!(matches!(sampled, InputResponse::Sampling(_)));
        let odd = InputResponse::from_value(json!({"roots": 3}));
        assert!(matches!(odd, InputResponse::Other(_)));
        assert_eq!(
            serde_json::to_value(InputResponse::from(ElicitResult::cancel())).unwrap(),
            json!({"action": "cancel"})
        );
    }
}
