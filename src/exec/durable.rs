//! Turns that outlive their process: a suspended turn's whole state, as a
//! versioned serde document that another process resumes.
//!
//! A turn run with [`ExecOptions::suspend`](crate::exec::ExecOptions::suspend)
//! does not hold its process while a call waits for an answer that is not
//! available now (an approval, a tool's `input_required` questions): every
//! other call runs to its end, and the turn comes back
//! [`Suspended`](crate::exec::Status::Suspended) with a [`TurnState`]. The
//! state goes wherever the application keeps work (a queue, a database row,
//! a durable-execution engine's step) and is resumed with
//! [`Source::resume_turn`](crate::exec::Source::resume_turn), by any process
//! with the same servers, once the answers are there.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::future::BoxFuture;
use crate::callers::Caller;
use crate::calls::{RejectedCall, ToolCall};
use crate::error::{Error, ErrorKind, Result};
use crate::hosted::{ApprovalAnswer, HostedItems};
use crate::mcp::{CallToolResult, InputRequests, InputRequiredResult};
use crate::programs::ProgramItems;

/// What a [`TurnState`] document says it is (its `format` field).
pub const TURN_STATE_FORMAT: &str = "mcp-adapters/turn-state";

/// The version of the [`TurnState`] document this library writes (its
/// `version` field). Version 2 adds the journals of code-mode programs
/// (`code`); a document of version 1 is read as one of version 2 without
/// programs. A document of any other version is refused, never read as
/// this one.
pub const TURN_STATE_VERSION: u32 = 2;

/// The oldest version of the document this library reads.
const OLDEST_TURN_STATE_VERSION: u32 = 1;

pub(crate) use super::keys::KeyRing;
pub use super::keys::{IDEMPOTENCY_KEY, IdempotencyKey};

/// A suspended turn: what it answers, each call's stage, the answers and
/// results already obtained, the servers' request state. Serialize it with
/// serde (as JSON: [`to_json`](Self::to_json)) and resume it with
/// [`Source::resume_turn`](crate::exec::Source::resume_turn).
///
/// Every call is at one of these stages: ended (its result or error is
/// kept, and it is not sent again), waiting for approval (never sent),
/// waiting for the answers to its tool's questions (sent; the server's
/// `requestState` is kept, and the call goes on with the answers), or sent
/// and not yet answered (only in a [checkpoint](crate::exec::ExecOptions::checkpoint)
/// taken while it was in flight: resumed, it is answered as interrupted,
/// never sent again).
///
/// Deserializing reads the `format` and `version` fields first and refuses
/// a document of another format or version with an error that names both.
/// Keep it in JSON (or another self-describing format: the fields are read
/// by name).
///
/// Resume each document at most once: resuming it twice sends its waiting
/// calls twice. Where several workers may take it up (a retried queue
/// message), let one win (a lease, a compare-and-swap on the row); the
/// calls' [idempotency keys](IDEMPOTENCY_KEY) let a server refuse what
/// slips through.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnState {
    format: String,
    version: u32,
    /// The library version that wrote the document (informative).
    library: String,
    /// The turn's id: never sent, the key from which each call's
    /// idempotency key is derived.
    pub(crate) turn: String,
    /// The provider spec whose response the turn answers.
    pub(crate) provider: String,
    /// Whether an approver or an input handler halted the turn.
    pub(crate) halted: bool,
    /// The servers whose output was in the model's context.
    pub(crate) taint: BTreeSet<String>,
    /// The calls that go through the pipeline, in the model's order.
    pub(crate) calls: Vec<CallEntry>,
    /// Calls answered without a server (rejected at extraction, searches).
    pub(crate) answered: Vec<Answered>,
    /// What the provider did with the servers it hosts.
    #[serde(skip_serializing_if = "HostedItems::is_empty")]
    pub(crate) hosted: HostedItems,
    /// Its approval requests already decided.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) approvals: Vec<ApprovalAnswer>,
    /// The ids of its approval requests that wait for an answer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) hosted_waiting: Vec<String>,
    /// The programs the response held, and their container.
    #[serde(skip_serializing_if = "ProgramItems::is_empty")]
    pub(crate) programs: ProgramItems,
    /// The journals of the code-mode programs the turn ran (version 2).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) code: Vec<ProgramJournal>,
}

