//! Where a server's sign-in is kept: the [`TokenStore`] trait, an in-memory
//! store (the default), a JSON file with owner-only permissions, and the
//! bridge to the SDK's credential store.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{Error, ErrorKind, Result};
use crate::exec::BoxFuture;
use crate::files::{Exposed, Open, open_private, place, write_private};

/// What is kept of one server's sign-in: the client registration it used
/// (client id, and secret when the authorization server issued one), the
/// authorization server's issuer, and the tokens with their expiry and scopes;
/// for DPoP-bound tokens, the thumbprint of the key they are bound to and,
/// when [`Dpop::keep_key_in_store`](super::Dpop::keep_key_in_store) says so,
/// the private key itself.
///
/// It serializes to JSON for a [`TokenStore`] to keep as it is. Its `Debug`
/// output shows the client id, issuer, scopes, expiry and key thumbprint,
/// never a token, a secret or a private key.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredSignIn {
    client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    redirect_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issuer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    access_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh_token: Option<String>,
    /// Seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at: Option<u64>,
    #[serde(default)]
    scopes: Vec<String>,
    /// The thumbprint (RFC 7638) of the DPoP key the tokens are bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dpop_jkt: Option<String>,
    /// That key, when it is kept beside them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dpop_key: Option<KeptKey>,
}

/// A DPoP private key kept beside the tokens bound to it: its algorithm and
/// its PKCS#8 encoding (base64url).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct KeptKey {
    alg: String,
    pkcs8: String,
}

impl KeptKey {
    pub(crate) fn of(key: &super::DpopKey) -> Result<Self> {
        use base64::Engine as _;
        Ok(KeptKey {
            alg: key.algorithm().name().to_owned(),
            pkcs8: base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(key.to_pkcs8()?),
        })
    }

    /// The key again.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when what is kept is not a key.
    pub(crate) fn key(&self) -> Result<super::DpopKey> {
        use base64::Engine as _;
        let algorithm = super::JwtAlgorithm::from_name(&self.alg).ok_or_else(|| {
            Error::input(format!(
                "the token store keeps a DPoP key for `{}`, not a known algorithm",
                self.alg
            ))
        })?;
        let der = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(&self.pkcs8)
            .map_err(|_| Error::input("the token store's DPoP key is not base64url"))?;
        super::DpopKey::from_pkcs8(algorithm, &der)
    }
}

impl std::fmt::Debug for StoredSignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hidden = |present: bool| if present { "[hidden]" } else { "none" };
        f.debug_struct("StoredSignIn")
            .field("client_id", &self.client_id)
            .field("client_secret", &hidden(self.client_secret.is_some()))
            .field("issuer", &self.issuer)
            .field("access_token", &hidden(self.access_token.is_some()))
            .field("refresh_token", &hidden(self.refresh_token.is_some()))
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .field("dpop_jkt", &self.dpop_jkt)
            .field("dpop_key", &hidden(self.dpop_key.is_some()))
            .finish()
    }
}

impl StoredSignIn {
    /// The client id the sign-in used.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// The issuer of the authorization server that issued the tokens.
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// The scopes granted.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// When the access token expires (seconds since the Unix epoch), when the
    /// authorization server said.
    pub fn expires_at(&self) -> Option<u64> {
        self.expires_at
    }

    /// Whether a refresh token is kept.
    pub fn can_refresh(&self) -> bool {
        self.refresh_token.is_some()
    }

    /// Whether an access token is kept.
    pub fn has_token(&self) -> bool {
        self.access_token.is_some()
    }

    /// Whether the tokens are DPoP-bound (RFC 9449): usable only with proofs
    /// signed by their key.
    pub fn is_bound(&self) -> bool {
        self.token_type
            .as_deref()
            .is_some_and(super::binding::is_dpop)
    }

    /// The thumbprint of the DPoP key the tokens are bound to.
    pub(crate) fn key_thumbprint(&self) -> Option<&str> {
        self.dpop_jkt.as_deref()
    }

    /// The DPoP key kept beside the tokens.
    pub(crate) fn kept_key(&self) -> Option<&KeptKey> {
        self.dpop_key.as_ref()
    }

    /// The client registration alone: the client id and secret, the redirect
    /// URI it was registered with and the issuer, without tokens.
    pub(crate) fn registration(
        client_id: String,
        client_secret: Option<String>,
        redirect_uri: Option<String>,
        issuer: Option<String>,
    ) -> Self {
        StoredSignIn {
            client_id,
            client_secret,
            redirect_uri,
            issuer,
            ..StoredSignIn::default()
        }
    }

