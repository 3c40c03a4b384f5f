//! Resuming a suspended turn: each call taken up where it stopped, and
//! nothing sent twice.

use super::clock::Halt;
use super::durable::{Ended, Stage, TurnState};
use super::options::ExecOptions;
use super::run::{Shared, Start};
use super::source::Source;
use super::turn::{Answering, CallRecord, Checked, Execution};
use crate::calls::{RejectedCall, ToolCall};
use crate::error::{Error, ErrorKind, Result};
use crate::listing::Listing;
use crate::spec::Provider;

impl Source {
    /// Resumes a turn suspended by [`ExecOptions::suspend`] (or taken from
    /// a [checkpoint](ExecOptions::checkpoint) of a process that ended), in
    /// this process or another, and answers it as
    /// [`execute_tool_calls`](Self::execute_tool_calls) would have: every
    /// call, in the model's order, in `provider`'s shape. The source must
    /// have the same servers (by id), and `listing` must offer the calls'
    /// tools (list them again as the model was offered them).
    ///
    /// Each call takes up where it stopped, and a call already sent is
    /// never sent again:
    ///
    /// - a call that ended keeps its result (or error);
    /// - a call waiting for approval goes through the pipeline from the
    ///   start, the policy included: the decisions given with
    ///   [`ExecOptions::approve_call`] and [`ExecOptions::deny_call`]
    ///   answer it, and otherwise the approver;
    /// - a call whose tool's questions wait is answered by the source's
    ///   handlers (its input handler, sampling and roots) and goes on with
    ///   the server's request state, from the round it reached;
    /// - a call whose server runs it as a task still working is taken up by
    ///   following the task ([`Server::resume_task`](crate::Server::resume_task));
    ///   a task the server no longer has (it restarted) is answered as
    ///   interrupted;
    /// - a call never sent (in a checkpoint) runs from the start;
    /// - a call sent and not answered when its process ended (in a
    ///   checkpoint) is answered as interrupted
    ///   ([`ErrorKind::Interrupted`]): it may or may not have run.
    ///
    /// The provider's approval requests for hosted calls not yet decided
    /// are decided the same way. With [`ExecOptions::suspend`] again, what
    /// still has no answer waits, and the turn is suspended once more.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when the state answers another provider's
    /// response, `listing` is another provider's, one of its calls names a
    /// tool `listing` does not offer, or an answer cannot be shaped.
    pub async fn resume_turn(
        &self,
        provider: &Provider,
        state: TurnState,
        listing: &Listing,
        options: &ExecOptions,
    ) -> Result<Execution> {
        if state.provider != provider.id() {
            return Err(Error::new(
                ErrorKind::Input,
                format!(
                    "the turn state answers a `{}` response, not a `{}` one",
                    state.provider,
                    provider.id()
                ),
            ));
        }
        if listing.provider_id() != provider.id() {
            return Err(Error::new(
                ErrorKind::Input,
                format!(
                    "the listing is in `{}`'s format, not `{}`'s",
                    listing.provider_id(),
                    provider.id()
                ),
            ));
        }
        let toolset = listing.toolset();
        state.check_tools(toolset)?;
        let halted = Halt::default();
        if state.halted {
            halted.set();
        }
        // The calls answered without a server are in the state already.
        let mut turn = Answering::new(provider, options, self.reader(listing));
        for answered in &state.answered {
            match &answered.found {
                Some(found) => turn.searched(
                    CallRecord {
                        index: answered.index,
                        call_id: answered.call_id.clone(),
                        exposed_name: answered.exposed_name.clone(),
                        server_id: None,
                        ran: true,
                        error: None,
                        warnings: Vec::new(),
                        ui_resource: None,
                        result: None,
                    },
                    answered.answer.clone(),
                    found.clone(),
                ),
                None => turn.rejected(RejectedCall {
                    index: answered.index,
                    call_id: answered.call_id.clone(),
                    exposed_name: answered.exposed_name.clone(),
                    error: answered.error.as_ref().map_or_else(
                        || Error::new(ErrorKind::Input, "rejected"),
                        super::durable::KeptError::error,
                    ),
                    answer: answered.answer.clone(),
                }),
            }
        }
        let mut to_run: Vec<(ToolCall, Start)> = Vec::new();
        let mut interrupted: Vec<ToolCall> = Vec::new();
        for entry in &state.calls {
            let call = entry.call();
            match &entry.stage {
                Stage::Ended(ended) => {
                    let checked =
                        self.check_output(&call, toolset, ended.outcome(), options.output_schema);
                    turn.ended(call, checked);
                }
                Stage::Sent => interrupted.push(call),
                Stage::Pending | Stage::WaitingForApproval => to_run.push((call, Start::Fresh)),
                Stage::WaitingForInput { round, asked } => to_run.push((
                    call,
                    Start::Asked {
                        round: *round,
                        asked: Box::new(asked.clone()),
                    },
                )),
                Stage::WaitingForTask { task_id, .. } => to_run.push((
                    call,
                    Start::Task {
                        task_id: task_id.clone(),
                    },
                )),
            }
        }
        let hosted = state.hosted.clone();
        let decided = state.approvals.clone();
        let shared = Shared::resumed(options, state);
        for call in interrupted {
            let outcome = Err(Error::new(
                ErrorKind::Interrupted,
                "the call was sent, and the process that sent it ended before its answer came: it \
                 may or may not have run, and it was not sent again",
            )
            .plain());
            if let Some(journal) = shared.journal() {
                journal.stage(&call, Stage::Ended(Ended::of(&outcome)));
            }
            turn.ended(call, Checked::as_it_is(outcome));
        }
        if let Some(journal) = shared.journal() {
            journal.flush_or_log().await;
        }
        self.run_calls(to_run, toolset, options, &shared, &halted, &mut turn)
            .await;
        let execution = turn.finish(&halted)?;
        Ok(self
            .with_hosted(provider, hosted, decided, &shared, &halted, execution)
            .await)
    }
}