/// A code-mode program's journal: its sources of variation, each call it
/// made (in the order it made them) and how far each got, and the order in
/// which their outcomes reached it. Run again from the start, the program
/// is answered from here and takes the same path; nothing here is sent
/// again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProgramJournal {
    /// The model's call to the code tool: its index and id.
    pub(crate) program_index: usize,
    pub(crate) program_id: String,
    pub(crate) variation: crate::code::Variation,
    /// The program's calls, by their place among its calls.
    pub(crate) calls: Vec<CallEntry>,
    /// The places of the calls whose outcomes reached the program, in the
    /// order they did.
    #[serde(default)]
    pub(crate) delivered: Vec<usize>,
}

/// The body of a [`TurnState`], read once its format and version are known.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    format: String,
    /// Checked before the body is read; every version read so far reads
    /// as this one.
    #[serde(rename = "version")]
    _version: u32,
    library: String,
    turn: String,
    provider: String,
    halted: bool,
    taint: BTreeSet<String>,
    calls: Vec<CallEntry>,
    answered: Vec<Answered>,
    #[serde(default)]
    hosted: HostedItems,
    #[serde(default)]
    approvals: Vec<ApprovalAnswer>,
    #[serde(default)]
    hosted_waiting: Vec<String>,
    #[serde(default)]
    programs: ProgramItems,
    #[serde(default)]
    code: Vec<ProgramJournal>,
    /// The document's MACs, checked by `TurnState::from_json_with_mac`
    /// only.
    #[serde(default)]
    mac: Option<Value>,
}

impl<'de> Deserialize<'de> for TurnState {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let value = Value::deserialize(deserializer)?;
        TurnState::read(value).map_err(|e| D::Error::custom(e.message()))
    }
}

impl TurnState {
    /// A document read as a turn state of [`TURN_STATE_VERSION`], its format
    /// and version checked first, then that no two of its calls share an
    /// index or an id.
    pub(super) fn read(value: Value) -> Result<Self> {
        check_version(&value)?;
        let body: Body = serde_json::from_value(value)
            .map_err(|e| Error::input(format!("the turn state does not read: {e}")))?;
        if body.mac.is_some() {
            return Err(Error::input(
                "the turn state is refused: it carries a MAC, so it is read only with its key \
                 (`TurnState::from_json_with_mac`; on the command line --state-key-file or \
                 MCP_ADAPTERS_STATE_KEY)",
            ));
        }
        check_calls(&body.calls, &body.answered)?;
        Ok(TurnState {
            format: body.format,
            // An older version is read as this one: what it lacks is empty.
            version: TURN_STATE_VERSION,
            library: body.library,
            turn: body.turn,
            provider: body.provider,
            halted: body.halted,
            taint: body.taint,
            calls: body.calls,
            answered: body.answered,
            hosted: body.hosted,
            approvals: body.approvals,
            hosted_waiting: body.hosted_waiting,
            programs: body.programs,
            code: body.code,
        })
    }
}

/// Refuses a document two of whose calls share an index, or two of whose
/// calls sent to a server share an id: each call of a turn is one of the
/// model's, which the document cannot repeat. (A call answered without a
/// server may repeat an id: the model's repeated id is why it was refused.)
fn check_calls(calls: &[CallEntry], answered: &[Answered]) -> Result<()> {
    let refuse = |why: String| {
        Error::new(
            ErrorKind::Input,
            format!("the turn state is refused: {why}"),
        )
    };
    let mut indexes = std::collections::HashSet::new();
    let mut ids = std::collections::HashSet::new();
    let each = calls
        .iter()
        .map(|c| (c.index, c.call_id.as_deref(), true))
        .chain(
            answered
                .iter()
                .map(|a| (a.index, a.call_id.as_deref(), false)),
        );
    for (index, id, sent) in each {
        if !indexes.insert(index) {
            return Err(refuse(format!("two of its calls are at index {index}")));
        }
        if let Some(id) = id.filter(|_| sent)
            && !ids.insert(id)
        {
            return Err(refuse(format!(
                "two of its calls have the id `{}`",
                crate::describe::escape_visible(id)
            )));
        }
    }
    Ok(())
}

