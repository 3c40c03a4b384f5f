//! Sign-in for streamable HTTP servers behind OAuth 2.1 (the `oauth` feature),
//! as MCP's Authorization specification (2025-11-25, 2026-07-28) defines it,
//! over the official SDK's OAuth support.
//!
//! The application describes once how a person signs in ([`OAuth`]): where
//! the authorization server sends the browser back (the redirect URI) and a
//! callback that is given the authorization URL and returns where the browser
//! was sent ([`SignInAnswer::Redirect`]). A desktop application opens a
//! browser and listens on a loopback port (RFC 8252); a server application
//! sends its user a link. A client that signs in as itself uses
//! [`OAuth::client_credentials`] instead, one whose person signed in to
//! the enterprise's identity provider [`OAuth::enterprise`], and a workload
//! that holds a JWT its platform issued (a Kubernetes projected token, a CI
//! job's OIDC token) [`OAuth::workload_identity`]; no person is asked then.
//!
//! With [`ClientOptions::oauth`](crate::ClientOptions::oauth), a server
//! reached with [`McpClient::connect_http`](crate::McpClient::connect_http)
//! without an `Authorization` header is signed in to when it answers `401`:
//!
//! 1. **Discovery**: the protected resource metadata named by the
//!    `WWW-Authenticate` challenge (or found at the well-known paths), whose
//!    `resource` must be the server's; then the authorization server's
//!    metadata (RFC 8414 and OpenID Connect locations, with path insertion),
//!    whose `issuer` must be the one the metadata was looked up for.
//! 2. **Registration**, in the order the specification gives: a client the
//!    application registered beforehand ([`OAuth::client`]), a Client ID
//!    Metadata Document ([`OAuth::client_metadata_url`]) when the
//!    authorization server takes them, then dynamic client registration. A
//!    registration is reused only with the authorization server that issued it.
//! 3. **Authorization** with PKCE (S256) and the server's URL as resource
//!    indicator (RFC 8707); the scopes are the challenge's, else the resource's
//!    `scopes_supported`, else none, with `offline_access` added when the
//!    authorization server lists it (so that it issues a refresh token). The
//!    redirect's `iss` is compared with the issuer by simple string comparison
//!    and a missing `iss` is refused when the authorization server says it sends one.
//! 4. **Tokens** go only to the server they were issued for, are refreshed
//!    before they expire (or when the server rejects one), and are kept in
//!    the [`TokenStore`] (in memory by default) so that they survive a restart
//!    when the application wants.
//! 5. **DPoP** (RFC 9449, the MCP DPoP extension): when the authorization
//!    server or the server supports it, the tokens are bound to a key the
//!    client holds and every request carries a fresh proof signed with it,
//!    so that a token that leaks is of no use without the key (see [`Dpop`]).
//!
//! A request answered `403 insufficient_scope` is sent again after a
//! **step-up**: a sign-in asking for the scopes granted so far plus the ones
//! the challenge names, at most [`OAuth::max_step_ups`] times per request, and
//! never for scopes already granted. When the server's resource metadata
//! names another authorization server, the next sign-in registers with it.
//!
//! A sign-in that is refused, fails or times out ends the request with an
//! [`ErrorKind::Unauthorized`](crate::ErrorKind::Unauthorized) error naming
//! the server; the request was not run by the server (it answered 401 or
//! 403). No token, secret or authorization code appears in an error, a log
//! line or a `Debug` output of the library (the SDK's `rmcp::transport::auth`
//! log target prints the authorization code at `debug` level: keep it at
//! `info` where logs leave the machine).

mod binding;
mod client;
mod dpop;
mod flow;
mod guard;
mod store;
mod wire;
mod workload;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub(crate) use client::SignedInClient;
pub use dpop::{Dpop, DpopKey, DpopSignFn};
pub(crate) use flow::{Authorizer, Refusal, sign_in_failure, sign_in_message};
pub use store::{FileTokenStore, MemoryTokenStore, StoredSignIn, TokenStore};
pub use workload::{WorkloadIdentity, WorkloadTokenFn};

use crate::exec::BoxFuture;

/// Why a person is asked to sign in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignInReason {
    /// The server answered 401: there is no token, or it can no longer be refreshed.
    Required,
    /// The server answered 403 `insufficient_scope`: the request needs more scopes.
    StepUp,
}

