//! The streamable HTTP client of a server that requires sign-in: every
//! request carries the server's token, and a request the server refuses
//! (401, or 403 `insufficient_scope`) is sent again once the sign-in,
//! refresh or step-up it calls for is done.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream_02::Sse;

use super::flow::{Authorizer, Recovery};
use crate::client::http::TappedClient;
use crate::error::Error;

type HttpResult<T> = Result<T, StreamableHttpError<reqwest::Error>>;

/// A [`TappedClient`] whose requests carry a server's OAuth token (or,
/// without sign-in, the configured bearer token as it is).
#[derive(Clone)]
pub(crate) struct SignedInClient {
    inner: TappedClient,
    auth: Option<Arc<Authorizer>>,
}

/// A sign-in failure, as the SDK's transport carries it.
fn failed(err: Error) -> StreamableHttpError<reqwest::Error> {
    StreamableHttpError::Auth(AuthError::AuthorizationFailed(err.message_with_causes()))
}

impl SignedInClient {
    pub(crate) fn new(inner: TappedClient, auth: Option<Arc<Authorizer>>) -> Self {
        SignedInClient { inner, auth }
    }

    /// Runs `call` with the server's token, recovering from the refusals
    /// sign-in can answer: a 401 once (refresh, else sign-in), a 403
    /// `insufficient_scope` up to the step-up limit. Without sign-in, `call`
    /// is given `configured` (a bearer token from the headers) as it is.
    async fn send<T, F, Fut>(&self, configured: Option<String>, call: F) -> HttpResult<T>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = HttpResult<T>>,
    {
        let Some(auth) = &self.auth else {
            return call(configured).await;
        };
        let mut unauthorized = 0;
        let mut step_ups = 0;
        loop {
            let token = auth.token().await.map_err(failed)?;
            let refusal = match call(token.clone()).await {
                Err(StreamableHttpError::AuthRequired(refusal)) => {
                    unauthorized += 1;
                    if unauthorized > 2 {
                        return Err(failed(auth.rejected_again()));
                    }
                    let recovery = auth
                        .unauthorized(&refusal.www_authenticate_header, token.as_deref())
                        .await
                        .map_err(failed)?;
                    (recovery, StreamableHttpError::AuthRequired(refusal))
                }
                Err(StreamableHttpError::InsufficientScope(refusal)) => {
                    if step_ups >= auth.max_step_ups() {
                        return Err(failed(
                            auth.too_many_step_ups(&refusal.www_authenticate_header),
                        ));
                    }
                    step_ups += 1;
                    let recovery = auth
                        .insufficient_scope(&refusal.www_authenticate_header)
                        .await
                        .map_err(failed)?;
                    (recovery, StreamableHttpError::InsufficientScope(refusal))
                }
                other => return other,
            };
            match refusal {
                (Recovery::Retry, _) => continue,
                (Recovery::NeedsPerson, refusal) => return Err(refusal),
            }
        }
    }
}

impl StreamableHttpClient for SignedInClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.send(auth_header, |token| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.send(auth_header, |token| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.send(auth_header, |token| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        // Ending a session is no reason to ask a person: the token held is used as it is.
        let token = match &self.auth {
            Some(auth) => auth.token().await.ok().flatten(),
            None => auth_header,
        };
        self.inner
            .delete_session(uri, session_id, token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<BoxStream<'static, Result<Sse, SseError>>> {
        self.send(auth_header, |token| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<BoxStream<'static, Result<Sse, SseError>>> {
        self.send(auth_header, |token| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