impl TurnState {
    /// Refuses a document one of whose calls names a tool `toolset` does
    /// not have (by its exposed name, as the same server's same tool): a
    /// turn answers only calls to the tools its model was offered.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] naming the call and the tool.
    pub(crate) fn check_tools(&self, toolset: &crate::toolset::ToolSet) -> Result<()> {
        for call in &self.calls {
            let offered = toolset
                .resolve(&call.exposed_name)
                .is_some_and(|t| t.server_id == call.server_id && t.tool.name == call.tool);
            if !offered {
                let escape = crate::describe::escape_visible;
                return Err(Error::new(
                    ErrorKind::Input,
                    format!(
                        "the turn state is refused: its call {} names `{}` (`{}/{}`), which the toolset does not offer",
                        call.index,
                        escape(&call.exposed_name),
                        escape(&call.server_id),
                        escape(&call.tool)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Refuses a document that is not a turn state of [`TURN_STATE_VERSION`].
fn check_version(value: &Value) -> Result<()> {
    let refuse = |why: String| Error::input(why);
    let Some(map) = value.as_object() else {
        return Err(refuse("a turn state is a JSON object".into()));
    };
    match map.get("format").and_then(Value::as_str) {
        Some(TURN_STATE_FORMAT) => {}
        Some(other) => {
            return Err(refuse(format!(
                "this is not a turn state: its format is `{other}`, not `{TURN_STATE_FORMAT}`"
            )));
        }
        None => {
            return Err(refuse(format!(
                "this is not a turn state: it has no `format: {TURN_STATE_FORMAT}`"
            )));
        }
    }
    let written_by = map
        .get("library")
        .and_then(Value::as_str)
        .map_or_else(String::new, |v| format!(" (by mcp-adapters {v})"));
    match map.get("version").and_then(Value::as_u64) {
        Some(v)
            if (u64::from(OLDEST_TURN_STATE_VERSION)..=u64::from(TURN_STATE_VERSION))
                .contains(&v) =>
        {
            Ok(())
        }
        Some(v) => Err(refuse(format!(
            "this turn state is version {v} of the format{written_by}, and this library \
             (mcp-adapters {}) reads versions {OLDEST_TURN_STATE_VERSION} to \
             {TURN_STATE_VERSION} only: resume it with the version that suspended it",
            env!("CARGO_PKG_VERSION")
        ))),
        None => Err(refuse(format!(
            "this turn state has no `version`{written_by}; this library reads version \
             {TURN_STATE_VERSION}"
        ))),
    }
}

impl TurnState {
    pub(crate) fn new(turn: String, provider: String) -> Self {
        TurnState {
            format: TURN_STATE_FORMAT.to_owned(),
            version: TURN_STATE_VERSION,
            library: env!("CARGO_PKG_VERSION").to_owned(),
            turn,
            provider,
            halted: false,
            taint: BTreeSet::new(),
            calls: Vec::new(),
            answered: Vec::new(),
            hosted: HostedItems::default(),
            approvals: Vec::new(),
            hosted_waiting: Vec::new(),
            programs: ProgramItems::default(),
            code: Vec::new(),
        }
    }

    /// The document as JSON bytes.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] if a value in it cannot be written (a result
    /// holding a number JSON cannot carry).
    pub fn to_json(&self) -> Result<Vec<u8>> {
        serde_json::to_vec_pretty(self)
            .map_err(|e| Error::input("the turn state cannot be written as JSON").with_source(e))
    }

    /// Writes the document ([`to_json`](Self::to_json)) to `path` as a
    /// file only its owner may read and write (mode 0600 on Unix, whatever
    /// the umask): a new file in the same folder, synced, then renamed over
    /// `path`. A crash leaves the earlier document whole, and a symbolic
    /// link at `path` is replaced, never followed. The document holds the
    /// calls' arguments and results: keep it as you keep the conversation.
    ///
    /// # Errors
    ///
    /// As [`to_json`](Self::to_json); [`ErrorKind::Io`] naming `path` when
    /// it cannot be written.
    pub fn write_file(&self, path: impl AsRef<std::path::Path>) -> Result<()> {
        crate::files::write_private(path.as_ref(), &self.to_json()?)
    }

    /// Reads a document written by [`to_json`](Self::to_json).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] for bytes that are not a turn state, or one of
    /// another format version (the message names both versions).
    pub fn from_json(bytes: &[u8]) -> Result<Self> {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| Error::input("the turn state is not JSON").with_source(e))?;
        Self::read(value)
    }

    /// The turn's id, from which each call's idempotency key is derived
    /// (with its server's id and its position among the turn's calls to
    /// that server). It is never sent.
    pub fn turn_id(&self) -> &str {
        &self.turn
    }

    /// The provider whose response the turn answers (its spec id).
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The servers whose output was in the model's context when it made
    /// the turn's calls: with the resumed turn's
    /// [`Execution::ran_servers`](crate::Execution::ran_servers), the next
    /// turn's taint ([`ExecOptions::taint`](crate::exec::ExecOptions::taint)).
    pub fn taint(&self) -> &BTreeSet<String> {
        &self.taint
    }

    /// What the turn waits for: each call (or hosted approval request)
    /// that waits, and for what.
    pub fn waiting(&self) -> Vec<Waiting> {
        let mut waiting: Vec<Waiting> = Vec::new();
        for entry in &self.calls {
            // A code-mode program waits for its calls that wait.
            let program = self
                .code
                .iter()
                .find(|j| j.program_index == entry.index)
                .filter(|_| matches!(entry.stage, Stage::Pending));
            let inner: Vec<&CallEntry> = program
                .map(|j| {
                    j.calls
                        .iter()
                        .filter(|c| wait_of(&c.stage).is_some())
                        .collect()
                })
                .unwrap_or_default();
            if inner.is_empty() {
                waiting.extend(self.waiting_entry(entry));
            } else {
                waiting.extend(inner.into_iter().filter_map(|c| self.waiting_entry(c)));
            }
        }
        waiting.extend(
            self.hosted
                .approvals
                .iter()
                .filter(|a| self.hosted_waiting.contains(&a.id))
                .map(|a| Waiting {
                    index: usize::MAX,
                    call_id: Some(a.id.clone()),
                    exposed_name: format!("{}/{}", a.server_id, a.tool),
                    server_id: a.server_id.clone(),
                    tool: a.tool.clone(),
                    arguments: a.arguments.as_object().cloned().unwrap_or_default(),
                    what: Wait::HostedApproval,
                    caller: Caller::Model,
                    expires_at: None,
                }),
        );
        waiting
    }

    /// `entry`, if it waits.
    fn waiting_entry(&self, entry: &CallEntry) -> Option<Waiting> {
        let what = wait_of(&entry.stage)?;
        // A program's call: its program waits in the container until the
        // container expires.
        let expires_at = match &entry.caller {
            Caller::Program(_) => self
                .programs
                .container
                .as_ref()
                .and_then(|c| c.expires_at.clone()),
            Caller::Model | Caller::Code(_) => None,
        };
        Some(Waiting {
            index: entry.index,
            call_id: entry.call_id.clone(),
            exposed_name: entry.exposed_name.clone(),
            server_id: entry.server_id.clone(),
            tool: entry.tool.clone(),
            arguments: entry.arguments.clone(),
            what,
            caller: entry.caller.clone(),
            expires_at,
        })
    }

    /// The journal of the code-mode program of the model's call `index`.
    #[cfg(feature = "code-mode")]
    pub(crate) fn program(&self, index: usize) -> Option<&ProgramJournal> {
        self.code.iter().find(|j| j.program_index == index)
    }

    /// Sets the stage of `call` (adding the call if it is new), with the
    /// arguments it is sent with (a `before` hook may have changed them); a
    /// code-mode program's call in its program's journal.
    pub(crate) fn set_stage(&mut self, call: &ToolCall, stage: Stage) {
        let calls = match call.caller.code() {
            Some(code) => match self
                .code
                .iter_mut()
                .find(|j| j.program_index == code.program_index)
            {
                Some(journal) => &mut journal.calls,
                None => return,
            },
            None => &mut self.calls,
        };
        match calls.iter_mut().rev().find(|c| c.index == call.index) {
            Some(entry) => {
                entry.arguments.clone_from(&call.arguments);
                entry.stage = stage;
            }
            None => {
                let at = calls.partition_point(|c| c.index < call.index);
                calls.insert(at, CallEntry::new(call, stage));
            }
        }
    }
}

/// What a call at `stage` waits for, if it waits.
fn wait_of(stage: &Stage) -> Option<Wait> {
    Some(match stage {
        Stage::WaitingForApproval => Wait::Approval,
        Stage::WaitingForInput { asked, .. } => Wait::Input {
            requests: asked.input_requests.clone(),
        },
        Stage::WaitingForTask {
            task_id,
            status,
            poll_interval_ms,
        } => Wait::Task {
            task_id: task_id.clone(),
            status: status.clone(),
            poll_interval_ms: *poll_interval_ms,
        },
        // Not sent: the turn was interrupted before it.
        Stage::Pending => Wait::Resume,
        Stage::Sent | Stage::Ended(_) => return None,
    })
}

/// A call (or a hosted call's approval request) a suspended turn waits on.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Waiting {
    /// The call's position in the model's response (`usize::MAX` for a
    /// hosted call's approval request, which is not among the calls).
    #[serde(skip_serializing_if = "is_max")]
    pub index: usize,
    /// The call's id: the provider's, or the approval request's. Decide it
    /// with [`ExecOptions::approve_call`](crate::exec::ExecOptions::approve_call)
    /// by this id (or `#INDEX` when there is none).
    pub call_id: Option<String>,
    /// The name the model called.
    pub exposed_name: String,
    /// The tool's server.
    pub server_id: String,
    /// The tool's MCP name.
    pub tool: String,
    /// The arguments the call is (or was) sent with, but for the values
    /// the application binds, which are written when it is sent.
    pub arguments: Map<String, Value>,
    /// What it waits for.
    #[serde(flatten)]
    pub what: Wait,
    /// Who made the call: a program's call waits with its program.
    #[serde(skip_serializing_if = "Caller::is_model")]
    pub caller: Caller,
    /// For a program's call, until when the provider's container waits
    /// for its answer (as the provider wrote the time): resume the turn
    /// before then, or the program fails.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

fn is_max(index: &usize) -> bool {
    *index == usize::MAX
}

/// What a call waits for.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "waits_for", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Wait {
    /// An approval the policy asks for: the call was never sent.
    Approval,
    /// The answers to its tool's questions (`input_required`, MCP
    /// 2026-07-28): the call was sent, and goes on with the answers.
    Input {
        /// The questions, keyed as the tool asked them.
        requests: InputRequests,
    },
    /// The application's answer to the provider's approval request for a
    /// call on a server it hosts.
    HostedApproval,
    /// The end of the task its server runs it as (MCP 2025-11-25 tasks, or
    /// the 2026-07-28 tasks extension): the call was sent, and is taken up
    /// by following the task. Resume once it may have ended (the server's
    /// poll interval is a hint).
    Task {
        /// The task's id on its server.
        task_id: String,
        /// Its status when the turn was suspended (`working`, `input_required`).
        status: String,
        /// How often the server asks to be polled, in milliseconds.
        #[serde(skip_serializing_if = "Option::is_none")]
        poll_interval_ms: Option<u64>,
    },
    /// Nothing but the turn's resumption: the call was not sent, because
    /// the application interrupted the turn first
    /// ([`Interrupt`](crate::exec::Interrupt)). Resuming sends it (the
    /// policy and the approver decide it then).
    Resume,
}

/// A call the pipeline runs, and how far it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CallEntry {
    pub(crate) index: usize,
    #[serde(default)]
    pub(crate) call_id: Option<String>,
    pub(crate) exposed_name: String,
    pub(crate) server_id: String,
    pub(crate) tool: String,
    pub(crate) arguments: Map<String, Value>,
    pub(crate) stage: Stage,
    #[serde(default, skip_serializing_if = "Caller::is_model")]
    pub(crate) caller: Caller,
    /// The result selection filter the model wrote, taken out of the arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) select: Option<String>,
}

impl CallEntry {
    pub(crate) fn new(call: &ToolCall, stage: Stage) -> Self {
        CallEntry {
            index: call.index,
            call_id: call.call_id.clone(),
            exposed_name: call.exposed_name.clone(),
            server_id: call.server_id.clone(),
            tool: call.tool.clone(),
            arguments: call.arguments.clone(),
            stage,
            caller: call.caller.clone(),
            select: call.select.clone(),
        }
    }

    pub(crate) fn call(&self) -> ToolCall {
        ToolCall {
            call_id: self.call_id.clone(),
            server_id: self.server_id.clone(),
            tool: self.tool.clone(),
            exposed_name: self.exposed_name.clone(),
            arguments: self.arguments.clone(),
            index: self.index,
            caller: self.caller.clone(),
            select: self.select.clone(),
        }
    }
}

/// How far a call got: `"pending"`, `"waiting_for_approval"`, `"sent"`, or an
/// object keyed by the stage (`{"ended": {...}}`). Externally tagged, so
/// that reading it back buffers nothing (numbers stay numbers, whatever
/// serde_json features the build enables).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Stage {
    /// Not sent yet: resumed, it runs from the start (policy included).
    Pending,
    /// Not sent: the policy asks, and no one answered yet.
    WaitingForApproval,
    /// Sent; its tool asked (round `round`) and waits for the answers.
    WaitingForInput {
        round: usize,
        asked: InputRequiredResult,
    },
    /// Sent; its server runs it as a task (`task_id`), still working (or
    /// asking for input) when the turn was suspended. Resumed, the task is
    /// followed (`tasks/get`), never the call sent again.
    WaitingForTask {
        task_id: String,
        status: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        poll_interval_ms: Option<u64>,
    },
    /// Sent, and not answered when the state was taken.
    Sent,
    /// Ended: its result, or why it did not complete (with the result an
    /// error replaced, if any), and the record's notes.
    Ended(Ended),
}

/// A call's end as the server (or the pipeline) gave it: its result, or
/// why it did not complete. The `outputSchema` check runs again when the
/// turn is answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Ended {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<CallToolResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<KeptError>,
}

impl Ended {
    pub(crate) fn of(outcome: &Result<CallToolResult>) -> Self {
        match outcome {
            Ok(result) => Ended {
                result: Some(result.clone()),
                error: None,
            },
            Err(error) => Ended {
                result: None,
                error: Some(KeptError::of(error)),
            },
        }
    }

    pub(crate) fn outcome(&self) -> Result<CallToolResult> {
        match (&self.error, &self.result) {
            (Some(error), _) => Err(error.error()),
            (None, Some(result)) => Ok(result.clone()),
            (None, None) => Err(Error::input(
                "the turn state keeps neither a result nor an error for this call",
            )),
        }
    }
}

/// An error as a turn state keeps it: its kind and its whole message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KeptError {
    kind: ErrorKind,
    message: String,
}

impl KeptError {
    pub(crate) fn of(error: &Error) -> Self {
        KeptError {
            kind: error.kind(),
            message: error.message_with_causes(),
        }
    }

