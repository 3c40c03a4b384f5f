//! Running a turn's tool calls: governed, concurrent, timed, answered in order.

use futures_util::StreamExt;
use serde_json::{Map, Value};

use super::answering::Answering;
use super::call::Start;
use super::kept::KeptResults;
use super::options::ExecOptions;
use super::policy::Action;
use super::source::Source;
use super::turn::{CallRecord, Checked, Execution};
use super::turn_run::TurnRun;
use crate::budget::{LIBRARY_SERVER, READ_TOOL_NAME};
use crate::calls::{Extracted, ToolCall};
use crate::error::Result;
use crate::listing::Listing;
use crate::spec::Provider;

impl Source {
    /// Runs the tool calls in `response` (a response, a message or a list of
    /// items) and answers every one, in the model's order, in `provider`'s
    /// shape. `listing` is what the model was offered: calls resolve against
    /// its toolset only. See [`execute_calls`](Self::execute_calls).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when `response` is none of the provider's accepted
    /// forms or `listing` is another provider's.
    pub async fn execute_tool_calls(
        &self,
        provider: &Provider,
        response: &Value,
        listing: &Listing,
        options: &ExecOptions,
    ) -> Result<Execution> {
        let extracted = provider.extract_calls(response, listing)?;
        self.execute_calls(provider, extracted, listing, options)
            .await
    }

    /// Runs already extracted calls and answers every one.
    ///
    /// Rejected calls keep their answers and are never sent (HB-2); a call whose
    /// tool is not in the `listing`'s toolset is rejected here too. The others go through
    /// policy (and the approver), optional validation, hooks and the server,
    /// at most `max_concurrency` at once, each bounded by `call_timeout`; a
    /// tool that asks for input goes through its input rounds (see
    /// [`SourceBuilder::input_handler`](crate::exec::SourceBuilder::input_handler)),
    /// and a call to a tool its server no longer lists is answered with an
    /// error, not sent. A failure, timeout or panic answers that call alone.
    /// Once an approver answers deny-and-halt, or an input handler cancels,
    /// calls not yet sent are answered as not run.
    ///
    /// The answers are shaped once every call has ended, in the model's order.
    /// Media the spec sends after the turn's answers (its `follow_up` rules, as
    /// with the `media: full` option) are in the execution's
    /// [`turn`](Execution::turn) ([`Turn::follow_ups`](crate::Turn::follow_ups)):
    /// put them right after the results (see [`Turn`](crate::Turn) for where).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) only when the provider cannot shape an answer
    /// (a call without the id the provider requires) or the result options name
    /// an option the spec does not offer.
    pub async fn execute_calls(
        &self,
        provider: &Provider,
        extracted: Extracted,
        listing: &Listing,
        options: &ExecOptions,
    ) -> Result<Execution> {
        let mut extracted = extracted;
        let hosted = std::mem::take(&mut extracted.hosted);
        let programs = std::mem::take(&mut extracted.programs);
        let run = TurnRun::new(self, listing.toolset(), options, provider);
        // The hosted calls' output came before the model asked for these.
        run.add_taint(hosted.servers());
        let mut turn = Answering::new(provider, options, self.reader(listing))
            .journal(run.journal())
            .offered(listing);
        run.begin(&extracted.calls, &hosted);
        run.keep_programs(&programs);
        turn.programs(programs);
        for rejected in extracted.rejected {
            turn.rejected(rejected);
        }
        for search in &extracted.searches {
            self.search(provider, search, listing, options, &mut turn)?;
        }
        if let Some(journal) = run.journal() {
            journal.flush_or_log().await;
        }
        let calls = extracted.calls.into_iter().map(|call| (call, Start::Fresh));
        run.run(calls, &mut turn).await;
        let execution = turn.finish(run.halt())?;
        Ok(run
            .with_hosted(provider, hosted, Vec::new(), execution)
            .await)
    }