/// What the application's sign-in callback is given.
#[derive(Clone)]
#[non_exhaustive]
pub struct SignInRequest {
    /// The server's name (as given when connecting).
    pub server: String,
    /// The server's URL.
    pub server_url: String,
    /// The page to send the person to.
    pub authorization_url: String,
    /// Where the authorization server will send the browser back.
    pub redirect_uri: String,
    /// The `state` the redirect must carry back (also in `authorization_url`).
    pub state: String,
    /// The scopes asked for.
    pub scopes: Vec<String>,
    /// Why.
    pub reason: SignInReason,
}

impl std::fmt::Debug for SignInRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignInRequest")
            .field("server", &self.server)
            .field("server_url", &self.server_url)
            .field("redirect_uri", &self.redirect_uri)
            .field("scopes", &self.scopes)
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

/// What the sign-in callback answers.
#[derive(Clone)]
#[non_exhaustive]
pub enum SignInAnswer {
    /// The URL the authorization server sent the browser to (the redirect
    /// URI with `code`, `state` and maybe `iss`, or with `error`).
    Redirect(String),
    /// The person (or the application) will not sign in; the request ends
    /// with an error carrying this reason.
    Refuse(String),
}

impl std::fmt::Debug for SignInAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SignInAnswer::Redirect(_) => f.write_str("Redirect([hidden])"),
            SignInAnswer::Refuse(reason) => f.debug_tuple("Refuse").field(reason).finish(),
        }
    }
}

/// The application's sign-in callback.
pub type SignInFn = dyn Fn(SignInRequest) -> BoxFuture<'static, SignInAnswer> + Send + Sync;

/// A client the application registered with an authorization server beforehand.
#[derive(Clone)]
pub struct RegisteredClient {
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    pub(crate) issuer: Option<String>,
}

impl RegisteredClient {
    /// A public client (no secret).
    pub fn new(client_id: impl Into<String>) -> Self {
        RegisteredClient {
            client_id: client_id.into(),
            client_secret: None,
            issuer: None,
        }
    }

    /// A confidential client: its secret authenticates it at the token
    /// endpoint (HTTP Basic, or in the body when that is all the
    /// authorization server takes).
    pub fn with_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// Used only with the authorization server of this issuer (a server
    /// that moves to another one then gets a new registration).
    pub fn for_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }
}

impl std::fmt::Debug for RegisteredClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredClient")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[hidden]"),
            )
            .field("issuer", &self.issuer)
            .finish()
    }
}

/// A JWS signing algorithm: of a [`ClientCredentials::private_key_jwt`]
/// assertion, or of DPoP proofs ([`DpopKey`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JwtAlgorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    Rs384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    Rs512,
    /// ECDSA P-256 with SHA-256.
    Es256,
    /// ECDSA P-384 with SHA-384.
    Es384,
}

impl JwtAlgorithm {
    /// The JWS `alg` name (`RS256`, `ES256`, ...).
    pub fn name(self) -> &'static str {
        match self {
            JwtAlgorithm::Rs256 => "RS256",
            JwtAlgorithm::Rs384 => "RS384",
            JwtAlgorithm::Rs512 => "RS512",
            JwtAlgorithm::Es256 => "ES256",
            JwtAlgorithm::Es384 => "ES384",
        }
    }

    /// The algorithm of a JWS `alg` name (`RS256`, `ES256`, ...).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "RS256" => JwtAlgorithm::Rs256,
            "RS384" => JwtAlgorithm::Rs384,
            "RS512" => JwtAlgorithm::Rs512,
            "ES256" => JwtAlgorithm::Es256,
            "ES384" => JwtAlgorithm::Es384,
            _ => return None,
        })
    }
}

/// How a client signs in as itself, with no person (OAuth client
/// credentials, the `io.modelcontextprotocol/oauth-client-credentials`
/// extension).
#[derive(Clone)]
pub struct ClientCredentials {
    pub(crate) client_id: String,
    pub(crate) secret: ClientProof,
    pub(crate) scopes: Vec<String>,
}

#[derive(Clone)]
pub(crate) enum ClientProof {
    Secret(String),
    PrivateKeyJwt {
        pem: Vec<u8>,
        algorithm: JwtAlgorithm,
    },
}

impl ClientCredentials {
    /// Authenticated with a client secret (HTTP Basic, or in the body when
    /// that is all the authorization server takes).
    pub fn secret(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        ClientCredentials {
            client_id: client_id.into(),
            secret: ClientProof::Secret(secret.into()),
            scopes: Vec::new(),
        }
    }