    pub(crate) fn error(&self) -> Error {
        Error::new(self.kind, self.message.clone())
    }
}

/// A call answered without a server: rejected at extraction, or a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Answered {
    pub(crate) index: usize,
    #[serde(default)]
    pub(crate) call_id: Option<String>,
    #[serde(default)]
    pub(crate) exposed_name: Option<String>,
    /// The answer, in the provider's shape.
    pub(crate) answer: Value,
    /// Why a rejected call was not sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<KeptError>,
    /// The tools a search found (a search has no error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) found: Option<Vec<String>>,
    /// Who made a rejected call.
    #[serde(default, skip_serializing_if = "Caller::is_model")]
    pub(crate) caller: Caller,
}

impl Answered {
    pub(crate) fn rejected(call: &RejectedCall) -> Self {
        Answered {
            index: call.index,
            call_id: call.call_id.clone(),
            exposed_name: call.exposed_name.clone(),
            answer: call.answer.clone(),
            error: Some(KeptError::of(&call.error)),
            found: None,
            caller: call.caller.clone(),
        }
    }
}

/// Keeps a turn's state where the process's end cannot reach it; see
/// [`ExecOptions::checkpoint`](crate::exec::ExecOptions::checkpoint). `Ok`
/// once it is kept.
pub type Checkpoint = Arc<dyn Fn(TurnState) -> BoxFuture<'static, Result<()>> + Send + Sync>;

