//! The SDK's client handler: announces this crate and what it declares,
//! routes progress to the call it belongs to, counts tool-list changes and
//! answers the server's requests (elicitation, sampling, roots) through the
//! answerer of the call each belongs to.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tracing::Instrument;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientConfig, ElicitRequestParams, ElicitResult, ErrorCode, ErrorData,
    ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};

use super::requests::Calls;
use crate::error::{Error, ErrorKind};
use crate::exec::{Answerer, CallContext, ClientFeatures};
use crate::mcp::{CreateMessageParams, Elicitation};

/// Progress notifications a server may send before its call is registered.
const EARLY_PROGRESS: usize = 64;

/// Where each in-flight call's progress notifications go, by progress token.
#[derive(Default)]
pub(super) struct Routes {
    inner: Mutex<RoutesInner>,
}

#[derive(Default)]
struct RoutesInner {
    active: HashMap<String, CallContext>,
    /// Notifications that arrived before their call was registered (the
    /// request is on the wire before its token is known here).
    early: VecDeque<(String, ProgressNotificationParam)>,
}

fn token_key(token: &ProgressToken) -> String {
    serde_json::to_string(&token.0).unwrap_or_default()
}

impl Routes {
    pub(super) fn register(&self, token: &ProgressToken, context: CallContext) -> String {
        let key = token_key(token);
        let early = match self.inner.lock() {
            Ok(mut inner) => {
                inner.active.insert(key.clone(), context.clone());
                let (mine, rest) = std::mem::take(&mut inner.early)
                    .into_iter()
                    .partition(|(k, _)| *k == key);
                inner.early = rest;
                mine
            }
            Err(_) => VecDeque::new(),
        };
        for (_, params) in early {
            report(&context, params);
        }
        key
    }

    pub(super) fn unregister(&self, key: &str) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.active.remove(key);
        }
    }

    fn deliver(&self, params: ProgressNotificationParam) {
        let key = token_key(&params.progress_token);
        let target = match self.inner.lock() {
            Ok(mut inner) => match inner.active.get(&key) {
                Some(context) => Some(context.clone()),
                None => {
                    if inner.early.len() == EARLY_PROGRESS {
                        inner.early.pop_front();
                    }
                    inner.early.push_back((key, params.clone()));
                    None
                }
            },
            Err(_) => None,
        };
        if let Some(context) = target {
            report(&context, params);
        }
    }
}

fn report(context: &CallContext, params: ProgressNotificationParam) {
    context.report_progress(params.progress, params.total, params.message);
}

/// The SDK's client handler: announces this crate, routes progress, counts
/// tool-list changes and answers the server's requests through the answerer
/// of the call each belongs to.
#[derive(Clone)]
pub(super) struct Handler {
    pub(super) routes: Arc<Routes>,
    pub(super) info: ClientConfig,
    pub(super) tools_version: Arc<AtomicU64>,
    pub(super) calls: Arc<Calls>,
}

/// The JSON-RPC error a refused request is answered with: `-1` for a
/// rejection (MCP's code for a declined sampling request), invalid params
/// for a malformed one, an internal error otherwise.
fn refusal(err: &Error) -> ErrorData {
    let code = match err.kind() {
        ErrorKind::Denied => ErrorCode(-1),
        ErrorKind::Input => ErrorCode::INVALID_PARAMS,
        _ => ErrorCode::INTERNAL_ERROR,
    };
    ErrorData::new(code, err.message_with_causes(), None)
}

/// No answerer for a request: nothing was configured to answer it.
fn unanswered(what: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("this client does not answer {what}"),
        None,
    )
}

/// Re-reads a value of one model as another, through its JSON.
fn rewrap<T: serde::Serialize, U: serde::de::DeserializeOwned>(
    value: &T,
    what: &str,
) -> std::result::Result<U, ErrorData> {
    serde_json::to_value(value)
        .and_then(serde_json::from_value)
        .map_err(|e| ErrorData::internal_error(format!("cannot convert the {what}: {e}"), None))
}

