//! A turn's answers as its calls end: kept, then shaped together in the
//! model's order.

use std::collections::BTreeSet;

use serde_json::Value;

use super::answerer::{CallState, not_completed};
use super::clock::Halt;
use super::durable::{Answered, Journal, Stage, Waits};
use super::kept::KeptResults;
use super::options::ExecOptions;
use super::turn::{CallOutcome, CallRecord, Checked, Execution, Status};
use crate::budget::{LIBRARY_SERVER, READ_TOOL_NAME, Reading};
use crate::callers::Caller;
use crate::calls::{RejectedCall, ToolCall};
use crate::error::{Error, ErrorKind, Result};
use crate::hosted::HostedItems;
use crate::listing::Listing;
use crate::programs::{ProgramCall, ProgramItems};
use crate::results::{FollowUps, Outcome, Turn, TurnAnswers};
use crate::spec::Provider;

/// The calls of one turn as they end, answered together in the model's order
/// (the spec's follow-ups and request limits go by it).
pub(super) struct Answering<'a> {
    provider: &'a Provider,
    options: &'a ExecOptions,
    /// Where cut texts are kept, when the listing offers the read tool.
    kept: Option<&'a KeptResults>,
    /// Calls never sent, with the answer extraction gave them.
    rejected: Vec<RejectedCall>,
    /// Calls that ran (or failed on the way), in the order they ended, each
    /// with what the `outputSchema` check said.
    ended: Vec<(ToolCall, Checked)>,
    /// Searches answered by the library, with the tools they found.
    searches: Vec<(CallRecord, Value, Vec<String>)>,
    /// Calls that wait for answers not available now, and where.
    waiting: Vec<(ToolCall, Stage)>,
    /// The turn's state as it goes, when it may be suspended or is checkpointed.
    journal: Option<&'a Journal>,
    /// What the model was offered: which tools were listed with their
    /// output schema, for the answers to programs' calls.
    listing: Option<&'a Listing>,
    /// The response's programs, reported with the answers.
    programs: ProgramItems,
}

impl<'a> Answering<'a> {
    /// A turn's answers; `kept` keeps what budgets cut, when the listing
    /// offers the read tool.
    pub(super) fn new(
        provider: &'a Provider,
        options: &'a ExecOptions,
        kept: Option<&'a KeptResults>,
    ) -> Self {
        Answering {
            provider,
            options,
            kept,
            rejected: Vec::new(),
            ended: Vec::new(),
            searches: Vec::new(),
            waiting: Vec::new(),
            journal: None,
            listing: None,
            programs: ProgramItems::default(),
        }
    }

    /// Answers programs' calls as `listing` offered their tools.
    pub(super) fn offered(mut self, listing: &'a Listing) -> Self {
        self.listing = Some(listing);
        self
    }

    /// Reports the response's programs with the answers.
    pub(super) fn programs(&mut self, programs: ProgramItems) {
        self.programs = programs;
    }

    /// Keeps the calls answered without a server in `journal` too.
    pub(super) fn journal(mut self, journal: Option<&'a Journal>) -> Self {
        self.journal = journal;
        self
    }

    /// Room for `calls` more calls' outcomes, so that keeping them as they
    /// end moves none of the earlier ones.
    pub(super) fn expect(&mut self, calls: usize) {
        self.ended.reserve(calls);
    }

    /// A call that was never sent.
    pub(super) fn rejected(&mut self, rejected: RejectedCall) {
        if let Some(journal) = self.journal {
            journal.update(|state| state.answered.push(Answered::rejected(&rejected)));
        }
        self.rejected.push(rejected);
    }

    /// A search the library answered: its answer and the tools it found.
    pub(super) fn searched(&mut self, record: CallRecord, answer: Value, found: Vec<String>) {
        if let Some(journal) = self.journal {
            journal.update(|state| {
                state.answered.push(Answered {
                    index: record.index,
                    call_id: record.call_id.clone(),
                    exposed_name: record.exposed_name.clone(),
                    answer: answer.clone(),
                    error: None,
                    found: Some(found.clone()),
                    caller: Caller::Model,
                });
            });
        }
        self.searches.push((record, answer, found));
    }

