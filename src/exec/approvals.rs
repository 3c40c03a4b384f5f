//! The provider's hosted calls in a turn: their approval requests decided by
//! the same policy and approver as local calls, and what they did reported.

use super::answerer::CallState;
use super::approve::{Approving, decided_by_application};
use super::durable::Waits;
use super::server::CallContext;
use super::turn::{Execution, Status};
use super::turn_run::TurnRun;
use crate::calls::ToolCall;
use crate::error::{Error, ErrorKind, Result};
use crate::hosted::{ApprovalAnswer, HostedApproval, HostedItems};
use crate::results::Turn;
use crate::spec::Provider;

impl TurnRun<'_> {
    /// `execution` with what the provider did with the servers it hosts:
    /// its items reported, its calls' servers among those in the model's
    /// context, and its approval requests answered, under the turn's taint
    /// and those servers.
    ///
    /// A turn with calls (or approval requests) that wait, and not halted,
    /// is suspended here: its state goes in the execution.
    pub(super) async fn with_hosted(
        &self,
        provider: &Provider,
        hosted: HostedItems,
        decided: Vec<ApprovalAnswer>,
        mut execution: Execution,
    ) -> Execution {
        let undecided: Vec<HostedApproval> = hosted
            .approvals
            .iter()
            .filter(|a| !decided.iter().any(|d| d.id == a.id))
            .cloned()
            .collect();
        let mut approvals = decided;
        let (answered, hosted_waiting) = self.answer_hosted_approvals(provider, &undecided).await;
        approvals.extend(answered);
        let halted = self.halt();
        if let Some(journal) = self.journal() {
            let taint = self.taint();
            let halted = halted.is_set();
            journal.update(|state| {
                state.hosted = hosted.clone();
                state.approvals = approvals.clone();
                state.hosted_waiting = hosted_waiting;
                state.taint = (*taint).clone();
                state.halted |= halted;
            });
            journal.flush_or_log().await;
        }
        if halted.is_set() {
            execution.status = Status::Halt;
        } else if let Some(journal) = self.journal().filter(|_| self.suspend()) {
            let state = journal.snapshot();
            let waiting = state.waiting();
            if !waiting.is_empty() {
                execution.status = Status::Suspended;
                execution.turn = Turn::default();
                execution.ran_servers.clear();
                execution.waiting = waiting;
                execution.suspended = Some(Box::new(state));
                execution.hosted = hosted;
                return execution;
            }
        }
        execution.approvals = approvals;
        execution
            .ran_servers
            .extend(hosted.servers().map(str::to_owned));
        execution.hosted = hosted;
        execution
    }

    /// Decides the provider's approval requests for hosted calls by the same
    /// policy and approver as local calls (without a policy, the approver
    /// decides, and without one they are denied), and answers each in the
    /// provider's shape. A request without an id, or whose answer the spec
    /// cannot shape, is left unanswered and logged.
    ///
    /// A request the turn waits on (its answer is not available now and the
    /// turn may be suspended) is left out: its id is in the second list.
    async fn answer_hosted_approvals(
        &self,
        provider: &Provider,
        requests: &[HostedApproval],
    ) -> (Vec<ApprovalAnswer>, Vec<String>) {
        let mut answers = Vec::with_capacity(requests.len());
        let mut waiting = Vec::new();
        for request in requests {
            if request.id.is_empty() {
                tracing::warn!(server = %request.server_id, tool = %request.tool,
                    "a hosted call's approval request has no id, so it cannot be answered");
                continue;
            }
            let decided = self.decide_hosted(request).await;
            if matches!(&decided, Err(e) if Waits::of(e).is_some()) {
                waiting.push(request.id.clone());
                continue;
            }
            let reason = decided.as_ref().err().map(|e| e.message().to_owned());
            match provider.answer_hosted_approval(request, decided.is_ok(), reason.as_deref()) {
                Ok(item) => {
                    tracing::info!(server = %request.server_id, tool = %request.tool,
                        approved = decided.is_ok(), "answered a hosted call's approval request");
                    answers.push(ApprovalAnswer {
                        id: request.id.clone(),
                        server_id: request.server_id.clone(),
                        tool: request.tool.clone(),
                        approved: decided.is_ok(),
                        reason,
                        item,
                    });
                }
                Err(error) => {
                    tracing::error!(server = %request.server_id, tool = %request.tool,
                        error = %error, "a hosted call's approval request could not be answered");
                }
            }
        }
        (answers, waiting)
    }

    /// The decision on one hosted call's approval request, by the policy
    /// and the approver (the application's decisions first).
    async fn decide_hosted(&self, request: &HostedApproval) -> Result<()> {
        let call = ToolCall {
            // Not among the model's calls: decided by its id only.
            index: usize::MAX,
            call_id: Some(request.id.clone()),
            server_id: request.server_id.clone(),
            tool: request.tool.clone(),
            exposed_name: format!("{}/{}", request.server_id, request.tool),
            arguments: request.arguments.as_object().cloned().unwrap_or_default(),
            caller: crate::callers::Caller::Model,
            select: None,
        };
        let state = CallState::new(call, self.rules.clone(), self.taint(), self.timeout);
        let call = state.call();
        let mut context = CallContext::of(state.clone());
        context.principal = self.principal().cloned();
        context.taint = self.taint();
        let denied = |why: &str| Err(Error::new(ErrorKind::Denied, why.to_owned()));
        if self.halt().is_set() {
            denied("not run: this turn was halted")
        } else if !request.arguments.is_object() {
            // What would be judged is not what the provider would run.
            denied("its arguments are not a JSON object")
        } else if self.source.policy.is_none() {
            match self.decision(call) {
                Some(decision) => decided_by_application(decision, call, self.halt()),
                None => self.ask_approver(call, &context).await,
            }
        } else {
            match self.check_policy(call, &context) {
                Ok(Approving::Allowed) => Ok(()),
                Ok(Approving::Asking(asking)) => asking.await,
                Err(e) => Err(e),
            }
        }
    }
}
