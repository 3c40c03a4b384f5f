//! A turn state document bound to its content by a key the application
//! holds: an HMAC-SHA-256 over the document, and one over each call, so
//! that a document edited on its way through a store or a queue is refused
//! and the refusal names what changed.
//!
//! The MACs cover the document's content, not its layout: keys in any
//! order and any whitespace read the same (a store that keeps JSON its own
//! way, such as a `jsonb` column, keeps the MACs good).

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;

use super::durable::TurnState;
use crate::error::{Error, ErrorKind, Result};

/// The document's field that holds its MACs.
const MAC_FIELD: &str = "mac";
/// The one algorithm written and read.
const ALGORITHM: &str = "HMAC-SHA256";
/// What the document's MAC is over, before the document.
const DOCUMENT_CONTEXT: &[u8] = b"mcp-adapters/turn-state document\n";
/// What the MAC of the document without its calls is over, before it.
const REST_CONTEXT: &[u8] = b"mcp-adapters/turn-state rest\n";
/// What a call's MAC is over, before the turn's id and the call.
const CALL_CONTEXT: &[u8] = b"mcp-adapters/turn-state call\n";

/// A key that binds [`TurnState`] documents to their content (at least 16
/// bytes; 32 random bytes are a good key). Keep it where the application
/// keeps its secrets: whoever holds it can write a document this library
/// resumes. Its `Debug` shows nothing of it.
///
/// ```
/// use mcp_adapters::exec::StateKey;
///
/// let key = StateKey::new(b"0123456789abcdef0123456789abcdef")?;
/// assert_eq!(format!("{key:?}"), "StateKey(..)");
/// assert!(StateKey::new(b"short").is_err());
/// # Ok::<(), mcp_adapters::Error>(())
/// ```
#[derive(Clone)]
pub struct StateKey(Arc<[u8]>);

impl StateKey {
    /// The shortest key taken, in bytes.
    pub const MIN_LEN: usize = 16;

    /// A key of these bytes.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] for a key shorter than [`MIN_LEN`](Self::MIN_LEN).
    pub fn new(key: impl AsRef<[u8]>) -> Result<Self> {
        let key = key.as_ref();
        if key.len() < Self::MIN_LEN {
            return Err(Error::new(
                ErrorKind::Input,
                format!(
                    "a turn state key is at least {} bytes (this one is {})",
                    Self::MIN_LEN,
                    key.len()
                ),
            ));
        }
        Ok(StateKey(key.into()))
    }

    fn mac(&self, context: &[u8], turn: Option<&str>, value: &Value) -> Hmac<Sha256> {
        // HMAC takes a key of any length.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
        mac.update(context);
        if let Some(turn) = turn {
            mac.update(&(turn.len() as u64).to_be_bytes());
            mac.update(turn.as_bytes());
        }
        let mut bytes = Vec::new();
        canonical(value, &mut bytes);
        mac.update(&bytes);
        mac
    }

    fn tag(&self, context: &[u8], turn: Option<&str>, value: &Value) -> String {
        let tag = self.mac(context, turn, value).finalize().into_bytes();
        base64::engine::general_purpose::STANDARD.encode(tag)
    }

    /// Whether `tag` (base64) is the MAC of `value`, compared in constant time.
    fn verifies(&self, context: &[u8], turn: Option<&str>, value: &Value, tag: &str) -> bool {
        let Ok(tag) = base64::engine::general_purpose::STANDARD.decode(tag) else {
            return false;
        };
        self.mac(context, turn, value).verify_slice(&tag).is_ok()
    }
}

impl fmt::Debug for StateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StateKey(..)")
    }
}

impl TurnState {
    /// The document as JSON bytes, as [`to_json`](Self::to_json) writes
    /// it, with a `mac` field binding it to its content under `key`: read
    /// it back with [`from_json_with_mac`](Self::from_json_with_mac) and
    /// the same key.
    ///
    /// # Errors
    ///
    /// As [`to_json`](Self::to_json).
    pub fn to_json_with_mac(&self, key: &StateKey) -> Result<Vec<u8>> {
        let mut document = serde_json::to_value(self).map_err(|e| {
            Error::new(ErrorKind::Input, "the turn state cannot be written as JSON").with_source(e)
        })?;
        let Value::Object(map) = &mut document else {
            unreachable!("a turn state is written as an object")
        };
        let calls: Vec<Value> = map
            .get("calls")
            .and_then(Value::as_array)
            .map(|calls| {
                calls
                    .iter()
                    .map(|call| Value::from(key.tag(CALL_CONTEXT, Some(&self.turn), call)))
                    .collect()
            })
            .unwrap_or_default();
        let whole = key.tag(DOCUMENT_CONTEXT, None, &document);
        let rest = key.tag(REST_CONTEXT, None, &without_calls(&document));
        let mut mac = Map::new();
        mac.insert("algorithm".into(), ALGORITHM.into());
        mac.insert("document".into(), whole.into());
        mac.insert("rest".into(), rest.into());
        mac.insert("calls".into(), calls.into());
        if let Value::Object(map) = &mut document {
            map.insert(MAC_FIELD.into(), Value::Object(mac));
        }
        serde_json::to_vec_pretty(&document).map_err(|e| {
            Error::new(ErrorKind::Input, "the turn state cannot be written as JSON").with_source(e)
        })
    }

