//! Calls that run as tasks, followed to their end (see [`crate::mcp::TaskState`]
//! for the two generations on the wire).
//!
//! A call runs as a task when the server makes it one: a 2026-07-28 server
//! answers with a task handle (the client declares the tasks extension on
//! every call), and a 2025-11-25 tool whose task support is `required` refuses
//! a plain call with -32601, after which its calls are sent task-augmented
//! (`params.task`). The client then polls at the server's interval, relays
//! each status as progress, answers the input the task asks for through the
//! call's answerer (2025: requests tied to the task; 2026: `inputRequests`,
//! answered with `tasks/update`), and answers the call with the task's result
//! like any call. A task is cancelled (`tasks/cancel`) when its call is
//! dropped before the end (a timeout, an abandoned turn) or its turn halts.

use std::collections::BTreeSet;
use std::time::Duration;

use rmcp::model::{
    CancelTaskParams, ClientRequest, CustomRequest, GetTaskParams, ServerResult, UpdateTaskParams,
};
use rmcp::service::{Peer, RoleClient};
use serde_json::{Map, Value, json};

use super::convert::call_tool_response;
use super::live::McpClient;
use super::requests::Registration;
use super::session::Session;
use crate::describe::sanitize_description;
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{Answerer, CallContext};
use crate::mcp::{CallToolResponse, CallToolResult, InputRequiredResult, TaskState, TaskStatus};

/// The poll interval when the server gives none.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// The shortest poll interval, whatever the server says.
const MIN_POLL: Duration = Duration::from_millis(50);

/// Which tasks a call runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Generation {
    /// MCP 2025-11-25: `params.task`, `tasks/get`, `tasks/result`, `tasks/cancel`.
    Augmented,
    /// The `io.modelcontextprotocol/tasks` extension (2026-07-28): `tasks/get`,
    /// `tasks/update`, `tasks/cancel`.
    Extension,
}

/// What a call brings to its task.
pub(super) struct TaskCall<'a> {
    pub(super) name: &'a str,
    /// The session the call is sent on; its task lives and dies with it.
    pub(super) session: &'a Session,
    pub(super) context: &'a CallContext,
    pub(super) answerer: &'a Answerer,
    pub(super) registration: &'a Registration,
    /// Whether a working task is handed back to the runner rather than
    /// followed to its end: the call's turn may be suspended, and the task
    /// outlives this process (its server is not one the process started).
    pub(super) hand_back: bool,
}

/// Cancels the task on the server when dropped while it still runs.
struct Running {
    peer: Peer<RoleClient>,
    /// Where the cancel request is tracked until it is answered.
    owed: tokio_util::task::TaskTracker,
    task_id: String,
    generation: Generation,
    ended: bool,
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let (peer, task_id, generation) =
            (self.peer.clone(), self.task_id.clone(), self.generation);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(self.owed.track_future(async move {
                    if let Err(e) = cancel(&peer, &task_id, generation).await {
                        tracing::debug!(task = %task_id, error = %e, "could not send tasks/cancel");
                    }
                }));
            }
            Err(_) => tracing::debug!(task = %self.task_id, "no runtime to send tasks/cancel on"),
        }
    }
}

async fn cancel(
    peer: &Peer<RoleClient>,
    task_id: &str,
    generation: Generation,
) -> std::result::Result<(), rmcp::ServiceError> {
    match generation {
        Generation::Extension => peer.cancel_task(CancelTaskParams::new(task_id)).await,
        Generation::Augmented => peer
            .send_request(custom("tasks/cancel", json!({"taskId": task_id})))
            .await
            .map(|_| ()),
    }
}

/// Completes once the call's turn is halted, looking every `interval`.
async fn halted(answerer: &Answerer, interval: Duration) {
    while !answerer.is_halted() {
        tokio::time::sleep(interval).await;
    }
}

fn custom(method: &str, params: Value) -> ClientRequest {
    ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)))
}

/// A task handed back to the runner, still running on its server.
fn handed_back(
    task_id: &str,
    status: &TaskStatus,
    poll: Option<Duration>,
) -> Result<CallToolResponse> {
    let mut wire = json!({"resultType": "task", "taskId": task_id, "status": status});
    if let Some(every) = poll {
        wire["pollIntervalMs"] = json!(u64::try_from(every.as_millis()).unwrap_or(u64::MAX));
    }
    CallToolResponse::from_value(wire)
}

/// A result the SDK read, as JSON.
fn raw(result: &ServerResult) -> Value {
    serde_json::to_value(result).unwrap_or(Value::Null)
}