/// A turn's state as it goes, kept when the turn may be suspended or is
/// checkpointed. Changes are made at once; [`flush`](Self::flush) hands the
/// state to the checkpoint, one at a time, each later state holding every
/// change of the earlier ones.
pub(crate) struct Journal {
    state: Mutex<(TurnState, u64)>,
    checkpoint: Option<Checkpoint>,
    /// Held while the checkpoint keeps a state: the number of the last
    /// change it kept.
    kept: tokio::sync::Mutex<u64>,
}

impl Journal {
    pub(crate) fn new(state: TurnState, checkpoint: Option<Checkpoint>) -> Self {
        Journal {
            state: Mutex::new((state, 0)),
            checkpoint,
            kept: tokio::sync::Mutex::new(0),
        }
    }

    /// Changes the state (the next [`flush`](Self::flush) keeps it), and
    /// answers the change's number.
    pub(crate) fn update(&self, change: impl FnOnce(&mut TurnState)) -> u64 {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        change(&mut state.0);
        state.1 += 1;
        state.1
    }

    /// Hands the state, with every change made so far, to the checkpoint
    /// and waits until it is kept. Nothing to do without a checkpoint, or
    /// when a later flush already kept these changes.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unavailable`] when the checkpoint failed (or panicked):
    /// the state is not kept.
    pub(crate) async fn flush(&self) -> Result<()> {
        let change = self.state.lock().unwrap_or_else(PoisonError::into_inner).1;
        self.flush_through(change).await
    }

