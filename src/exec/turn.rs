//! One turn's answers, in the model's order, however the calls finish, and
//! the record of what happened to each call.

use std::collections::BTreeSet;

use serde_json::Value;

use super::answerer::not_completed;
use super::clock::Halt;
use super::durable::{Answered, Journal, Stage, TurnState, Waiting, Waits};
use super::kept::KeptResults;
use super::options::ExecOptions;
use crate::budget::{LIBRARY_SERVER, READ_TOOL_NAME, Reading};
use crate::calls::{RejectedCall, ToolCall};
use crate::error::{Error, ErrorKind, Result};
use crate::hosted::{ApprovalAnswer, HostedItems};
use crate::mcp::CallToolResult;
use crate::results::{FollowUps, Outcome};
use crate::spec::Provider;

/// Whether the agent loop may go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// Every call was answered; go on.
    Ok,
    /// An approver answered deny-and-halt, or an input handler cancelled: answer
    /// the model if you like, then stop.
    Halt,
    /// Some calls wait for answers not available now
    /// ([`ExecOptions::suspend`](crate::exec::ExecOptions::suspend)): the
    /// turn is not answered yet. Keep [`Execution::suspended`] and resume it
    /// with [`Source::resume_turn`](crate::exec::Source::resume_turn) once
    /// the answers are there.
    Suspended,
}

/// What happened to one call.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct CallRecord {
    /// The call's position in the model's response.
    pub index: usize,
    /// The call's id.
    pub call_id: Option<String>,
    /// The tool name the model called.
    pub exposed_name: Option<String>,
    /// The tool's server, when the call resolved.
    pub server_id: Option<String>,
    /// Whether the call completed with a result (`isError` or not). A call
    /// that ended while its tool asked for input is `false`, though its
    /// server is in [`Execution::ran_servers`].
    pub ran: bool,
    /// Why the call failed or was not sent.
    #[serde(serialize_with = "message")]
    pub error: Option<Error>,
    /// What the application should know of a call that was answered
    /// anyway (a result passed on though it breaks the tool's
    /// `outputSchema`, with [`OutputSchemaCheck::Warn`](crate::exec::OutputSchemaCheck::Warn)).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The tool's user interface, for a host to render beside the result
    /// (MCP Apps: a `ui://` resource; [`Tool::ui_resource_uri`](crate::Tool::ui_resource_uri)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ui_resource: Option<String>,
    /// The server's result as it came, every content block in it, whether or
    /// not the model was shown it (a block for the user only is not): what
    /// the application shows the person. `None` for a call that did not
    /// complete.
    #[serde(skip)]
    pub result: Option<CallToolResult>,
}

fn message<S: serde::Serializer>(e: &Option<Error>, s: S) -> std::result::Result<S::Ok, S::Error> {
    match e {
        Some(e) => s.serialize_some(&format!("{:?}: {}", e.kind(), e.message_with_causes())),
        None => s.serialize_none(),
    }
}

/// The answers to a turn's calls.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct Execution {
    /// [`Status::Halt`] when an approver (or an input handler) halted the
    /// loop; [`Status::Suspended`] when the turn waits.
    pub status: Status,
    /// One answer per call, in the model's order, in the provider's shape
    /// (none while the turn is suspended: a provider takes a turn's answers
    /// together).
    pub results: Vec<Value>,
    /// The media the answers could not carry, to put right after `results`
    /// (where, per provider: [`Turn`](crate::Turn)): empty unless the spec's
    /// `follow_up` rules apply (for instance with the `media: full` option).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<Value>,
    /// What happened to each call, in the same order.
    pub calls: Vec<CallRecord>,
    /// The servers whose results (or, for a call that ended while its tool
    /// asked for input, whose questions) are now in the model's context: add
    /// them to the next turn's taint.
    pub ran_servers: BTreeSet<String>,
    /// The tools the turn's searches found (exposed names, in the order
    /// found): pass them to the next listing with
    /// [`ListOptions::found`](crate::ListOptions::found), with those of the
    /// earlier turns.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub found: Vec<String>,
    /// What the provider did with the MCP servers it hosts (see
    /// [`hosted`](crate::hosted)): its calls (their servers are in
    /// [`ran_servers`](Self::ran_servers)), its approval requests and its
    /// listings. Nothing of it ran here.
    #[serde(skip_serializing_if = "HostedItems::is_empty")]
    pub hosted: HostedItems,
    /// The answers to the provider's approval requests, decided by the
    /// policy and the approver as local calls are: put each one's
    /// [`item`](ApprovalAnswer::item) in the next request's input.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<ApprovalAnswer>,
    /// What a suspended turn waits for: each call (or hosted approval
    /// request) and its question.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<Waiting>,
    /// A suspended turn's whole state, to resume with
    /// [`Source::resume_turn`](crate::exec::Source::resume_turn) (in this
    /// process or another): [`calls`](Self::calls) then holds the records
    /// of the calls that ended, and the others wait.
    #[serde(skip)]
    pub suspended: Option<Box<TurnState>>,
}

/// A call's outcome after the `outputSchema` check: the result that an
/// error replaced, and the warning a result passed on with.
pub(super) struct Checked {
    pub(super) outcome: Result<CallToolResult>,
    /// Boxed: rare, and each ended call waits in the turn until all have.
    pub(super) kept: Option<Box<CallToolResult>>,
    pub(super) warning: Option<String>,
    pub(super) ui_resource: Option<String>,
}