    /// Authenticated with a JWT signed by a private key (`private_key_jwt`,
    /// RFC 7523): `pem` is the PKCS#8 (or RSA) private key in PEM.
    pub fn private_key_jwt(
        client_id: impl Into<String>,
        pem: impl Into<Vec<u8>>,
        algorithm: JwtAlgorithm,
    ) -> Self {
        ClientCredentials {
            client_id: client_id.into(),
            secret: ClientProof::PrivateKeyJwt {
                pem: pem.into(),
                algorithm,
            },
            scopes: Vec::new(),
        }
    }

    /// The scopes to ask for (none by default).
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let proof = match &self.secret {
            ClientProof::Secret(_) => "secret [hidden]".to_owned(),
            ClientProof::PrivateKeyJwt { algorithm, .. } => {
                format!("private_key_jwt {algorithm:?} [key hidden]")
            }
        };
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("proof", &proof)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// The function that gives a fresh ID token of the enterprise's identity
/// provider (see [`EnterpriseSignIn`]), or why there is none.
pub type IdTokenFn =
    dyn Fn() -> BoxFuture<'static, std::result::Result<String, String>> + Send + Sync;

/// Enterprise-managed authorization (SEP-990, the
/// `io.modelcontextprotocol/enterprise-managed-authorization` extension):
/// the person signed in to the enterprise's identity provider once; its ID
/// token is exchanged there for an identity assertion grant (RFC 8693),
/// which the MCP server's authorization server exchanges for an access token
/// (RFC 7523 JWT bearer grant). No browser is opened.
#[derive(Clone)]
pub struct EnterpriseSignIn {
    pub(crate) idp_issuer: String,
    pub(crate) idp_token_endpoint: String,
    pub(crate) idp_client: RegisteredClient,
    pub(crate) client: RegisteredClient,
    pub(crate) id_token: Arc<IdTokenFn>,
    pub(crate) scopes: Vec<String>,
}

impl EnterpriseSignIn {
    /// The identity provider (its issuer, token endpoint and this
    /// application's client there), the client registered with the MCP
    /// servers' authorization server, and `id_token`, called for a fresh ID
    /// token at each sign-in.
    pub fn new<F>(
        idp_issuer: impl Into<String>,
        idp_token_endpoint: impl Into<String>,
        idp_client: RegisteredClient,
        client: RegisteredClient,
        id_token: F,
    ) -> Self
    where
        F: Fn() -> BoxFuture<'static, std::result::Result<String, String>> + Send + Sync + 'static,
    {
        EnterpriseSignIn {
            idp_issuer: idp_issuer.into(),
            idp_token_endpoint: idp_token_endpoint.into(),
            idp_client,
            client,
            id_token: Arc::new(id_token),
            scopes: Vec::new(),
        }
    }

    /// The scopes to ask for (none by default).
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
}

impl std::fmt::Debug for EnterpriseSignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnterpriseSignIn")
            .field("idp_issuer", &self.idp_issuer)
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("idp_client", &self.idp_client)
            .field("client", &self.client)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// How the client signs in to servers that require it (the `oauth` feature);
/// see the [module documentation](self) for what happens.
///
/// Give it to [`ClientOptions::oauth`](crate::ClientOptions::oauth). Cloning
/// shares the callback and the token store.
#[derive(Clone)]
pub struct OAuth {
    pub(crate) grant: Grant,
    pub(crate) client_name: String,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) registered: Option<RegisteredClient>,
    pub(crate) registered_for: BTreeMap<String, RegisteredClient>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) scopes: Option<Vec<String>>,
    pub(crate) max_step_ups: u32,
    pub(crate) sign_in_timeout: Duration,
    pub(crate) workload_for: BTreeMap<String, WorkloadIdentity>,
    pub(crate) dpop: Dpop,
    /// The DPoP keys made for each server, shared by the clones.
    pub(crate) dpop_keys: Arc<binding::KeyRing>,
}

#[derive(Clone)]
pub(crate) enum Grant {
    /// A person signs in in a browser (authorization code with PKCE).
    Person {
        redirect_uri: String,
        callback: Arc<SignInFn>,
    },
    /// The client signs in as itself.
    Client(ClientCredentials),
    /// An enterprise identity provider's ID token is exchanged.
    Enterprise(EnterpriseSignIn),
    /// A workload's JWT is presented as a JWT bearer grant.
    Workload(WorkloadIdentity),
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = f.debug_struct("OAuth");
        match &self.grant {
            Grant::Person { redirect_uri, .. } => s.field("redirect_uri", redirect_uri),
            Grant::Client(credentials) => s.field("client_credentials", credentials),
            Grant::Enterprise(enterprise) => s.field("enterprise", enterprise),
            Grant::Workload(workload) => s.field("workload_identity", workload),
        };
        s.field("client_name", &self.client_name)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("registered", &self.registered)
            .field("registered_for", &self.registered_for)
            .field("scopes", &self.scopes)
            .field("max_step_ups", &self.max_step_ups)
            .field("sign_in_timeout", &self.sign_in_timeout)
            .field("workload_for", &self.workload_for)
            .field("dpop", &self.dpop)
            .finish_non_exhaustive()
    }
}