    /// [`flush`](Self::flush) until change `through` is kept: a state kept
    /// meanwhile for another call's change that holds it is enough (the
    /// calls' changes are kept together).
    ///
    /// # Errors
    ///
    /// As [`flush`](Self::flush).
    pub(crate) async fn flush_through(&self, through: u64) -> Result<()> {
        let Some(checkpoint) = &self.checkpoint else {
            return Ok(());
        };
        let mut kept = self.kept.lock().await;
        if *kept >= through {
            return Ok(());
        }
        let (state, change) = {
            let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            (state.0.clone(), state.1)
        };
        let turn = state.turn.clone();
        // The checkpoint itself, and the future it answers, may panic.
        let keeping = std::panic::AssertUnwindSafe(async move { checkpoint(state).await });
        let failed = match futures_util::FutureExt::catch_unwind(keeping).await {
            Ok(Ok(())) => {
                *kept = change;
                return Ok(());
            }
            // The cause is the application's (a store's error may name its
            // hosts): in the log, not in what the model is told.
            Ok(Err(error)) => {
                tracing::error!(turn = %turn, error = %error.message_with_causes(),
                    "the turn's checkpoint failed");
                Error::new(ErrorKind::Unavailable, "the turn's state could not be kept").plain()
            }
            Err(panic) => {
                let why = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                tracing::error!(turn = %turn, panic = %why, "the turn's checkpoint panicked");
                Error::new(
                    ErrorKind::Unavailable,
                    "the turn's state could not be kept (its checkpoint panicked)",
                )
                .plain()
            }
        };
        Err(failed)
    }

