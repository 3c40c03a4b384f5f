//! The requests to a server whose token is DPoP-bound. The SDK's HTTP client
//! presents a token with the `Bearer` scheme only and shows none of a
//! response's headers, and DPoP needs both the `DPoP` scheme with a fresh
//! proof on every request and the `DPoP-Nonce` a server supplies (RFC 9449
//! section 9). So these requests are sent here, over the same reqwest client,
//! and their responses are read as the SDK reads them: the same statuses,
//! content types, size limits and errors.

use std::borrow::Cow;
use std::collections::HashMap;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::{Stream, StreamExt, TryStreamExt};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, SseError, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream_02::{Sse, SseStream};

type HttpResult<T> = Result<T, StreamableHttpError<reqwest::Error>>;

const SSE: &str = "text/event-stream";
const JSON: &str = "application/json";
const SESSION_ID: &str = "mcp-session-id";
const LAST_EVENT_ID: &str = "last-event-id";
/// Headers the transport sets itself, which a configured header may not replace.
const RESERVED: [&str; 3] = ["accept", SESSION_ID, LAST_EVENT_ID];

/// How one request presents the server's token.
pub(crate) enum Presented {
    /// No token yet (the server's 401 starts a sign-in).
    Nothing,
    /// A Bearer token.
    Bearer(String),
    /// A DPoP-bound token, with its proof.
    Dpop { token: String, headers: DpopHeaders },
}

impl Presented {
    /// The token presented, if any.
    pub(crate) fn token(&self) -> Option<&str> {
        match self {
            Presented::Nothing => None,
            Presented::Bearer(token) | Presented::Dpop { token, .. } => Some(token),
        }
    }
}

/// The `Authorization` and `DPoP` headers of one request.
pub(crate) struct DpopHeaders {
    pub(crate) authorization: HeaderValue,
    pub(crate) proof: HeaderValue,
}

/// What a request came back with: its result, and the nonce the server
/// supplied with it, if any.
pub(crate) struct Answer<T> {
    pub(crate) result: HttpResult<T>,
    pub(crate) nonce: Option<String>,
}

impl<T> Answer<T> {
    fn failed(error: StreamableHttpError<reqwest::Error>) -> Self {
        Answer {
            result: Err(error),
            nonce: None,
        }
    }
}

/// A request with the DPoP headers, the session's and the configured ones.
fn request(
    mut builder: reqwest::RequestBuilder,
    dpop: &DpopHeaders,
    session_id: Option<&str>,
    custom_headers: &HashMap<HeaderName, HeaderValue>,
) -> HttpResult<reqwest::RequestBuilder> {
    builder = builder
        .header(http::header::AUTHORIZATION, dpop.authorization.clone())
        .header("dpop", dpop.proof.clone());
    for (name, value) in custom_headers {
        if RESERVED
            .iter()
            .any(|r| name.as_str().eq_ignore_ascii_case(r))
        {
            return Err(StreamableHttpError::ReservedHeaderConflict(
                name.to_string(),
            ));
        }
        builder = builder.header(name, value);
    }
    if let Some(session_id) = session_id {
        builder = builder.header(SESSION_ID, session_id);
    }
    Ok(builder)
}

/// Sends `builder`, keeping the response's `DPoP-Nonce`.
async fn send(
    builder: reqwest::RequestBuilder,
) -> Result<(reqwest::Response, Option<String>), StreamableHttpError<reqwest::Error>> {
    let response = builder.send().await.map_err(StreamableHttpError::Client)?;
    let nonce = response
        .headers()
        .get("dpop-nonce")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    Ok((response, nonce))
}

/// The refusal of a 401 or 403 that carries a challenge.
fn challenge(response: &reqwest::Response) -> Option<StreamableHttpError<reqwest::Error>> {
    let status = response.status();
    if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
        return None;
    }
    let header = response.headers().get(http::header::WWW_AUTHENTICATE)?;
    let Ok(header) = header.to_str() else {
        return Some(StreamableHttpError::UnexpectedServerResponse(Cow::from(
            "invalid www-authenticate header value",
        )));
    };
    Some(if status == StatusCode::UNAUTHORIZED {
        StreamableHttpError::AuthRequired(AuthRequiredError::new(header.to_owned()))
    } else {
        let scope =
            rmcp::transport::auth::WWWAuthenticateParams::parse(header, response.url()).scope;
        StreamableHttpError::InsufficientScope(InsufficientScopeError::new(
            header.to_owned(),
            scope,
        ))
    })
}

