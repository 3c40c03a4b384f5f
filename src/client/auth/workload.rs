//! Workload identity: the client signs in with a JWT its platform issued it
//! (a Kubernetes projected service account token, a CI job's OIDC token, a
//! SPIFFE JWT-SVID), presented as an RFC 7523 JWT bearer grant
//! (`urn:ietf:params:oauth:grant-type:jwt-bearer`, the MCP workload identity
//! federation extension, SEP-1933). No browser, no person, no client secret.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use oauth2::http::{HeaderValue, Method};
use rmcp::transport::auth::{AuthorizationMetadata, OAuthHttpRedirectPolicy};
use serde_json::Value;

use super::binding::ProofHttp;
use super::store::Issued;
use crate::exec::BoxFuture;

/// The grant type of RFC 7523 section 2.1.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// The function that gives the workload's current JWT, or why there is none.
pub type WorkloadTokenFn =
    dyn Fn() -> BoxFuture<'static, std::result::Result<String, String>> + Send + Sync;

/// How a workload signs in: with the JWT its platform issued it, read from a
/// file ([`token_file`](Self::token_file)) or given by a callback
/// ([`token_fn`](Self::token_fn)), as a JWT bearer grant (RFC 7523). Give it
/// to [`OAuth::workload_identity`](super::OAuth::workload_identity).
///
/// The JWT is read anew for every grant, so a token the platform rotated is
/// the one presented. A grant the authorization server refuses
/// (`invalid_grant`, `invalid_scope`, `unauthorized_client`...) fails the
/// sign-in with its error, without another attempt and without another kind
/// of grant. When the access token expires, a new grant is made with the
/// current JWT (refresh tokens are not kept: the workload's JWT is the
/// credential). The tokens may be DPoP-bound as any others (see
/// [`Dpop`](super::Dpop)).
///
/// Its `Debug` output names the file, never a token.
#[derive(Clone)]
pub struct WorkloadIdentity {
    source: Source,
    pub(crate) client_id: Option<String>,
    pub(crate) scopes: Vec<String>,
}

#[derive(Clone)]
enum Source {
    File(PathBuf),
    Callback(Arc<WorkloadTokenFn>),
}

impl WorkloadIdentity {
    /// The JWT in the file at `path` (surrounding whitespace ignored), read
    /// at each grant.
    pub fn token_file(path: impl Into<PathBuf>) -> Self {
        WorkloadIdentity {
            source: Source::File(path.into()),
            client_id: None,
            scopes: Vec::new(),
        }
    }

    /// The JWT `token` answers, called at each grant.
    pub fn token_fn<F>(token: F) -> Self
    where
        F: Fn() -> BoxFuture<'static, std::result::Result<String, String>> + Send + Sync + 'static,
    {
        WorkloadIdentity {
            source: Source::Callback(Arc::new(token)),
            client_id: None,
            scopes: Vec::new(),
        }
    }

    /// A client id to send with the grant, for an authorization server that
    /// wants one (none by default: the JWT identifies the workload).
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
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

    /// The file the JWT is read from, if it is read from one.
    pub fn file(&self) -> Option<&Path> {
        match &self.source {
            Source::File(path) => Some(path),
            Source::Callback(_) => None,
        }
    }

    /// The workload's current JWT.
    async fn assertion(&self) -> std::result::Result<String, String> {
        let (token, from) = match &self.source {
            Source::File(path) => {
                let text = tokio::fs::read_to_string(path).await.map_err(|e| {
                    format!(
                        "cannot read the workload token file {}: {e}",
                        path.display()
                    )
                })?;
                (text, format!("the workload token file {}", path.display()))
            }
            Source::Callback(callback) => (
                callback()
                    .await
                    .map_err(|why| format!("no workload token: {why}"))?,
                "the workload token callback's answer".to_owned(),
            ),
        };
        let token = token.trim().to_owned();
        check_jwt(&token).map_err(|why| format!("{from} {why}"))?;
        Ok(token)
    }
}

impl std::fmt::Debug for WorkloadIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = f.debug_struct("WorkloadIdentity");
        match &self.source {
            Source::File(path) => s.field("token_file", path),
            Source::Callback(_) => s.field("token_fn", &"[callback]"),
        };
        s.field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// Whether `token` looks like a JWT that has not expired: three base64url
/// parts, and an `exp` in the future when its claims can be read.
fn check_jwt(token: &str) -> std::result::Result<(), String> {
    if token.is_empty() {
        return Err("is empty".into());
    }
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() != 3 || parts.iter().any(|p| p.is_empty()) {
        return Err("is not a JWT (three dot-separated parts)".into());
    }
    let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(parts[1].trim_end_matches('='))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    if let Some(exp) = claims.as_ref().and_then(|c| c["exp"].as_u64())
        && exp <= now
    {
        return Err(format!(
            "holds a JWT that expired {} s ago (the platform should have written a fresh one)",
            now - exp
        ));
    }
    Ok(())
}

