//! The requests a server sends the client (revisions up to 2025-11-25:
//! `elicitation/create`, `sampling/createMessage`, `roots/list`), each
//! attributed to the call it belongs to and answered by that call's
//! [`Answerer`]:
//!
//! - a request tied to a task (`_meta["io.modelcontextprotocol/related-task"]`)
//!   belongs to the call running that task;
//! - over streamable HTTP, a request on a call's own response stream belongs
//!   to that call, and one on the standalone stream (or another request's)
//!   to none;
//! - over stdio, which cannot tell, a request belongs to the server's one
//!   call in flight; with several in flight it is ambiguous, and the handler
//!   is told so; with none, it belongs to none.
//!
//! A request that belongs to no call is answered by the answerer the source
//! attached (or, before any source, the client's own handlers).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::RequestId;
use rmcp::service::{InboundStreamOrigin, RequestContext, RoleClient};
use serde_json::Value;

use crate::exec::Answerer;

/// The `_meta` key tying a message to a task (MCP 2025-11-25).
pub(crate) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// How long a request on a call's HTTP stream waits for the call to be
/// registered (its id is known only once the request is on its way).
const REGISTRATION_WAIT: Duration = Duration::from_secs(2);

/// The calls in flight on one session, and who answers outside them.
#[derive(Default)]
pub(crate) struct Calls {
    inner: Mutex<Inner>,
    registered: tokio::sync::Notify,
}

#[derive(Default)]
struct Inner {
    next: u64,
    entries: Vec<Entry>,
    outside: Option<Answerer>,
}

struct Entry {
    key: u64,
    id: Option<RequestId>,
    task: Option<String>,
    answerer: Answerer,
}

/// A call's place among the calls in flight; dropping it removes the call.
pub(crate) struct Registration {
    calls: Arc<Calls>,
    key: u64,
}

impl Registration {
    /// The JSON-RPC id of the call's `tools/call`, once it is on its way.
    pub(crate) fn set_id(&self, id: RequestId) {
        self.calls.update(self.key, |e| e.id = Some(id));
        self.calls.registered.notify_waiters();
    }

    /// The task the call runs as: requests tied to it belong to the call.
    pub(crate) fn set_task(&self, task_id: &str) {
        self.calls
            .update(self.key, |e| e.task = Some(task_id.to_owned()));
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Ok(mut inner) = self.calls.inner.lock() {
            inner.entries.retain(|e| e.key != self.key);
        }
    }
}

impl Calls {
    /// Adds a call about to be sent.
    pub(crate) fn register(self: &Arc<Self>, answerer: Answerer) -> Registration {
        let key = match self.inner.lock() {
            Ok(mut inner) => {
                inner.next += 1;
                let key = inner.next;
                inner.entries.push(Entry {
                    key,
                    id: None,
                    task: None,
                    answerer,
                });
                key
            }
            Err(_) => 0,
        };
        Registration {
            calls: self.clone(),
            key,
        }
    }

    /// Who answers requests outside any call.
    pub(crate) fn set_outside(&self, answerer: Answerer) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.outside = Some(answerer);
        }
    }

    pub(crate) fn outside(&self) -> Option<Answerer> {
        self.inner.lock().ok()?.outside.clone()
    }

    fn update(&self, key: u64, change: impl FnOnce(&mut Entry)) {
        if let Ok(mut inner) = self.inner.lock()
            && let Some(entry) = inner.entries.iter_mut().find(|e| e.key == key)
        {
            change(entry);
        }
    }

    /// The answerer for a request the server sent, by the rules above;
    /// `None` when nothing can answer (no call and no answerer outside).
    pub(crate) async fn attribute(&self, context: &RequestContext<RoleClient>) -> Option<Answerer> {
        if let Some(task) = related_task(context) {
            return self.find(|e| e.task.as_deref() == Some(task.as_str()));
        }
        match context.extensions.get::<InboundStreamOrigin>() {
            Some(InboundStreamOrigin::OutboundRequest(id)) => self.by_id(id).await,
            Some(InboundStreamOrigin::Unassociated) => self.outside(),
            None => self.sole_or_ambiguous(),
        }
    }

    fn find(&self, pick: impl Fn(&Entry) -> bool) -> Option<Answerer> {
        let inner = self.inner.lock().ok()?;
        inner
            .entries
            .iter()
            .find(|e| pick(e))
            .map(|e| e.answerer.clone())
            .or_else(|| inner.outside.clone())
    }

    /// The call whose `tools/call` has `id`, waiting briefly for a call
    /// still being sent; another request's stream belongs to no call.
    async fn by_id(&self, id: &RequestId) -> Option<Answerer> {
        let deadline = tokio::time::Instant::now() + REGISTRATION_WAIT;
        loop {
            let notified = self.registered.notified();
            {
                let inner = self.inner.lock().ok()?;
                if let Some(entry) = inner.entries.iter().find(|e| e.id.as_ref() == Some(id)) {
                    return Some(entry.answerer.clone());
                }
                if !inner.entries.iter().any(|e| e.id.is_none()) {
                    return inner.outside.clone();
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.outside();
            }
        }
    }

    fn sole_or_ambiguous(&self) -> Option<Answerer> {
        let inner = self.inner.lock().ok()?;
        match inner.entries.as_slice() {
            [] => inner.outside.clone(),
            [one] => Some(one.answerer.clone()),
            many => {
                let calls: Vec<Answerer> = many.iter().map(|e| e.answerer.clone()).collect();
                Some(calls[0].ambiguous(&calls))
            }
        }
    }
}

/// The task a request is tied to, by its `_meta`.
fn related_task(context: &RequestContext<RoleClient>) -> Option<String> {
    match context.meta.get(RELATED_TASK)? {
        Value::Object(task) => task.get("taskId")?.as_str().map(str::to_owned),
        _ => None,
    }
}