    /// Writes the document with its MAC under `key`
    /// ([`to_json_with_mac`](Self::to_json_with_mac)) to `path`, as
    /// [`write_file`](Self::write_file) writes it: a file only its owner may
    /// read and write, renamed over `path`, never written through a link.
    ///
    /// # Errors
    ///
    /// As [`write_file`](Self::write_file).
    pub fn write_file_with_mac(
        &self,
        path: impl AsRef<std::path::Path>,
        key: &StateKey,
    ) -> Result<()> {
        crate::files::write_private(path.as_ref(), &self.to_json_with_mac(key)?)
    }

    /// Reads a document written by [`to_json_with_mac`](Self::to_json_with_mac)
    /// with the same `key`, and refuses one that does not match its MAC.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] as for [`from_json`](Self::from_json), and for a
    /// document without a MAC, or one changed since it was written (or
    /// written with another key): the message names the calls that
    /// changed, were added or were removed, or says that a field outside
    /// the calls changed.
    pub fn from_json_with_mac(bytes: &[u8], key: &StateKey) -> Result<Self> {
        let mut document: Value = serde_json::from_slice(bytes).map_err(|e| {
            Error::new(ErrorKind::Input, "the turn state is not JSON").with_source(e)
        })?;
        let mac = match document.as_object_mut().map(|m| m.remove(MAC_FIELD)) {
            Some(Some(Value::Object(mac))) => mac,
            Some(Some(_)) => return Err(refused("its `mac` field is not an object")),
            _ => {
                return Err(refused(
                    "it carries no MAC (it was written without a key, or its `mac` field was removed)",
                ));
            }
        };
        match mac.get("algorithm").and_then(Value::as_str) {
            Some(ALGORITHM) => {}
            other => {
                return Err(refused(&format!(
                    "its MAC's algorithm is {}, and this library reads {ALGORITHM}",
                    other.map_or_else(|| "missing".to_owned(), |a| format!("`{a}`"))
                )));
            }
        }
        let whole = mac.get("document").and_then(Value::as_str).unwrap_or("");
        if !key.verifies(DOCUMENT_CONTEXT, None, &document, whole) {
            return Err(refused(&what_changed(key, &document, &mac)));
        }
        Self::read(document)
    }
}

fn refused(why: &str) -> Error {
    Error::new(
        ErrorKind::Input,
        format!("the turn state is refused: {why}"),
    )
}

/// What a document whose MAC does not match changed, as far as the calls'
/// own MACs tell.
fn what_changed(key: &StateKey, document: &Value, mac: &Map<String, Value>) -> String {
    let turn = document.get("turn").and_then(Value::as_str);
    let calls = document
        .get("calls")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let tags: Vec<&str> = mac
        .get("calls")
        .and_then(Value::as_array)
        .map(|t| t.iter().map(|t| t.as_str().unwrap_or("")).collect())
        .unwrap_or_default();
    let mut changed = Vec::new();
    let mut unchanged = 0;
    for (i, call) in calls.iter().enumerate() {
        match tags.get(i) {
            Some(tag) if turn.is_some_and(|t| key.verifies(CALL_CONTEXT, Some(t), call, tag)) => {
                unchanged += 1;
            }
            Some(_) => changed.push(format!("{} was changed", describe(call))),
            None => changed.push(format!("{} was added", describe(call))),
        }
    }
    if tags.len() > calls.len() {
        changed.push(format!("{} call(s) were removed", tags.len() - calls.len()));
    }
    let rest = mac.get("rest").and_then(Value::as_str).unwrap_or("");
    if !key.verifies(REST_CONTEXT, None, &without_calls(document), rest) {
        if unchanged == 0 {
            return "its MAC does not match: it was written with another key, or everything in \
                    it was changed"
                .to_owned();
        }
        changed.push(
            "a field outside its calls (the turn, the provider, `halted`, `taint`, the calls \
             answered without a server, the hosted calls) was changed"
                .to_owned(),
        );
    }
    if changed.is_empty() {
        changed.push("its calls were reordered".to_owned());
    }
    format!(
        "its MAC does not match: {} since it was written",
        changed.join(", ")
    )
}

