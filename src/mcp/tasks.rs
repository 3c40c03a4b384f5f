//! Tasks: a call the server runs in the background, polled until it ends.
//!
//! Two generations share the idea and differ on the wire:
//!
//! - **2025-11-25** (core, "experimental"): the client asks for a task with
//!   `params.task` on `tools/call`; the server answers `{"task": {...}}`
//!   (`pollInterval`, `ttl`); `tasks/get` polls, `tasks/result` waits for the
//!   end and returns the call's result, `tasks/cancel` cancels. A task that
//!   needs input sends its requests tied to the task
//!   (`_meta["io.modelcontextprotocol/related-task"]`).
//! - **2026-07-28** (the `io.modelcontextprotocol/tasks` extension): the
//!   client declares the extension and the server may answer with
//!   `resultType: "task"` (flat, `pollIntervalMs`, `ttlMs`); `tasks/get`
//!   carries the outcome inline (`result`, `error`) or the task's questions
//!   (`inputRequests`, answered with `tasks/update`).
//!
//! [`TaskState`] reads either form.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{InputRequests, Object};
use crate::error::{Error, Result};

/// Where a task is (`status`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// Still running.
    Working,
    /// Waiting for input from the client.
    InputRequired,
    /// Done; the result is available (a tool result with `isError` included).
    Completed,
    /// Ended with an error.
    Failed,
    /// Cancelled.
    Cancelled,
}

impl TaskStatus {
    /// `completed`, `failed` or `cancelled`: the task will not change again.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The wire value.
    pub fn as_str(&self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// What is known of a task: from a task handle or a `tasks/get` answer, in
/// either revision's form.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TaskState {
    /// The task's id.
    pub task_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// A message about the status, for people (or a model).
    pub status_message: Option<String>,
    /// How often the server asks to be polled.
    pub poll_interval: Option<Duration>,
    /// What the task asks for (2026-07-28, status `input_required`).
    pub input_requests: InputRequests,
    /// The call's result (2026-07-28, status `completed`).
    pub result: Option<Value>,
    /// The JSON-RPC error it ended with (2026-07-28, status `failed`).
    pub error: Option<Object>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    task_id: String,
    status: TaskStatus,
    #[serde(default)]
    status_message: Option<String>,
    #[serde(default)]
    poll_interval: Option<u64>,
    #[serde(default)]
    poll_interval_ms: Option<u64>,
    #[serde(default)]
    input_requests: InputRequests,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<Object>,
}

impl TaskState {
    /// Reads a task: `{"task": {...}}` (a 2025-11-25 task handle), or the
    /// task's own fields (a 2026-07-28 handle, or either revision's
    /// `tasks/get` answer).
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_adapters::mcp::{TaskState, TaskStatus};
    /// use serde_json::json;
    ///
    /// let old = TaskState::from_value(&json!({"task": {"taskId": "t1", "status": "working",
    ///     "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z",
    ///     "ttl": 60000, "pollInterval": 5000}}))?;
    /// let new = TaskState::from_value(&json!({"resultType": "task", "taskId": "t1", "status": "working",
    ///     "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z",
    ///     "ttlMs": 60000, "pollIntervalMs": 5000}))?;
    /// assert_eq!(old, new);
    /// assert_eq!(new.poll_interval, Some(Duration::from_secs(5)));
    /// assert_eq!(new.status, TaskStatus::Working);
    /// # Ok::<(), mcp_adapters::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when it is not a task, naming what is wrong.
    pub fn from_value(value: &Value) -> Result<Self> {
        let inner = match value.get("task") {
            Some(task @ Value::Object(_)) if value.get("taskId").is_none() => task,
            _ => value,
        };
        let wire =
            Wire::deserialize(inner).map_err(|e| Error::input("malformed task").with_source(e))?;
        Ok(TaskState {
            task_id: wire.task_id,
            status: wire.status,
            status_message: wire.status_message,
            poll_interval: wire
                .poll_interval_ms
                .or(wire.poll_interval)
                .map(Duration::from_millis),
            input_requests: wire.input_requests,
            result: wire.result,
            error: wire.error,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_every_status_and_its_payload() {
        let asking = TaskState::from_value(&json!({"taskId": "t", "status": "input_required",
            "inputRequests": {"q": {"method": "roots/list"}}, "resultType": "complete"}))
        .unwrap();
        assert_eq!(asking.input_requests.len(), 1);
        let done = TaskState::from_value(&json!({"taskId": "t", "status": "completed",
            "result": {"content": []}}))
        .unwrap();
        assert!(done.status.is_terminal() && done.result.is_some());
        let failed = TaskState::from_value(&json!({"taskId": "t", "status": "failed",
            "error": {"code": -32603, "message": "boom"}}))
        .unwrap();
        assert_eq!(failed.error.unwrap()["message"], "boom");
        assert!(TaskState::from_value(&json!({"taskId": "t", "status": "dreaming"})).is_err());
        assert!(TaskState::from_value(&json!({"task": 3})).is_err());
    }
}
