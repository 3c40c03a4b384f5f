//! Resuming a suspended turn: each call taken up where it stopped, and
//! nothing sent twice.

use super::answering::Answering;
use super::call::Start;
use super::durable::{Answered, CallEntry, Ended, KeptError, Stage, TurnState};
use super::options::ExecOptions;
use super::source::Source;
use super::turn::{CallRecord, Checked, Execution};
use super::turn_run::TurnRun;
use crate::calls::{RejectedCall, ToolCall};
use crate::error::{Error, ErrorKind, Result};
use crate::listing::Listing;
use crate::spec::Provider;
use crate::toolset::ToolSet;

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
    /// never sent again. Whatever stage the state says a call reached,
    /// nothing it says was decided stands: every call that has not ended is
    /// judged again by the policy and the decisions given now (or the
    /// approver) before the library sends anything for it, so an edited
    /// state cannot widen the policy:
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
    /// - of these two, one the policy now denies is answered as denied, and
    ///   one it asks about needs an approval given now (an approval given
    ///   before the turn was suspended does not carry over): without one,
    ///   it waits again where it was (with [`ExecOptions::suspend`]) or is
    ///   denied;
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
            return Err(Error::input(format!(
                "the turn state answers a `{}` response, not a `{}` one",
                state.provider,
                provider.id()
            )));
        }
        if listing.provider_id() != provider.id() {
            return Err(Error::input(format!(
                "the listing is in `{}`'s format, not `{}`'s",
                listing.provider_id(),
                provider.id()
            )));
        }
        let toolset = listing.toolset();
        state.check_tools(toolset)?;
        // The calls answered without a server are in the state already.
        let mut turn = Answering::new(provider, options, self.reader(listing)).offered(listing);
        turn.programs(state.programs.clone());
        for answered in &state.answered {
            answered_again(answered, &mut turn);
        }
        let mut to_run: Vec<(ToolCall, Start)> = Vec::new();
        let mut interrupted: Vec<ToolCall> = Vec::new();
        for entry in &state.calls {
            let call = entry.call();
            match Start::taken_up(&entry.stage) {
                // A call not sent yet is held to what the listing offers
                // its caller now, as when it was read.
                Ok(Start::Fresh)
                    if let Err(e) = listing.check_caller(&call.exposed_name, &call.caller) =>
                {
                    turn.ended(call, Checked::as_it_is(Err(e)));
                }
                Ok(start) => to_run.push((call, start)),
                Err(Stage::Sent) => interrupted.push(call),
                Err(_) => {
                    self.ended_before(entry, call, toolset, options, &mut turn)
                        .await
                }
            }
        }
        let hosted = state.hosted.clone();
        let decided = state.approvals.clone();
        let run = TurnRun::resumed(self, toolset, options, state);
        for call in interrupted {
            let outcome = Err(Error::new(
                ErrorKind::Interrupted,
                "the call was sent, and the process that sent it ended before its answer came: it \
                 may or may not have run, and it was not sent again",
            )
            .plain());
            if let Some(journal) = run.journal() {
                journal.stage(&call, Stage::Ended(Ended::of(&outcome)));
            }
            turn.ended(call, Checked::as_it_is(outcome));
        }
        if let Some(journal) = run.journal() {
            journal.flush_or_log().await;
        }
        run.run(to_run, &mut turn).await;
        let execution = turn.finish(run.halt())?;
        Ok(run.with_hosted(provider, hosted, decided, execution).await)
    }

    /// A call that ended before the turn was suspended: its outcome kept,
    /// checked again, and selected again by its filter.
    async fn ended_before(
        &self,
        entry: &CallEntry,
        call: ToolCall,
        toolset: &ToolSet,
        options: &ExecOptions,
        turn: &mut Answering<'_>,
    ) {
        if let Stage::Ended(ended) = &entry.stage {
            let mut checked =
                self.check_output(&call, toolset, ended.outcome(), options.output_schema);
            if let Some(filter) = &call.select {
                checked.select(filter, &options.results.select_limits).await;
            }
            turn.ended(call, checked);
        }
    }
}

/// A call answered without a server (a search, or a call rejected when it
/// was read), answered again as it was.
fn answered_again(answered: &Answered, turn: &mut Answering<'_>) {
    match &answered.found {
        Some(found) => turn.searched(
            CallRecord::search(
                answered.index,
                answered.call_id.clone(),
                answered.exposed_name.clone(),
            ),
            answered.answer.clone(),
            found.clone(),
        ),
        None => turn.rejected(RejectedCall {
            index: answered.index,
            call_id: answered.call_id.clone(),
            exposed_name: answered.exposed_name.clone(),
            error: answered
                .error
                .as_ref()
                .map_or_else(|| Error::input("rejected"), KeptError::error),
            answer: answered.answer.clone(),
            caller: answered.caller.clone(),
        }),
    }
}
