//! One server's sign-in: discovery, registration, the authorization-code
//! flow with the application's callback (or client credentials), refresh and
//! step-up, over the SDK's `AuthorizationManager`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tracing::Instrument;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, JwtSigningAlgorithm, OAuthClientConfig,
    WWWAuthenticateParams,
};
use url::Url;

use super::binding::{Binding, ProofHttp};
use super::guard::GuardedHttp;
use super::store::{BoundKey, Bridge, Issued, StoredSignIn};
use super::wire::{DpopHeaders, Presented};
use super::{ClientProof, Grant, JwtAlgorithm, OAuth, SignInAnswer, SignInReason, SignInRequest};
use crate::error::{Error, ErrorKind, Result};
use http::HeaderValue;

/// What a request that was refused should do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recovery {
    /// Send it again: there is a new token.
    Retry,
    /// A person must sign in, and this is no time to ask (the handshake):
    /// the refusal goes up as it came.
    NeedsPerson,
}

/// Why the server refused a request: its `WWW-Authenticate` challenge.
#[derive(Debug, Clone)]
pub(crate) enum Refusal {
    /// 401.
    Unauthorized(String),
    /// 403 `insufficient_scope`.
    InsufficientScope(String),
}

impl Refusal {
    /// The refusal that failed a handshake, found in the chain of its error.
    pub(crate) fn of(err: &(dyn std::error::Error + 'static)) -> Option<Self> {
        use rmcp::service::ClientInitializeError;
        use rmcp::transport::streamable_http_client::StreamableHttpError;
        let mut current = Some(err);
        while let Some(e) = current {
            if let Some(init) = e.downcast_ref::<ClientInitializeError>() {
                match init {
                    ClientInitializeError::TransportError { error, .. } => {
                        if let Some(refusal) = Self::of(error.error.as_ref()) {
                            return Some(refusal);
                        }
                    }
                    ClientInitializeError::LegacyFallbackFailed { fallback, .. } => {
                        return Self::of(fallback.as_ref());
                    }
                    _ => {}
                }
            }
            match e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
                Some(StreamableHttpError::AuthRequired(r)) => {
                    return Some(Refusal::Unauthorized(r.www_authenticate_header.clone()));
                }
                Some(StreamableHttpError::InsufficientScope(r)) => {
                    return Some(Refusal::InsufficientScope(
                        r.www_authenticate_header.clone(),
                    ));
                }
                _ => {}
            }
            current = e.source();
        }
        None
    }
}

