//! One server's DPoP binding: whether its tokens are DPoP-bound, the key they
//! are bound to, the nonces its authorization server and the server itself
//! supplied; and the HTTP client of the sign-in's OAuth requests, which signs
//! a proof for every token request (authorization code, refresh, client
//! credentials, JWT bearer) and answers `use_dpop_nonce` with one retry.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use oauth2::http::{HeaderValue, Method, StatusCode};
use rmcp::transport::auth::{
    AuthorizationMetadata, OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture,
    OAuthHttpRedirectPolicy, OAuthHttpRequest,
};
use serde_json::Value;

use super::JwtAlgorithm;
use super::dpop::{Dpop, DpopKey, DpopMode, ProofKey};
use super::guard::{GuardedHttp, Refused};
use super::store::{KeptKey, StoredSignIn};
use crate::error::{Error, ErrorKind, Result};

/// The algorithms a key is made for, in the order they are preferred.
const PREFERRED: [JwtAlgorithm; 5] = [
    JwtAlgorithm::Es256,
    JwtAlgorithm::Es384,
    JwtAlgorithm::Rs256,
    JwtAlgorithm::Rs384,
    JwtAlgorithm::Rs512,
];

/// The keys made for each server (by URL), shared by the clones of one
/// [`OAuth`](super::OAuth): a reconnection keeps the key its tokens are bound to.
#[derive(Default)]
pub(crate) struct KeyRing(Mutex<HashMap<String, DpopKey>>);

impl KeyRing {
    fn get(&self, url: &str) -> Option<DpopKey> {
        self.0.lock().ok().and_then(|keys| keys.get(url).cloned())
    }

    fn put(&self, url: &str, key: DpopKey) {
        if let Ok(mut keys) = self.0.lock() {
            keys.insert(url.to_owned(), key);
        }
    }
}

/// Whether `token_type` is DPoP's.
pub(crate) fn is_dpop(token_type: &str) -> bool {
    token_type.eq_ignore_ascii_case("dpop")
}

/// The authentication schemes a `WWW-Authenticate` value offers, among
/// Bearer and DPoP.
fn schemes(challenge: &str) -> (bool, bool) {
    let (mut bearer, mut dpop) = (false, false);
    for part in challenge.split(',') {
        let word = part
            .trim_start()
            .split([' ', '\t'])
            .next()
            .unwrap_or_default();
        if word.eq_ignore_ascii_case("bearer") {
            bearer = true;
        } else if word.eq_ignore_ascii_case("dpop") {
            dpop = true;
        }
    }
    (bearer, dpop)
}

/// The string members of `value`'s array `field`, when it has one.
fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    value.and_then(Value::as_array).map(|items| {
        items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    })
}

/// One server's DPoP binding.
pub(crate) struct Binding {
    server: String,
    url: String,
    config: Dpop,
    keys: Arc<KeyRing>,
    /// The key in use: set once tokens are to be DPoP-bound.
    key: Mutex<Option<ProofKey>>,
    as_nonce: Mutex<Option<String>>,
    rs_nonce: Mutex<Option<String>>,
    /// The server's challenge or resource metadata said it takes DPoP-bound tokens.
    resource_offers: AtomicBool,
    /// ... and only them.
    resource_requires: AtomicBool,
    /// Its challenge offered the Bearer scheme alone.
    resource_bearer_only: AtomicBool,
    /// The algorithms its resource metadata lists.
    resource_algs: Mutex<Option<Vec<String>>>,
    /// Why a token response was refused here (the SDK's error that follows
    /// does not carry it).
    refusal: Mutex<Option<String>>,
}

impl Binding {
    pub(crate) fn new(server: &str, url: &str, config: &Dpop, keys: Arc<KeyRing>) -> Self {
        Binding {
            server: server.to_owned(),
            url: url.to_owned(),
            config: config.clone(),
            keys,
            key: Mutex::default(),
            as_nonce: Mutex::default(),
            rs_nonce: Mutex::default(),
            resource_offers: AtomicBool::new(false),
            resource_requires: AtomicBool::new(false),
            resource_bearer_only: AtomicBool::new(false),
            resource_algs: Mutex::default(),
            refusal: Mutex::default(),
        }
    }

    fn failure(&self, message: impl std::fmt::Display) -> Error {
        Error::new(
            ErrorKind::Unauthorized,
            format!("server `{}`: {message}", self.server),
        )
    }

