//! The turn's run: what every call of one turn shares (its id, its state as
//! it goes, its taint, the application's decisions, its slots on each
//! server) and who makes its calls.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::durable::{Journal, Stage, TurnState};
use super::future::BoxFuture;
use super::gate::Slots;
use super::options::ExecOptions;
use super::policy::Approval;
use crate::calls::ToolCall;
use crate::error::{Error, Result};
use crate::hosted::HostedItems;
use crate::spec::Provider;

/// The error of a call not sent because the state saying it is sent could
/// not be kept (the cause, the application's own, is in the log, not in
/// what the model is told).
pub(super) fn not_sent(error: Error) -> Error {
    let message = format!("not sent: {}", error.message());
    error.with_message(message)
}

/// Per-turn values every call's context shares, the turn's slots on each
/// server, and who makes the calls.
pub(super) struct Shared {
    /// The turn's id: with a call's index, its idempotency key.
    pub(super) turn: Arc<str>,
    /// Whether calls may wait for answers not available now.
    pub(super) suspend: bool,
    /// Approvals the application gave for calls by id (or `#INDEX`).
    pub(super) decisions: std::collections::BTreeMap<String, Approval>,
    pub(super) principal: Option<String>,
    pub(super) journal: Option<Journal>,
    pub(super) assigns: Arc<Map<String, Value>>,
    /// Grows when servers the provider hosts turn out to have answered
    /// in the same response.
    taint: std::sync::Mutex<Arc<BTreeSet<String>>>,
    pub(super) slots: Option<Slots>,
    pub(super) caller: Caller,
}

/// Who makes a turn's calls: the model (to the tools it was offered) or the
/// application (to any tool of the toolset, its app-only ones included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Caller {
    Model,
    App,
}

impl Shared {
    /// A model's turn answered in `provider`'s shape.
    pub(super) fn new(options: &ExecOptions, provider: &Provider) -> Self {
        Self::for_caller(options, Caller::Model, Some(provider.id()))
    }

    /// A model's turn taken up again from `state`: its id, taint and halt.
    pub(super) fn resumed(options: &ExecOptions, state: TurnState) -> Self {
        let mut shared = Self::for_caller(options, Caller::Model, None);
        shared.turn = Arc::from(state.turn.as_str());
        shared.add_taint(state.taint.iter().map(String::as_str));
        // What the provider's hosted calls put in the model's context.
        shared.add_taint(state.hosted.servers());
        shared.suspend = options.suspend;
        shared.journal = Some(Journal::new(state, options.checkpoint.clone()));
        shared
    }

    /// The turn's state as it goes, when it may be suspended or is checkpointed.
    pub(super) fn journal(&self) -> Option<&Journal> {
        self.journal.as_ref()
    }

    /// Keeps `call`'s stage in the turn's state, if it is kept: a call's
    /// next request goes out only once the state that says it is sent is
    /// kept (the error says why it was not).
    pub(super) fn marker<'a>(
        &'a self,
        call: &'a ToolCall,
    ) -> impl Fn(Stage) -> BoxFuture<'a, Result<()>> + Send + Sync + 'a {
        move |stage| {
            Box::pin(async move {
                let Some(journal) = &self.journal else {
                    return Ok(());
                };
                let sent = matches!(stage, Stage::Sent);
                let change = journal.stage(call, stage);
                if sent {
                    journal.flush_through(change).await.map_err(not_sent)
                } else {
                    journal.flush_or_log().await;
                    Ok(())
                }
            })
        }
    }

    /// Puts the turn's calls in its state (as not yet sent), with what the
    /// provider did with the servers it hosts.
    pub(super) fn begin(&self, calls: &[ToolCall], hosted: &HostedItems) {
        if let Some(journal) = &self.journal {
            let taint = self.taint();
            journal.update(|state| {
                state.taint = (*taint).clone();
                state.hosted = hosted.clone();
                for call in calls {
                    state
                        .calls
                        .push(super::durable::CallEntry::new(call, Stage::Pending));
                }
            });
        }
    }

    /// The application's decision on `call`, if it gave one: by its id, or
    /// by `#INDEX` for one of the model's calls (a hosted call's approval
    /// request, `usize::MAX`, goes by its id only).
    pub(super) fn decision(&self, call: &ToolCall) -> Option<&Approval> {
        if self.decisions.is_empty() {
            return None;
        }
        let by_id = call
            .call_id
            .as_deref()
            .and_then(|id| self.decisions.get(id));
        if call.index == usize::MAX {
            return by_id;
        }
        by_id.or_else(|| self.decisions.get(&format!("#{}", call.index)))
    }

    /// The servers whose output is in the model's context.
    pub(super) fn taint(&self) -> Arc<BTreeSet<String>> {
        self.taint
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Adds `servers` to the taint of the calls started from now on.
    pub(super) fn add_taint<'a>(&self, servers: impl IntoIterator<Item = &'a str>) {
        let mut taint = self
            .taint
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut grown = (**taint).clone();
        let before = grown.len();
        grown.extend(servers.into_iter().map(str::to_owned));
        if grown.len() != before {
            if let Some(journal) = &self.journal {
                journal.update(|state| state.taint.clone_from(&grown));
            }
            *taint = Arc::new(grown);
        }
    }

    /// `provider`: the turn's answers' shape, when its state is kept.
    pub(super) fn for_caller(
        options: &ExecOptions,
        caller: Caller,
        provider: Option<&str>,
    ) -> Self {
        let turn = uuid::Uuid::new_v4().to_string();
        let journal = provider
            .filter(|_| options.suspend || options.checkpoint.is_some())
            .map(|provider| {
                Journal::new(
                    TurnState::new(turn.clone(), provider.to_owned()),
                    options.checkpoint.clone(),
                )
            });
        Shared {
            turn: Arc::from(turn),
            // A turn whose state is not kept cannot be resumed: nothing waits.
            suspend: options.suspend && journal.is_some(),
            decisions: options.decisions.clone(),
            principal: options.principal.clone(),
            journal,
            assigns: Arc::new(options.assigns.clone()),
            taint: std::sync::Mutex::new(Arc::new(options.taint.clone())),
            slots: options.max_concurrency_per_server.map(Slots::new),
            caller,
        }
    }
}
