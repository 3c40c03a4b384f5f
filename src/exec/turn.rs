//! One turn's answers, in the model's order, however the calls finish, and
//! the record of what happened to each call.

use std::collections::BTreeSet;

use super::durable::{TurnState, Waiting, Waits};
use crate::callers::Caller;
use crate::calls::ToolCall;
use crate::error::{Error, ErrorKind, Result};
use crate::hosted::{ApprovalAnswer, HostedItems};
use crate::mcp::CallToolResult;
use crate::programs::ProgramItems;
use crate::results::Turn;

/// Whether the agent loop may go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// Every call was answered; go on.
    Ok,
    /// An approver answered deny-and-halt, an input handler cancelled, or the
    /// application interrupted the turn
    /// ([`Interrupt`](crate::exec::Interrupt)): answer the model if you like,
    /// then stop.
    Halt,
    /// Some calls wait for answers not available now
    /// ([`ExecOptions::suspend`](crate::exec::ExecOptions::suspend)): the
    /// turn is not answered yet. Keep [`Execution::suspended`] and resume it
    /// with [`Source::resume_turn`](crate::exec::Source::resume_turn) once
    /// the answers are there.
    Suspended,
}

/// What happened to a call, as one value: a [`CallRecord`]'s
/// [`outcome`](CallRecord::outcome). The record's `error` says why a call
/// did not run. Serialized in `snake_case` (`"rejected"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallOutcome {
    /// Its server completed it and the model was answered with the result:
    /// a result marked `isError: true` too (the tool ran and said it
    /// failed). A search the library answered is one as well.
    Ran,
    /// Never sent, because the call itself was wrong: it named a tool not
    /// offered ([`ErrorKind::UnknownTool`](crate::ErrorKind::UnknownTool),
    /// also for one its server no longer lists), its arguments were not a
    /// JSON object or broke the tool's schema
    /// ([`ErrorKind::InvalidArguments`](crate::ErrorKind::InvalidArguments)),
    /// or it lacked the id the provider requires or repeated an earlier one.
    Rejected,
    /// Never sent, because it was refused
    /// ([`ErrorKind::Denied`](crate::ErrorKind::Denied)): by the policy, the
    /// approver or a hook, or because the turn was halted or interrupted
    /// before it was sent.
    Denied,
    /// Not answered yet: the turn is suspended
    /// ([`Status::Suspended`]) and the call waits, for an approval, the
    /// answers to its tool's questions, its task's end, or to be sent when
    /// the turn is resumed ([`Execution::waiting`] says which).
    Waiting,
    /// It did not complete: its server could not be reached or failed, the
    /// call timed out, its tool asked for input it did not get, its sign-in
    /// did not complete, or (it ran) its result broke the tool's
    /// `outputSchema` and the record keeps that result.
    Failed,
    /// It was in flight when its server went away or the turn was
    /// interrupted ([`ErrorKind::Interrupted`](crate::ErrorKind::Interrupted)):
    /// it may or may not have run, and it was not sent again.
    Interrupted,
}