/// One server's sign-in state.
pub(crate) struct Authorizer {
    server: String,
    url: String,
    oauth: OAuth,
    /// How this server signs in.
    grant: Grant,
    bridge: Bridge,
    /// Whether its tokens are DPoP-bound, and to which key.
    binding: Arc<Binding>,
    manager: tokio::sync::Mutex<Option<Arc<AuthorizationManager>>>,
    /// Whether the store was read for a sign-in from an earlier connection.
    restored: AtomicBool,
    /// Whether a person may be asked now (after the handshake).
    interactive: AtomicBool,
    /// One sign-in (or refresh after a refusal) at a time.
    signing_in: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("server", &self.server)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Authorizer {
    pub(crate) fn new(server: &str, url: &str, oauth: &OAuth) -> Self {
        Authorizer {
            server: server.to_owned(),
            url: url.to_owned(),
            bridge: Bridge::new(oauth.store.clone(), url),
            binding: Arc::new(Binding::new(
                server,
                url,
                &oauth.dpop,
                oauth.dpop_keys.clone(),
            )),
            grant: oauth.grant_for(server),
            oauth: oauth.clone(),
            manager: tokio::sync::Mutex::new(None),
            restored: AtomicBool::new(false),
            interactive: AtomicBool::new(false),
            signing_in: tokio::sync::Mutex::new(()),
        }
    }

    /// From now on a person may be asked (the handshake is over).
    pub(crate) fn set_interactive(&self, interactive: bool) {
        self.interactive.store(interactive, Ordering::SeqCst);
    }

    /// How many step-ups one request may cause.
    pub(crate) fn max_step_ups(&self) -> u32 {
        self.oauth.max_step_ups
    }

    /// The error when a freshly obtained token is refused too.
    pub(crate) fn rejected_again(&self) -> Error {
        self.failure("the server refused the token the sign-in had just obtained (401 again)")
    }

    /// The error when a request needs more step-ups than allowed.
    pub(crate) fn too_many_step_ups(&self, challenge: &str) -> Error {
        let scope = Url::parse(&self.url)
            .ok()
            .and_then(|base| WWWAuthenticateParams::parse(challenge, &base).scope)
            .unwrap_or_default();
        self.failure(format!(
            "the server still refuses the request for lack of scope `{scope}` after {} step-up sign-in(s); not signing in again",
            self.oauth.max_step_ups
        ))
    }

    /// Answers a refusal of the handshake, asking a person if need be: a
    /// 401 (the transport already tried to refresh) signs in anew, a 403
    /// steps up.
    ///
    /// # Errors
    ///
    /// As [`sign_in`](Self::sign_in) and [`insufficient_scope`](Self::insufficient_scope).
    pub(crate) async fn recover_handshake(&self, refusal: &Refusal) -> Result<()> {
        match refusal {
            Refusal::Unauthorized(challenge) => {
                let _one = self.signing_in.lock().await;
                self.sign_in(Some(challenge), SignInReason::Required, None)
                    .await
            }
            Refusal::InsufficientScope(challenge) => {
                self.set_interactive(true);
                let recovered = self.insufficient_scope(challenge).await;
                self.set_interactive(false);
                recovered.map(|_| ())
            }
        }
    }

    fn asks_a_person(&self) -> bool {
        matches!(self.grant, Grant::Person { .. })
    }

    /// An error about this server's sign-in.
    fn failure(&self, message: impl std::fmt::Display) -> Error {
        Error::new(
            ErrorKind::Unauthorized,
            format!("server `{}`: {message}", self.server),
        )
    }

    /// The same, caused by an SDK error (whose text names no secret), or by
    /// the token response the DPoP binding refused under it.
    fn sdk_failure(&self, what: &str, err: AuthError) -> Error {
        match self.binding.take_refusal() {
            Some(refusal) => Error::new(ErrorKind::Unauthorized, format!("{refusal} ({what})")),
            None => self.failure(format!("{what}: {err}")),
        }
    }

    /// The token to send, refreshed first when it is about to expire;
    /// `None` when there is none (the server's 401 then starts a sign-in).
    ///
    /// # Errors
    ///
    /// When the store cannot be read, discovery fails while restoring a kept
    /// sign-in, or a refresh fails for another reason than a rejected token.
    pub(crate) async fn token(&self) -> Result<Option<String>> {
        let Some(manager) = self.manager().await? else {
            return Ok(None);
        };
        match manager.get_access_token().await {
            Ok(token) => Ok(Some(token)),
            Err(AuthError::AuthorizationRequired) => Ok(None),
            Err(e) => Err(self.sdk_failure("the token could not be refreshed", e)),
        }
    }

    /// How the next request to the server presents its token: a DPoP-bound
    /// one with a fresh proof for `method` and `uri`, never as a Bearer token.
    ///
    /// # Errors
    ///
    /// As [`token`](Self::token); when a DPoP-bound token's key is missing
    /// or its proof cannot be signed.
    pub(crate) async fn present(&self, method: &str, uri: &str) -> Result<Presented> {
        let Some(token) = self.token().await? else {
            return Ok(Presented::Nothing);
        };
        let bound = match self.bridge.is_bound(&token) {
            Some(bound) => bound,
            None => self.bridge.stored().await?.is_some_and(|s| s.is_bound()),
        };
        if !bound {
            return Ok(Presented::Bearer(token));
        }
        let proof = self.binding.resource_proof(method, uri, &token).await?;
        let header = |text: String| {
            HeaderValue::try_from(text)
                .map_err(|_| self.failure("the token or its proof is not a valid header value"))
        };
        Ok(Presented::Dpop {
            headers: DpopHeaders {
                authorization: header(format!("DPoP {token}"))?,
                proof: header(proof)?,
            },
            token,
        })
    }

    /// Keeps the DPoP nonce the server supplied; whether it is a new one.
    pub(crate) fn note_nonce(&self, nonce: &str) -> bool {
        self.binding.note_rs_nonce(nonce)
    }

    /// The signed-in manager, restored from the store on first use.
    async fn manager(&self) -> Result<Option<Arc<AuthorizationManager>>> {
        let mut current = self.manager.lock().await;
        if current.is_none() && !self.restored.swap(true, Ordering::SeqCst) {
            match self.restore().await {
                Ok(manager) => *current = manager,
                Err(e) => {
                    // Tried again on the next request: a moment's outage of the
                    // authorization server does not throw the kept sign-in away.
                    self.restored.store(false, Ordering::SeqCst);
                    return Err(e);
                }
            }
        }
        Ok(current.clone())
    }

    /// A sign-in kept from an earlier connection, checked against the
    /// authorization server the server names now (one that changed discards it).
    async fn restore(&self) -> Result<Option<Arc<AuthorizationManager>>> {
        let Some(stored) = self.bridge.stored().await? else {
            return Ok(None);
        };
        if !stored.has_token() {
            return Ok(None);
        }
        if !self.binding.restore(&stored) {
            tracing::info!(server = %self.server, "the kept tokens are DPoP-bound to a key this client does not hold (or are not as its DPoP setting requires); signing in again");
            return Ok(None);
        }
        self.bridge.set_bound(self.bound_key());
        self.bridge.set_registration(stored.clone());
        let mut manager = self.new_manager().await?;
        let restored = manager
            .initialize_from_store()
            .await
            .map_err(|e| self.sdk_failure("cannot use the kept sign-in", e))?;
        if !restored {
            tracing::info!(server = %self.server, "the kept sign-in was issued by another authorization server; signing in again");
            return Ok(None);
        }
        if let Some(secret) = stored.client_secret() {
            let redirect = stored.redirect_uri().unwrap_or(&self.url);
            let config =
                OAuthClientConfig::new(stored.client_id(), redirect).with_client_secret(secret);
            manager
                .configure_client(config)
                .map_err(|e| self.sdk_failure("cannot use the kept registration", e))?;
        }
        Ok(Some(Arc::new(manager)))
    }

    /// The HTTP client of this server's OAuth requests: guarded, and signing
    /// DPoP proofs for its token requests while its tokens are DPoP-bound.
    fn http(&self) -> Result<ProofHttp> {
        let guard = GuardedHttp::for_server(&self.url)
            .map_err(|e| self.failure("cannot start a sign-in").with_source(e))?;
        Ok(ProofHttp::new(guard, self.binding.clone()))
    }

    /// The DPoP key new tokens are bound to, as the store keeps it.
    fn bound_key(&self) -> Option<BoundKey> {
        self.binding.key().map(|key| BoundKey {
            jkt: key.thumbprint().to_owned(),
            kept: self.binding.key_to_keep(),
        })
    }

    async fn new_manager(&self) -> Result<AuthorizationManager> {
        let http = Arc::new(self.http()?);
        let mut manager = AuthorizationManager::new_with_oauth_http_client(self.url.as_str(), http)
            .await
            .map_err(|e| self.sdk_failure("cannot start a sign-in", e))?;
        manager.set_credential_store(self.bridge.clone());
        Ok(manager)
    }

    /// The server answered 401 to a request sent with `sent`.
    ///
    /// # Errors
    ///
    /// When the sign-in is refused, fails or times out.
    pub(crate) async fn unauthorized(
        &self,
        challenge: &str,
        sent: Option<&str>,
    ) -> Result<Recovery> {
        self.binding.note_challenge(challenge);
        let _one = self.signing_in.lock().await;
        // Another request may have refreshed or signed in meanwhile.
        let current = self.token().await?;
        if current.is_some() && current.as_deref() != sent {
            return Ok(Recovery::Retry);
        }
        if sent.is_some()
            && let Some(manager) = self.manager.lock().await.clone()
        {
            match manager.refresh_token().await {
                Ok(_) => return Ok(Recovery::Retry),
                Err(AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_)) => {}
                Err(AuthError::InternalError(_)) => {}
                Err(e) => {
                    return Err(self.sdk_failure("the rejected token could not be refreshed", e));
                }
            }
        }
        if self.asks_a_person() && !self.interactive.load(Ordering::SeqCst) {
            return Ok(Recovery::NeedsPerson);
        }
        self.sign_in(Some(challenge), SignInReason::Required, None)
            .await?;
        Ok(Recovery::Retry)
    }