    /// [`flush`](Self::flush), where a failure is only logged (the change
    /// it would have kept is kept by the next flush, or lost with the
    /// process).
    pub(crate) async fn flush_or_log(&self) {
        if let Err(error) = self.flush().await {
            tracing::warn!(error = %error, "a stage change of the turn was not kept");
        }
    }

    /// Sets the stage of `call` (adding the call if it is new), and answers
    /// the change's number.
    pub(crate) fn stage(&self, call: &ToolCall, stage: Stage) -> u64 {
        self.update(|state| state.set_stage(call, stage))
    }

    /// The state as it is now.
    pub(crate) fn snapshot(&self) -> TurnState {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .clone()
    }
}

/// A call that waits, on its way out of the pipeline: the error a call
/// ends with carries it as its source.
#[derive(Debug, Clone)]
pub(crate) struct Waits(pub(crate) Stage);

impl std::fmt::Display for Waits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Stage::WaitingForApproval => f.write_str("the call waits for approval"),
            Stage::WaitingForInput { .. } => {
                f.write_str("the call waits for the answers to its tool's questions")
            }
            Stage::WaitingForTask { .. } => f.write_str("the call waits for its task to end"),
            Stage::Pending => f.write_str("the call was not sent: the turn was interrupted first"),
            Stage::Sent | Stage::Ended(_) => f.write_str("the call waits"),
        }
    }
}