    /// Calls a tool for the application itself, not for a model: any tool of
    /// the source's toolset, those for an app's own interface included (MCP
    /// Apps tools whose `_meta.ui.visibility` leaves out the model, which are
    /// never offered to one: [`DropReason::AppOnly`](crate::toolset::DropReason::AppOnly)).
    /// The call goes through the same governed pipeline as a model's (policy
    /// and approver, validation, hooks, the server's gate, timeout, the
    /// `outputSchema` check); the record holds the result, or why there is
    /// none, and the tool's UI resource.
    ///
    /// # Errors
    ///
    /// As [`toolset`](Self::toolset); a tool the toolset does not hold is
    /// answered in the record ([`ErrorKind::UnknownTool`](crate::ErrorKind::UnknownTool)), not sent.
    pub async fn call_app_tool(
        &self,
        server_id: &str,
        tool: &str,
        arguments: Map<String, Value>,
        options: &ExecOptions,
    ) -> Result<CallRecord> {
        let toolset = self.toolset().await?;
        let call = ToolCall {
            index: 0,
            call_id: None,
            server_id: server_id.to_owned(),
            tool: tool.to_owned(),
            exposed_name: toolset
                .app_tool(server_id, tool)
                .map_or_else(|| format!("{server_id}/{tool}"), |t| t.exposed_name.clone()),
            arguments,
            caller: crate::callers::Caller::Model,
            select: None,
        };
        let run = TurnRun::for_app(self, &toolset, options);
        let (call, checked) = run.call(call, Start::Fresh).run().await;
        Ok(checked.into_record(call))
    }

    /// Where a turn keeps the texts its budgets cut: with the source, when
    /// `listing` offers the library's read tool.
    pub(super) fn reader(&self, listing: &Listing) -> Option<&KeptResults> {
        listing
            .toolset()
            .resolve(READ_TOOL_NAME)
            .filter(|t| t.server_id == LIBRARY_SERVER)
            .map(|_| self.kept.as_ref())
    }

    /// Answers a search: tools the policy denies (given the turn's taint) are
    /// never found, as the toolset's filters already hid theirs (PO-7).
    pub(super) fn search(
        &self,
        provider: &Provider,
        search: &crate::search::SearchCall,
        listing: &Listing,
        options: &ExecOptions,
        turn: &mut Answering<'_>,
    ) -> Result<()> {
        let visible = |tool: &crate::toolset::ExposedTool| {
            self.policy.as_ref().is_none_or(|p| {
                p.decide(&tool.server_id, &tool.tool.name, &options.taint) != Action::Deny
            })
        };
        let answered = provider.answer_search(search, listing, visible)?;
        tracing::debug!(query = %search.query, found = ?answered.found, "search answered");
        let record = CallRecord::search(
            search.index,
            search.call_id.clone(),
            listing.search_tool_name().map(str::to_owned),
        );
        turn.searched(record, answered.answer, answered.found);
        Ok(())
    }
}

impl<'r> TurnRun<'r> {
    /// `call` on its way from `start`: through the pipeline, or, for the
    /// model's call to the code tool, as a program. Boxed once, whole: a
    /// call's future is polled where it lies, and only one still running
    /// after its first poll joins the turn's set of running calls.
    pub(super) fn start(
        &'r self,
        call: ToolCall,
        start: Start,
    ) -> super::future::BoxFuture<'r, (ToolCall, Checked)> {
        #[cfg(feature = "code-mode")]
        if self.source.is_program(&call) {
            return Box::pin(self.program(call));
        }
        Box::pin(self.call(call, start).run())
    }
}

impl TurnRun<'_> {
    /// Runs `calls`, each from where it takes up, at most the turn's limit
    /// at once, and hands each outcome to `turn`, checked against its
    /// tool's `outputSchema` (the turn answers them in the model's order).
    pub(super) async fn run(
        &self,
        calls: impl IntoIterator<Item = (ToolCall, Start)>,
        turn: &mut Answering<'_>,
    ) {
        let calls = calls.into_iter();
        turn.expect(calls.size_hint().0);
        let mut running = futures_util::stream::FuturesUnordered::new();
        for (call, start) in calls {
            if running.len() >= self.limit
                && let Some((call, checked)) = running.next().await
            {
                turn.ended(call, checked);
            }
            // Each call starts at once, and one that ends at once is
            // answered now, never joining the set of running calls: a turn
            // of quick calls holds one call's state at a time, not every
            // call's.
            let mut started = self.start(call, start);
            match futures_util::poll!(&mut started) {
                std::task::Poll::Ready((call, checked)) => turn.ended(call, checked),
                std::task::Poll::Pending => running.push(started),
            }
            while !running.is_empty()
                && let std::task::Poll::Ready(Some((call, checked))) =
                    futures_util::poll!(running.next())
            {
                turn.ended(call, checked);
            }
        }
        // Each outcome goes to the turn as its call ends: nothing is
        // gathered on the way.
        while let Some((call, checked)) = running.next().await {
            turn.ended(call, checked);
        }
    }
}
