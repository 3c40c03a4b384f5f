//! The streamable HTTP client of a server that requires sign-in: every
//! request carries the server's token, and a request the server refuses
//! (401, or 403 `insufficient_scope`) is sent again once the sign-in,
//! refresh or step-up it calls for is done. A DPoP-bound token goes with a
//! fresh proof, through [`wire`](super::wire), and a `use_dpop_nonce`
//! refusal is answered with one retry carrying the server's nonce.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthError, WWWAuthenticateParams};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream_02::Sse;

use super::flow::{Authorizer, Recovery};
use super::wire::{self, Answer, Presented};
use crate::client::http::{TappedClient, request_id};
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

/// Whether a 401's challenge asks for a DPoP nonce.
fn asks_nonce(challenge: &str, uri: &str) -> bool {
    url::Url::parse(uri).is_ok_and(|base| {
        WWWAuthenticateParams::parse(challenge, &base)
            .error
            .as_deref()
            == Some("use_dpop_nonce")
    })
}

/// The token of a request that is not DPoP-bound.
fn bearer(presented: Presented) -> Option<String> {
    match presented {
        Presented::Bearer(token) => Some(token),
        Presented::Nothing | Presented::Dpop { .. } => None,
    }
}

impl<T> Answer<T> {
    /// The SDK's client's result, which shows no nonce.
    fn of(result: HttpResult<T>) -> Self {
        Answer {
            result,
            nonce: None,
        }
    }
}

impl SignedInClient {
    pub(crate) fn new(inner: TappedClient, auth: Option<Arc<Authorizer>>) -> Self {
        SignedInClient { inner, auth }
    }

    /// Runs `call` (a `method` request to `uri`) with the server's token,
    /// recovering from the refusals sign-in can answer: a `use_dpop_nonce`
    /// once (with the nonce), a 401 once (refresh, else sign-in), a 403
    /// `insufficient_scope` up to the step-up limit. Without sign-in, `call`
    /// is given `configured` (a bearer token from the headers) as it is.
    async fn send<T, F, Fut>(
        &self,
        method: &str,
        uri: &str,
        configured: Option<String>,
        call: F,
    ) -> HttpResult<T>
    where
        F: Fn(Presented) -> Fut,
        Fut: Future<Output = Answer<T>>,
    {
        let Some(auth) = &self.auth else {
            return call(configured.map_or(Presented::Nothing, Presented::Bearer))
                .await
                .result;
        };
        let (mut unauthorized, mut step_ups, mut nonce_retried) = (0, 0, false);
        loop {
            let presented = auth.present(method, uri).await.map_err(failed)?;
            let proving = matches!(presented, Presented::Dpop { .. });
            let sent = presented.token().map(str::to_owned);
            let answer = call(presented).await;
            let new_nonce = answer.nonce.as_deref().is_some_and(|n| auth.note_nonce(n));
            let refusal = match answer.result {
                Err(StreamableHttpError::AuthRequired(refusal)) => {
                    let challenge = &refusal.www_authenticate_header;
                    if proving && new_nonce && !nonce_retried && asks_nonce(challenge, uri) {
                        nonce_retried = true;
                        continue;
                    }
                    unauthorized += 1;
                    if unauthorized > 2 {
                        return Err(failed(auth.rejected_again()));
                    }
                    let recovery = auth
                        .unauthorized(challenge, sent.as_deref())
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

    /// A POST, through the SDK's client or, with a DPoP-bound token, [`wire`].
    async fn post(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.send("POST", &uri, auth_header, |presented| {
            let (uri, message) = (uri.clone(), message.clone());
            let (session_id, custom_headers) = (session_id.clone(), custom_headers.clone());
            async move {
                let Presented::Dpop { headers, .. } = presented else {
                    return Answer::of(
                        self.inner
                            .post_message_with_response_limits(
                                uri,
                                message,
                                session_id,
                                bearer(presented),
                                custom_headers,
                                limits,
                            )
                            .await,
                    );
                };
                let session = session_id.as_deref();
                let answer = wire::post(
                    self.inner.http(),
                    &uri,
                    &message,
                    session,
                    &headers,
                    &custom_headers,
                    limits,
                )
                .await;
                Answer {
                    result: answer.result.map(|response| {
                        self.inner.tapped_response(
                            request_id(&message),
                            session.is_some(),
                            response,
                        )
                    }),
                    nonce: answer.nonce,
                }
            }
        })
        .await
    }

    /// A GET of the server's event stream, as [`post`](Self::post) sends.
    async fn get(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<BoxStream<'static, Result<Sse, SseError>>> {
        self.send("GET", &uri, auth_header, |presented| {
            let (uri, session_id) = (uri.clone(), session_id.clone());
            let (last_event_id, custom_headers) = (last_event_id.clone(), custom_headers.clone());
            async move {
                let Presented::Dpop { headers, .. } = presented else {
                    return Answer::of(
                        self.inner
                            .get_stream_with_max_sse_event_size(
                                uri,
                                session_id,
                                last_event_id,
                                bearer(presented),
                                custom_headers,
                                max_sse_event_size,
                            )
                            .await,
                    );
                };
                let answer = wire::get_stream(
                    self.inner.http(),
                    &uri,
                    session_id.as_deref(),
                    last_event_id.as_deref(),
                    &headers,
                    &custom_headers,
                    max_sse_event_size,
                )
                .await;
                Answer {
                    result: answer.result.map(|stream| self.inner.tapped(stream)),
                    nonce: answer.nonce,
                }
            }
        })
        .await
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
        let limits = StreamableHttpResponseLimits::default();
        self.post(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
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
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
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
        self.post(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        let Some(auth) = &self.auth else {
            return self
                .inner
                .delete_session(uri, session_id, auth_header, custom_headers)
                .await;
        };
        // Ending a session is no reason to ask a person: the token held is
        // used as it is, with one retry for a DPoP nonce.
        let mut retried = false;
        loop {
            let presented = auth
                .present("DELETE", &uri)
                .await
                .unwrap_or(Presented::Nothing);
            let Presented::Dpop { headers, .. } = presented else {
                return self
                    .inner
                    .delete_session(uri, session_id, bearer(presented), custom_headers)
                    .await;
            };
            let answer = wire::delete_session(
                self.inner.http(),
                &uri,
                &session_id,
                &headers,
                &custom_headers,
            )
            .await;
            let new_nonce = answer.nonce.as_deref().is_some_and(|n| auth.note_nonce(n));
            match answer.result {
                Err(StreamableHttpError::AuthRequired(refusal))
                    if new_nonce
                        && !retried
                        && asks_nonce(&refusal.www_authenticate_header, &uri) =>
                {
                    retried = true;
                }
                other => return other,
            }
        }
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<BoxStream<'static, Result<Sse, SseError>>> {
        let max = StreamableHttpResponseLimits::default().max_sse_event_size;
        self.get(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max,
        )
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
        self.get(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        )
        .await
    }
}