    /// The server answered 403 `insufficient_scope`.
    ///
    /// # Errors
    ///
    /// When the challenge names no scope, names only scopes already granted
    /// (signing in again would not help), or the step-up sign-in fails.
    pub(crate) async fn insufficient_scope(&self, challenge: &str) -> Result<Recovery> {
        let _one = self.signing_in.lock().await;
        let base = Url::parse(&self.url)
            .map_err(|e| self.failure(format!("`{}` is not a URL: {e}", self.url)))?;
        let params = WWWAuthenticateParams::parse(challenge, &base);
        let required: Vec<String> = params
            .scope
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        if required.is_empty() {
            return Err(self.failure(
                "the server refused the request for lack of scope (403) without naming the scope it needs",
            ));
        }
        let granted = self
            .bridge
            .stored()
            .await?
            .map(|s| s.scopes().to_vec())
            .unwrap_or_default();
        if required.iter().all(|s| granted.contains(s)) {
            return Err(self.failure(format!(
                "the server refused the request for lack of scope `{}`, which the sign-in was granted; not signing in again{}",
                required.join(" "),
                params
                    .error_description
                    .map(|d| format!(" (it said: {d})"))
                    .unwrap_or_default()
            )));
        }
        if self.asks_a_person() && !self.interactive.load(Ordering::SeqCst) {
            return Ok(Recovery::NeedsPerson);
        }
        let mut scopes = granted;
        for scope in required {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        self.sign_in(Some(challenge), SignInReason::StepUp, Some(scopes))
            .await?;
        Ok(Recovery::Retry)
    }

    /// Signs in anew: discovery from `challenge`, then client credentials or
    /// registration and the person's authorization.
    ///
    /// # Errors
    ///
    /// When discovery, registration, the person's answer or the token
    /// exchange fails.
    pub(crate) async fn sign_in(
        &self,
        challenge: Option<&str>,
        reason: SignInReason,
        scopes: Option<Vec<String>>,
    ) -> Result<()> {
        // One span per sign-in round; no credential is recorded (the
        // server's host, not its URL, which may carry a key).
        let host = url::Url::parse(&self.url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned));
        let span = tracing::info_span!(
            "mcp.client.sign_in",
            otel.name = "oauth sign-in",
            otel.kind = "client",
            server.address = host.as_deref(),
            error.r#type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        let result = self
            .sign_in_round(challenge, reason, scopes)
            .instrument(span.clone())
            .await;
        if let Err(e) = &result {
            crate::telemetry::record_failure(&span, e);
        }
        result
    }

    async fn sign_in_round(
        &self,
        challenge: Option<&str>,
        reason: SignInReason,
        scopes: Option<Vec<String>>,
    ) -> Result<()> {
        if let Some(challenge) = challenge {
            self.binding.note_challenge(challenge);
        }
        let mut manager = self.new_manager().await?;
        let resolution = manager
            .resolve_metadata_from_challenge(challenge)
            .await
            .map_err(|e| self.sdk_failure("authorization server discovery failed", e))?;
        let metadata = resolution.metadata;
        manager.set_metadata(metadata.clone());
        self.bind(&metadata)?;
        let manager = match &self.grant {
            Grant::Client(credentials) => {
                // A step-up asks for the scopes granted so far plus the challenged ones.
                let config = client_credentials_config(
                    credentials,
                    scopes.as_deref().unwrap_or(&credentials.scopes),
                    &self.url,
                );
                self.bridge.set_registration(StoredSignIn::registration(
                    credentials.client_id.clone(),
                    None,
                    None,
                    metadata.issuer.clone(),
                ));
                manager
                    .validate_client_credentials_metadata(&config)
                    .and_then(|()| manager.configure_client_credentials(&config))
                    .map_err(|e| self.sdk_failure("client credentials cannot be used", e))?;
                exchange_client_credentials(manager, config)
                    .await
                    .map_err(|e| self.sdk_failure("the client credentials were not accepted", e))?
            }
            Grant::Enterprise(enterprise) => {
                let scopes = scopes.as_deref().unwrap_or(&enterprise.scopes);
                self.enterprise(&mut manager, &metadata, enterprise, scopes)
                    .await?;
                manager
            }
            Grant::Workload(workload) => {
                let scopes = scopes.as_deref().unwrap_or(&workload.scopes);
                self.workload(&mut manager, &metadata, workload, scopes)
                    .await?;
                manager
            }
            Grant::Person {
                redirect_uri,
                callback,
            } => {
                let person = Person {
                    redirect_uri,
                    callback: callback.as_ref(),
                    reason,
                };
                self.person(manager, &metadata, &person, scopes).await?
            }
        };
        *self.manager.lock().await = Some(Arc::new(manager));
        tracing::info!(server = %self.server, ?reason, "signed in");
        Ok(())
    }

    /// Decides, once discovery is done, whether the tokens of this sign-in
    /// are DPoP-bound, and to which key.
    fn bind(&self, metadata: &AuthorizationMetadata) -> Result<()> {
        match &self.grant {
            // The SDK's enterprise exchange takes Bearer tokens only.
            Grant::Enterprise(_) => self
                .binding
                .begin_without("enterprise-managed authorization obtains Bearer tokens only")?,
            _ => self.binding.begin(metadata)?,
        }
        self.bridge.set_bound(self.bound_key());
        Ok(())
    }

    /// A person's authorization: registration, the authorization URL given
    /// to the callback, and the code of the redirect it answers exchanged.
    async fn person(
        &self,
        mut manager: AuthorizationManager,
        metadata: &AuthorizationMetadata,
        person: &Person<'_>,
        scopes: Option<Vec<String>>,
    ) -> Result<AuthorizationManager> {
        let scopes = match scopes.or_else(|| self.oauth.scopes.clone()) {
            Some(scopes) => scopes,
            None => manager.select_initial_scopes(&[]).await,
        };
        let registration = self
            .register(&mut manager, metadata, person.redirect_uri, &scopes)
            .await?;
        self.bridge.set_registration(registration.clone());
        let mut request = AuthorizationRequest::new(person.redirect_uri)
            .with_preregistered_client(registration.client_id());
        if let Some(secret) = registration.client_secret() {
            request = request.with_client_secret(secret);
        }
        request = if scopes.is_empty() {
            request.with_initial_scope_selection()
        } else {
            request.with_scopes(scopes)
        };
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| self.sdk_failure("cannot start the authorization", e))?;
        let answer = self
            .ask(
                person.callback,
                &session,
                person.redirect_uri,
                person.reason,
            )
            .await?;
        session
            .handle_callback_with_issuer(&answer.code, &answer.state, answer.issuer.as_deref())
            .await
            .map_err(|e| self.sdk_failure("the authorization was not completed", e))?;
        Ok(session.auth_manager)
    }