/// The authorization server's error answer, as a sentence.
fn refusal(status: u16, body: &[u8]) -> String {
    let body: Value = serde_json::from_slice(body).unwrap_or_default();
    match body["error"].as_str() {
        Some(error) => format!(
            "the authorization server refused the workload's JWT bearer grant with `{error}`{}",
            body["error_description"]
                .as_str()
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        ),
        None => {
            format!("the authorization server answered the JWT bearer grant with HTTP {status}")
        }
    }
}

/// Makes the JWT bearer grant at `metadata`'s token endpoint, for `resource`
/// with `scopes`, through `http` (which adds a DPoP proof when the tokens
/// are to be bound).
///
/// # Errors
///
/// A sentence: the authorization server takes no JWT bearer grants, the JWT
/// cannot be had, or the grant was refused.
pub(crate) async fn grant(
    http: &ProofHttp,
    metadata: &AuthorizationMetadata,
    workload: &WorkloadIdentity,
    resource: &str,
    scopes: &[String],
) -> std::result::Result<Issued, String> {
    if let Some(grants) = metadata
        .additional_fields
        .get("grant_types_supported")
        .and_then(Value::as_array)
        && !grants.iter().any(|g| g == JWT_BEARER)
    {
        return Err(format!(
            "the authorization server takes no JWT bearer grants (it lists {})",
            grants
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let assertion = workload.assertion().await?;
    let body = {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", JWT_BEARER)
            .append_pair("assertion", &assertion)
            .append_pair("resource", resource);
        if !scopes.is_empty() {
            form.append_pair("scope", &scopes.join(" "));
        }
        if let Some(client_id) = &workload.client_id {
            form.append_pair("client_id", client_id);
        }
        form.finish().into_bytes()
    };
    let mut request = oauth2::http::Request::builder()
        .method(Method::POST)
        .uri(metadata.token_endpoint.as_str())
        .body(body)
        .map_err(|e| {
            format!(
                "the token endpoint `{}` is not a URL: {e}",
                metadata.token_endpoint
            )
        })?;
    let headers = request.headers_mut();
    headers.insert(
        "content-type",
        HeaderValue::from_static("application/x-www-form-urlencoded"),
    );
    headers.insert("accept", HeaderValue::from_static("application/json"));
    let response = http
        .send(request, OAuthHttpRedirectPolicy::Stop)
        .await
        .map_err(|e| format!("the JWT bearer grant failed: {e}"))?;
    if !response.status().is_success() {
        return Err(refusal(response.status().as_u16(), response.body()));
    }
    let body: Value = serde_json::from_slice(response.body())
        .map_err(|e| format!("the token response is not JSON: {e}"))?;
    let access_token = body["access_token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .ok_or("the token response has no `access_token`")?;
    let mut granted: Vec<String> = match body["scope"].as_str() {
        Some(scope) => scope.split_whitespace().map(str::to_owned).collect(),
        None => scopes.to_vec(),
    };
    granted.sort();
    Ok(Issued {
        access_token: access_token.to_owned(),
        token_type: body["token_type"].as_str().unwrap_or("Bearer").to_owned(),
        refresh_token: None,
        expires_in: body["expires_in"].as_u64().map(Duration::from_secs),
        scopes: granted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &str) -> String {
        let part = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        format!(
            "{}.{}.{}",
            part(r#"{"alg":"ES256"}"#),
            part(claims),
            part("sig")
        )
    }

    #[test]
    fn a_workload_token_is_checked_before_it_is_sent() {
        assert!(check_jwt(&jwt(r#"{"exp": 99999999999}"#)).is_ok());
        assert!(
            check_jwt(&jwt(r#"{"sub": "w"}"#)).is_ok(),
            "no exp: the AS decides"
        );
        assert!(
            check_jwt(&jwt(r#"{"exp": 1}"#))
                .unwrap_err()
                .contains("expired")
        );
        assert!(check_jwt("").unwrap_err().contains("empty"));
        assert!(check_jwt("not-a-jwt").unwrap_err().contains("not a JWT"));
    }

    #[tokio::test]
    async fn the_file_is_read_at_each_grant() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        let workload = WorkloadIdentity::token_file(&path).client_id("w");
        let err = workload.assertion().await.unwrap_err();
        assert!(err.contains("cannot read the workload token file"), "{err}");
        let first = jwt(r#"{"n": 1}"#);
        std::fs::write(&path, format!("{first}\n")).unwrap();
        assert_eq!(workload.assertion().await.unwrap(), first);
        let second = jwt(r#"{"n": 2}"#);
        std::fs::write(&path, &second).unwrap();
        assert_eq!(workload.assertion().await.unwrap(), second);
        let shown = format!("{workload:?}");
        assert!(
            shown.contains("token") && !shown.contains(&second),
            "{shown}"
        );
    }

    #[test]
    fn a_refusal_names_the_error() {
        let text = refusal(
            400,
            br#"{"error":"invalid_grant","error_description":"JWT assertion is expired"}"#,
        );
        assert!(
            text.contains("`invalid_grant`: JWT assertion is expired"),
            "{text}"
        );
        assert!(refusal(500, b"oops").contains("HTTP 500"));
    }
}
