//! A scripted MCP server over an in-memory pipe, speaking newline-delimited
//! JSON-RPC as a stdio server does: it starts a session (`initialize` for
//! 2025-11-25, `server/discover` for 2026-07-28), lists the given tools, and
//! answers every other request with the test's script, which may send the
//! client requests of its own meanwhile. Everything the client sent is kept.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{Notify, oneshot};

/// A request the client sent.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub params: Value,
}

/// The script's answer: a result or a JSON-RPC error object.
pub type Reply = Result<Value, Value>;

/// What the server does with a request.
pub type Script = Arc<dyn Fn(Request, Peer) -> BoxFuture<'static, Reply> + Send + Sync>;

/// What the server does once the client says it is initialized.
pub type OnStart = Arc<dyn Fn(Peer) -> BoxFuture<'static, ()> + Send + Sync>;

/// The server's side of the pipe.
#[derive(Clone)]
pub struct Peer {
    out: tokio::sync::mpsc::UnboundedSender<Value>,
    pending: Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>,
    next: Arc<AtomicU64>,
    seen: Arc<Mutex<Vec<Value>>>,
    calls: Arc<(Mutex<usize>, Notify)>,
}

impl Peer {
    /// Sends a request to the client and waits for its answer (`result` or `error`).
    pub async fn ask(&self, method: &str, params: Value) -> Value {
        let id = 1000 + self.next.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(id, tx);
        let _ = self
            .out
            .send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        rx.await.unwrap()
    }

    /// Waits until `n` `tools/call`s have arrived.
    pub async fn calls_arrived(&self, n: usize) {
        loop {
            let notified = self.calls.1.notified();
            if *self.calls.0.lock().unwrap() >= n {
                return;
            }
            notified.await;
        }
    }

    /// The messages the client sent with `method`.
    pub fn seen(&self, method: &str) -> Vec<Value> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m["method"] == method)
            .cloned()
            .collect()
    }

    /// Waits up to 2 s for the client to send `method`.
    pub async fn wait_for(&self, method: &str) -> Vec<Value> {
        for _ in 0..200 {
            let seen = self.seen(method);
            if !seen.is_empty() {
                return seen;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the client never sent {method}")
    }
}

/// A server's shape.
pub struct Server {
    /// 2026-07-28 (`server/discover`) rather than 2025-11-25 (`initialize`).
    pub modern: bool,
    pub tools: Vec<Value>,
    pub capabilities: Value,
    pub script: Script,
    pub at_start: Option<OnStart>,
}

impl Server {
    /// A 2025-11-25 server offering tools of these names (any arguments).
    pub fn legacy(tools: &[&str], script: Script) -> Self {
        Server {
            modern: false,
            tools: tools
                .iter()
                .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
                .collect(),
            capabilities: json!({"tools": {}}),
            script,
            at_start: None,
        }
    }
}

/// A tool result of one text block.
pub fn text(text: impl Into<String>) -> Reply {
    Ok(json!({"content": [{"type": "text", "text": text.into()}]}))
}

/// A script that answers `tools/call` with the text `f` makes of the tool's name.
pub fn calls<F>(f: F) -> Script
where
    F: Fn(String, Peer) -> BoxFuture<'static, String> + Send + Sync + 'static,
{
    let f = Arc::new(f);
    Arc::new(move |request, peer| {
        let f = f.clone();
        Box::pin(async move {
            if request.method != "tools/call" {
                return Err(json!({"code": -32601, "message": "not here"}));
            }
            let name = request.params["name"].as_str().unwrap_or("").to_owned();
            text(f(name, peer).await)
        })
    })
}

/// Starts the server; returns the client's end of the pipe and the server's handle.
pub fn start(server: Server) -> ((DuplexStream, DuplexStream), Peer) {
    let Server {
        modern,
        tools,
        capabilities,
        script,
        at_start,
    } = server;
    let (client_read, mut server_write) = tokio::io::duplex(1 << 16);
    let (server_read, client_write) = tokio::io::duplex(1 << 16);
    let (out, mut queue) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let peer = Peer {
        out,
        pending: Arc::default(),
        next: Arc::default(),
        seen: Arc::default(),
        calls: Arc::default(),
    };
    tokio::spawn(async move {
        while let Some(message) = queue.recv().await {
            let mut line = serde_json::to_vec(&message).unwrap();
            line.push(b'\n');
            if server_write.write_all(&line).await.is_err() {
                return;
            }
        }
    });
    let server = peer.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(server_read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let message: Value = serde_json::from_str(&line).unwrap();
            server.seen.lock().unwrap().push(message.clone());
            let id = message.get("id").cloned();
            let reply = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
            match (message["method"].as_str(), &id) {
                (None, Some(id)) => {
                    let waiting = server.pending.lock().unwrap().remove(&id.as_u64().unwrap());
                    if let Some(tx) = waiting {
                        let _ = tx.send(message);
                    }
                }
                (Some("initialize"), _) if !modern => {
                    let _ = server.out.send(reply(json!({
                        "protocolVersion": "2025-11-25",
                        "capabilities": capabilities,
                        "serverInfo": {"name": "scripted", "version": "1"}
                    })));
                }
                (Some("server/discover"), _) if modern => {
                    let _ = server.out.send(reply(json!({
                        "resultType": "complete",
                        "supportedVersions": ["2026-07-28"],
                        "capabilities": capabilities,
                        "ttlMs": 0,
                        "cacheScope": "public",
                        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}}
                    })));
                }
                (Some("notifications/initialized"), _) => {
                    if let Some(at_start) = at_start.clone() {
                        tokio::spawn(at_start(server.clone()));
                    }
                }
                (Some("tools/list"), _) => {
                    let mut listed = json!({"tools": tools});
                    if modern {
                        listed["resultType"] = json!("complete");
                    }
                    let _ = server.out.send(reply(listed));
                }
                (Some(method), Some(_)) => {
                    if method == "tools/call" {
                        *server.calls.0.lock().unwrap() += 1;
                        server.calls.1.notify_waiters();
                    }
                    let request = Request {
                        method: method.to_owned(),
                        params: message.get("params").cloned().unwrap_or(Value::Null),
                    };
                    let (peer, script, id) = (server.clone(), script.clone(), id.clone());
                    tokio::spawn(async move {
                        let answer = match script(request, peer.clone()).await {
                            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
                        };
                        let _ = peer.out.send(answer);
                    });
                }
                _ => {}
            }
        }
    });
    ((client_read, client_write), peer)
}