    /// Enterprise-managed authorization: the identity provider's ID token
    /// for an identity assertion grant, that grant for the access token at
    /// `metadata`'s authorization server; the token is kept for the manager.
    async fn enterprise(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
        enterprise: &super::EnterpriseSignIn,
        scopes: &[String],
    ) -> Result<()> {
        use rmcp::transport::auth::enterprise::{
            EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
        };
        let issuer = metadata.issuer.clone().ok_or_else(|| {
            self.failure("the authorization server's metadata names no issuer, which enterprise-managed authorization binds to")
        })?;
        // A client registered for one authorization server never shows its
        // credentials (or the identity assertion) to another.
        if let Some(bound) = &enterprise.client.issuer
            && *bound != issuer
        {
            return Err(self.failure(format!(
                "the server names the authorization server `{issuer}`, but the enterprise client is registered with `{bound}` only"
            )));
        }
        let authentication = |client: &super::RegisteredClient| match &client.client_secret {
            Some(secret) => EmaClientAuthentication::ClientSecretBasic(oauth2::ClientSecret::new(
                secret.clone(),
            )),
            None => EmaClientAuthentication::None,
        };
        let idp = EmaAuthorizationServer::new(
            enterprise.idp_issuer.as_str(),
            enterprise.idp_token_endpoint.as_str(),
            enterprise.idp_client.client_id.as_str(),
        )
        .with_client_authentication(authentication(&enterprise.idp_client));
        let resource_as = EmaAuthorizationServer::new(
            issuer.as_str(),
            metadata.token_endpoint.as_str(),
            enterprise.client.client_id.as_str(),
        )
        .with_client_authentication(authentication(&enterprise.client));
        let id_token = (enterprise.id_token)().await.map_err(|reason| {
            self.failure(format!("no ID token from the identity provider: {reason}"))
        })?;
        // The identity provider is the application's own (it may well be on a
        // private network); the authorization server's token endpoint comes
        // from the server's metadata, so that leg goes through the guard,
        // which refuses addresses the server itself is not on.
        let idp_http = rmcp::transport::auth::default_oauth_http_client()
            .map_err(|e| self.sdk_failure("cannot start the token exchange", e))?;
        let resource_http = GuardedHttp::for_server(&self.url).map_err(|e| {
            self.failure("cannot start the token exchange")
                .with_source(e)
        })?;
        let token = EmaExchangeRequest::new_with_id_token(idp, resource_as, &self.url, &id_token)
            .with_scopes(scopes.iter().cloned())
            .exchange(&idp_http, &resource_http)
            .await
            .map_err(|e| self.failure(format!("enterprise-managed authorization failed: {e}")))?;
        let registration = StoredSignIn::registration(
            enterprise.client.client_id.clone(),
            enterprise.client.client_secret.clone(),
            None,
            Some(issuer),
        );
        let mut scopes: Vec<String> = token.scopes.iter().cloned().collect();
        scopes.sort();
        let issued = Issued {
            access_token: token.access_token.secret().clone(),
            token_type: "Bearer".into(),
            refresh_token: None,
            expires_in: token.expires_in,
            scopes,
        };
        self.bridge
            .keep(StoredSignIn::issued(registration, issued))
            .await?;
        manager
            .configure_client_id(&enterprise.client.client_id)
            .map_err(|e| self.sdk_failure("cannot use the registration", e))
    }

