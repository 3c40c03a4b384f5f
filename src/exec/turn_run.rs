//! The turn's run: what every call of one turn shares (the source and the
//! toolset the calls resolve against, the options, the turn's idempotency
//! keys, its state as it goes, its taint and halt, its bound on calls in
//! flight and its slots on each server) and who makes its calls.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::{Semaphore, SemaphorePermit};

use super::answerer::{Answerer, CallRules, CallState};
use super::clock::Halt;
use super::durable::{CallEntry, Journal, KeyRing, Stage, TurnState};
use super::gate::Slots;
use super::options::ExecOptions;
use super::policy::Approval;
use super::server::CallContext;
use super::source::Source;
use crate::calls::ToolCall;
use crate::error::{Error, ErrorKind, Result};
use crate::hosted::HostedItems;
use crate::spec::Provider;
use crate::toolset::ToolSet;

/// Who makes a turn's calls: the model (to the tools it was offered) or the
/// application (to any tool of the toolset, its app-only ones included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Caller {
    Model,
    App,
}

/// One turn's run: every call of the turn goes through
/// [`call`](Self::call), and reads what it shares with the others here.
pub(super) struct TurnRun<'t> {
    pub(super) source: &'t Source,
    /// What the calls resolve against.
    pub(super) toolset: &'t ToolSet,
    pub(super) options: &'t ExecOptions,
    /// The bound on each request's server time.
    pub(super) timeout: Duration,
    /// How many calls are in flight at once, at most.
    pub(super) limit: usize,
    /// The turn's bound on calls in flight: every call takes a permit
    /// before it passes its server's gate, wherever it comes from.
    permits: Semaphore,
    /// What the answerers of the turn's calls share (its halt among them).
    pub(super) rules: Arc<CallRules>,
    /// The calls' idempotency keys, derived per server from the turn's id.
    pub(super) keys: KeyRing,
    journal: Option<Journal>,
    assigns: Arc<Map<String, Value>>,
    /// Grows when servers the provider hosts turn out to have answered
    /// in the same response.
    taint: Mutex<Arc<BTreeSet<String>>>,
    pub(super) slots: Option<Slots>,
    pub(super) caller: Caller,
}

impl<'t> TurnRun<'t> {
    /// A model's turn answered in `provider`'s shape.
    pub(super) fn new(
        source: &'t Source,
        toolset: &'t ToolSet,
        options: &'t ExecOptions,
        provider: &Provider,
    ) -> Self {
        let turn = uuid::Uuid::new_v4().to_string();
        let kept = options.suspend || options.checkpoint.is_some();
        let journal = kept.then(|| {
            Journal::new(
                TurnState::new(turn.clone(), provider.id().to_owned()),
                options.checkpoint.clone(),
            )
        });
        // A turn whose state is not kept cannot be resumed: nothing waits.
        let mut run = Self::with(
            source,
            toolset,
            options,
            Caller::Model,
            turn,
            kept && options.suspend,
        );
        run.journal = journal;
        run
    }

    /// The application's own calls ([`Source::call_app_tool`]): their
    /// state is not kept, and nothing waits.
    pub(super) fn for_app(
        source: &'t Source,
        toolset: &'t ToolSet,
        options: &'t ExecOptions,
    ) -> Self {
        let turn = uuid::Uuid::new_v4().to_string();
        Self::with(source, toolset, options, Caller::App, turn, false)
    }

    /// A model's turn taken up again from `state`: its id, taint and halt.
    pub(super) fn resumed(
        source: &'t Source,
        toolset: &'t ToolSet,
        options: &'t ExecOptions,
        state: TurnState,
    ) -> Self {
        let turn = state.turn.clone();
        let mut run = Self::with(
            source,
            toolset,
            options,
            Caller::Model,
            turn,
            options.suspend,
        );
        // The same keys as before: the turn's id, and each call's place
        // among the calls to its server.
        for entry in &state.calls {
            run.keys.note_index(&entry.server_id, entry.index);
        }
        run.add_taint(state.taint.iter().map(String::as_str));
        // What the provider's hosted calls put in the model's context.
        run.add_taint(state.hosted.servers());
        if state.halted {
            run.halt().set();
        }
        run.journal = Some(Journal::new(state, options.checkpoint.clone()));
        run
    }

    fn with(
        source: &'t Source,
        toolset: &'t ToolSet,
        options: &'t ExecOptions,
        caller: Caller,
        turn: String,
        suspend: bool,
    ) -> Self {
        let (limit, timeout) = options.limits();
        let rules = CallRules::new(
            options.principal.as_deref().map(Arc::from),
            options.max_input_rounds,
            options.input_timeout,
            options.interrupt.as_ref(),
            suspend,
        );
        TurnRun {
            source,
            toolset,
            options,
            timeout,
            limit,
            permits: Semaphore::new(limit.min(Semaphore::MAX_PERMITS)),
            rules: Arc::new(rules),
            keys: KeyRing::new(Arc::from(turn)),
            journal: None,
            assigns: Arc::new(options.assigns.clone()),
            taint: Mutex::new(Arc::new(options.taint.clone())),
            slots: options.max_concurrency_per_server.map(Slots::new),
            caller,
        }
    }