/// Whether a `Content-Type` value is `expected`, parameters aside.
fn media_type_is(value: &HeaderValue, expected: &str) -> bool {
    value
        .to_str()
        .ok()
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(expected))
}

/// A 429 or 5xx, with its `Retry-After`.
fn status_error(status: StatusCode, headers: &HeaderMap) -> Option<HttpStatusError> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = headers
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    Some(HttpStatusError::new(status.as_u16(), retry_after))
}

/// The whole body, refused beyond `max` bytes.
async fn read_bounded(response: reqwest::Response, max: usize) -> HttpResult<Vec<u8>> {
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
    }
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks
        .try_next()
        .await
        .map_err(StreamableHttpError::Client)?
    {
        if chunk.len() > max - body.len() {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// At most `max` bytes of the body, as text, for an error message.
async fn read_prefix(response: reqwest::Response, max: usize) -> String {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while body.len() < max {
        match chunks.next().await {
            Some(Ok(chunk)) => {
                let take = chunk.len().min(max - body.len());
                body.extend_from_slice(&chunk[..take]);
            }
            Some(Err(_)) => return "<failed to read response body>".into(),
            None => break,
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// An event stream whose events may not grow beyond `max` bytes (a server
/// that never ends an event cannot fill the memory).
fn bounded_sse<S>(bytes: S, max: usize) -> BoxStream<'static, Result<Sse, SseError>>
where
    S: Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static,
{
    // Bytes of the event so far and of its current line; whether the last
    // byte ended a line with `\r` (a `\n` after it ends nothing more).
    let mut sizes = (0usize, 0usize, false);
    let bounded = bytes.map(move |chunk| {
        let chunk = chunk.map_err(std::io::Error::other)?;
        let (event, line, after_cr) = &mut sizes;
        for &byte in chunk.iter() {
            let was_cr = std::mem::replace(after_cr, byte == b'\r');
            match byte {
                b'\n' if was_cr => {}
                b'\r' | b'\n' => {
                    if *line == 0 {
                        *event = 0;
                    }
                    *line = 0;
                }
                _ => {
                    *line += 1;
                    *event += 1;
                    if *event > max {
                        return Err(std::io::Error::other(format!(
                            "SSE event exceeded the maximum size of {max} bytes"
                        )));
                    }
                }
            }
        }
        Ok(chunk)
    });
    SseStream::from_bytes_stream(bounded).boxed()
}

/// A sessionless `server/discover` refused with a 4xx: answered with the
/// server's JSON-RPC error (or an `invalid_request`), so that the lifecycle
/// can fall back to `initialize`, as the SDK's client does.
fn discover_refused(
    message: &ClientJsonRpcMessage,
    session: bool,
    status: StatusCode,
    body: &str,
) -> Option<StreamableHttpPostResponse> {
    if session
        || !status.is_client_error()
        || matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
    {
        return None;
    }
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    if !matches!(request.request, ClientRequest::DiscoverRequest(_)) {
        return None;
    }
    let error = match serde_json::from_str::<ServerJsonRpcMessage>(body) {
        Ok(ServerJsonRpcMessage::Error(error)) => error.error,
        _ => ErrorData::invalid_request(
            format!("server/discover rejected with HTTP {status}: {body}"),
            None,
        ),
    };
    Some(StreamableHttpPostResponse::Json(
        ServerJsonRpcMessage::error(error, Some(request.id.clone())),
        None,
    ))
}

/// Posts `message` with the DPoP headers.
pub(crate) async fn post(
    http: &reqwest::Client,
    uri: &str,
    message: &ClientJsonRpcMessage,
    session_id: Option<&str>,
    dpop: &DpopHeaders,
    custom_headers: &HashMap<HeaderName, HeaderValue>,
    limits: StreamableHttpResponseLimits,
) -> Answer<StreamableHttpPostResponse> {
    let builder = http
        .post(uri)
        .header(http::header::ACCEPT, format!("{SSE}, {JSON}"));
    let builder = match request(builder, dpop, session_id, custom_headers) {
        Ok(builder) => builder.json(message),
        Err(e) => return Answer::failed(e),
    };
    match send(builder).await {
        Ok((response, nonce)) => Answer {
            result: post_response(response, message, session_id.is_some(), limits).await,
            nonce,
        },
        Err(e) => Answer::failed(e),
    }
}

/// A POST's response, read as the SDK's client reads it.
async fn post_response(
    response: reqwest::Response,
    message: &ClientJsonRpcMessage,
    session: bool,
    limits: StreamableHttpResponseLimits,
) -> HttpResult<StreamableHttpPostResponse> {
    if let Some(refusal) = challenge(&response) {
        return Err(refusal);
    }
    let status = response.status();
    if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
        return Ok(StreamableHttpPostResponse::Accepted);
    }
    if status == StatusCode::NOT_FOUND && session {
        return Err(StreamableHttpError::SessionExpired);
    }
    let content_type = response.headers().get(http::header::CONTENT_TYPE).cloned();
    let is_json = content_type
        .as_ref()
        .is_some_and(|ct| media_type_is(ct, JSON));
    // A 429, or a 5xx without a JSON-RPC error to keep, ends here.
    let failure = match status_error(status, response.headers()) {
        Some(failure) if !is_json || status == StatusCode::TOO_MANY_REQUESTS => {
            return Err(failure.into());
        }
        other => other,
    };
    let session_id = response
        .headers()
        .get(SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let awaits_nothing = !matches!(message, ClientJsonRpcMessage::Request(_));
    if status.is_success() && response.content_length() == Some(0) && awaits_nothing {
        return Ok(StreamableHttpPostResponse::Accepted);
    }
    if !status.is_success() {
        let posted = Posted {
            message,
            session,
            limits,
        };
        return post_failure(response, &posted, failure, is_json, session_id).await;
    }
    match content_type {
        Some(ct) if media_type_is(&ct, SSE) => Ok(StreamableHttpPostResponse::Sse(
            bounded_sse(response.bytes_stream(), limits.max_sse_event_size),
            session_id,
        )),
        Some(ct) if media_type_is(&ct, JSON) => {
            let body = read_bounded(response, limits.max_json_response_size).await?;
            match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, session_id)),
                Err(_) if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
                Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                    format!(
                        "could not parse JSON response as ServerJsonRpcMessage: {e}: {}",
                        String::from_utf8_lossy(&body[..body.len().min(256)])
                    ),
                ))),
            }
        }
        _ if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
        other => Err(StreamableHttpError::UnexpectedContentType(
            other.map(|ct| String::from_utf8_lossy(ct.as_bytes()).into_owned()),
        )),
    }
}

