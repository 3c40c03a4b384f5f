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
//!
//! DPoP (RFC 9449, [`LabDpop`]): the authorization server binds a token to
//! the key of the proof its token request carries (checked: `typ`, `alg`,
//! signature over the `jwk` it carries, `htm`, `htu`, `iat`, a `jti` never
//! seen before, and its nonce when it requires one), a refresh token to the
//! same key; the MCP server takes a bound token only with the `DPoP` scheme
//! and a proof by that key (with `ath` and its own nonce when it requires
//! one). Proofs are checked with the `jsonwebtoken` crate, not the library's
//! code. Workload identity: the authorization server takes a JWT bearer grant
//! whose JWT its trusted workload issuer signed for it ([`Lab::workload_jwt`]).

#![allow(dead_code)] // Each test file uses part of the lab.

use std::collections::{HashMap, HashSet};
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
    /// The `DPoP` header.
    pub dpop: Option<String>,
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
    /// The thumbprint of the key a DPoP-bound token is bound to.
    jkt: Option<String>,
}

#[derive(Default)]
struct State {
    seen: Vec<Seen>,
    tokens: HashMap<String, Token>,
    /// Refresh tokens: their scopes and the key they are bound to.
    refresh: HashMap<String, (Vec<String>, Option<String>)>,
    codes: HashMap<String, Vec<String>>,
    issued: u32,
    /// Tool calls the MCP server ran.
    ran: Vec<String>,
    /// Every proof's `jti`.
    jtis: HashSet<String>,
    /// `use_dpop_nonce` answers of the authorization server and the MCP server.
    nonce_challenges: (u32, u32),
    /// Why proofs or tokens were refused.
    refusals: Vec<String>,
    /// The JWTs presented in JWT bearer grants.
    assertions: Vec<String>,
    /// The keys tokens were bound to, in order.
    bound: Vec<String>,
}

/// How the lab's servers take DPoP (RFC 9449); the default: not at all
/// (though a proof a token request carries is honoured).
#[derive(Debug, Clone, Default)]
pub struct LabDpop {
    /// The algorithms the authorization server's metadata lists.
    pub algs: Vec<&'static str>,
    /// The MCP server takes DPoP-bound tokens only (its challenge offers the
    /// `DPoP` scheme alone, and its metadata says so).
    pub required: bool,
    /// The authorization server requires a nonce it supplies.
    pub as_nonce: bool,
    /// The MCP server requires a nonce it supplies.
    pub rs_nonce: bool,
    /// The authorization server knows nothing of DPoP: it ignores proofs
    /// and issues Bearer tokens.
    pub ignore_proofs: bool,
}

/// Why a proof was not taken.
enum ProofError {
    /// It has no nonce, or not the server's.
    Nonce,
    Invalid(String),
}