impl McpClient {
    /// Sends `tools/call` as a task (MCP 2025-11-25) and follows the task.
    pub(super) async fn call_as_task(
        &self,
        call: &TaskCall<'_>,
        arguments: Map<String, Value>,
    ) -> Result<CallToolResponse> {
        let what = format!("tools/call `{}` (as a task)", call.name);
        let mut params = json!({"name": call.name, "arguments": arguments, "task": {}});
        if let Some(meta) = &call.context.meta {
            params["_meta"] = Value::Object(meta.clone());
        }
        if let Some(key) = &call.context.idempotency_key {
            params["_meta"][crate::exec::durable::IDEMPOTENCY_KEY] = Value::String(key.to_string());
        }
        let answer = call
            .session
            .peer()
            .send_request(custom("tools/call", params))
            .await
            .map_err(|e| call.session.error(&what, e, true))?;
        let wire = raw(&answer);
        if wire.get("task").is_none() {
            // The server ran the call at once.
            return call_tool_response(answer);
        }
        let state = TaskState::from_value(&wire).map_err(|e| {
            let message = format!("server `{}` answered {what}: {}", self.name, e.message());
            e.with_message(message)
        })?;
        // The tool runs as a task: its next calls are sent as one at once.
        self.remember_task(call.name);
        self.follow_task(call, state, Generation::Augmented).await
    }

    /// Polls a task until it ends, answering what it asks on the way.
    pub(super) async fn follow_task(
        &self,
        call: &TaskCall<'_>,
        mut state: TaskState,
        generation: Generation,
    ) -> Result<CallToolResponse> {
        call.registration.set_task(&state.task_id);
        let task_id = state.task_id.clone();
        let mut running = Running {
            peer: call.session.peer().clone(),
            owed: call.session.owed().clone(),
            task_id: task_id.clone(),
            generation,
            ended: false,
        };
        let mut interval = DEFAULT_POLL;
        let mut answered: BTreeSet<String> = BTreeSet::new();
        let mut round = 0usize;
        for poll in 1u64.. {
            if let Some(every) = state.poll_interval {
                interval = every.max(MIN_POLL);
            }
            self.relay(call.context, &state, poll);
            match (&state.status, generation) {
                (TaskStatus::Cancelled, _) => {
                    running.ended = true;
                    return Err(self.task_error(&state, "the server cancelled it"));
                }
                // `tasks/result` waits for the end, delivering the requests
                // the task makes meanwhile (tied to it).
                (
                    TaskStatus::Completed | TaskStatus::Failed | TaskStatus::InputRequired,
                    Generation::Augmented,
                ) => {
                    let result = tokio::select! {
                        result = self.task_result(call.session, &task_id) => result,
                        () = halted(call.answerer, interval) => {
                            running.ended = true;
                            return Err(self.halted_task(&running).await);
                        }
                    };
                    running.ended = true;
                    return result;
                }
                (TaskStatus::Completed, Generation::Extension) => {
                    running.ended = true;
                    let result = state.result.take().unwrap_or_else(|| json!({}));
                    let result: CallToolResult = serde_json::from_value(result).map_err(|e| {
                        self.task_error(&state, "its result cannot be read")
                            .with_source(e)
                    })?;
                    return Ok(CallToolResponse::Complete(result));
                }
                (TaskStatus::Failed, Generation::Extension) => {
                    running.ended = true;
                    let why = match &state.error {
                        Some(error) => format!(
                            "it failed with error {}: {}",
                            error
                                .get("code")
                                .map_or_else(|| "?".to_owned(), Value::to_string),
                            sanitize_description(
                                error.get("message").and_then(Value::as_str).unwrap_or("")
                            )
                        ),
                        None => "it failed".to_owned(),
                    };
                    return Err(self.task_error(&state, &why));
                }
                (TaskStatus::InputRequired, Generation::Extension) => {
                    let mut asked = InputRequiredResult::new();
                    asked.input_requests = state
                        .input_requests
                        .iter()
                        .filter(|(key, _)| !answered.contains(*key))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    if !asked.input_requests.is_empty() {
                        round += 1;
                        let responses = match call.answerer.answer_task_round(&asked, round).await {
                            Ok(responses) => responses,
                            // No answer now, and the turn may be suspended:
                            // the task keeps waiting on its server.
                            Err(e)
                                if crate::exec::durable::Waits::of(&e).is_some()
                                    && call.hand_back =>
                            {
                                running.ended = true;
                                return handed_back(&task_id, &state.status, state.poll_interval);
                            }
                            Err(e) if crate::exec::durable::Waits::of(&e).is_some() => {
                                return Err(self.task_error(
                                    &state,
                                    "it asks for input no handler answers now, and it cannot \
                                     wait for the turn to resume: its server ends with this \
                                     process",
                                ));
                            }
                            Err(e) => return Err(e),
                        };
                        answered.extend(asked.input_requests.keys().cloned());
                        let wire = responses
                            .iter()
                            .filter_map(|(k, v)| {
                                serde_json::to_value(v).ok().map(|v| (k.clone(), v))
                            })
                            .collect();
                        call.session
                            .peer()
                            .update_task(UpdateTaskParams::new(task_id.clone(), wire))
                            .await
                            .map_err(|e| call.session.error("tasks/update", e, true))?;
                        // Look again at once: the answers may have moved it on.
                        state = self.get_task(call.session, &task_id, generation).await?;
                        continue;
                    }
                }
                (TaskStatus::Working, _) if call.hand_back && !call.answerer.is_halted() => {
                    // The turn may be suspended: the task goes on without us.
                    running.ended = true;
                    return handed_back(&task_id, &state.status, state.poll_interval);
                }
                (TaskStatus::Working, _) => {}
            }
            if call.answerer.is_halted() {
                running.ended = true;
                return Err(self.halted_task(&running).await);
            }
            tokio::time::sleep(interval).await;
            state = self.get_task(call.session, &task_id, generation).await?;
        }
        unreachable!("the poll counter does not run out")
    }

