//! The policy's and the approver's decisions on a call.

use super::clock::Halt;
use super::durable::{Stage, Waits};
use super::future::BoxFuture;
use super::policy::{Action, Approval, ApprovalRequest};
use super::server::CallContext;
use super::turn_run::TurnRun;
use crate::calls::ToolCall;
use crate::error::{Error, ErrorKind, Result};

impl TurnRun<'_> {
    /// The policy's decision: an error when it denies, and otherwise what is
    /// left to await (nothing when it allows, the approver when it asks).
    pub(super) fn check_policy<'a>(
        &'a self,
        call: &'a ToolCall,
        context: &'a CallContext,
    ) -> Result<Approving<'a>> {
        let Some(policy) = &self.source.policy else {
            return Ok(Approving::Allowed);
        };
        let (action, rule) = policy.decide_with_rule(&call.server_id, &call.tool, &context.taint);
        match action {
            Action::Allow => Ok(Approving::Allowed),
            Action::Deny => Err(Error::new(
                ErrorKind::Denied,
                match rule {
                    Some(pattern) => format!("denied by policy (rule `{pattern}`)"),
                    None => "denied by policy (no rule allows this tool)".to_owned(),
                },
            )),
            Action::Ask => match self.decision(call) {
                Some(decision) => {
                    decided_by_application(decision, call, self.halt()).map(|()| Approving::Allowed)
                }
                None => Ok(Approving::Asking(Box::pin(
                    self.ask_approver(call, context),
                ))),
            },
        }
    }

    /// Asks the approver about a call the policy asks about. In a turn that
    /// may be suspended, a call no one can answer for now waits.
    pub(super) async fn ask_approver(&self, call: &ToolCall, context: &CallContext) -> Result<()> {
        let request = ApprovalRequest {
            call: call.clone(),
            principal: context.principal.as_deref().map(str::to_owned),
            taint: (*context.taint).clone(),
            sampling: None,
        };
        let approval = if self.suspend() && !self.source.has_approver() {
            Approval::Later
        } else {
            self.source.approve(request).await
        };
        match approval {
            Approval::Later if self.suspend() => Err(Waits::error(Stage::WaitingForApproval)),
            Approval::Later => Err(Error::new(
                ErrorKind::Denied,
                "denied: the approver gave no answer now, and this turn cannot be suspended",
            )),
            approval => decided(approval, call, self.halt()),
        }
    }
}

/// A call's approval decided: `Ok` to run it, or why not (a deny-and-halt
/// halts the turn).
pub(super) fn decided(approval: Approval, call: &ToolCall, halted: &Halt) -> Result<()> {
    let denied = |reason: String| Error::new(ErrorKind::Denied, reason);
    match approval {
        Approval::Allow => Ok(()),
        Approval::Deny(reason) => Err(denied(format!("denied by the approver: {reason}"))),
        Approval::DenyAndHalt(reason) => {
            halted.set();
            tracing::warn!(server = %call.server_id, tool = %call.tool, call_id = call.call_id.as_deref().unwrap_or(""),
                reason = %reason, "approver halted the turn");
            Err(denied(format!("denied by the approver: {reason}")))
        }
        Approval::Later => Err(denied("denied: the approver gave no answer now".to_owned())),
    }
}

/// A call's approval as the application gave it in the turn's options
/// ([`ExecOptions::approve_call`], [`ExecOptions::deny_call`]).
pub(super) fn decided_by_application(
    approval: &Approval,
    call: &ToolCall,
    halted: &Halt,
) -> Result<()> {
    match approval {
        Approval::Deny(reason) => Err(Error::new(ErrorKind::Denied, format!("denied: {reason}"))),
        other => decided(other.clone(), call, halted),
    }
}

/// What is left of the policy's decision: nothing, or the approver's answer.
pub(super) enum Approving<'a> {
    Allowed,
    Asking(BoxFuture<'a, Result<()>>),
}