impl Handler {
    /// The answerer of the call the request belongs to, when its handlers
    /// answer `what` (`answers` says whether they do).
    async fn answerer(
        &self,
        context: &RequestContext<RoleClient>,
        what: &str,
        answers: impl Fn(ClientFeatures) -> bool,
    ) -> std::result::Result<Answerer, ErrorData> {
        self.calls
            .attribute(context)
            .await
            .filter(|answerer| answers(answerer.features()))
            .ok_or_else(|| unanswered(what))
    }
}

/// The span in which a server's request to the client is answered: a child
/// of the trace the request carries in its `_meta`, when it carries one.
fn answering_span(
    method: &'static str,
    context: &RequestContext<RoleClient>,
    params: Option<&serde_json::Value>,
) -> tracing::Span {
    let span = tracing::info_span!(
        "mcp.server.request",
        otel.name = method,
        otel.kind = "server",
        mcp.method.name = method,
    );
    if !span.is_disabled() {
        // The request's own `_meta` (in its params), or what the SDK kept of it.
        let kept = serde_json::to_value(&context.meta).ok();
        let meta = params
            .and_then(|p| p.get("_meta"))
            .filter(|m| m.get("traceparent").is_some())
            .or(kept.as_ref());
        crate::telemetry::join_context(&span, meta.and_then(serde_json::Value::as_object));
    }
    span
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.routes.deliver(params);
    }

    /// A legacy server's (or an unscoped) `notifications/tools/list_changed`.
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_version.fetch_add(1, Ordering::SeqCst);
    }

    /// `elicitation/create` sent during a call: the input handler answers.
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> std::result::Result<ElicitResult, ErrorData> {
        let params = serde_json::to_value(&request).map_err(|e| {
            ErrorData::internal_error(format!("cannot read the request: {e}"), None)
        })?;
        let span = answering_span("elicitation/create", &context, Some(&params));
        async move {
            let answerer = self
                .answerer(&context, "elicitation", |f| {
                    f.elicitation_form || f.elicitation_url
                })
                .await?;
            let crate::mcp::InputRequest::Elicitation(elicitation) =
                crate::mcp::InputRequest::from_value(
                    serde_json::json!({"method": "elicitation/create", "params": params}),
                )
            else {
                return Err(ErrorData::invalid_params(
                    "the elicitation is neither a form nor a URL",
                    None,
                ));
            };
            let elicitation: Elicitation = elicitation;
            let answer = answerer
                .elicit(&context.id.to_string(), elicitation)
                .await
                .map_err(|e| refusal(&e))?;
            rewrap(&answer, "elicitation answer")
        }
        .instrument(span)
        .await
    }

    /// `sampling/createMessage` sent during a call: the sampling handler
    /// answers, under the sampling rules.
    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> std::result::Result<rmcp::model::CreateMessageResult, ErrorData> {
        let wire = serde_json::to_value(&params).map_err(|e| {
            ErrorData::internal_error(format!("cannot read the request: {e}"), None)
        })?;
        let span = answering_span("sampling/createMessage", &context, Some(&wire));
        async move {
            let answerer = self.answerer(&context, "sampling", |f| f.sampling).await?;
            let params = CreateMessageParams::from_value(wire).map_err(|e| refusal(&e))?;
            let answer = answerer.sample(params).await.map_err(|e| refusal(&e))?;
            rewrap(&answer, "sampling answer")
        }
        .instrument(span)
        .await
    }

    /// `roots/list`: the configured roots.
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> std::result::Result<rmcp::model::ListRootsResult, ErrorData> {
        let answerer = self.answerer(&context, "roots/list", |f| f.roots).await?;
        let roots = answerer.list_roots().map_err(|e| refusal(&e))?;
        rewrap(&roots, "roots")
    }
}