    /// A call's outcome: the server's result, or why it did not complete
    /// (and the result that error replaced, if any, for the record).
    ///
    /// A call that waits (its turn may be suspended) is not answered: if the
    /// turn is halted by its end, it is answered as not run.
    pub(super) fn ended(&mut self, call: ToolCall, mut checked: Checked) {
        // What the model is told of a failure of the server names it.
        if let Err(e) = &mut checked.outcome {
            e.set_server(&call.server_id);
        }
        match &checked.outcome {
            Err(e) if let Some(stage) = Waits::of(e) => self.waiting.push((call, stage.clone())),
            _ => self.ended.push((call, checked)),
        }
    }

    /// Every answer, in the model's order, and the turn's follow-ups; `halted`
    /// says whether an approver halted the loop.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when the provider cannot
    /// shape an answer (a call without the id the provider requires).
    pub(super) fn finish(mut self, halted: &Halt) -> Result<Execution> {
        if halted.is_set() {
            for (call, stage) in std::mem::take(&mut self.waiting) {
                let error = halted_while(&stage);
                self.ended.push((call, Checked::as_it_is(Err(error))));
            }
        } else if !self.waiting.is_empty() {
            return Ok(self.suspended());
        }
        let total = self.rejected.len() + self.searches.len() + self.ended.len();
        let results_only = self.results_only();
        let (answered, found) = self.answered_without_server();
        let mut merged = Merged {
            answered: answered.into_iter().peekable(),
            results: Vec::with_capacity(total),
            calls: Vec::with_capacity(total),
        };
        let mut ended = std::mem::take(&mut self.ended);
        ended.sort_by_key(|(call, _)| call.index);
        let follow_ups = match results_only {
            true => FollowUps::Skip,
            false => FollowUps::Collect,
        };
        let mut turn = self.provider.turn(&self.options.results, follow_ups)?;
        // The model's budgets are shared among the answers it reads.
        let outcomes: Vec<Outcome<'_>> = ended
            .iter()
            .filter(|(call, _)| call.caller.is_model())
            .map(|(_, checked)| outcome(checked))
            .collect();
        let mut allowances = turn.allowances(&outcomes).into_iter();
        drop(outcomes);
        let mut ran_servers = BTreeSet::new();
        for (call, checked) in ended {
            match call.caller.is_model() {
                true => {
                    let allowance = allowances.next().flatten();
                    self.answer(
                        &mut turn,
                        call,
                        checked,
                        allowance,
                        &mut ran_servers,
                        &mut merged,
                    )?;
                }
                false => self.answer_program(call, checked, &mut ran_servers, &mut merged)?,
            }
        }
        let (results, calls) = merged.rest();
        let follow_ups = turn.finish()?;
        let status = if halted.is_set() {
            Status::Halt
        } else {
            Status::Ok
        };
        Ok(Execution {
            status,
            turn: Turn {
                results,
                follow_ups,
            },
            calls,
            ran_servers,
            found,
            hosted: HostedItems::default(),
            programs: std::mem::take(&mut self.programs),
            results_only,
            approvals: Vec::new(),
            waiting: Vec::new(),
            suspended: None,
        })
    }

    /// Whether the answers go as a message of tool results only: a
    /// program's call is among them, and the spec asks so.
    fn results_only(&self) -> bool {
        let from_program = self.ended.iter().any(|(call, _)| !call.caller.is_model())
            || self.rejected.iter().any(|r| !r.caller.is_model());
        from_program
            && self
                .provider
                .programmatic
                .as_ref()
                .is_some_and(|plan| plan.results_only)
    }

    /// The answer to a program's call and its record: the result as the
    /// program takes it, never cut (the model does not read it).
    fn answer_program(
        &self,
        call: ToolCall,
        checked: Checked,
        ran_servers: &mut BTreeSet<String>,
        merged: &mut Merged,
    ) -> Result<()> {
        let program = ProgramCall {
            call_id: call.call_id.as_deref(),
            name: &call.exposed_name,
            caller: &call.caller,
            schema_listed: self
                .listing
                .is_some_and(|l| l.lists_output_schema(&call.exposed_name)),
        };
        let (answer, refused) =
            self.provider
                .program_answer(&program, outcome(&checked), &self.options.results)?;
        // What the program made of it reaches the model's context.
        self.ran_servers(&call, &checked, None, ran_servers);
        let record = merged.push(answer, call, checked);
        if let Some(refused) = refused {
            record.warnings.push(format!(
                "the program was answered with an error: {}",
                refused.message()
            ));
        }
        Ok(())
    }