    /// The key proofs are signed with, when tokens are DPoP-bound.
    pub(crate) fn key(&self) -> Option<ProofKey> {
        self.key.lock().ok().and_then(|k| k.clone())
    }

    fn set_key(&self, key: Option<ProofKey>) {
        if let Ok(mut current) = self.key.lock() {
            *current = key;
        }
    }

    /// The key to keep beside the tokens, when the configuration says so.
    pub(crate) fn key_to_keep(&self) -> Option<KeptKey> {
        if !self.config.keep_key || self.config.key.is_some() {
            return None;
        }
        match self.key()? {
            ProofKey::Local(key) => KeptKey::of(&key).ok(),
            ProofKey::App(_) => None,
        }
    }

    /// Reads a refusal's challenge: the schemes it offers.
    pub(crate) fn note_challenge(&self, challenge: &str) {
        let (bearer, dpop) = schemes(challenge);
        self.resource_bearer_only
            .store(bearer && !dpop, Ordering::SeqCst);
        if dpop {
            self.resource_offers.store(true, Ordering::SeqCst);
            if !bearer {
                self.resource_requires.store(true, Ordering::SeqCst);
            }
        }
    }

    /// Reads a metadata document the sign-in fetched: the server's resource
    /// metadata says whether it requires DPoP-bound tokens, and with which
    /// algorithms.
    fn note_metadata(&self, body: &[u8]) {
        let Ok(Value::Object(doc)) = serde_json::from_slice::<Value>(body) else {
            return;
        };
        let resource = doc.get("resource").and_then(Value::as_str);
        let ours =
            resource.is_some_and(|r| r.trim_end_matches('/') == self.url.trim_end_matches('/'));
        if !ours || !doc.contains_key("authorization_servers") {
            return;
        }
        if doc.get("dpop_bound_access_tokens_required") == Some(&Value::Bool(true)) {
            self.resource_offers.store(true, Ordering::SeqCst);
            self.resource_requires.store(true, Ordering::SeqCst);
        }
        if let Some(algs) = strings(doc.get("dpop_signing_alg_values_supported")) {
            self.resource_offers.store(true, Ordering::SeqCst);
            if let Ok(mut current) = self.resource_algs.lock() {
                *current = Some(algs);
            }
        }
    }

    fn requires(&self) -> bool {
        self.resource_requires.load(Ordering::SeqCst)
    }

    /// Decides, once discovery is done, whether this sign-in's tokens are
    /// DPoP-bound, and with which key.
    ///
    /// # Errors
    ///
    /// When the server requires DPoP and it is off, or no algorithm the
    /// servers list can be signed with.
    pub(crate) fn begin(&self, metadata: &AuthorizationMetadata) -> Result<()> {
        let as_algs = strings(
            metadata
                .additional_fields
                .get("dpop_signing_alg_values_supported"),
        );
        let use_dpop = match self.config.mode {
            DpopMode::Off => {
                if self.requires() {
                    return Err(self.failure(
                        "the server takes DPoP-bound tokens only (RFC 9449), and DPoP is off for this client (OAuth::dpop)",
                    ));
                }
                false
            }
            DpopMode::Required => true,
            // The authorization server's support is enough, unless the
            // server's own challenge offered Bearer alone (and its metadata
            // said nothing of DPoP): it would refuse a DPoP-bound token.
            DpopMode::WhenSupported => {
                let offers = self.resource_offers.load(Ordering::SeqCst);
                offers
                    || (as_algs.as_ref().is_some_and(|a| !a.is_empty())
                        && !self.resource_bearer_only.load(Ordering::SeqCst))
            }
        };
        if !use_dpop {
            self.set_key(None);
            return Ok(());
        }
        let resource_algs = self.resource_algs.lock().ok().and_then(|a| a.clone());
        let lists: Vec<(&str, Vec<String>)> = [
            ("its authorization server", as_algs),
            ("the server", resource_algs),
        ]
        .into_iter()
        .filter_map(|(who, list)| list.filter(|l| !l.is_empty()).map(|l| (who, l)))
        .collect();
        let accepted =
            |alg: JwtAlgorithm| lists.iter().all(|(_, l)| l.iter().any(|a| a == alg.name()));
        let listed = || {
            lists
                .iter()
                .map(|(who, l)| {
                    format!("{who} takes DPoP proofs signed with {} only", l.join(", "))
                })
                .collect::<Vec<_>>()
                .join(", and ")
        };
        let key = match &self.config.key {
            Some(key) if accepted(key.algorithm()) => key.clone(),
            Some(key) => {
                return Err(self.failure(format!(
                    "{}, and the application's key signs {}",
                    listed(),
                    key.algorithm().name()
                )));
            }
            None => match self.keys.get(&self.url) {
                Some(key) if accepted(key.algorithm()) => ProofKey::Local(key),
                _ => {
                    let algorithm =
                        PREFERRED
                            .into_iter()
                            .find(|a| accepted(*a))
                            .ok_or_else(|| {
                                self.failure(format!(
                                    "{}; this client signs ES256, ES384, RS256, RS384 or RS512",
                                    listed()
                                ))
                            })?;
                    let key = DpopKey::generate(algorithm)?;
                    self.keys.put(&self.url, key.clone());
                    ProofKey::Local(key)
                }
            },
        };
        self.set_key(Some(key));
        Ok(())
    }

