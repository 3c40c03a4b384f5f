//! A protected MCP server and its authorization server, on loopback ports,
//! for the sign-in tests: a small HTTP/1.1 server (one request per
//! connection) that records every request it is sent.
//!
//! The authorization server publishes RFC 8414 metadata, registers clients
//! dynamically, answers `/authorize` with a redirect carrying a code (and
//! `iss`), and issues tokens whose lifetime and scopes the test chooses, with
//! refresh tokens. Every secret it hands out starts with the lab's name: a
//! registration's client secret (`{name}-secret-`), codes (`{name}-code-`),
//! access, refresh and OpenID ID tokens (`{name}-at-`, `{name}-rt-`,
//! `{name}-idt-`), so that a test can look for them all. The MCP server (MCP 2025-11-25, JSON responses) publishes
//! its protected-resource metadata, answers 401 without a valid token of its
//! own authorization server, and 403 `insufficient_scope` for `write_note`
//! without `notes:write`.

#![allow(dead_code)] // Each test file uses part of the lab.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request as the lab saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub query: HashMap<String, String>,
    pub authorization: Option<String>,
    pub body: String,
}

impl Seen {
    /// The form or JSON field `name` of the body.
    pub fn field(&self, name: &str) -> Option<String> {
        if let Ok(json) = serde_json::from_str::<Value>(&self.body) {
            return json.get(name).and_then(Value::as_str).map(str::to_owned);
        }
        form(&self.body).remove(name)
    }

    /// The JSON-RPC method of an MCP request.
    pub fn rpc_method(&self) -> Option<String> {
        serde_json::from_str::<Value>(&self.body)
            .ok()
            .and_then(|v| v["method"].as_str().map(str::to_owned))
    }
}

struct Token {
    scopes: Vec<String>,
    expires: Instant,
}

#[derive(Default)]
struct State {
    seen: Vec<Seen>,
    tokens: HashMap<String, Token>,
    refresh: HashMap<String, Vec<String>>,
    codes: HashMap<String, Vec<String>>,
    issued: u32,
    /// Tool calls the MCP server ran.
    ran: Vec<String>,
}

/// The lab: an authorization server and the MCP server it protects.
#[derive(Clone)]
pub struct Lab {
    pub name: &'static str,
    pub as_url: String,
    pub mcp_url: String,
    /// Lifetime of the access tokens issued.
    pub token_lifetime: Duration,
    /// Lifetime of the access tokens a refresh issues.
    pub refreshed_lifetime: Duration,
    state: Arc<Mutex<State>>,
}

fn form(text: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(text.as_bytes())
        .into_owned()
        .collect()
}

impl Lab {
    /// Starts both servers; `name` prefixes the tokens they issue.
    pub async fn start(name: &'static str, token_lifetime: Duration) -> Lab {
        Lab::start_with(name, token_lifetime, token_lifetime).await
    }