    /// Workload identity: the workload's JWT as a JWT bearer grant at
    /// `metadata`'s authorization server; the token is kept for the manager.
    async fn workload(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
        workload: &super::WorkloadIdentity,
        scopes: &[String],
    ) -> Result<()> {
        let issued = super::workload::grant(&self.http()?, metadata, workload, &self.url, scopes)
            .await
            .map_err(|message| self.failure(message))?;
        let client_id = workload.client_id.clone().unwrap_or_default();
        let registration =
            StoredSignIn::registration(client_id.clone(), None, None, metadata.issuer.clone());
        self.bridge
            .keep(StoredSignIn::issued(registration, issued))
            .await?;
        manager
            .configure_client_id(&client_id)
            .map_err(|e| self.sdk_failure("cannot use the workload's sign-in", e))
    }

    /// The client registration for `metadata`'s authorization server, in
    /// the specification's order: one registered beforehand, the one this
    /// store holds from the same authorization server, a Client ID Metadata
    /// Document, then dynamic registration.
    async fn register(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
        redirect_uri: &str,
        scopes: &[String],
    ) -> Result<StoredSignIn> {
        let issuer = metadata.issuer.clone();
        let same_issuer = |other: Option<&str>| issuer.is_some() && other == issuer.as_deref();
        if let Some(client) = self.oauth.registered_client(&self.server)
            && (client.issuer.is_none() || same_issuer(client.issuer.as_deref()))
        {
            return Ok(StoredSignIn::registration(
                client.client_id.clone(),
                client.client_secret.clone(),
                Some(redirect_uri.to_owned()),
                issuer,
            ));
        }
        if let Some(stored) = self.bridge.stored().await?
            && !stored.client_id().is_empty()
            && same_issuer(stored.issuer())
            && stored.redirect_uri() == Some(redirect_uri)
        {
            return Ok(StoredSignIn::registration(
                stored.client_id().to_owned(),
                stored.client_secret().map(str::to_owned),
                Some(redirect_uri.to_owned()),
                issuer,
            ));
        }
        let takes_documents = metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        if let Some(url) = &self.oauth.client_metadata_url
            && takes_documents
        {
            return Ok(StoredSignIn::registration(
                url.clone(),
                None,
                Some(redirect_uri.to_owned()),
                issuer,
            ));
        }
        if metadata.registration_endpoint.is_none() {
            return Err(self.failure(format!(
                "the authorization server{} offers no dynamic client registration{}; configure a client registered with it beforehand",
                issuer.as_deref().map(|i| format!(" `{i}`")).unwrap_or_default(),
                if self.oauth.client_metadata_url.is_some() {
                    " and takes no client id metadata documents"
                } else {
                    ""
                }
            )));
        }
        let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let config = manager
            .register_client(&self.oauth.client_name, redirect_uri, &scope_refs)
            .await
            .map_err(|e| self.sdk_failure("client registration failed", e))?;
        Ok(StoredSignIn::registration(
            config.client_id,
            config.client_secret,
            Some(redirect_uri.to_owned()),
            issuer,
        ))
    }