/// The grant type of RFC 7523.
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

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
    pub dpop: LabDpop,
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
        Lab::start_dpop_with(name, token_lifetime, refreshed_lifetime, LabDpop::default()).await
    }

    /// As [`start`](Self::start), with the servers taking DPoP as `dpop` says.
    pub async fn start_dpop(name: &'static str, token_lifetime: Duration, dpop: LabDpop) -> Lab {
        Lab::start_dpop_with(name, token_lifetime, token_lifetime, dpop).await
    }

    /// As [`start_with`](Self::start_with), with the servers taking DPoP as
    /// `dpop` says.
    pub async fn start_dpop_with(
        name: &'static str,
        token_lifetime: Duration,
        refreshed_lifetime: Duration,
        dpop: LabDpop,
    ) -> Lab {
        let auth = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let lab = Lab {
            name,
            as_url: format!("http://127.0.0.1:{}", auth.local_addr().unwrap().port()),
            mcp_url: format!("http://127.0.0.1:{}/mcp", mcp.local_addr().unwrap().port()),
            token_lifetime,
            refreshed_lifetime,
            dpop,
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

    /// Every access token issued so far expires now: the MCP server refuses
    /// them (`invalid_token`), as it would once their time is up.
    pub fn expire_tokens(&self) {
        let now = Instant::now();
        for token in self.state.lock().unwrap().tokens.values_mut() {
            token.expires = now;
        }
    }

    /// How many `use_dpop_nonce` answers the authorization server and the MCP
    /// server gave.
    pub fn nonce_challenges(&self) -> (u32, u32) {
        self.state.lock().unwrap().nonce_challenges
    }

    /// Why proofs or tokens were refused, in order.
    pub fn refusals(&self) -> Vec<String> {
        self.state.lock().unwrap().refusals.clone()
    }

    /// The JWTs presented in JWT bearer grants, in order.
    pub fn assertions(&self) -> Vec<String> {
        self.state.lock().unwrap().assertions.clone()
    }

    /// The thumbprints of the keys issued tokens were bound to, in order.
    pub fn bound_keys(&self) -> Vec<String> {
        self.state.lock().unwrap().bound.clone()
    }

    fn workload_secret(&self) -> String {
        format!("{}-workload-issuer-key", self.name)
    }

    /// A JWT the workload issuer the authorization server trusts issued to
    /// `subject`, for the authorization server, valid for an hour.
    pub fn workload_jwt(&self, subject: &str) -> String {
        workload_jwt(&self.workload_secret(), &self.as_url, subject)
    }

    /// The same, signed by an issuer the authorization server does not trust.
    pub fn foreign_jwt(&self, subject: &str) -> String {
        workload_jwt("another-issuer-key", &self.as_url, subject)
    }

    fn token_endpoint(&self) -> String {
        format!("{}/token", self.as_url)
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
            dpop: headers.get("dpop").cloned(),
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
            ("GET", "/.well-known/oauth-authorization-server") => {
                let mut metadata = json!({
                    "issuer": self.as_url,
                    "authorization_endpoint": format!("{}/authorize", self.as_url),
                    "token_endpoint": self.token_endpoint(),
                    "registration_endpoint": format!("{}/register", self.as_url),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token", JWT_BEARER],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "scopes_supported": ["notes:read", "notes:write", "offline_access"],
                    "authorization_response_iss_parameter_supported": true,
                });
                if !self.dpop.algs.is_empty() {
                    metadata["dpop_signing_alg_values_supported"] = json!(self.dpop.algs);
                }
                json_response(200, &[], &metadata)
            }
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
            ("POST", "/token") => self.token(seen),
            _ => json_response(404, &[], &json!({"error": "not_found"})),
        }
    }

    /// The token endpoint: the grant checked, then the proof, if any; a token
    /// bound to the proof's key.
    fn token(&self, seen: &Seen) -> String {
        let fields = form(&seen.body);
        let grant = fields.get("grant_type").map(String::as_str);
        let as_nonce = format!("{}-as-nonce", self.name);
        let jkt = match &seen.dpop {
            _ if self.dpop.ignore_proofs => None,
            None => None,
            Some(_) => {
                let nonce = self.dpop.as_nonce.then_some(as_nonce.as_str());
                match self.check_proof(seen, &self.token_endpoint(), None, nonce) {
                    Ok(jkt) => Some(jkt),
                    Err(ProofError::Nonce) => {
                        self.state.lock().unwrap().nonce_challenges.0 += 1;
                        return json_response(
                            400,
                            &[("DPoP-Nonce", &as_nonce)],
                            &json!({"error": "use_dpop_nonce", "error_description": "a nonce is required"}),
                        );
                    }
                    Err(ProofError::Invalid(why)) => {
                        self.state.lock().unwrap().refusals.push(why.clone());
                        return json_response(
                            400,
                            &[],
                            &json!({"error": "invalid_dpop_proof", "error_description": why}),
                        );
                    }
                }
            }
        };
        let mut state = self.state.lock().unwrap();
        let (scopes, refresh) = match grant {
            Some("authorization_code") => {
                (fields.get("code").and_then(|c| state.codes.remove(c)), true)
            }
            Some("refresh_token") => {
                let kept = fields
                    .get("refresh_token")
                    .and_then(|r| state.refresh.get(r).cloned());
                match kept {
                    Some((_, Some(bound))) if jkt.as_ref() != Some(&bound) => {
                        state
                            .refusals
                            .push("a refresh with a key other than its token's".into());
                        return json_response(
                            400,
                            &[],
                            &json!({"error": "invalid_grant", "error_description": "the refresh token is bound to another key"}),
                        );
                    }
                    kept => (kept.map(|(scopes, _)| scopes), true),
                }
            }
            Some(JWT_BEARER) => {
                let assertion = fields.get("assertion").cloned().unwrap_or_default();
                state.assertions.push(assertion.clone());
                if let Err(why) = self.check_workload_jwt(&assertion) {
                    return json_response(
                        400,
                        &[],
                        &json!({"error": "invalid_grant", "error_description": why}),
                    );
                }
                let scopes = fields
                    .get("scope")
                    .map(|s| s.split(' ').map(str::to_owned).collect())
                    .unwrap_or_else(|| vec!["notes:read".to_owned()]);
                (Some(scopes), false)
            }
            _ => (None, false),
        };
        let Some(scopes) = scopes else {
            return json_response(400, &[], &json!({"error": "invalid_grant"}));
        };
        let lifetime = if grant == Some("refresh_token") {
            self.refreshed_lifetime
        } else {
            self.token_lifetime
        };
        state.issued += 1;
        let access = format!("{}-at-{}", self.name, state.issued);
        let refresh_token = format!("{}-rt-{}", self.name, state.issued);
        state.tokens.insert(
            access.clone(),
            Token {
                scopes: scopes.clone(),
                expires: Instant::now() + lifetime,
                jkt: jkt.clone(),
            },
        );
        if let Some(jkt) = &jkt {
            state.bound.push(jkt.clone());
        }
        let mut body = json!({"access_token": access,
                "token_type": if jkt.is_some() { "DPoP" } else { "Bearer" },
                "expires_in": lifetime.as_secs(), "scope": scopes.join(" ")});
        if refresh {
            state
                .refresh
                .insert(refresh_token.clone(), (scopes.clone(), jkt.clone()));
            body["refresh_token"] = json!(refresh_token);
            // An OpenID ID token, as a sign-in for a person returns one.
            body["id_token"] = json!(format!("{}-idt-{}", self.name, state.issued));
        }
        json_response(200, &[], &body)
    }

    /// Checks a DPoP proof for a request to `htu` (with `ath` for `token`,
    /// and `nonce` when one is required); the thumbprint of its key.
    fn check_proof(
        &self,
        seen: &Seen,
        htu: &str,
        token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, ProofError> {
        use base64::Engine as _;
        use jsonwebtoken::jwk::ThumbprintHash;
        let invalid = |why: &str| ProofError::Invalid(why.to_owned());
        let proof = seen
            .dpop
            .as_deref()
            .ok_or_else(|| invalid("no DPoP proof"))?;
        let header =
            jsonwebtoken::decode_header(proof).map_err(|e| invalid(&format!("header: {e}")))?;
        if header.typ.as_deref() != Some("dpop+jwt") {
            return Err(invalid("typ is not dpop+jwt"));
        }
        let alg = format!("{:?}", header.alg);
        if !self.dpop.algs.is_empty() && !self.dpop.algs.contains(&alg.as_str()) {
            return Err(invalid(&format!(
                "{alg} is not an algorithm the server lists"
            )));
        }
        let jwk = header.jwk.clone().ok_or_else(|| invalid("no jwk"))?;
        let key = jsonwebtoken::DecodingKey::from_jwk(&jwk).map_err(|e| invalid(&e.to_string()))?;
        let mut validation = jsonwebtoken::Validation::new(header.alg);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        let claims = jsonwebtoken::decode::<Value>(proof, &key, &validation)
            .map_err(|e| invalid(&format!("signature: {e}")))?
            .claims;
        if claims["htm"] != seen.method.as_str() || claims["htu"] != htu {
            return Err(invalid(&format!(
                "htm/htu {} {} for {} {htu}",
                claims["htm"], claims["htu"], seen.method
            )));
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        if claims["iat"]
            .as_u64()
            .is_none_or(|iat| iat.abs_diff(now) > 300)
        {
            return Err(invalid("iat outside the window"));
        }
        let jti = claims["jti"].as_str().ok_or_else(|| invalid("no jti"))?;
        if !self.state.lock().unwrap().jtis.insert(jti.to_owned()) {
            return Err(invalid("a jti seen before (a replayed proof)"));
        }
        if let Some(token) = token {
            use sha2::Digest as _;
            let ath = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(sha2::Sha256::digest(token.as_bytes()));
            if claims["ath"] != ath.as_str() {
                return Err(invalid("ath is not the token's hash"));
            }
        }
        if nonce.is_some() && claims["nonce"].as_str() != nonce {
            return Err(ProofError::Nonce);
        }
        jwk.thumbprint(ThumbprintHash::SHA256)
            .map_err(|e| invalid(&e.to_string()))
    }

    /// Checks a workload's JWT: signed by the trusted issuer, for this
    /// authorization server, not expired.
    fn check_workload_jwt(&self, assertion: &str) -> Result<(), String> {
        let key = jsonwebtoken::DecodingKey::from_secret(self.workload_secret().as_bytes());
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        validation.set_audience(&[&self.as_url]);
        jsonwebtoken::decode::<Value>(assertion, &key, &validation)
            .map(drop)
            .map_err(|e| format!("the workload JWT is not valid: {e}"))
    }

    fn challenge(&self, extra: &str) -> String {
        let port_path = self.mcp_url.trim_end_matches("/mcp");
        let params = format!(
            "resource_metadata=\"{port_path}/.well-known/oauth-protected-resource/mcp\", scope=\"notes:read\"{extra}"
        );
        let algs = self.dpop.algs.join(" ");
        if self.dpop.required {
            format!("DPoP algs=\"{algs}\", {params}")
        } else if !algs.is_empty() {
            format!("Bearer {params}, DPoP algs=\"{algs}\"")
        } else {
            format!("Bearer {params}")
        }
    }

    /// The scopes of the token `seen` presents, or the MCP server's refusal.
    fn authorize(&self, seen: &Seen) -> Result<Vec<String>, String> {
        let presented = seen
            .authorization
            .as_deref()
            .and_then(|h| h.split_once(' '));
        let refuse = |error: &str, why: &str, extra: &[(&str, &str)]| {
            self.state.lock().unwrap().refusals.push(why.to_owned());
            let challenge = self.challenge(&format!(", error=\"{error}\""));
            let mut headers = vec![("WWW-Authenticate", challenge.as_str())];
            headers.extend_from_slice(extra);
            json_response(
                401,
                &headers,
                &json!({"error": error, "error_description": why}),
            )
        };
        let Some((scheme, token)) = presented else {
            let challenge = self.challenge("");
            return Err(json_response(
                401,
                &[("WWW-Authenticate", &challenge)],
                &json!({"error": "invalid_token"}),
            ));
        };
        let known = {
            let state = self.state.lock().unwrap();
            state
                .tokens
                .get(token)
                .filter(|t| t.expires > Instant::now())
                .map(|t| (t.scopes.clone(), t.jkt.clone()))
        };
        let Some((scopes, jkt)) = known else {
            return Err(refuse("invalid_token", "an unknown or expired token", &[]));
        };
        let Some(jkt) = jkt else {
            if self.dpop.required || !scheme.eq_ignore_ascii_case("bearer") {
                return Err(refuse(
                    "invalid_token",
                    "a Bearer token where DPoP-bound ones are required",
                    &[],
                ));
            }
            return Ok(scopes);
        };
        if !scheme.eq_ignore_ascii_case("dpop") {
            return Err(refuse(
                "invalid_token",
                "a DPoP-bound token sent as a Bearer token",
                &[],
            ));
        }
        let rs_nonce = format!("{}-rs-nonce", self.name);
        let nonce = self.dpop.rs_nonce.then_some(rs_nonce.as_str());
        match self.check_proof(seen, &self.mcp_url, Some(token), nonce) {
            Ok(key) if key == jkt => Ok(scopes),
            Ok(_) => Err(refuse(
                "invalid_dpop_proof",
                "a proof by another key than the token's",
                &[],
            )),
            Err(ProofError::Invalid(why)) => Err(refuse("invalid_dpop_proof", &why, &[])),
            Err(ProofError::Nonce) => {
                self.state.lock().unwrap().nonce_challenges.1 += 1;
                Err(refuse(
                    "use_dpop_nonce",
                    "a nonce is required",
                    &[("DPoP-Nonce", &rs_nonce)],
                ))
            }
        }
    }

    fn mcp_server(&self, seen: &Seen) -> String {
        if seen.method == "GET" && seen.path == "/.well-known/oauth-protected-resource/mcp" {
            let mut metadata = json!({"resource": self.mcp_url, "authorization_servers": [self.as_url],
                    "scopes_supported": ["notes:read", "notes:write"]});
            if self.dpop.required {
                metadata["dpop_bound_access_tokens_required"] = json!(true);
            }
            if !self.dpop.algs.is_empty() {
                metadata["dpop_signing_alg_values_supported"] = json!(self.dpop.algs);
            }
            return json_response(200, &[], &metadata);
        }
        if seen.path != "/mcp" {
            return json_response(404, &[], &json!({"error": "not_found"}));
        }
        if seen.method != "POST" {
            return "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into();
        }
        let scopes = match self.authorize(seen) {
            Ok(scopes) => scopes,
            Err(refusal) => return refusal,
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

/// A workload JWT signed with `secret` (HS256: the issuer and the
/// authorization server share it) for `audience`, valid for an hour.
fn workload_jwt(secret: &str, audience: &str, subject: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({"iss": "https://workloads.lab", "sub": subject, "aud": audience,
                        "iat": now, "exp": now + 3600});
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
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