    /// The turn's halt: set once an approver answers deny-and-halt or an
    /// input handler cancels.
    pub(super) fn halt(&self) -> &Halt {
        &self.rules.halt
    }

    /// Whether calls may wait for answers not available now.
    pub(super) fn suspend(&self) -> bool {
        self.rules.suspend
    }

    /// Who the calls are made for.
    pub(super) fn principal(&self) -> Option<&Arc<str>> {
        self.rules.principal.as_ref()
    }

    /// The turn's state as it goes, when it may be suspended or is checkpointed.
    pub(super) fn journal(&self) -> Option<&Journal> {
        self.journal.as_ref()
    }

    /// A permit to be in flight, when one is free now.
    pub(super) fn try_permit(&self) -> Option<SemaphorePermit<'_>> {
        self.permits.try_acquire().ok()
    }

    /// Waits for a permit to be in flight.
    pub(super) async fn permit(&self) -> Result<SemaphorePermit<'_>> {
        self.permits.acquire().await.map_err(|_| {
            Error::new(
                ErrorKind::Unavailable,
                "the turn's bound on calls in flight was closed",
            )
        })
    }

    /// What the server is told of `call` besides its arguments, with the
    /// answerer of its questions.
    pub(super) fn context(&self, state: &Arc<CallState>) -> CallContext {
        let call = state.call();
        let mut context = CallContext::of(state.clone());
        context.principal = self.rules.principal.clone();
        context.assigns = self.assigns.clone();
        context.taint = state.taint().clone();
        context.meta = self.options.meta.clone();
        context.progress = self.options.progress.clone();
        context.answerer = Some(Answerer::for_call(
            self.source.governor.clone(),
            self.source.server_name(&call.server_id),
            state.clone(),
        ));
        context.idempotency_key = Some(self.keys.key(call));
        context
    }

    /// Keeps `call`'s stage in the turn's state, if it is kept: a call's
    /// next request goes out only once the state that says it is sent is
    /// kept (the error says why it was not).
    pub(super) async fn mark(&self, call: &ToolCall, stage: Stage) -> Result<()> {
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
    }

    /// Keeps the response's programs (and the container they wait in) in
    /// the turn's state: a suspended turn says how long they wait.
    pub(super) fn keep_programs(&self, programs: &crate::programs::ProgramItems) {
        if let Some(journal) = self.journal()
            && !programs.is_empty()
        {
            journal.update(|state| state.programs = programs.clone());
        }
    }

    /// Puts the turn's calls in its state (as not yet sent), with what the
    /// provider did with the servers it hosts.
    pub(super) fn begin(&self, calls: &[ToolCall], hosted: &HostedItems) {
        self.keys.note_calls(calls);
        if let Some(journal) = &self.journal {
            let taint = self.taint();
            journal.update(|state| {
                state.taint = (*taint).clone();
                state.hosted = hosted.clone();
                for call in calls {
                    state.calls.push(CallEntry::new(call, Stage::Pending));
                }
            });
        }
    }

    /// The application's decision on `call`, if it gave one: by its id, or
    /// by `#INDEX` for one of the model's calls that has no id (a call
    /// with an id is named by it alone, so that `#1` cannot approve
    /// whatever call comes first; a hosted call's approval request,
    /// `usize::MAX`, goes by its id).
    pub(super) fn decision(&self, call: &ToolCall) -> Option<&'t Approval> {
        let decisions = &self.options.decisions;
        if decisions.is_empty() {
            return None;
        }
        match call.call_id.as_deref() {
            Some(id) => decisions.get(id),
            None if call.index == usize::MAX => None,
            None => decisions.get(&format!("#{}", call.index)),
        }
    }

    /// The servers whose output is in the model's context.
    pub(super) fn taint(&self) -> Arc<BTreeSet<String>> {
        self.taint
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Adds `servers` to the taint of the calls started from now on.
    pub(super) fn add_taint<'a>(&self, servers: impl IntoIterator<Item = &'a str>) {
        let mut taint = self.taint.lock().unwrap_or_else(PoisonError::into_inner);
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
}

/// The error of a call not sent because the state saying it is sent could
/// not be kept (the cause, the application's own, is in the log, not in
/// what the model is told).
pub(super) fn not_sent(error: Error) -> Error {
    let message = format!("not sent: {}", error.message());
    error.with_message(message)
}
