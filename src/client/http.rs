//! The streamable HTTP client: the SDK's reqwest client, with the tap of
//! [`stdio`](super::stdio) on every SSE event it receives, so that what the
//! SDK's types drop (a tool's `execution`, the server's `tasks` capability)
//! is known for servers that answer with event streams. A response sent as
//! plain JSON reaches the SDK already read; its fields are not seen.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream_02::Sse;

use super::stdio::Tap;

/// The most same-origin redirects followed for one request.
const MAX_REDIRECTS: usize = 10;

/// A reqwest client whose event streams pass through a [`Tap`].
#[derive(Clone)]
pub(crate) struct TappedClient {
    inner: reqwest::Client,
    tap: Tap,
}

impl TappedClient {
    /// The client the SDK would build (no idle pooling; only same-origin 307
    /// and 308 redirects, which keep the method and body), tapped.
    pub(crate) fn new(tap: Tap) -> Result<Self, reqwest::Error> {
        let inner = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(same_origin_redirects())
            .build()?;
        Ok(TappedClient { inner, tap })
    }

    /// The reqwest client its requests go through.
    #[cfg(feature = "oauth")]
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.inner
    }

    /// `stream`, with the tap on each event.
    pub(crate) fn tapped(
        &self,
        stream: BoxStream<'static, Result<Sse, SseError>>,
    ) -> BoxStream<'static, Result<Sse, SseError>> {
        let tap = self.tap.clone();
        stream
            .inspect(move |event| {
                if let Ok(Sse {
                    data: Some(data), ..
                }) = event
                {
                    tap.note_message(data.as_bytes());
                }
            })
            .boxed()
    }

    /// The response to a POST of `request` (its id, for a request) in
    /// `session`: event streams tapped, and an error the server sent without
    /// an id (a server that refuses the session answers so, with HTTP 400,
    /// where the specification says 404) given the request's id, so that the
    /// request is answered rather than left waiting, and the session marked
    /// refused (it is started again, and the call sent again: the server
    /// refused it before running it).
    pub(crate) fn tapped_response(
        &self,
        request: Option<RequestId>,
        session: bool,
        response: StreamableHttpPostResponse,
    ) -> StreamableHttpPostResponse {
        match response {
            StreamableHttpPostResponse::Sse(stream, id) => {
                StreamableHttpPostResponse::Sse(self.tapped(stream), id)
            }
            StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(mut error), id)
                if error.id.is_none() && request.is_some() =>
            {
                if session {
                    tracing::debug!(message = %error.error.message,
                        "the server refused the session without naming the request");
                    self.tap.refuse_session();
                }
                error.id = request;
                StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(error), id)
            }
            other => other,
        }
    }
}

/// Follows a redirect only when it keeps the request (307, 308) and the origin.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// The id of a request, if the message is one.
pub(crate) fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
        _ => None,
    }
}

type HttpResult<T> = Result<T, StreamableHttpError<reqwest::Error>>;

impl StreamableHttpClient for TappedClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let (request, session) = (request_id(&message), session_id.is_some());
        let response = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await?;
        Ok(self.tapped_response(request, session, response))
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
        let (request, session) = (request_id(&message), session_id.is_some());
        let response = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.tapped_response(request, session, response))
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
        let (request, session) = (request_id(&message), session_id.is_some());
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await?;
        Ok(self.tapped_response(request, session, response))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
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
        let stream = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await?;
        Ok(self.tapped(stream))
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
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.tapped(stream))
    }
}

/// The HTTP client the transport is built over: with the `oauth` feature,
/// one that signs in when the server requires it.
#[cfg(feature = "oauth")]
type Client = super::auth::SignedInClient;
#[cfg(not(feature = "oauth"))]
type Client = TappedClient;

/// The transport of one streamable HTTP server.
pub(crate) type Transport = rmcp::transport::StreamableHttpClientTransport<Client>;