    /// Takes up task `task_id` of a call of `tool` handed back in a turn
    /// that was suspended: follows it from its state now. A task the server
    /// no longer has is an [`ErrorKind::Interrupted`] error.
    pub(super) async fn take_up_task(
        &self,
        session: &Session,
        tool: &str,
        task_id: &str,
        context: &CallContext,
        answerer: &Answerer,
        registration: &Registration,
    ) -> Result<CallToolResponse> {
        let generation = if session.is_modern() {
            Generation::Extension
        } else {
            Generation::Augmented
        };
        let hand_back = self.hands_back(answerer);
        let state = match self.get_task(session, task_id, generation).await {
            Ok(state) => state,
            // The server answered, and does not know the task.
            Err(e) if e.kind() == ErrorKind::Server => {
                return Err(Error::new(
                    ErrorKind::Interrupted,
                    format!(
                        "server `{}` no longer has task `{}` of the call (it may have restarted, \
                         or keep its tasks per session): the call may or may not have run, and it \
                         was not sent again ({})",
                        self.name,
                        sanitize_description(task_id),
                        e.message()
                    ),
                ));
            }
            // Not reached now: the task may still be there, for a later resume.
            Err(e) if hand_back => {
                tracing::warn!(server = %self.name, task = %task_id, error = %e,
                    "the task could not be looked at; it waits for a later resume");
                return handed_back(task_id, &TaskStatus::Working, None);
            }
            Err(e) => return Err(e),
        };
        let call = TaskCall {
            name: tool,
            session,
            context,
            answerer,
            registration,
            hand_back,
        };
        self.follow_task(&call, state, generation).await
    }

    /// Cancels a task whose turn halted; the error its call is answered with.
    async fn halted_task(&self, running: &Running) -> Error {
        if let Err(e) = cancel(&running.peer, &running.task_id, running.generation).await {
            tracing::debug!(task = %running.task_id, error = %e, "could not send tasks/cancel");
        }
        Error::new(
            ErrorKind::Denied,
            format!(
                "the turn was halted, so task `{}` of the call was cancelled",
                sanitize_description(&running.task_id)
            ),
        )
    }

    /// `tasks/get`, in either generation.
    async fn get_task(
        &self,
        session: &Session,
        task_id: &str,
        generation: Generation,
    ) -> Result<TaskState> {
        let wire = match generation {
            Generation::Extension => session
                .peer()
                .get_task(GetTaskParams::new(task_id))
                .await
                .map(|r| serde_json::to_value(&r).unwrap_or(Value::Null)),
            Generation::Augmented => session
                .peer()
                .send_request(custom("tasks/get", json!({"taskId": task_id})))
                .await
                .map(|r| raw(&r)),
        }
        .map_err(|e| session.error("tasks/get", e, true))?;
        let state = TaskState::from_value(&wire).map_err(|e| {
            let message = format!("server `{}` answered tasks/get: {}", self.name, e.message());
            e.with_message(message)
        })?;
        if state.task_id != task_id {
            return Err(Error::new(
                ErrorKind::Server,
                format!(
                    "server `{}` answered tasks/get for task `{}` with task `{}`",
                    self.name,
                    sanitize_description(task_id),
                    sanitize_description(&state.task_id)
                ),
            ));
        }
        Ok(state)
    }

    /// `tasks/result` (2025-11-25): the call's result, once the task ended.
    async fn task_result(&self, session: &Session, task_id: &str) -> Result<CallToolResponse> {
        let answer = session
            .peer()
            .send_request(custom("tasks/result", json!({"taskId": task_id})))
            .await
            .map_err(|e| session.error("tasks/result", e, true))?;
        call_tool_response(answer).map_err(|e| {
            let message = format!(
                "server `{}` answered tasks/result: {}",
                self.name,
                e.message()
            );
            e.with_message(message)
        })
    }

    /// The task's status, as progress of its call.
    fn relay(&self, context: &CallContext, state: &TaskState, poll: u64) {
        let mut message = format!(
            "task {}: {}",
            sanitize_description(&state.task_id),
            state.status.as_str()
        );
        if let Some(status) = &state.status_message {
            message.push_str(": ");
            message.push_str(&sanitize_description(status));
        }
        #[allow(clippy::cast_precision_loss)]
        context.report_progress(poll as f64, None, Some(message));
    }

    fn task_error(&self, state: &TaskState, why: &str) -> Error {
        let mut message = format!(
            "server `{}` ran the call as task `{}` and {why}",
            self.name,
            sanitize_description(&state.task_id)
        );
        if let Some(status) = &state.status_message {
            message.push_str(": ");
            message.push_str(&sanitize_description(status));
        }
        Error::new(ErrorKind::Server, message)
    }
}