impl Checked {
    /// The record of `call`, which ended so.
    pub(super) fn into_record(self, call: ToolCall) -> CallRecord {
        let ran = self.outcome.is_ok() || self.kept.is_some();
        let (result, error) = match self.outcome {
            Ok(result) => (Some(result), None),
            Err(err) => (self.kept.map(|kept| *kept), Some(err)),
        };
        CallRecord {
            index: call.index,
            call_id: call.call_id,
            exposed_name: Some(call.exposed_name),
            server_id: Some(call.server_id),
            ran,
            error,
            warnings: self.warning.into_iter().collect(),
            ui_resource: self.ui_resource,
            result,
        }
    }

    pub(super) fn as_it_is(outcome: Result<CallToolResult>) -> Self {
        Checked {
            outcome,
            kept: None,
            warning: None,
            ui_resource: None,
        }
    }
}

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
        }
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
        if let Err(e) = checked.outcome {
            checked.outcome = Err(e.of_server(&call.server_id));
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
            // Suspended: the answers wait for every call; the records of
            // those that ended say what happened so far.
            let mut calls: Vec<CallRecord> = Vec::new();
            for rejected in self.rejected {
                calls.push(rejected_record(rejected));
            }
            calls.extend(self.searches.into_iter().map(|(record, _, _)| record));
            for (call, checked) in self.ended {
                calls.push(checked.into_record(call));
            }
            calls.sort_by_key(|record| record.index);
            return Ok(Execution {
                status: Status::Suspended,
                results: Vec::new(),
                follow_ups: Vec::new(),
                calls,
                ran_servers: BTreeSet::new(),
                found: Vec::new(),
                hosted: HostedItems::default(),
                approvals: Vec::new(),
                waiting: Vec::new(),
                suspended: None,
            });
        }
        let total = self.rejected.len() + self.searches.len() + self.ended.len();
        // The calls answered without a server, merged in the model's order
        // with the others as those are answered.
        let mut answers: Vec<(usize, Value, CallRecord)> =
            Vec::with_capacity(self.rejected.len() + self.searches.len());
        for mut rejected in self.rejected {
            let answer = std::mem::take(&mut rejected.answer);
            let record = rejected_record(rejected);
            answers.push((record.index, answer, record));
        }
        let mut found: Vec<String> = Vec::new();
        let mut searches = self.searches;
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
        let mut answers = answers.into_iter().peekable();
        let mut results = Vec::with_capacity(total);
        let mut calls = Vec::with_capacity(total);
        let mut ended = self.ended;
        ended.sort_by_key(|(call, _)| call.index);
        let mut turn = self
            .provider
            .turn(&self.options.results, FollowUps::Collect)?;
        let mut ran_servers = BTreeSet::new();
        let outcomes: Vec<Outcome<'_>> = ended
            .iter()
            .map(|(_, checked)| match &checked.outcome {
                Ok(result) => Outcome::Completed(result),
                Err(err) => Outcome::Failed(err),
            })
            .collect();
        let allowances = turn.allowances(&outcomes);
        drop(outcomes);
        for ((call, checked), allowance) in ended.into_iter().zip(allowances) {
            // What the read tool answered, when it read (not an error).
            let read = read_arguments(&call)
                .filter(|_| matches!(&checked.outcome, Ok(result) if !result.is_error));
            let principal = self.options.principal.as_deref();
            let mut keep = |text: &str| match self.kept {
                Some(kept) => kept.keep(&call.server_id, principal, text),
                None => String::new(),
            };
            let mut reading = match (self.kept, &read) {
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
                match &checked.outcome {
                    Ok(result) => Outcome::Completed(result),
                    Err(err) => Outcome::Failed(err),
                },
                allowance,
                &mut reading,
            )?;
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
            if let (Some(kept), Some((handle, _))) = (self.kept, &read)
                && let Some(origin) = kept.origin(handle)
            {
                ran_servers.insert(origin);
            }
            let mut record = checked.into_record(call);
            // A read's answer is cut by design: its notice says where to read on.
            if cut
                && read.is_none()
                && let Some(allowance) = allowance
            {
                record.warnings.push(format!(
                    "the answer was cut to its budget of {allowance} tokens; the record holds the whole result"
                ));
            }
            let index = record.index;
            while let Some((_, earlier, its_record)) = answers.next_if(|(i, _, _)| *i < index) {
                results.push(earlier);
                calls.push(its_record);
            }
            results.push(answer);
            calls.push(record);
        }
        for (_, answer, record) in answers {
            results.push(answer);
            calls.push(record);
        }
        let follow_ups = turn.finish()?;
        let status = if halted.is_set() {
            Status::Halt
        } else {
            Status::Ok
        };
        Ok(Execution {
            status,
            results,
            follow_ups,
            calls,
            ran_servers,
            found,
            hosted: HostedItems::default(),
            approvals: Vec::new(),
            waiting: Vec::new(),
            suspended: None,
        })
    }
}

/// The record of a call rejected before it was sent.
fn rejected_record(rejected: RejectedCall) -> CallRecord {
    CallRecord {
        index: rejected.index,
        call_id: rejected.call_id,
        exposed_name: rejected.exposed_name,
        server_id: None,
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