    /// Decides that this sign-in's tokens are Bearer tokens, for a grant
    /// that cannot obtain DPoP-bound ones (`why`).
    ///
    /// # Errors
    ///
    /// When the server or the configuration requires DPoP.
    pub(crate) fn begin_without(&self, why: &str) -> Result<()> {
        let who = if self.requires() {
            Some("the server takes DPoP-bound tokens only")
        } else if self.config.mode == DpopMode::Required {
            Some("this client requires DPoP (OAuth::dpop)")
        } else {
            None
        };
        if let Some(who) = who {
            return Err(self.failure(format!("{who}, and {why}")));
        }
        self.set_key(None);
        Ok(())
    }

    /// Takes up a kept sign-in: its tokens are usable when they are Bearer
    /// tokens the configuration allows, or DPoP-bound and the key is at hand
    /// (given by the application, made earlier by this `OAuth`, or kept
    /// beside them).
    pub(crate) fn restore(&self, stored: &StoredSignIn) -> bool {
        if !stored.is_bound() {
            self.set_key(None);
            return self.config.mode != DpopMode::Required;
        }
        if self.config.mode == DpopMode::Off {
            return false;
        }
        let key = match &self.config.key {
            Some(key) => Some(key.clone()),
            None => self
                .keys
                .get(&self.url)
                .or_else(|| stored.kept_key().and_then(|k| k.key().ok()))
                .map(|key| {
                    self.keys.put(&self.url, key.clone());
                    ProofKey::Local(key)
                }),
        };
        let usable = key
            .as_ref()
            .is_some_and(|k| stored.key_thumbprint().is_none_or(|t| t == k.thumbprint()));
        self.set_key(key.filter(|_| usable));
        usable
    }

    /// Checks the token type a token response names.
    fn check_issued(&self, token_type: &str) -> std::result::Result<(), String> {
        let bound = is_dpop(token_type);
        let proving = self.key().is_some();
        if bound && !proving {
            return Err(format!(
                "server `{}`: the authorization server issued a DPoP-bound token to a request that carried no proof",
                self.server
            ));
        }
        if !bound && proving && (self.config.mode == DpopMode::Required || self.requires()) {
            let who = if self.requires() {
                "the server takes DPoP-bound tokens only"
            } else {
                "this client requires DPoP (OAuth::dpop)"
            };
            return Err(format!(
                "server `{}`: the authorization server issued a `{token_type}` token, not a DPoP-bound one, and {who}",
                self.server
            ));
        }
        Ok(())
    }

    /// Why the last token response was refused, once.
    pub(crate) fn take_refusal(&self) -> Option<String> {
        self.refusal.lock().ok().and_then(|mut r| r.take())
    }

    fn as_nonce(&self) -> Option<String> {
        self.as_nonce.lock().ok().and_then(|n| n.clone())
    }

    fn note_as_nonce(&self, nonce: &str) {
        if let Ok(mut current) = self.as_nonce.lock() {
            *current = Some(nonce.to_owned());
        }
    }

    /// The nonce the server supplied last, if any.
    pub(crate) fn rs_nonce(&self) -> Option<String> {
        self.rs_nonce.lock().ok().and_then(|n| n.clone())
    }

    /// Keeps the nonce the server supplied; whether it is a new one.
    pub(crate) fn note_rs_nonce(&self, nonce: &str) -> bool {
        let Ok(mut current) = self.rs_nonce.lock() else {
            return false;
        };
        let new = current.as_deref() != Some(nonce);
        *current = Some(nonce.to_owned());
        new
    }