    /// Asks the application's callback, and reads the redirect it answers.
    async fn ask(
        &self,
        callback: &super::SignInFn,
        session: &AuthorizationSession,
        redirect_uri: &str,
        reason: SignInReason,
    ) -> Result<Redirected> {
        let authorization_url = session.get_authorization_url().to_owned();
        let query = |name: &str| {
            Url::parse(&authorization_url).ok().and_then(|url| {
                url.query_pairs()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.into_owned())
            })
        };
        let state = query("state").unwrap_or_default();
        let scopes = query("scope")
            .map(|s| s.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        let request = SignInRequest {
            server: self.server.clone(),
            server_url: self.url.clone(),
            authorization_url,
            redirect_uri: redirect_uri.to_owned(),
            state: state.clone(),
            scopes,
            reason,
        };
        let timeout = self.oauth.sign_in_timeout;
        let answer = tokio::time::timeout(timeout, callback(request))
            .await
            .map_err(|_| {
                self.failure(format!(
                    "sign-in was not completed within {} s",
                    timeout.as_secs()
                ))
            })?;
        let redirect = match answer {
            SignInAnswer::Redirect(url) => url,
            SignInAnswer::Refuse(reason) => {
                return Err(self.failure(format!("sign-in was refused: {reason}")));
            }
        };
        self.read_redirect(&redirect, &state)
    }