    /// A sign-in with tokens obtained outside the SDK's own flows.
    pub(crate) fn issued(registration: StoredSignIn, tokens: Issued) -> Self {
        StoredSignIn {
            access_token: Some(tokens.access_token),
            token_type: Some(tokens.token_type),
            refresh_token: tokens.refresh_token,
            expires_at: tokens
                .expires_in
                .map(|d| now_secs().saturating_add(d.as_secs())),
            scopes: tokens.scopes,
            ..registration
        }
    }

    pub(crate) fn client_secret(&self) -> Option<&str> {
        self.client_secret.as_deref()
    }

    pub(crate) fn redirect_uri(&self) -> Option<&str> {
        self.redirect_uri.as_deref()
    }

    /// The SDK's form of the same sign-in (its token response rebuilt with
    /// the time left before expiry).
    fn to_sdk(&self) -> Option<StoredCredentials> {
        let now = now_secs();
        let token_response = self.access_token.as_ref().map(|token| {
            let mut response = json!({
                "access_token": token,
                "token_type": self.token_type.as_deref().unwrap_or("bearer"),
            });
            if let Some(at) = self.expires_at {
                response["expires_in"] = json!(at.saturating_sub(now));
            }
            if let Some(refresh) = &self.refresh_token {
                response["refresh_token"] = json!(refresh);
            }
            if !self.scopes.is_empty() {
                response["scope"] = json!(self.scopes.join(" "));
            }
            response
        });
        let wire = json!({
            "client_id": self.client_id,
            "token_response": token_response,
            "granted_scopes": self.scopes,
            "token_received_at": now,
            "issuer": self.issuer,
        });
        serde_json::from_value(wire).ok()
    }

    /// Reads the SDK's form, keeping `registration`'s secret and redirect URI,
    /// and binding it to the DPoP key `bound` names.
    fn from_sdk(
        credentials: &StoredCredentials,
        registration: Option<&StoredSignIn>,
        bound: Option<&BoundKey>,
    ) -> Self {
        let wire = serde_json::to_value(credentials).unwrap_or(Value::Null);
        let text = |v: &Value| v.as_str().map(str::to_owned);
        let token = &wire["token_response"];
        let received = wire["token_received_at"].as_u64().unwrap_or_else(now_secs);
        let scopes = wire["granted_scopes"]
            .as_array()
            .map(|a| a.iter().filter_map(text).collect())
            .unwrap_or_default();
        let same_client = registration
            .filter(|r| r.client_id == credentials.client_id && !r.client_id.is_empty());
        StoredSignIn {
            client_id: credentials.client_id.clone(),
            client_secret: same_client.and_then(|r| r.client_secret.clone()),
            redirect_uri: same_client.and_then(|r| r.redirect_uri.clone()),
            issuer: text(&wire["issuer"]),
            access_token: text(&token["access_token"]),
            token_type: text(&token["token_type"]),
            refresh_token: text(&token["refresh_token"]),
            expires_at: token["expires_in"]
                .as_u64()
                .map(|s| received.saturating_add(s)),
            scopes,
            dpop_jkt: None,
            dpop_key: None,
        }
        .bound_to(bound)
    }

    /// The same, with DPoP-bound tokens bound to `key`.
    pub(crate) fn bound_to(mut self, key: Option<&BoundKey>) -> Self {
        (self.dpop_jkt, self.dpop_key) = match key {
            Some(key) if self.is_bound() => (Some(key.jkt.clone()), key.kept.clone()),
            _ => (None, None),
        };
        self
    }
}

/// Tokens obtained outside the SDK's own flows.
pub(crate) struct Issued {
    pub(crate) access_token: String,
    pub(crate) token_type: String,
    pub(crate) refresh_token: Option<String>,
    pub(crate) expires_in: Option<std::time::Duration>,
    pub(crate) scopes: Vec<String>,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Keeps each server's sign-in between connections, so that tokens survive a
/// restart when the application wants them to.
///
/// Entries are keyed by the server's URL, exactly as configured: a token is
/// only ever sent to the server it was issued for. The default is
/// [`MemoryTokenStore`]; [`FileTokenStore`] keeps them in a JSON file only its
/// owner can read. An implementation keeps what it is given as it is (it
/// serializes to JSON) and must not log it.
pub trait TokenStore: Send + Sync {
    /// The sign-in kept for `server_url`, if any.
    ///
    /// # Errors
    ///
    /// When the store cannot be read; the connection then fails with it.
    fn load<'a>(&'a self, server_url: &'a str) -> BoxFuture<'a, Result<Option<StoredSignIn>>>;