    /// A suspended turn: the answers wait for every call; the records say
    /// what happened so far, those of the calls that wait included.
    fn suspended(self) -> Execution {
        let mut calls: Vec<CallRecord> = Vec::new();
        for rejected in self.rejected {
            calls.push(rejected_record(rejected));
        }
        calls.extend(self.searches.into_iter().map(|(record, _, _)| record));
        for (call, checked) in self.ended {
            calls.push(checked.into_record(call));
        }
        for (call, stage) in self.waiting {
            calls.push(Checked::as_it_is(Err(Waits::error(stage))).into_record(call));
        }
        calls.sort_by_key(|record| record.index);
        Execution {
            status: Status::Suspended,
            turn: Turn::default(),
            calls,
            ran_servers: BTreeSet::new(),
            found: Vec::new(),
            hosted: HostedItems::default(),
            programs: self.programs,
            results_only: false,
            approvals: Vec::new(),
            waiting: Vec::new(),
            suspended: None,
        }
    }

    /// The calls answered without a server (rejected ones and searches), in
    /// the model's order, with the tools the searches found (in the order
    /// found).
    fn answered_without_server(&mut self) -> (Vec<(usize, Value, CallRecord)>, Vec<String>) {
        let mut answers: Vec<(usize, Value, CallRecord)> =
            Vec::with_capacity(self.rejected.len() + self.searches.len());
        for mut rejected in std::mem::take(&mut self.rejected) {
            let answer = std::mem::take(&mut rejected.answer);
            let record = rejected_record(rejected);
            answers.push((record.index, answer, record));
        }
        let mut found: Vec<String> = Vec::new();
        let mut searches = std::mem::take(&mut self.searches);
        searches.sort_by_key(|(record, _, _)| record.index);
        for (record, answer, names) in searches {
            for name in names {
                if !found.contains(&name) {
                    found.push(name);
                }
            }
            answers.push((record.index, answer, record));
        }
        answers.sort_by_key(|(index, _, _)| *index);
        (answers, found)
    }

    /// One call's answer within its `allowance`, and its record, both put
    /// in `merged`; the servers whose text the answer puts in the model's
    /// context join `ran_servers`.
    fn answer(
        &self,
        turn: &mut TurnAnswers<'_>,
        call: ToolCall,
        checked: Checked,
        allowance: Option<u64>,
        ran_servers: &mut BTreeSet<String>,
        merged: &mut Merged,
    ) -> Result<()> {
        // What the read tool answered, when it read (not an error).
        let read = read_arguments(&call)
            .filter(|_| matches!(&checked.outcome, Ok(result) if !result.is_error));
        let principal = self.options.principal.as_deref();
        let mut checked = checked;
        self.keep_selected(&call, &mut checked);
        let mut keep = |text: &str| match self.kept {
            Some(kept) => kept.keep(&call.server_id, principal, text),
            None => String::new(),
        };
        // A selection's output is new text: cut, it is kept anew.
        let reading_on = read.as_ref().filter(|_| checked.selected.is_none());
        let mut reading = match (self.kept, reading_on) {
            (Some(_), Some((handle, offset))) => Reading::Continue {
                tool: &call.exposed_name,
                handle,
                offset: *offset,
            },
            (Some(_), None) => Reading::Keep {
                tool: READ_TOOL_NAME,
                keep: &mut keep,
            },
            (None, _) => Reading::Off,
        };
        let (answer, cut) = turn.answer_within(
            call.call_id.as_deref(),
            &call.exposed_name,
            outcome(&checked),
            allowance,
            &mut reading,
        )?;
        self.ran_servers(&call, &checked, read.as_ref(), ran_servers);
        let record = merged.push(answer, call, checked);
        // A read's answer is cut by design: its notice says where to read on.
        if cut
            && read.is_none()
            && let Some(allowance) = allowance
        {
            record.warnings.push(format!(
                "the answer was cut to its budget of {allowance} tokens; the record holds the whole result"
            ));
        }
        Ok(())
    }