/// What a POST sent, for reading its response.
struct Posted<'a> {
    message: &'a ClientJsonRpcMessage,
    session: bool,
    limits: StreamableHttpResponseLimits,
}

/// A POST's failure: the JSON-RPC error a JSON body carries, a refused
/// `server/discover` answered, else the status (and a prefix of the body).
async fn post_failure(
    response: reqwest::Response,
    posted: &Posted<'_>,
    failure: Option<HttpStatusError>,
    is_json: bool,
    session_id: Option<String>,
) -> HttpResult<StreamableHttpPostResponse> {
    let (status, limits) = (response.status(), posted.limits);
    let auth_failure = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
    let body = if is_json && !auth_failure {
        match read_bounded(response, limits.max_json_response_size).await {
            Ok(raw) => {
                let text = String::from_utf8_lossy(&raw).into_owned();
                if let Ok(error @ ServerJsonRpcMessage::Error(_)) = serde_json::from_str(&text) {
                    return Ok(
                        discover_refused(posted.message, posted.session, status, &text)
                            .unwrap_or(StreamableHttpPostResponse::Json(error, session_id)),
                    );
                }
                text.chars().take(limits.max_error_response_size).collect()
            }
            Err(e @ StreamableHttpError::ResponseBodyTooLarge { .. }) => {
                return Err(failure.map(Into::into).unwrap_or(e));
            }
            Err(StreamableHttpError::Client(_)) => "<failed to read response body>".into(),
            Err(e) => return Err(e),
        }
    } else {
        read_prefix(response, limits.max_error_response_size).await
    };
    if let Some(answer) = discover_refused(posted.message, posted.session, status, &body) {
        return Ok(answer);
    }
    Err(match failure {
        Some(failure) => failure.into(),
        None => StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
            "HTTP {status}: {body}"
        ))),
    })
}