    /// Keeps `sign_in` for `server_url`, replacing what was kept.
    ///
    /// # Errors
    ///
    /// When the store cannot be written.
    fn save<'a>(&'a self, server_url: &'a str, sign_in: StoredSignIn) -> BoxFuture<'a, Result<()>>;

    /// Forgets what is kept for `server_url`.
    ///
    /// # Errors
    ///
    /// When the store cannot be written.
    fn clear<'a>(&'a self, server_url: &'a str) -> BoxFuture<'a, Result<()>>;
}

/// A [`TokenStore`] in memory: sign-ins last as long as the store (the default).
#[derive(Debug, Clone, Default)]
pub struct MemoryTokenStore {
    entries: Arc<Mutex<HashMap<String, StoredSignIn>>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load<'a>(&'a self, server_url: &'a str) -> BoxFuture<'a, Result<Option<StoredSignIn>>> {
        let entry = self
            .entries
            .lock()
            .ok()
            .and_then(|entries| entries.get(server_url).cloned());
        Box::pin(async move { Ok(entry) })
    }

    fn save<'a>(&'a self, server_url: &'a str, sign_in: StoredSignIn) -> BoxFuture<'a, Result<()>> {
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(server_url.to_owned(), sign_in);
        }
        Box::pin(async { Ok(()) })
    }

    fn clear<'a>(&'a self, server_url: &'a str) -> BoxFuture<'a, Result<()>> {
        if let Ok(mut entries) = self.entries.lock() {
            entries.remove(server_url);
        }
        Box::pin(async { Ok(()) })
    }
}

/// A [`TokenStore`] in one JSON file, `{"servers": {URL: sign-in}}`, written
/// whole on every change (to a new file in the same directory, readable and
/// writable by its owner only, synced, then renamed over it).
///
/// The store and its lock file (`.NAME.lock`, beside it) are treated as ssh
/// treats its keys: never read or written through a symbolic link, and on
/// Unix refused when another user owns them or when other users may read or
/// write them (a mode other than 0600), with an error naming the file.
/// [`warn_when_exposed`](Self::warn_when_exposed) uses such a file with a
/// warning in the log instead.
#[derive(Debug, Clone)]
pub struct FileTokenStore {
    path: PathBuf,
    lock: Arc<Mutex<()>>,
    exposed: Exposed,
}

#[derive(Default, Serialize, Deserialize)]
struct TokenFile {
    #[serde(default)]
    servers: BTreeMap<String, StoredSignIn>,
}

impl FileTokenStore {
    /// A store in `path` (created on the first save; its directory must exist).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileTokenStore {
            path: path.into(),
            lock: Arc::default(),
            exposed: Exposed::Refuse,
        }
    }

    /// Uses a store (or lock file) that another user owns or may read, with
    /// a warning in the log naming it, instead of refusing it. A symbolic
    /// link is refused all the same.
    pub fn warn_when_exposed(mut self) -> Self {
        self.exposed = Exposed::Warn;
        self
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<TokenFile> {
        let Some(mut file) = open_private(&self.path, Open::Read, self.exposed)? else {
            return Ok(TokenFile::default());
        };
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text)
            .map_err(|e| Error::io(e, &self.path))?;
        if text.trim().is_empty() {
            return Ok(TokenFile::default());
        }
        // The error names the line and column only: the file holds secrets.
        serde_json::from_str(&text).map_err(|e| {
            Error::input(format!(
                "the token store is not a token file (line {}, column {})",
                e.line(),
                e.column()
            ))
            .with_file(&self.path)
        })
    }

    fn write(&self, file: &TokenFile) -> Result<()> {
        let text = serde_json::to_string_pretty(file).map_err(|e| {
            Error::new(ErrorKind::Io, "cannot encode the token store").with_source(e)
        })?;
        write_private(&self.path, text.as_bytes())
    }

    /// Reads, changes and writes the file under a lock: the process's, and
    /// an advisory lock on a file beside it, so that processes sharing the
    /// store do not lose each other's changes.
    fn update(&self, change: impl FnOnce(&mut TokenFile)) -> Result<()> {
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let (dir, name) = place(&self.path);
        let lock_path = dir.join(format!(".{name}.lock"));
        let lock = open_private(&lock_path, Open::Create, self.exposed)?
            .ok_or_else(|| Error::new(ErrorKind::Io, "the lock file was not created"))?;
        lock.lock().map_err(|e| Error::io(e, &lock_path))?;
        let mut file = self.read()?;
        change(&mut file);
        let written = self.write(&file);
        drop(lock);
        written
    }
}