    /// Keeps the whole JSON a selection filter ran on, while the listing
    /// offers the read tool, and tells the model its handle first, so that
    /// another filter reads it again without another call.
    fn keep_selected(&self, call: &ToolCall, checked: &mut Checked) {
        let (Some(kept), Some(selected), Ok(result)) =
            (self.kept, checked.selected.as_deref_mut(), &checked.outcome)
        else {
            return;
        };
        if !selected.ran {
            return;
        }
        // A read's own text stays where it is kept.
        let handle = match read_arguments(call) {
            Some((handle, 0)) => handle,
            _ => {
                let Some(text) = subject_text(result) else {
                    return;
                };
                kept.keep(&call.server_id, self.options.principal.as_deref(), &text)
            }
        };
        let argument = self
            .listing
            .and_then(|l| l.selection.as_ref())
            .map_or(crate::select::SELECT_ARGUMENT, |s| s.argument.as_str());
        let notice = format!(
            "[The whole result is kept as {handle}: call {READ_TOOL_NAME} with handle {handle}, offset 0 and another {argument} to select from it again.]"
        );
        selected
            .answer
            .content
            .insert(0, crate::mcp::Content::text(notice));
    }

    /// The servers whose text one call's answer puts in the model's
    /// context, added to `ran_servers`: its own, those the library's
    /// catalogue tools answered from, the one the read tool's text was cut
    /// from.
    fn ran_servers(
        &self,
        call: &ToolCall,
        checked: &Checked,
        read: Option<&(String, usize)>,
        ran_servers: &mut BTreeSet<String>,
    ) {
        // A call stopped at `input_required` is answered with the server's
        // questions, and one whose result broke its schema with what broke
        // it: their text is in the model's context too.
        let quoted = matches!(&checked.outcome, Err(e) if matches!(e.kind(), ErrorKind::InputRequired | ErrorKind::InvalidResult));
        if (checked.outcome.is_ok() || quoted) && !ran_servers.contains(&call.server_id) {
            ran_servers.insert(call.server_id.clone());
        }
        // What the library's catalogue tools answered came from the servers they name.
        if call.server_id == LIBRARY_SERVER
            && let Ok(result) = &checked.outcome
            && let Some(Value::Array(servers)) = result
                .meta
                .as_ref()
                .and_then(|m| m.get(super::catalogs::ORIGINS_KEY))
        {
            ran_servers.extend(servers.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        // What the read tool answers came from the server it was cut from.
        if let (Some(kept), Some((handle, _))) = (self.kept, read)
            && let Some(origin) = kept.origin(handle)
        {
            ran_servers.insert(origin);
        }
    }
}

/// A turn's answers and records in the model's order: the calls answered
/// by a server merged, as they are answered, with those answered without one.
struct Merged {
    answered: std::iter::Peekable<std::vec::IntoIter<(usize, Value, CallRecord)>>,
    results: Vec<Value>,
    calls: Vec<CallRecord>,
}

impl Merged {
    /// One call's answer and record (made here, where it is kept), after
    /// those answered without a server before it; the record, for what
    /// the answer adds to it.
    fn push(&mut self, answer: Value, call: ToolCall, checked: Checked) -> &mut CallRecord {
        let index = call.index;
        while let Some((_, earlier, its_record)) = self.answered.next_if(|(i, _, _)| *i < index) {
            self.results.push(earlier);
            self.calls.push(its_record);
        }
        self.results.push(answer);
        let at = self.calls.len();
        self.calls.push(checked.into_record(call));
        &mut self.calls[at]
    }

    /// Every answer and record, those answered without a server after the
    /// last call included.
    fn rest(mut self) -> (Vec<Value>, Vec<CallRecord>) {
        for (_, answer, record) in self.answered {
            self.results.push(answer);
            self.calls.push(record);
        }
        (self.results, self.calls)
    }
}

/// The JSON text a selection filter ran on: the text it was read from, or
/// the structured result written out.
fn subject_text(result: &crate::mcp::CallToolResult) -> Option<std::borrow::Cow<'_, str>> {
    use crate::select::Subject;
    let texts = super::turn::text_blocks(&result.content);
    match Subject::of(result.structured_content.as_ref(), &texts).ok()? {
        Subject::Read(_, text) => Some(text),
        Subject::Structured => {
            let value = result.structured_content.as_ref()?;
            serde_json::to_string(value)
                .ok()
                .map(std::borrow::Cow::Owned)
        }
    }
}

/// What the model reads of a call's outcome: what its selection filter
/// made of the result, if it had one, or the outcome as it is.
fn outcome(checked: &Checked) -> Outcome<'_> {
    if let Some(selected) = &checked.selected {
        return Outcome::Completed(&selected.answer);
    }
    match &checked.outcome {
        Ok(result) => Outcome::Completed(result),
        Err(err) => Outcome::Failed(err),
    }
}