    /// The code, state and issuer of the redirect; an `error` it carries
    /// (the person said no at the authorization server) fails.
    fn read_redirect(&self, redirect: &str, state: &str) -> Result<Redirected> {
        let url = Url::parse(redirect).map_err(|e| {
            self.failure(format!(
                "the sign-in answered a redirect that is not a URL: {e}"
            ))
        })?;
        let param = |name: &str| {
            url.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        if let Some(error) = param("error") {
            let description = param("error_description")
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            return Err(self.failure(format!(
                "the authorization server refused the sign-in with `{error}`{description}"
            )));
        }
        let (Some(code), Some(returned)) = (param("code"), param("state")) else {
            return Err(self.failure("the redirect carries no `code` and `state`"));
        };
        if returned != state {
            return Err(self.failure(
                "the redirect's `state` is not this sign-in's (a stale or forged redirect)",
            ));
        }
        Ok(Redirected {
            code,
            state: returned,
            issuer: param("iss"),
        })
    }
}

/// How a person is asked to sign in.
struct Person<'a> {
    redirect_uri: &'a str,
    callback: &'a super::SignInFn,
    reason: SignInReason,
}

/// What the redirect carried back.
struct Redirected {
    code: String,
    state: String,
    issuer: Option<String>,
}

/// The SDK's client-credentials exchange, on a thread of its own: its
/// future (rmcp 3.11, with `private_key_jwt`) keeps a form serializer that
/// is not `Send` across an await, so it cannot run inside the transport's
/// futures. The thread drives it on the caller's runtime.
async fn exchange_client_credentials(
    manager: AuthorizationManager,
    config: ClientCredentialsConfig,
) -> std::result::Result<AuthorizationManager, AuthError> {
    let runtime = tokio::runtime::Handle::current();
    let exchanged = tokio::task::spawn_blocking(move || {
        let result = runtime.block_on(manager.exchange_client_credentials(&config));
        result.map(|_| manager)
    })
    .await;
    match exchanged {
        Ok(done) => done,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(AuthError::InternalError(
            "the runtime shut down during the exchange".into(),
        )),
    }
}