impl TokenStore for FileTokenStore {
    fn load<'a>(&'a self, server_url: &'a str) -> BoxFuture<'a, Result<Option<StoredSignIn>>> {
        Box::pin(async move {
            let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            Ok(self.read()?.servers.remove(server_url))
        })
    }

    fn save<'a>(&'a self, server_url: &'a str, sign_in: StoredSignIn) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            self.update(|file| {
                file.servers.insert(server_url.to_owned(), sign_in);
            })
        })
    }

    fn clear<'a>(&'a self, server_url: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            self.update(|file| {
                file.servers.remove(server_url);
            })
        })
    }
}

/// The SDK's credential store for one server, over the application's
/// [`TokenStore`]: what the SDK saves after a token exchange or refresh is
/// kept under the server's URL with the registration it was made with.
/// Clones share everything.
#[derive(Clone)]
pub(crate) struct Bridge {
    store: Arc<dyn TokenStore>,
    key: Arc<str>,
    /// The client registration in use (id, secret, redirect URI, issuer).
    registration: Arc<Mutex<Option<StoredSignIn>>>,
    /// The DPoP key new tokens are bound to.
    bound: Arc<Mutex<Option<BoundKey>>>,
    /// The access token last loaded or saved, and whether it is DPoP-bound.
    last: Arc<Mutex<Option<(String, bool)>>>,
    /// Held across a refresh and its save.
    refreshing: Arc<tokio::sync::Mutex<()>>,
}

impl Bridge {
    pub(crate) fn new(store: Arc<dyn TokenStore>, key: &str) -> Self {
        Bridge {
            store,
            key: Arc::from(key),
            registration: Arc::default(),
            bound: Arc::default(),
            last: Arc::default(),
            refreshing: Arc::default(),
        }
    }

    /// The registration the next save belongs to.
    pub(crate) fn set_registration(&self, registration: StoredSignIn) {
        if let Ok(mut current) = self.registration.lock() {
            *current = Some(registration);
        }
    }

    /// The DPoP key the next tokens are bound to (none: Bearer tokens).
    pub(crate) fn set_bound(&self, key: Option<BoundKey>) {
        if let Ok(mut current) = self.bound.lock() {
            *current = key;
        }
    }

    fn bound(&self) -> Option<BoundKey> {
        self.bound.lock().ok().and_then(|b| b.clone())
    }

    fn note(&self, sign_in: &StoredSignIn) {
        if let (Some(token), Ok(mut last)) = (&sign_in.access_token, self.last.lock()) {
            *last = Some((token.clone(), sign_in.is_bound()));
        }
    }

    /// Whether `token` is DPoP-bound, when it is the token last loaded or saved.
    pub(crate) fn is_bound(&self, token: &str) -> Option<bool> {
        let last = self.last.lock().ok()?;
        last.as_ref()
            .filter(|(t, _)| t == token)
            .map(|(_, bound)| *bound)
    }

    /// What the application's store keeps for this server.
    pub(crate) async fn stored(&self) -> Result<Option<StoredSignIn>> {
        let stored = self.store.load(&self.key).await?;
        if let Some(stored) = &stored {
            self.note(stored);
        }
        Ok(stored)
    }

    /// Keeps `sign_in` for this server, bound to the current DPoP key.
    pub(crate) async fn keep(&self, sign_in: StoredSignIn) -> Result<()> {
        let sign_in = sign_in.bound_to(self.bound().as_ref());
        self.set_registration(sign_in.clone());
        self.note(&sign_in);
        self.store.save(&self.key, sign_in).await
    }
}

/// The DPoP key tokens are bound to: its thumbprint, and the key itself when
/// it is kept beside them.
#[derive(Clone)]
pub(crate) struct BoundKey {
    pub(crate) jkt: String,
    pub(crate) kept: Option<KeptKey>,
}