impl CallOutcome {
    /// The outcome of a call that ended with `error` (none: it ran).
    pub(super) fn of(error: Option<&Error>) -> Self {
        let Some(error) = error else {
            return CallOutcome::Ran;
        };
        if Waits::of(error).is_some() {
            return CallOutcome::Waiting;
        }
        match error.kind() {
            ErrorKind::UnknownTool | ErrorKind::InvalidArguments => CallOutcome::Rejected,
            ErrorKind::Denied => CallOutcome::Denied,
            ErrorKind::Interrupted => CallOutcome::Interrupted,
            _ => CallOutcome::Failed,
        }
    }
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
    /// Who made the call: the model, or a program it wrote.
    #[serde(skip_serializing_if = "Caller::is_model")]
    pub caller: Caller,
    /// The tool's server, when the call resolved.
    pub server_id: Option<String>,
    /// What happened to it: ran, rejected, denied, waiting, failed or
    /// interrupted.
    pub outcome: CallOutcome,
    /// Whether its server completed it with a result (`isError` or not):
    /// [`CallOutcome::Ran`], and a [`CallOutcome::Failed`] whose result
    /// broke its `outputSchema` ([`result`](Self::result) holds it). A call
    /// that ended while its tool asked for input is `false`, though its
    /// server is in [`Execution::ran_servers`].
    pub ran: bool,
    /// Why the call failed, was not sent, or waits.
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

impl CallRecord {
    /// The record of a search the library answered.
    pub(super) fn search(
        index: usize,
        call_id: Option<String>,
        exposed_name: Option<String>,
    ) -> Self {
        CallRecord {
            index,
            call_id,
            exposed_name,
            caller: Caller::Model,
            server_id: None,
            outcome: CallOutcome::Ran,
            ran: true,
            error: None,
            warnings: Vec::new(),
            ui_resource: None,
            result: None,
        }
    }
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
    /// One answer per call, in the model's order, in the provider's shape,
    /// and the media the answers could not carry, to put right after them
    /// (where, per provider: [`Turn`]): empty while the turn is suspended
    /// (a provider takes a turn's answers together).
    #[serde(flatten)]
    pub turn: Turn,
    /// What happened to each call, in the same order (each one's
    /// [`outcome`](CallRecord::outcome) first).
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
    /// The programs the model wrote, their outputs and their container
    /// (see [`programs`](crate::programs)): pass what the next request
    /// needs on ([`Provider::program_request`](crate::Provider::program_request)).
    #[serde(skip_serializing_if = "ProgramItems::is_empty")]
    pub programs: ProgramItems,
    /// Whether the answers must go to the provider as a message of tool
    /// results only, with nothing of the application's in it: some
    /// providers ask so while a program's calls are pending (the spec's
    /// `programmatic.answer.results_only`). The turn then has no
    /// follow-up items.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub results_only: bool,
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
    /// of the calls that ended, and of those that wait
    /// ([`CallOutcome::Waiting`]).
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
    /// What the call's selection filter made of the result: the model reads
    /// it instead (the record keeps the whole result). Boxed: rare.
    pub(super) selected: Option<Box<Selected>>,
}

/// A result after the model's selection filter (see [`crate::select`]).
pub(super) struct Selected {
    /// What the model reads: the filter's output, or why there is none.
    pub(super) answer: CallToolResult,
    /// Whether the result was JSON the filter ran on, to be kept for
    /// `read_result` while budgets are set.
    pub(super) ran: bool,
}

impl Checked {
    /// Runs the selection `filter` on the result, off the async threads,
    /// under `limits`; a failed call or a tool's error is left as it is.
    pub(super) async fn select(&mut self, filter: &str, limits: &crate::select::SelectLimits) {
        use crate::select::{Subject, select};
        use std::sync::Arc;
        let Ok(result) = &mut self.outcome else {
            return;
        };
        if result.is_error {
            return;
        }
        let texts = text_blocks(&result.content);
        // What was read from text is the filter's own; the structured
        // result is lent to it.
        let read = match Subject::of(result.structured_content.as_ref(), &texts) {
            Err(why) => Err(why),
            Ok(Subject::Read(value, _)) => Ok(Some(value)),
            Ok(Subject::Structured) => Ok(None),
        };
        let (found, ran) = match read {
            Err(why) => (Err(why), false),
            Ok(Some(value)) => (select(filter, Arc::new(value), limits).await, true),
            Ok(None) => {
                let shared = Arc::new(result.structured_content.take().unwrap_or_default());
                let found = select(filter, Arc::clone(&shared), limits).await;
                // Given back once the thread read it; copied only if it did not in time.
                let value = Arc::try_unwrap(shared).unwrap_or_else(|kept| (*kept).clone());
                result.structured_content = Some(value);
                (found, true)
            }
        };
        let answer = match found {
            Ok(output) if output.is_empty() => {
                CallToolResult::text("[The jq filter output nothing.]")
            }
            Ok(output) => CallToolResult::text(output),
            Err(why) => CallToolResult::error(why.message()),
        };
        self.selected = Some(Box::new(Selected { answer, ran }));
    }
}

/// The texts of a result's text blocks.
pub(super) fn text_blocks(content: &[crate::mcp::Content]) -> Vec<&str> {
    content
        .iter()
        .filter_map(|c| match c {
            crate::mcp::Content::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
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
            caller: call.caller,
            server_id: Some(call.server_id),
            outcome: CallOutcome::of(error.as_ref()),
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
            selected: None,
        }
    }
}
