//! One turn's answers, in the model's order, however the calls finish.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use super::run::{CallRecord, ExecOptions, Execution, Status};
use crate::calls::{RejectedCall, ToolCall};
use crate::error::Result;
use crate::mcp::CallToolResult;
use crate::results::Outcome;
use crate::spec::Provider;

/// The answers of one turn, by the calls' positions in the model's order.
pub(crate) struct Turn<'a> {
    provider: &'a Provider,
    options: &'a ExecOptions,
    answers: Vec<Option<(Value, CallRecord)>>,
    ran_servers: BTreeSet<String>,
}

impl<'a> Turn<'a> {
    pub(crate) fn new(provider: &'a Provider, options: &'a ExecOptions) -> Self {
        Turn {
            provider,
            options,
            answers: Vec::new(),
            ran_servers: BTreeSet::new(),
        }
    }

    fn put(&mut self, index: usize, answer: Value, record: CallRecord) {
        if self.answers.len() <= index {
            self.answers.resize_with(index + 1, || None);
        }
        self.answers[index] = Some((answer, record));
    }

    /// A call that was never sent, with the answer extraction gave it.
    pub(crate) fn rejected(&mut self, rejected: RejectedCall) {
        let record = CallRecord {
            index: rejected.index,
            call_id: rejected.call_id,
            exposed_name: rejected.name,
            server_id: None,
            ran: false,
            error: Some(rejected.error),
        };
        self.put(rejected.index, rejected.answer, record);
    }

    /// A call's outcome: the server's result, or why it did not complete.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when the provider cannot
    /// shape the answer (a call without the id the provider requires).
    pub(crate) fn answered(
        &mut self,
        call: ToolCall,
        outcome: Result<CallToolResult>,
    ) -> Result<()> {
        let outcome_ref = match &outcome {
            Ok(result) => Outcome::Completed(result),
            Err(err) => Outcome::Failed(err),
        };
        let answer = self.provider.answer(
            call.call_id.as_deref(),
            &call.exposed_name,
            outcome_ref,
            &self.options.results,
        )?;
        if outcome.is_ok() {
            self.ran_servers.insert(call.server_id.clone());
        }
        let record = CallRecord {
            index: call.index,
            call_id: call.call_id,
            exposed_name: Some(call.exposed_name),
            server_id: Some(call.server_id),
            ran: outcome.is_ok(),
            error: outcome.err(),
        };
        self.put(record.index, answer, record);
        Ok(())
    }

    /// Every answer, in the model's order; `halted` says whether an approver
    /// halted the loop.
    pub(crate) fn finish(self, halted: &AtomicBool) -> Execution {
        let (results, calls): (Vec<Value>, Vec<CallRecord>) =
            self.answers.into_iter().flatten().unzip();
        let status = if halted.load(Ordering::SeqCst) {
            Status::Halt
        } else {
            Status::Ok
        };
        Execution {
            status,
            results,
            calls,
            ran_servers: self.ran_servers,
        }
    }
}