/// Opens the server's event stream (GET) with the DPoP headers.
pub(crate) async fn get_stream(
    http: &reqwest::Client,
    uri: &str,
    session_id: Option<&str>,
    last_event_id: Option<&str>,
    dpop: &DpopHeaders,
    custom_headers: &HashMap<HeaderName, HeaderValue>,
    max_sse_event_size: usize,
) -> Answer<BoxStream<'static, Result<Sse, SseError>>> {
    let mut builder = http
        .get(uri)
        .header(http::header::ACCEPT, format!("{SSE}, {JSON}"));
    if let Some(id) = last_event_id {
        builder = builder.header(LAST_EVENT_ID, id);
    }
    let builder = match request(builder, dpop, session_id, custom_headers) {
        Ok(builder) => builder,
        Err(e) => return Answer::failed(e),
    };
    let (response, nonce) = match send(builder).await {
        Ok(sent) => sent,
        Err(e) => return Answer::failed(e),
    };
    let result = (|| {
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if let Some(refusal) = challenge(&response) {
            return Err(refusal);
        }
        if let Some(failure) = status_error(response.status(), response.headers()) {
            return Err(failure.into());
        }
        let response = response
            .error_for_status()
            .map_err(StreamableHttpError::Client)?;
        match response.headers().get(http::header::CONTENT_TYPE) {
            Some(ct) if media_type_is(ct, SSE) || media_type_is(ct, JSON) => {}
            other => {
                return Err(StreamableHttpError::UnexpectedContentType(
                    other.map(|ct| String::from_utf8_lossy(ct.as_bytes()).into_owned()),
                ));
            }
        }
        Ok(bounded_sse(response.bytes_stream(), max_sse_event_size))
    })();
    Answer { result, nonce }
}

/// Ends the session (DELETE) with the DPoP headers.
pub(crate) async fn delete_session(
    http: &reqwest::Client,
    uri: &str,
    session_id: &str,
    dpop: &DpopHeaders,
    custom_headers: &HashMap<HeaderName, HeaderValue>,
) -> Answer<()> {
    let builder = match request(http.delete(uri), dpop, Some(session_id), custom_headers) {
        Ok(builder) => builder,
        Err(e) => return Answer::failed(e),
    };
    let (response, nonce) = match send(builder).await {
        Ok(sent) => sent,
        Err(e) => return Answer::failed(e),
    };
    let result = if response.status() == StatusCode::METHOD_NOT_ALLOWED {
        Ok(())
    } else if let Some(refusal) = challenge(&response) {
        Err(refusal)
    } else {
        response
            .error_for_status()
            .map(drop)
            .map_err(StreamableHttpError::Client)
    };
    Answer { result, nonce }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn events(chunks: &[&'static str], max: usize) -> Vec<Result<String, String>> {
        let stream = futures_util::stream::iter(
            chunks
                .iter()
                .map(|c| Ok::<_, reqwest::Error>(Bytes::from_static(c.as_bytes())))
                .collect::<Vec<_>>(),
        );
        bounded_sse(stream, max)
            .map(|e| {
                e.map(|e| e.data.unwrap_or_default())
                    .map_err(|e| e.to_string())
            })
            .collect()
            .await
    }

    #[tokio::test]
    async fn events_are_read_within_their_bound() {
        let ok = events(&["data: hel", "lo\r\n\r\ndata: again\n\n"], 20).await;
        assert_eq!(ok, [Ok("hello".to_owned()), Ok("again".to_owned())]);
        let big = events(&["data: 0123456789", "0123456789\n\n"], 20).await;
        assert!(
            big.last()
                .unwrap()
                .as_ref()
                .is_err_and(|e| e.contains("maximum size of 20")),
            "{big:?}"
        );
    }

    #[test]
    fn a_refused_discover_is_answered_for_the_lifecycle_to_fall_back() {
        let message = |method: &str| -> ClientJsonRpcMessage {
            serde_json::from_value(serde_json::json!(
                {"jsonrpc": "2.0", "id": 7, "method": method, "params": {}}))
            .unwrap()
        };
        let discover = message("server/discover");
        let Some(StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(error), _)) =
            discover_refused(&discover, false, StatusCode::BAD_REQUEST, "no such method")
        else {
            panic!("a refused discover is answered");
        };
        assert_eq!(error.id, Some(rmcp::model::RequestId::Number(7)));
        assert!(
            error.error.message.contains("HTTP 400"),
            "{}",
            error.error.message
        );
        // Within a session, refused by sign-in, or another method: the status stands.
        assert!(discover_refused(&discover, true, StatusCode::BAD_REQUEST, "").is_none());
        assert!(discover_refused(&discover, false, StatusCode::UNAUTHORIZED, "").is_none());
        let list = message("tools/list");
        assert!(discover_refused(&list, false, StatusCode::BAD_REQUEST, "").is_none());
    }

    #[test]
    fn a_media_type_is_matched_without_its_parameters() {
        assert!(media_type_is(
            &HeaderValue::from_static("Application/JSON; charset=utf-8"),
            JSON
        ));
        assert!(!media_type_is(
            &HeaderValue::from_static("application/jsonx"),
            JSON
        ));
    }
}