/// The record of a call rejected before it was sent.
fn rejected_record(rejected: RejectedCall) -> CallRecord {
    CallRecord {
        index: rejected.index,
        call_id: rejected.call_id,
        exposed_name: rejected.exposed_name,
        caller: rejected.caller,
        server_id: None,
        outcome: CallOutcome::Rejected,
        ran: false,
        error: Some(rejected.error),
        warnings: Vec::new(),
        ui_resource: None,
        result: None,
    }
}

/// The answer to a call that waited when its turn was halted: not run, or,
/// for one already sent, where it stopped.
fn halted_while(stage: &Stage) -> Error {
    match stage {
        Stage::WaitingForInput { asked, .. } => not_completed(asked, "the turn was halted"),
        Stage::WaitingForTask { task_id, .. } => Error::new(
            ErrorKind::Interrupted,
            format!(
                "the turn was halted while task `{}` ran on the server for this call: it was \
                 left running there, and its result is not read",
                crate::describe::sanitize_description(task_id)
            ),
        )
        .plain(),
        _ => not_run_halted(),
    }
}

/// Why a call is not sent once `halted` stops the turn sending: halted, or
/// interrupted (then, where the turn may be suspended, it waits to be sent
/// when the turn is resumed).
pub(super) fn unsent(halted: &Halt) -> Error {
    if halted.holds_back() {
        Waits::error(Stage::Pending)
    } else if halted.interrupted() {
        Error::new(
            ErrorKind::Denied,
            "not run: the turn was interrupted before this call was sent",
        )
    } else {
        not_run_halted()
    }
}

/// `pipeline` (a call's, its panics caught), or, once the turn's
/// interrupt is cut, the call answered as cut off: the pipeline is dropped
/// with its request (a real client tells its server).
pub(super) async fn unless_cut<T>(
    pipeline: impl std::future::Future<Output = std::thread::Result<Result<T>>>,
    halted: &Halt,
    state: &CallState,
) -> std::thread::Result<Result<T>> {
    let Some(interrupt) = halted.interrupt() else {
        return pipeline.await;
    };
    // Boxed: a turn without an interrupt need not hold its waiting in
    // every call's future.
    Box::pin(async move {
        tokio::select! {
            biased;
            outcome = pipeline => outcome,
            () = interrupt.cut_off() => Ok(Err(cut_off(state.was_sent(), halted))),
        }
    })
    .await
}

/// The answer to a call cut off by the application's interrupt: one sent
/// may or may not have run; one not sent is answered as [`unsent`].
fn cut_off(sent: bool, halted: &Halt) -> Error {
    if !sent {
        return unsent(halted);
    }
    Error::new(
        ErrorKind::Interrupted,
        "the turn was interrupted before the call's answer came: it may or may not have run, \
         and it was not sent again",
    )
}

/// The answer to a call not sent because the turn was halted.
pub(super) fn not_run_halted() -> Error {
    Error::new(
        ErrorKind::Denied,
        "not run: this turn was halted (by an approver or an input handler)",
    )
}

/// The handle and offset of a call to the library's read tool.
fn read_arguments(call: &ToolCall) -> Option<(String, usize)> {
    if call.server_id != LIBRARY_SERVER || call.tool != READ_TOOL_NAME {
        return None;
    }
    let handle = call.arguments.get("handle")?.as_str()?.to_owned();
    let offset = call
        .arguments
        .get("offset")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    Some((handle, usize::try_from(offset).ok()?))
}