fn store_error(err: &Error) -> AuthError {
    AuthError::CredentialStoreError(err.message_with_causes())
}

#[async_trait::async_trait]
impl CredentialStore for Bridge {
    async fn load(&self) -> std::result::Result<Option<StoredCredentials>, AuthError> {
        let stored = self
            .store
            .load(&self.key)
            .await
            .map_err(|e| store_error(&e))?;
        Ok(stored.and_then(|s| {
            if let Ok(mut current) = self.registration.lock() {
                current.get_or_insert_with(|| s.clone());
            }
            self.note(&s);
            s.to_sdk()
        }))
    }

    async fn save(&self, credentials: StoredCredentials) -> std::result::Result<(), AuthError> {
        let registration = self.registration.lock().ok().and_then(|r| r.clone());
        let sign_in =
            StoredSignIn::from_sdk(&credentials, registration.as_ref(), self.bound().as_ref());
        self.note(&sign_in);
        self.store
            .save(&self.key, sign_in)
            .await
            .map_err(|e| store_error(&e))
    }

    async fn clear(&self) -> std::result::Result<(), AuthError> {
        self.store
            .clear(&self.key)
            .await
            .map_err(|e| store_error(&e))
    }

    async fn acquire_refresh_guard(
        &self,
    ) -> std::result::Result<Option<CredentialRefreshGuard>, AuthError> {
        let guard = self.refreshing.clone().lock_owned().await;
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StoredSignIn {
        StoredSignIn {
            client_id: "client-1".into(),
            client_secret: Some("shh-secret".into()),
            redirect_uri: Some("http://127.0.0.1:1/callback".into()),
            issuer: Some("https://as.example.com".into()),
            access_token: Some("at-secret".into()),
            token_type: Some("Bearer".into()),
            refresh_token: Some("rt-secret".into()),
            expires_at: Some(now_secs() + 3600),
            scopes: vec!["read".into(), "write".into()],
            dpop_jkt: None,
            dpop_key: None,
        }
    }

    #[test]
    fn debug_output_hides_tokens_and_secrets() {
        let text = format!("{:?}", sample());
        for secret in ["shh-secret", "at-secret", "rt-secret"] {
            assert!(!text.contains(secret), "{text}");
        }
        assert!(
            text.contains("client-1") && text.contains("write"),
            "{text}"
        );
    }

    #[test]
    fn the_sdk_form_keeps_tokens_expiry_and_scopes() {
        let stored = sample();
        let sdk = stored.to_sdk().expect("converts");
        let back = StoredSignIn::from_sdk(&sdk, Some(&stored), None);
        assert_eq!(back.client_secret(), Some("shh-secret"));
        assert_eq!(back.access_token, stored.access_token);
        assert_eq!(back.refresh_token, stored.refresh_token);
        assert_eq!(back.scopes, stored.scopes);
        // The SDK keeps a lifetime, counted from the clock at each end: the
        // expiry comes back as far off as the time between the two readings.
        let (a, b) = (back.expires_at.unwrap(), stored.expires_at.unwrap());
        assert!(a.abs_diff(b) <= 60, "{a} vs {b}");
        // Another client's secret is never attached.
        let other = StoredSignIn::registration("client-2".into(), Some("x".into()), None, None);
        assert_eq!(
            StoredSignIn::from_sdk(&sdk, Some(&other), None).client_secret(),
            None
        );
    }

    #[tokio::test]
    async fn the_file_store_is_private_and_keyed_by_server() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.json");
        let store = FileTokenStore::new(&path);
        // One sign-in, saved and compared: `sample()` reads the clock, so two
        // calls can differ by a second.
        let saved = sample();
        store
            .save("https://a.example/mcp", saved.clone())
            .await
            .unwrap();
        assert_eq!(
            store.load("https://a.example/mcp").await.unwrap(),
            Some(saved)
        );
        assert_eq!(store.load("https://b.example/mcp").await.unwrap(), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        store.clear("https://a.example/mcp").await.unwrap();
        assert_eq!(store.load("https://a.example/mcp").await.unwrap(), None);
        std::fs::write(&path, "{\"servers\": [").unwrap();
        let err = store.load("https://a.example/mcp").await.unwrap_err();
        assert!(err.to_string().contains("not a token file"), "{err}");
    }
}
