//! Idempotency keys: each call's, derived per server from its turn's id,
//! the same wherever the turn is resumed.

use std::sync::{Arc, Mutex, PoisonError};

use crate::calls::ToolCall;

/// The key, in a `tools/call` request's `_meta`, of the call's idempotency
/// key. MCP has no standard one: a server may use it to recognise a call it
/// has already run. A call keeps its key when its turn is resumed
/// elsewhere, and when it is sent once more after an interruption
/// ([`ExecOptions::retry_interrupted`](crate::exec::ExecOptions::retry_interrupted)).
pub const IDEMPOTENCY_KEY: &str = "mcp-adapters/idempotency-key";

/// A call's idempotency key, written `{server key}#{index}` (in a request's
/// `_meta` under [`IDEMPOTENCY_KEY`]): a key of the turn for the call's
/// server (an HMAC-SHA-256 of the server's id, keyed with the turn's
/// secret id, 32 hex digits), and the call's position among the turn's
/// calls to that server. Two servers of one turn get keys that share
/// nothing, so they cannot tell they served one conversation; the same
/// call gets the same key in every round and wherever its turn is resumed.
///
/// A call a code-mode program made is keyed `{server key}#p{program}.{n}`:
/// the position of the model's call to the code tool in its response, and
/// the call's place among the program's calls.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey {
    server: Arc<str>,
    index: usize,
    /// A code-mode program's call: its place among the program's calls.
    seq: Option<usize>,
}

impl IdempotencyKey {
    /// The call's position among the turn's calls to its server, in the
    /// model's order (0 for the first); for a code-mode program's call, the
    /// position of the program's call in the model's response.
    pub fn index_on_server(&self) -> usize {
        self.index
    }

    /// For a code-mode program's call, its place among the program's calls.
    pub fn program_call(&self) -> Option<usize> {
        self.seq
    }
}

impl std::fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.seq {
            Some(seq) => write!(f, "{}#p{}.{seq}", self.server, self.index),
            None => write!(f, "{}#{}", self.server, self.index),
        }
    }
}

/// What a turn's idempotency keys are made from: its id, each server's key
/// (derived once), and the model's indexes of the turn's calls to each
/// server, from which a call's position on its server is read. Made again
/// from a [`TurnState`] (its id and its calls), it gives every call the key
/// it had.
pub(crate) struct KeyRing {
    turn: Arc<str>,
    /// Each server's keys: a turn reaches few servers, so they are found by
    /// a scan rather than hashed on every call.
    servers: Mutex<Vec<ServerKeys>>,
}

/// One server's key in a turn, and its calls' indexes, in order.
struct ServerKeys {
    server: String,
    key: Arc<str>,
    calls: Vec<usize>,
}

impl ServerKeys {
    /// Counts the call of `index` among the server's, once, in order.
    fn count(&mut self, index: usize) {
        if let Err(at) = self.calls.binary_search(&index) {
            self.calls.insert(at, index);
        }
    }
}

impl KeyRing {
    pub(crate) fn new(turn: Arc<str>) -> Self {
        KeyRing {
            turn,
            servers: Mutex::default(),
        }
    }

    /// Counts `call` among its server's calls. Every call of a lower index
    /// to the same server is noted before a call's key is read.
    pub(crate) fn note(&self, call: &ToolCall) {
        self.note_index(&call.server_id, call.index);
    }

    /// Counts a turn's `calls` among their servers' calls, under one lock,
    /// with room on each server for as many as the turn makes.
    pub(crate) fn note_calls(&self, calls: &[ToolCall]) {
        let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
        for call in calls {
            let keys = self.server(&mut servers, &call.server_id);
            keys.calls.reserve(calls.len());
            keys.count(call.index);
        }
    }

    /// Counts the call of `index` to `server` (as a [`TurnState`] keeps it).
    pub(crate) fn note_index(&self, server: &str, index: usize) {
        let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
        self.server(&mut servers, server).count(index);
    }

    /// `call`'s key: its server's, and its position among the calls noted
    /// for that server.
    pub(crate) fn key(&self, call: &ToolCall) -> IdempotencyKey {
        let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
        let keys = self.server(&mut servers, &call.server_id);
        match call.caller.code() {
            Some(code) => IdempotencyKey {
                server: keys.key.clone(),
                index: code.program_index,
                seq: Some(code.seq),
            },
            None => IdempotencyKey {
                server: keys.key.clone(),
                index: keys.calls.partition_point(|&i| i < call.index),
                seq: None,
            },
        }
    }

    fn server<'a>(&self, servers: &'a mut Vec<ServerKeys>, server: &str) -> &'a mut ServerKeys {
        let at = match servers.iter().position(|keys| keys.server == server) {
            Some(at) => at,
            None => {
                servers.push(ServerKeys {
                    server: server.to_owned(),
                    key: server_key(&self.turn, server),
                    calls: Vec::new(),
                });
                servers.len() - 1
            }
        };
        &mut servers[at]
    }
}

/// A server's key in a turn: HMAC-SHA-256 of its id, keyed with the
/// turn's id, the first 128 bits in hex.
fn server_key(turn: &str, server: &str) -> Arc<str> {
    use hmac::{KeyInit as _, Mac as _};
    use std::fmt::Write as _;
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(turn.as_bytes())
        .expect("HMAC takes a key of any length");
    mac.update(server.as_bytes());
    let digest = mac.finalize().into_bytes();
    let mut hex = String::with_capacity(32);
    for byte in &digest[..16] {
        let _ = write!(hex, "{byte:02x}");
    }
    Arc::from(hex)
}