    /// A proof for a request to the server carrying `token`.
    ///
    /// # Errors
    ///
    /// When there is no key (a DPoP-bound token is never sent without its
    /// proof) or signing fails.
    pub(crate) async fn resource_proof(
        &self,
        method: &str,
        url: &str,
        token: &str,
    ) -> Result<String> {
        let key = self.key().ok_or_else(|| {
            self.failure("a DPoP-bound token without the key it is bound to cannot be sent")
        })?;
        let nonce = self.rs_nonce();
        key.proof(method, url, Some(token), nonce.as_deref()).await
    }
}

/// `DPoP-Nonce` of a response.
pub(crate) fn nonce_of(headers: &oauth2::http::HeaderMap) -> Option<String> {
    headers
        .get("dpop-nonce")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// Whether `request` is a token request: a form POST with a `grant_type`.
fn is_token_request(request: &oauth2::http::Request<Vec<u8>>) -> bool {
    request.method() == Method::POST
        && url::form_urlencoded::parse(request.body()).any(|(k, _)| k == "grant_type")
}

/// The HTTP client of one server's sign-in: the [guarded](GuardedHttp)
/// client, with a DPoP proof on every token request while the server's
/// tokens are DPoP-bound.
pub(crate) struct ProofHttp {
    guard: GuardedHttp,
    binding: Arc<Binding>,
}

impl ProofHttp {
    pub(crate) fn new(guard: GuardedHttp, binding: Arc<Binding>) -> Self {
        ProofHttp { guard, binding }
    }

    /// Sends `request`: a token request with a fresh proof (carrying the
    /// authorization server's nonce, once it gave one), sent once more when
    /// the answer is `use_dpop_nonce` with a new nonce.
    pub(crate) async fn send(
        &self,
        request: oauth2::http::Request<Vec<u8>>,
        policy: OAuthHttpRedirectPolicy,
    ) -> std::result::Result<oauth2::http::Response<Vec<u8>>, OAuthHttpClientError> {
        let key = self.binding.key();
        let Some(key) = key.filter(|_| is_token_request(&request)) else {
            let metadata = request.method() == Method::GET;
            let response = self.guard.send(request, policy).await?;
            if metadata && response.status().is_success() {
                self.binding.note_metadata(response.body());
            }
            return Ok(response);
        };
        let url = request.uri().to_string();
        let (parts, body) = request.into_parts();
        let mut retried = false;
        loop {
            let nonce = self.binding.as_nonce();
            let proof = key
                .proof("POST", &url, None, nonce.as_deref())
                .await
                .map_err(|e| Box::new(e) as OAuthHttpClientError)?;
            let mut attempt = oauth2::http::Request::builder()
                .method(parts.method.clone())
                .uri(parts.uri.clone())
                .version(parts.version)
                .body(body.clone())
                .map_err(|e| Box::new(e) as OAuthHttpClientError)?;
            *attempt.headers_mut() = parts.headers.clone();
            let proof =
                HeaderValue::from_str(&proof).map_err(|e| Box::new(e) as OAuthHttpClientError)?;
            attempt.headers_mut().insert("dpop", proof);
            let response = self.guard.send(attempt, policy).await?;
            let fresh = nonce_of(response.headers());
            if let Some(fresh) = &fresh {
                self.binding.note_as_nonce(fresh);
            }
            let asks_nonce = response.status() == StatusCode::BAD_REQUEST
                && serde_json::from_slice::<Value>(response.body())
                    .is_ok_and(|b| b["error"] == "use_dpop_nonce");
            if asks_nonce && !retried && fresh.is_some() && fresh != nonce {
                retried = true;
                continue;
            }
            if response.status().is_success()
                && let Ok(body) = serde_json::from_slice::<Value>(response.body())
                && let Some(token_type) = body["token_type"].as_str()
                && let Err(message) = self.binding.check_issued(token_type)
            {
                if let Ok(mut refusal) = self.binding.refusal.lock() {
                    *refusal = Some(message.clone());
                }
                return Err(Box::new(Refused(message)));
            }
            return Ok(response);
        }
    }
}

impl OAuthHttpClient for ProofHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(self.send(request.request, request.redirect_policy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_read_for_their_schemes() {
        assert_eq!(
            schemes(r#"DPoP resource_metadata="https://x/y""#),
            (false, true)
        );
        assert_eq!(
            schemes(r#"Bearer scope="a, b", error="invalid_token", DPoP algs="ES256""#),
            (true, true)
        );
        assert_eq!(schemes("Bearer"), (true, false));
    }

    fn binding(config: Dpop) -> Binding {
        Binding::new("notes", "https://mcp.example/mcp", &config, Arc::default())
    }

    fn metadata(algs: Option<&[&str]>) -> AuthorizationMetadata {
        let mut metadata = AuthorizationMetadata::default();
        if let Some(algs) = algs {
            metadata.additional_fields.insert(
                "dpop_signing_alg_values_supported".into(),
                serde_json::json!(algs),
            );
        }
        metadata
    }

    #[test]
    fn the_key_follows_what_the_servers_list() {
        let b = binding(Dpop::when_supported());
        b.begin(&metadata(None)).unwrap();
        assert!(b.key().is_none(), "no DPoP without support");
        b.begin(&metadata(Some(&["ES256", "RS256"]))).unwrap();
        assert_eq!(b.key().unwrap().algorithm(), JwtAlgorithm::Es256);
        let first = b.key().unwrap().thumbprint().to_owned();
        b.begin(&metadata(Some(&["ES256"]))).unwrap();
        assert_eq!(b.key().unwrap().thumbprint(), first, "the same key again");
        b.begin(&metadata(Some(&["ES384"]))).unwrap();
        assert_eq!(b.key().unwrap().algorithm(), JwtAlgorithm::Es384);
        let err = b.begin(&metadata(Some(&["EdDSA", "PS256"]))).unwrap_err();
        assert!(err.to_string().contains("EdDSA, PS256"), "{err}");
    }

    #[test]
    fn a_server_whose_challenge_offers_bearer_alone_gets_bearer_tokens() {
        let b = binding(Dpop::when_supported());
        b.note_challenge(r#"Bearer resource_metadata="https://mcp.example/.well-known/x""#);
        b.begin(&metadata(Some(&["ES256"]))).unwrap();
        assert!(
            b.key().is_none(),
            "the server would refuse a DPoP-bound token"
        );
        b.note_challenge(r#"Bearer realm="x", DPoP algs="ES256""#);
        b.begin(&metadata(Some(&["ES256"]))).unwrap();
        assert!(b.key().is_some());
        // Required by the client: bound all the same.
        let b = binding(Dpop::required());
        b.note_challenge("Bearer");
        b.begin(&metadata(Some(&["ES256"]))).unwrap();
        assert!(b.key().is_some());
    }

    #[test]
    fn a_server_that_requires_dpop_is_refused_when_it_is_off() {
        let b = binding(Dpop::off());
        b.note_challenge(r#"DPoP resource_metadata="https://mcp.example/.well-known/x""#);
        let err = b.begin(&metadata(Some(&["ES256"]))).unwrap_err();
        assert!(err.to_string().contains("DPoP is off"), "{err}");
        // Offered beside Bearer, it is not required.
        let b = binding(Dpop::off());
        b.note_challenge("Bearer, DPoP");
        b.begin(&metadata(Some(&["ES256"]))).unwrap();
        assert!(b.key().is_none());
    }

    #[test]
    fn resource_metadata_can_require_dpop() {
        let b = binding(Dpop::when_supported());
        b.note_metadata(
            br#"{"resource": "https://mcp.example/mcp", "authorization_servers": ["https://as"],
                 "dpop_bound_access_tokens_required": true, "dpop_signing_alg_values_supported": ["ES384"]}"#,
        );
        b.begin(&metadata(None)).unwrap();
        assert_eq!(b.key().unwrap().algorithm(), JwtAlgorithm::Es384);
        assert!(
            b.check_issued("Bearer")
                .unwrap_err()
                .contains("DPoP-bound tokens only")
        );
        assert!(b.check_issued("DPoP").is_ok());
        // Another resource's metadata says nothing about this one.
        let other = binding(Dpop::when_supported());
        other.note_metadata(br#"{"resource": "https://else/mcp", "authorization_servers": [], "dpop_bound_access_tokens_required": true}"#);
        assert!(!other.requires());
    }

    #[test]
    fn a_client_that_requires_dpop_refuses_a_bearer_token() {
        let b = binding(Dpop::required());
        b.begin(&metadata(None)).unwrap();
        assert!(
            b.check_issued("Bearer")
                .unwrap_err()
                .contains("requires DPoP")
        );
        let lax = binding(Dpop::when_supported());
        lax.begin(&metadata(Some(&["ES256"]))).unwrap();
        assert!(lax.check_issued("bearer").is_ok(), "the AS may ignore DPoP");
    }
}