impl OAuth {
    /// A person signs in: `sign_in` is given the authorization URL and
    /// answers with the URL the browser was sent back to, at `redirect_uri`.
    pub fn new<F>(redirect_uri: impl Into<String>, sign_in: F) -> Self
    where
        F: Fn(SignInRequest) -> BoxFuture<'static, SignInAnswer> + Send + Sync + 'static,
    {
        Self::with_grant(Grant::Person {
            redirect_uri: redirect_uri.into(),
            callback: Arc::new(sign_in),
        })
    }

    /// The client signs in as itself with `credentials`; no person is asked.
    pub fn client_credentials(credentials: ClientCredentials) -> Self {
        Self::with_grant(Grant::Client(credentials))
    }

    /// Enterprise-managed authorization: the identity provider's ID token is
    /// exchanged for the server's access token; no person is asked.
    pub fn enterprise(enterprise: EnterpriseSignIn) -> Self {
        Self::with_grant(Grant::Enterprise(enterprise))
    }

    /// A workload signs in with the JWT its platform issued it (a JWT bearer
    /// grant, RFC 7523); no person is asked.
    pub fn workload_identity(workload: WorkloadIdentity) -> Self {
        Self::with_grant(Grant::Workload(workload))
    }

    fn with_grant(grant: Grant) -> Self {
        OAuth {
            grant,
            client_name: "mcp-adapters".into(),
            client_metadata_url: None,
            registered: None,
            registered_for: BTreeMap::new(),
            store: Arc::new(MemoryTokenStore::new()),
            scopes: None,
            max_step_ups: 2,
            sign_in_timeout: Duration::from_secs(600),
            workload_for: BTreeMap::new(),
            dpop: Dpop::default(),
            dpop_keys: Arc::default(),
        }
    }

    /// The `client_name` sent with dynamic client registration (`mcp-adapters` by default).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The HTTPS URL of the application's Client ID Metadata Document, used
    /// as its client id by authorization servers that take them.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// A client registered beforehand, used with every server (unless one
    /// has its own, [`client_for`](Self::client_for)).
    pub fn client(mut self, client: RegisteredClient) -> Self {
        self.registered = Some(client);
        self
    }

    /// A client registered beforehand for the server named `server`.
    pub fn client_for(mut self, server: impl Into<String>, client: RegisteredClient) -> Self {
        self.registered_for.insert(server.into(), client);
        self
    }

    /// Where sign-ins are kept ([`MemoryTokenStore`] by default).
    pub fn token_store(mut self, store: impl TokenStore + 'static) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// The same, shared.
    pub fn shared_token_store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = store;
        self
    }

    /// The scopes of a first sign-in, instead of the ones the server names.
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// How many step-ups one request may cause (2 by default; 0 never steps up).
    pub fn max_step_ups(mut self, n: u32) -> Self {
        self.max_step_ups = n;
        self
    }

    /// How long the sign-in callback may take (600 s by default).
    pub fn sign_in_timeout(mut self, timeout: Duration) -> Self {
        self.sign_in_timeout = timeout;
        self
    }

    /// The server named `server` signs in with `workload`'s JWT, whatever
    /// the others do.
    pub fn workload_identity_for(
        mut self,
        server: impl Into<String>,
        workload: WorkloadIdentity,
    ) -> Self {
        self.workload_for.insert(server.into(), workload);
        self
    }

    /// How DPoP is used ([`Dpop::when_supported`] by default).
    pub fn dpop(mut self, dpop: Dpop) -> Self {
        self.dpop = dpop;
        self
    }

    /// The registration configured for `server`.
    pub(crate) fn registered_client(&self, server: &str) -> Option<&RegisteredClient> {
        self.registered_for.get(server).or(self.registered.as_ref())
    }

    /// How `server` signs in.
    pub(crate) fn grant_for(&self, server: &str) -> Grant {
        match self.workload_for.get(server) {
            Some(workload) => Grant::Workload(workload.clone()),
            None => self.grant.clone(),
        }
    }
}

impl crate::ClientOptions {
    /// How to sign in to streamable HTTP servers that require it (none by
    /// default): servers reached without an `Authorization` header are
    /// signed in to when they require it.
    pub fn oauth(mut self, oauth: OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }
}