fn client_credentials_config(
    credentials: &super::ClientCredentials,
    scopes: &[String],
    resource: &str,
) -> ClientCredentialsConfig {
    let client_id = credentials.client_id.clone();
    let scopes = scopes.to_vec();
    let resource = Some(resource.to_owned());
    match &credentials.secret {
        ClientProof::Secret(secret) => ClientCredentialsConfig::ClientSecret {
            client_id,
            client_secret: secret.clone(),
            scopes,
            resource,
        },
        ClientProof::PrivateKeyJwt { pem, algorithm } => ClientCredentialsConfig::PrivateKeyJwt {
            client_id,
            signing_key: pem.clone(),
            signing_algorithm: match algorithm {
                JwtAlgorithm::Rs256 => JwtSigningAlgorithm::RS256,
                JwtAlgorithm::Rs384 => JwtSigningAlgorithm::RS384,
                JwtAlgorithm::Rs512 => JwtSigningAlgorithm::RS512,
                JwtAlgorithm::Es256 => JwtSigningAlgorithm::ES256,
                JwtAlgorithm::Es384 => JwtSigningAlgorithm::ES384,
            },
            token_endpoint_audience: None,
            scopes,
            resource,
        },
    }
}

/// The error a request ends with when its server's sign-in failed during
/// the session, found in the chain of the SDK's error: it names the server
/// (the sign-in's message does) and the request.
pub(crate) fn sign_in_failure(
    what: &str,
    err: &(dyn std::error::Error + 'static),
) -> Option<Error> {
    sign_in_message(err).map(|message| {
        Error::new(
            ErrorKind::Unauthorized,
            format!("{message} ({what} was not run)"),
        )
    })
}

/// The message of the sign-in failure in `err`'s chain, if any.
pub(crate) fn sign_in_message(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    use rmcp::service::ClientInitializeError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(AuthError::AuthorizationFailed(message)) = e.downcast_ref::<AuthError>() {
            return Some(message.clone());
        }
        if let Some(StreamableHttpError::Auth(AuthError::AuthorizationFailed(message))) =
            e.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return Some(message.clone());
        }
        if let Some(ClientInitializeError::TransportError { error, .. }) =
            e.downcast_ref::<ClientInitializeError>()
            && let Some(message) = sign_in_message(error.error.as_ref())
        {
            return Some(message);
        }
        if let Some(ClientInitializeError::LegacyFallbackFailed { fallback, .. }) =
            e.downcast_ref::<ClientInitializeError>()
        {
            return sign_in_message(fallback.as_ref());
        }
        current = e.source();
    }
    None
}