/// The document without its calls.
fn without_calls(document: &Value) -> Value {
    let mut rest = document.clone();
    if let Value::Object(map) = &mut rest {
        map.remove("calls");
    }
    rest
}

/// A call of a document, as the refusal names it: its index, id and tool
/// (written out visibly: the document may be anyone's).
fn describe(call: &Value) -> String {
    let text = |key: &str| call.get(key).and_then(Value::as_str).unwrap_or("?");
    let index = call
        .get("index")
        .map_or_else(|| "?".to_owned(), ToString::to_string);
    let id = match call.get("call_id").and_then(Value::as_str) {
        Some(id) => format!(" (`{}`)", crate::describe::escape_visible(id)),
        None => String::new(),
    };
    let tool = format!("{}/{}", text("server_id"), text("tool"));
    format!(
        "call {index}{id} to `{}`",
        crate::describe::escape_visible(&tool)
    )
}

/// `value` written with every object's keys in order and no whitespace,
/// so that a document reads the same however it was laid out.
fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push(b'{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                string(key, out);
                out.push(b':');
                canonical(&map[key.as_str()], out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        Value::String(s) => string(s, out),
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

fn string(s: &str, out: &mut Vec<u8>) {
    // A string always serializes.
    let _ = serde_json::to_writer(&mut *out, s);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calls::ToolCall;
    use crate::exec::durable::Stage;

    fn key() -> StateKey {
        StateKey::new([7u8; 32]).unwrap()
    }

    fn state() -> TurnState {
        let mut state = TurnState::new("turn-1".into(), "p".into());
        for (index, path) in [(0, "/tmp/harmless"), (1, "/tmp/other")] {
            let mut arguments = Map::new();
            arguments.insert("path".into(), path.into());
            let call = ToolCall {
                call_id: Some(format!("toolu_{index}")),
                server_id: "fs".into(),
                tool: "delete_file".into(),
                exposed_name: "delete_file".into(),
                arguments,
                index,
                caller: crate::callers::Caller::Model,
                select: None,
            };
            state.set_stage(&call, Stage::WaitingForApproval);
        }
        state
    }

    #[test]
    fn a_document_reads_back_under_its_key_in_any_layout() {
        let bytes = state().to_json_with_mac(&key()).unwrap();
        assert_eq!(
            TurnState::from_json_with_mac(&bytes, &key()).unwrap(),
            state()
        );
        // Another layout: compact, keys as a store may order them.
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        let mut reordered = Map::new();
        let map = value.as_object().unwrap();
        let mut keys: Vec<&String> = map.keys().collect();
        keys.reverse();
        for k in keys {
            reordered.insert(k.clone(), map[k].clone());
        }
        let compact = serde_json::to_vec(&Value::Object(reordered)).unwrap();
        assert_eq!(
            TurnState::from_json_with_mac(&compact, &key()).unwrap(),
            state()
        );
        // The plain reader refuses it: it is read only with its key.
        let err = TurnState::from_json(&bytes).unwrap_err();
        assert!(err.message().contains("carries a MAC"), "{err}");
    }

    #[test]
    fn an_edit_is_refused_naming_what_changed() {
        let bytes = state().to_json_with_mac(&key()).unwrap();
        let mut value: Value = serde_json::from_slice(&bytes).unwrap();
        value["calls"][1]["arguments"]["path"] = "/turn2/IMPORTANT".into();
        let edited = serde_json::to_vec(&value).unwrap();
        let err = TurnState::from_json_with_mac(&edited, &key()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Input);
        assert!(
            err.message()
                .contains("call 1 (`toolu_1`) to `fs/delete_file` was changed"),
            "{err}"
        );

        let mut added = serde_json::from_slice::<Value>(&bytes).unwrap();
        let mut call = added["calls"][0].clone();
        call["index"] = 2.into();
        added["calls"].as_array_mut().unwrap().push(call);
        let err = TurnState::from_json_with_mac(&serde_json::to_vec(&added).unwrap(), &key())
            .unwrap_err();
        assert!(
            err.message()
                .contains("call 2 (`toolu_0`) to `fs/delete_file` was added"),
            "{err}"
        );

        let mut halted: Value = serde_json::from_slice(&bytes).unwrap();
        halted["taint"] = serde_json::json!(["web"]);
        let err = TurnState::from_json_with_mac(&serde_json::to_vec(&halted).unwrap(), &key())
            .unwrap_err();
        assert!(err.message().contains("a field outside its calls"), "{err}");

        let other = StateKey::new([8u8; 32]).unwrap();
        let err = TurnState::from_json_with_mac(&bytes, &other).unwrap_err();
        assert!(err.message().contains("another key"), "{err}");

        let plain = state().to_json().unwrap();
        let err = TurnState::from_json_with_mac(&plain, &key()).unwrap_err();
        assert!(err.message().contains("carries no MAC"), "{err}");
    }
}