/// The transport's configuration: the URL, and `headers` sent with every
/// request (an `Authorization: Bearer` header becomes the SDK's bearer token).
fn transport_config(
    name: &str,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> crate::Result<rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig> {
    use crate::error::Error;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    for (key, value) in headers {
        let bad = || {
            Error::input(format!(
                "server `{name}`: header `{key}` is not a valid HTTP header"
            ))
        };
        if key.eq_ignore_ascii_case("authorization")
            && let Some((scheme, token)) = value.split_once(' ')
            && scheme.eq_ignore_ascii_case("bearer")
        {
            config = config.auth_header(token.trim_start().to_owned());
            continue;
        }
        let header = HeaderName::try_from(key.as_str()).map_err(|e| bad().with_source(e))?;
        let value = HeaderValue::try_from(value.as_str()).map_err(|e| bad().with_source(e))?;
        config.custom_headers.insert(header, value);
    }
    Ok(config)
}

/// Connects to the streamable HTTP server `name` at `url`: builds its
/// transport and gives it to `start` (the session's handshake) with the tap
/// (from `new_tap`) its client feeds.
///
/// With [`ClientOptions::oauth`](crate::ClientOptions::oauth) and no
/// `Authorization` header, the server is signed in to when it requires it: a
/// handshake the server refuses (401, or 403 `insufficient_scope`) is
/// answered by a sign-in (or step-up), outside the handshake's timeout, and
/// the handshake is started again; from then on the transport signs in,
/// refreshes and steps up by itself.
///
/// # Errors
///
/// [`ErrorKind::Input`](crate::ErrorKind::Input) for an invalid header,
/// [`ErrorKind::Unauthorized`](crate::ErrorKind::Unauthorized) when the
/// sign-in fails, otherwise what `start` fails with.
pub(crate) async fn connect<F, Fut, C>(
    name: &str,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    options: &crate::ClientOptions,
    new_tap: impl Fn() -> Tap,
    start: F,
) -> crate::Result<C>
where
    F: Fn(Transport, Tap) -> Fut,
    Fut: Future<Output = crate::Result<C>>,
{
    use crate::error::{Error, ErrorKind};
    let config = transport_config(name, url, headers)?;
    #[cfg(feature = "oauth")]
    let authorizer = options
        .oauth
        .as_ref()
        // A configured `Authorization` header (a bearer token or another
        // scheme) is sent as it is: no sign-in beside it.
        .filter(|_| {
            config.auth_header.is_none()
                && !headers
                    .keys()
                    .any(|k| k.eq_ignore_ascii_case("authorization"))
        })
        .map(|oauth| Arc::new(super::auth::Authorizer::new(name, url, oauth)));
    #[cfg(not(feature = "oauth"))]
    let _ = options;
    let mut sign_ins = 0;
    loop {
        let tap = new_tap();
        let tapped = TappedClient::new(tap.clone()).map_err(|e| {
            Error::new(
                ErrorKind::Unavailable,
                format!("server `{name}`: cannot build the HTTP client"),
            )
            .with_source(e)
        })?;
        #[cfg(feature = "oauth")]
        let client = super::auth::SignedInClient::new(tapped, authorizer.clone());
        #[cfg(not(feature = "oauth"))]
        let client = tapped;
        let transport = Transport::with_client(client, config.clone());
        let err = match start(transport, tap).await {
            Ok(started) => {
                #[cfg(feature = "oauth")]
                if let Some(authorizer) = &authorizer {
                    authorizer.set_interactive(true);
                }
                return Ok(started);
            }
            Err(err) => err,
        };
        #[cfg(feature = "oauth")]
        if let Some(authorizer) = &authorizer
            && let Some(refusal) =
                std::error::Error::source(&err).and_then(super::auth::Refusal::of)
        {
            sign_ins += 1;
            if sign_ins > authorizer.max_step_ups().saturating_add(1) {
                return Err(authorizer.rejected_again().with_source(err));
            }
            authorizer.recover_handshake(&refusal).await?;
            continue;
        }
        #[cfg(feature = "oauth")]
        if let Some(message) =
            std::error::Error::source(&err).and_then(super::auth::sign_in_message)
        {
            return Err(Error::new(
                ErrorKind::Unauthorized,
                format!("{message} (the session was not started)"),
            ));
        }
        let _ = &mut sign_ins;
        return Err(err);
    }
}