impl std::error::Error for Waits {}

impl Waits {
    /// The error a waiting call ends its pipeline with.
    pub(crate) fn error(stage: Stage) -> Error {
        let waits = Waits(stage);
        Error::new(ErrorKind::Denied, waits.to_string()).with_source(waits)
    }

    /// The stage a call's error says it waits at, if it waits.
    pub(crate) fn of(error: &Error) -> Option<&Stage> {
        std::error::Error::source(error)
            .and_then(|s| s.downcast_ref::<Waits>())
            .map(|w| &w.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_version_is_refused_by_name() {
        let mut state = TurnState::new("t".into(), "p".into());
        state.version = 0;
        let bytes = serde_json::to_vec(&state).unwrap();
        let err = TurnState::from_json(&bytes).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Input);
        assert!(err.message().contains("version 0"), "{err}");
        assert!(err.message().contains("reads versions 1 to 2"), "{err}");
        let err = serde_json::from_slice::<TurnState>(&bytes).unwrap_err();
        assert!(err.to_string().contains("version 0"), "{err}");
        let err = TurnState::from_json(br#"{"format": "other"}"#).unwrap_err();
        assert!(err.message().contains("`other`"), "{err}");
    }

    #[test]
    fn a_state_reads_back_as_written() {
        let mut state = TurnState::new("t".into(), "p".into());
        state.calls.push(CallEntry {
            index: 0,
            call_id: Some("c".into()),
            exposed_name: "a__b".into(),
            server_id: "a".into(),
            tool: "b".into(),
            arguments: Map::new(),
            stage: Stage::WaitingForApproval,
            caller: Caller::program(
                "p1",
                serde_json::json!({"type": "program", "caller_id": "p1"}),
            ),
            select: None,
        });
        state.calls.push(CallEntry {
            index: 1,
            call_id: None,
            exposed_name: "a__c".into(),
            server_id: "a".into(),
            tool: "c".into(),
            arguments: Map::new(),
            stage: Stage::Ended(Ended::of(&Err(Error::new(ErrorKind::Timeout, "slow")))),
            caller: Caller::Model,
            select: Some(".items[0]".into()),
        });
        state.programs.container = Some(crate::programs::Container {
            id: "container_1".into(),
            expires_at: Some("2026-01-01T00:00:00Z".into()),
        });
        let bytes = state.to_json().unwrap();
        assert_eq!(TurnState::from_json(&bytes).unwrap(), state);
    }

    #[test]
    fn the_wait_rides_on_the_error() {
        let err = Waits::error(Stage::WaitingForApproval);
        assert_eq!(Waits::of(&err), Some(&Stage::WaitingForApproval));
        assert!(Waits::of(&Error::new(ErrorKind::Denied, "no")).is_none());
    }
}