    /// As [`start`](Self::start), with tokens a refresh issues living
    /// `refreshed_lifetime`.
    pub async fn start_with(
        name: &'static str,
        token_lifetime: Duration,
        refreshed_lifetime: Duration,
    ) -> Lab {
        let auth = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let lab = Lab {
            name,
            as_url: format!("http://127.0.0.1:{}", auth.local_addr().unwrap().port()),
            mcp_url: format!("http://127.0.0.1:{}/mcp", mcp.local_addr().unwrap().port()),
            token_lifetime,
            refreshed_lifetime,
            state: Arc::default(),
        };
        for (listener, is_auth) in [(auth, true), (mcp, false)] {
            let lab = lab.clone();
            tokio::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    let lab = lab.clone();
                    tokio::spawn(async move { lab.serve(stream, is_auth).await });
                }
            });
        }
        lab
    }

    /// Every request seen so far, by both servers.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    /// The tool calls the MCP server ran.
    pub fn ran(&self) -> Vec<String> {
        self.state.lock().unwrap().ran.clone()
    }

    /// Every access token this lab's authorization server issued.
    pub fn issued_prefix(&self) -> String {
        format!("{}-at-", self.name)
    }

    /// The start of every secret the lab hands out: client secrets, codes,
    /// access, refresh and ID tokens.
    pub fn secret_prefixes(&self) -> Vec<String> {
        ["secret", "code", "at", "rt", "idt"]
            .iter()
            .map(|kind| format!("{}-{kind}-", self.name))
            .collect()
    }

    async fn serve(&self, mut stream: tokio::net::TcpStream, is_auth: bool) {
        let mut buffer = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break at;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let mut request_line = lines.next().unwrap_or_default().split(' ');
        let method = request_line.next().unwrap_or_default().to_owned();
        let target = request_line.next().unwrap_or_default().to_owned();
        let headers: HashMap<String, String> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let length: usize = headers
            .get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut body = buffer[head_end + 4..].to_vec();
        while body.len() < length {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => body.extend_from_slice(&chunk[..n]),
            }
        }
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p.to_owned(), form(q)),
            None => (target.clone(), HashMap::new()),
        };
        let seen = Seen {
            method,
            path,
            query,
            authorization: headers.get("authorization").cloned(),
            body: String::from_utf8_lossy(&body).into_owned(),
        };
        self.state.lock().unwrap().seen.push(seen.clone());
        let response = if is_auth {
            self.authorization_server(&seen)
        } else {
            self.mcp_server(&seen)
        };
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
    }

    fn authorization_server(&self, seen: &Seen) -> String {
        match (seen.method.as_str(), seen.path.as_str()) {
            ("GET", "/.well-known/oauth-authorization-server") => json_response(
                200,
                &[],
                &json!({
                    "issuer": self.as_url,
                    "authorization_endpoint": format!("{}/authorize", self.as_url),
                    "token_endpoint": format!("{}/token", self.as_url),
                    "registration_endpoint": format!("{}/register", self.as_url),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "scopes_supported": ["notes:read", "notes:write", "offline_access"],
                    "authorization_response_iss_parameter_supported": true,
                }),
            ),
            ("POST", "/register") => json_response(
                201,
                &[],
                &json!({"client_id": format!("{}-client", self.name),
                        "client_secret": format!("{}-secret-1", self.name),
                        "redirect_uris": serde_json::from_str::<Value>(&seen.body).map(|b| b["redirect_uris"].clone()).unwrap_or_default()}),
            ),
            ("GET", "/authorize") => {
                let scopes: Vec<String> = seen
                    .query
                    .get("scope")
                    .map(|s| s.split(' ').map(str::to_owned).collect())
                    .unwrap_or_default();
                let code = {
                    let mut state = self.state.lock().unwrap();
                    state.issued += 1;
                    let code = format!("{}-code-{}", self.name, state.issued);
                    state.codes.insert(code.clone(), scopes);
                    code
                };
                let mut location = url::Url::parse(&seen.query["redirect_uri"]).unwrap();
                location
                    .query_pairs_mut()
                    .append_pair("code", &code)
                    .append_pair("state", &seen.query["state"])
                    .append_pair("iss", &self.as_url);
                format!(
                    "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
            }
            ("POST", "/token") => {
                let fields = form(&seen.body);
                let mut state = self.state.lock().unwrap();
                let refreshing =
                    fields.get("grant_type").map(String::as_str) == Some("refresh_token");
                let lifetime = if refreshing {
                    self.refreshed_lifetime
                } else {
                    self.token_lifetime
                };
                let scopes = match fields.get("grant_type").map(String::as_str) {
                    Some("authorization_code") => {
                        fields.get("code").and_then(|c| state.codes.remove(c))
                    }
                    Some("refresh_token") => fields
                        .get("refresh_token")
                        .and_then(|r| state.refresh.get(r).cloned()),
                    _ => None,
                };
                let Some(scopes) = scopes else {
                    return json_response(400, &[], &json!({"error": "invalid_grant"}));
                };
                state.issued += 1;
                let access = format!("{}-at-{}", self.name, state.issued);
                let refresh = format!("{}-rt-{}", self.name, state.issued);
                state.tokens.insert(
                    access.clone(),
                    Token {
                        scopes: scopes.clone(),
                        expires: Instant::now() + lifetime,
                    },
                );
                state.refresh.insert(refresh.clone(), scopes.clone());
                json_response(
                    200,
                    &[],
                    &json!({"access_token": access, "token_type": "Bearer",
                            "expires_in": lifetime.as_secs(),
                            "refresh_token": refresh, "scope": scopes.join(" "),
                            "id_token": format!("{}-idt-{}", self.name, state.issued)}),
                )
            }
            _ => json_response(404, &[], &json!({"error": "not_found"})),
        }
    }

    fn challenge(&self, extra: &str) -> String {
        let port_path = self.mcp_url.trim_end_matches("/mcp");
        format!(
            "Bearer resource_metadata=\"{port_path}/.well-known/oauth-protected-resource/mcp\", scope=\"notes:read\"{extra}"
        )
    }

    fn mcp_server(&self, seen: &Seen) -> String {
        if seen.method == "GET" && seen.path == "/.well-known/oauth-protected-resource/mcp" {
            return json_response(
                200,
                &[],
                &json!({"resource": self.mcp_url, "authorization_servers": [self.as_url],
                        "scopes_supported": ["notes:read", "notes:write"]}),
            );
        }
        if seen.path != "/mcp" {
            return json_response(404, &[], &json!({"error": "not_found"}));
        }
        if seen.method != "POST" {
            return "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into();
        }
        let token = seen
            .authorization
            .as_deref()
            .and_then(|h| h.strip_prefix("Bearer "))
            .map(str::to_owned);
        let scopes = {
            let state = self.state.lock().unwrap();
            token
                .as_ref()
                .and_then(|t| state.tokens.get(t))
                .filter(|t| t.expires > Instant::now())
                .map(|t| t.scopes.clone())
        };
        let Some(scopes) = scopes else {
            let challenge = self.challenge(if token.is_some() {
                ", error=\"invalid_token\""
            } else {
                ""
            });
            return json_response(
                401,
                &[("WWW-Authenticate", &challenge)],
                &json!({"error": "invalid_token"}),
            );
        };
        let request: Value = serde_json::from_str(&seen.body).unwrap_or_default();
        let id = request["id"].clone();
        let result = match request["method"].as_str().unwrap_or_default() {
            "initialize" => json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": self.name, "version": "1.0.0"},
            }),
            "tools/list" => json!({"tools": [
                {"name": "read_notes", "inputSchema": {"type": "object"}},
                {"name": "write_note", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
            ]}),
            "tools/call" => {
                let tool = request["params"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                if tool == "write_note" && !scopes.iter().any(|s| s == "notes:write") {
                    let challenge = self
                        .challenge(", error=\"insufficient_scope\"")
                        .replace("scope=\"notes:read\"", "scope=\"notes:write\"");
                    return json_response(
                        403,
                        &[("WWW-Authenticate", &challenge)],
                        &json!({"error": "insufficient_scope"}),
                    );
                }
                self.state.lock().unwrap().ran.push(tool.clone());
                json!({"content": [{"type": "text", "text": format!("{} ran {tool}", self.name)}]})
            }
            _ if id.is_null() => {
                return "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .into();
            }
            _ => {
                return json_response(
                    200,
                    &[],
                    &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no such method"}}),
                );
            }
        };
        json_response(
            200,
            &[],
            &json!({"jsonrpc": "2.0", "id": id, "result": result}),
        )
    }
}

fn json_response(status: u16, headers: &[(&str, &str)], body: &Value) -> String {
    let body = body.to_string();
    let reason = match status {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        _ => "Other",
    };
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&body);
    out
}
