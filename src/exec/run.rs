//! Running a turn's tool calls: governed, concurrent, timed, answered in order.

use std::collections::BTreeSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use serde_json::{Map, Value};
use tracing::Instrument;

use super::answerer::{Answerer, CallState};
use super::cache::SchemaOf;
use super::clock::Halt;
use super::durable::{Ended, Journal, KeyRing, Stage, TurnState, Waits};
use super::future::BoxFuture;
use super::gate::{Pass, Slots};
use super::input::Mark;
use super::kept::KeptResults;
use super::options::{ExecOptions, OutputSchemaCheck};
use super::policy::{Action, Approval, ApprovalRequest};
use super::server::{CallContext, Server};
use super::source::Source;
use super::turn::{Answering, CallRecord, Checked, Execution, Status, not_run_halted};
use crate::budget::{LIBRARY_SERVER, READ_TOOL_NAME};
use crate::calls::{Extracted, ToolCall};
use crate::error::{Error, ErrorKind, Result};
use crate::hosted::{ApprovalAnswer, HostedApproval, HostedItems};
use crate::listing::Listing;
use crate::mcp::{CallToolResponse, CallToolResult, InputRequiredResult, Tool};
use crate::spec::Provider;
use crate::toolset::ToolSet;

impl Source {
    /// Runs the tool calls in `response` (a response, a message or a list of
    /// items) and answers every one, in the model's order, in `provider`'s
    /// shape. `listing` is what the model was offered: calls resolve against
    /// its toolset only. See [`execute_calls`](Self::execute_calls).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when `response` is none of the provider's accepted
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
    /// with the `media: full` option) are in [`Execution::follow_ups`]: put
    /// them right after the results (see [`Turn`](crate::Turn) for where).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] only when the provider cannot shape an answer
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
        let toolset = listing.toolset();
        let shared = Shared::new(options, provider);
        // The hosted calls' output came before the model asked for these.
        shared.add_taint(hosted.servers());
        let mut turn =
            Answering::new(provider, options, self.reader(listing)).journal(shared.journal());
        shared.begin(&extracted.calls, &hosted);
        for rejected in extracted.rejected {
            turn.rejected(rejected);
        }
        for search in &extracted.searches {
            self.search(provider, search, listing, options, &mut turn)?;
        }
        if let Some(journal) = shared.journal() {
            journal.flush_or_log().await;
        }
        let halted = Halt::default();
        let calls = extracted.calls.into_iter().map(|call| (call, Start::Fresh));
        self.run_calls(calls, toolset, options, &shared, &halted, &mut turn)
            .await;
        let execution = turn.finish(&halted)?;
        Ok(self
            .with_hosted(provider, hosted, Vec::new(), &shared, &halted, execution)
            .await)
    }

    /// Runs `calls`, each from where it takes up, at most `max_concurrency`
    /// at once, and hands each outcome to `turn`, checked against its
    /// tool's `outputSchema` (the turn answers them in the model's order).
    pub(super) async fn run_calls(
        &self,
        calls: impl IntoIterator<Item = (ToolCall, Start)>,
        toolset: &ToolSet,
        options: &ExecOptions,
        shared: &Shared,
        halted: &Halt,
        turn: &mut Answering<'_>,
    ) {
        let (limit, timeout) = options.limits();
        let calls = calls.into_iter();
        turn.expect(calls.size_hint().0);
        let mut running = futures_util::stream::FuturesUnordered::new();
        let mut end = |(call, outcome): (ToolCall, Result<CallToolResult>)| {
            let checked = self.check_output(&call, toolset, outcome, options.output_schema);
            turn.ended(call, checked);
        };
        for (call, start) in calls {
            if running.len() >= limit
                && let Some(ended) = running.next().await
            {
                end(ended);
            }
            running.push(self.guarded(call, toolset, options, shared, timeout, halted, start));
            // Each call starts as soon as it is pushed, and one that ends at
            // once is answered now: a turn of quick calls holds one call's
            // state at a time, not every call's.
            while let std::task::Poll::Ready(Some(ended)) = futures_util::poll!(running.next()) {
                end(ended);
            }
        }
        // Each outcome goes to the turn as its call ends: nothing is
        // gathered on the way.
        while let Some(ended) = running.next().await {
            end(ended);
        }
    }

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
        shared: &Shared,
        halted: &Halt,
        mut execution: Execution,
    ) -> Execution {
        let undecided: Vec<HostedApproval> = hosted
            .approvals
            .iter()
            .filter(|a| !decided.iter().any(|d| d.id == a.id))
            .cloned()
            .collect();
        let mut approvals = decided;
        let (answered, hosted_waiting) = self
            .answer_hosted_approvals(provider, &undecided, shared, halted)
            .await;
        approvals.extend(answered);
        if let Some(journal) = shared.journal() {
            let taint = shared.taint();
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
        } else if let Some(journal) = shared.journal().filter(|_| shared.suspend) {
            let state = journal.snapshot();
            let waiting = state.waiting();
            if !waiting.is_empty() {
                execution.status = Status::Suspended;
                execution.results.clear();
                execution.follow_ups.clear();
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
        shared: &Shared,
        halted: &Halt,
    ) -> (Vec<ApprovalAnswer>, Vec<String>) {
        let mut answers = Vec::with_capacity(requests.len());
        let mut waiting = Vec::new();
        for request in requests {
            if request.id.is_empty() {
                tracing::warn!(server = %request.server_id, tool = %request.tool,
                    "a hosted call's approval request has no id, so it cannot be answered");
                continue;
            }
            let call = ToolCall {
                // Not among the model's calls: decided by its id only.
                index: usize::MAX,
                call_id: Some(request.id.clone()),
                server_id: request.server_id.clone(),
                tool: request.tool.clone(),
                exposed_name: format!("{}/{}", request.server_id, request.tool),
                arguments: request.arguments.as_object().cloned().unwrap_or_default(),
            };
            let context = CallContext {
                server_id: call.server_id.clone(),
                tool: call.tool.clone(),
                call_id: call.call_id.clone(),
                principal: shared.principal.clone(),
                taint: shared.taint(),
                ..Default::default()
            };
            let denied = |why: &str| Err(Error::new(ErrorKind::Denied, why.to_owned()));
            let decided = if halted.is_set() {
                denied("not run: this turn was halted")
            } else if !request.arguments.is_object() {
                // What would be judged is not what the provider would run.
                denied("its arguments are not a JSON object")
            } else if self.policy.is_none() {
                match shared.decision(&call) {
                    Some(decision) => decided_by_application(decision, &call, halted),
                    None => self.ask_approver(&call, &context, halted, shared).await,
                }
            } else {
                match self.check_policy(&call, &context, halted, shared) {
                    Ok(Approving::Allowed) => Ok(()),
                    Ok(Approving::Asking(asking)) => asking.await,
                    Err(e) => Err(e),
                }
            };
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
    /// answered in the record ([`ErrorKind::UnknownTool`]), not sent.
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
        };
        let (_, timeout) = options.limits();
        let shared = Shared::for_caller(options, Caller::App, None);
        let (call, outcome) = self
            .guarded(
                call,
                &toolset,
                options,
                &shared,
                timeout,
                &Halt::default(),
                Start::Fresh,
            )
            .await;
        let checked = self.check_output(&call, &toolset, outcome, options.output_schema);
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
        let record = CallRecord {
            index: search.index,
            call_id: search.call_id.clone(),
            exposed_name: listing.search_tool_name().map(str::to_owned),
            server_id: None,
            ran: true,
            error: None,
            warnings: Vec::new(),
            ui_resource: None,
            result: None,
        };
        turn.searched(record, answered.answer, answered.found);
        Ok(())
    }

    /// One call through the pipeline, with panics caught: its first request
    /// (checks, approval and hooks included) bounded by `timeout`, then any
    /// input rounds, each request bounded by `timeout` again. `start` says
    /// where a resumed call takes up.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn guarded(
        &self,
        call: ToolCall,
        toolset: &ToolSet,
        options: &ExecOptions,
        shared: &Shared,
        timeout: Duration,
        halted: &Halt,
        start: Start,
    ) -> (ToolCall, Result<CallToolResult>) {
        // Shared with the call's state, which shows it to the handlers of
        // the questions its server asks: moved, not copied.
        let mut call = Arc::new(call);
        let state = CallState::new(
            call.clone(),
            options.principal.clone(),
            shared.taint(),
            timeout,
            options.max_input_rounds,
            options.input_timeout,
            halted.clone(),
            shared.suspend,
        );
        let context = self.call_context(&call, options, shared, &state);
        let span = tracing::info_span!(
            "execute_tool",
            otel.name = tracing::field::Empty,
            otel.kind = "internal",
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %call.tool,
            gen_ai.tool.call.id = call.call_id.as_deref(),
            mcp_adapters.server = %call.server_id,
            gen_ai.tool.call.arguments = tracing::field::Empty,
            gen_ai.tool.call.result = tracing::field::Empty,
            error.r#type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        let traced = !span.is_disabled();
        if traced {
            span.record("otel.name", format!("execute_tool {}", call.exposed_name));
            if options.trace_content {
                span.record(
                    "gen_ai.tool.call.arguments",
                    Value::Object(call.arguments.clone()).to_string(),
                );
            }
        }
        // Boxed: every call's future is moved into the turn's set of running
        // calls, and a pointer moves faster than the pipeline's state.
        let pipeline = AssertUnwindSafe(Box::pin(self.pipeline(
            &mut call, toolset, context, options, shared, timeout, halted, &state, start,
        )))
        .catch_unwind()
        .instrument(span.clone());
        let outcome = match pipeline.await {
            Ok(result) => result,
            Err(panic) => Err(Error::new(
                ErrorKind::Server,
                format!("the call failed: {}", panic_message(&panic)),
            )),
        };
        if traced {
            match &outcome {
                Err(err) => crate::telemetry::record_failure(&span, err),
                Ok(result) if options.trace_content => {
                    if let Ok(json) = serde_json::to_string(result) {
                        span.record("gen_ai.tool.call.result", json);
                    }
                }
                Ok(_) => {}
            }
        }
        if let Some(journal) = shared.journal() {
            let stage = match &outcome {
                Err(err) => Waits::of(err).cloned(),
                Ok(_) => None,
            };
            let stage = stage.unwrap_or_else(|| Stage::Ended(Ended::of(&outcome)));
            let halted = halted.is_set();
            journal.update(|state| {
                state.halted |= halted;
                state.set_stage(&call, stage);
            });
            Box::pin(journal.flush_or_log()).await;
        }
        if let Err(err) = &outcome
            && Waits::of(err).is_none()
        {
            let kind = err.kind();
            tracing::warn!(server = %call.server_id, tool = %call.tool, call_id = call.call_id.as_deref().unwrap_or(""),
                kind = ?kind, reason = %err.message_with_causes(), "tool call not completed");
        }
        // The call's state (and every answerer that held it) is gone by now,
        // unless a server kept one: then the call is copied.
        drop(state);
        let call = Arc::try_unwrap(call).unwrap_or_else(|shared| ToolCall::clone(&shared));
        (call, outcome)
    }

    /// What the server is told of `call` besides its arguments, with the
    /// answerer of its questions.
    fn call_context(
        &self,
        call: &ToolCall,
        options: &ExecOptions,
        shared: &Shared,
        state: &Arc<CallState>,
    ) -> CallContext {
        CallContext {
            server_id: call.server_id.clone(),
            tool: call.tool.clone(),
            call_id: call.call_id.clone(),
            principal: options.principal.clone(),
            assigns: shared.assigns.clone(),
            taint: state.taint().clone(),
            meta: options.meta.clone(),
            progress: options.progress.clone(),
            input_responses: None,
            request_state: None,
            answerer: Some(Answerer::for_call(
                self.governor.clone(),
                call.server_id.clone(),
                state.clone(),
            )),
            idempotency_key: Some(shared.keys.key(call)),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn pipeline(
        &self,
        call: &mut Arc<ToolCall>,
        toolset: &ToolSet,
        mut context: CallContext,
        options: &ExecOptions,
        shared: &Shared,
        timeout: Duration,
        halted: &Halt,
        state: &Arc<CallState>,
        start: Start,
    ) -> Result<CallToolResult> {
        let retry = options.retry_interrupted;
        match start {
            Start::Fresh => {}
            resumed => {
                // Boxed: a fresh call's future need not hold a resumed one's.
                return Box::pin(self.take_up(
                    call, toolset, context, options, shared, timeout, halted, state, resumed,
                ))
                .await;
            }
        }
        let first = {
            let mut first = std::pin::pin!(self.first_request(
                call,
                toolset,
                &mut context,
                halted,
                retry,
                shared,
                state
            ));
            // A call that completes at once never sets a timer; what each
            // call's future holds stays small, and the rest is boxed when it
            // is needed.
            match futures_util::poll!(first.as_mut()) {
                std::task::Poll::Ready(first) => first,
                std::task::Poll::Pending => tokio::select! {
                    biased;
                    first = first => first,
                    () = expiry(state) => Err(Error::new(
                        ErrorKind::Timeout,
                        format!(
                            "the call took longer than {} ms and was cancelled",
                            timeout.as_millis()
                        ),
                    )),
                },
            }
        };
        let (server, response, retry, _pass) = first?;
        match response {
            CallToolResponse::Complete(result) => Ok(result),
            response => {
                let call: &ToolCall = call;
                // The first request may have taken the context with it.
                if context.answerer.is_none() {
                    context = self.call_context(call, options, shared, state);
                }
                let mark = shared.marker(call);
                self.rounds
                    .complete_boxed(
                        call,
                        server.as_ref(),
                        context,
                        response,
                        options,
                        timeout,
                        halted,
                        state,
                        retry,
                        0,
                        shared.journal().map(|_| &mark as &Mark<'_>),
                    )
                    .await
            }
        }
    }

    /// A resumed call that was sent: one whose tool's questions waited
    /// (answered now, and the call goes on from the round it reached with
    /// the server's request state), or one whose task was still working
    /// (followed now). Its policy decision stands (it was sent); the
    /// server's gate is passed again.
    #[allow(clippy::too_many_arguments)]
    async fn take_up(
        &self,
        call: &mut Arc<ToolCall>,
        toolset: &ToolSet,
        context: CallContext,
        options: &ExecOptions,
        shared: &Shared,
        timeout: Duration,
        halted: &Halt,
        state: &CallState,
        start: Start,
    ) -> Result<CallToolResult> {
        let call: &ToolCall = call;
        let mark = shared.marker(call);
        let tool = toolset
            .resolve(&call.exposed_name)
            .filter(|t| t.server_id == call.server_id && t.tool.name == call.tool)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::UnknownTool,
                    format!(
                        "tool `{}` is no longer offered, so its call cannot go on",
                        call.exposed_name
                    ),
                )
            })?;
        let server = self.server(&call.server_id).ok_or_else(|| {
            Error::new(
                ErrorKind::Unavailable,
                format!("server `{}` is not part of this source", call.server_id),
            )
            .plain()
        })?;
        let retry = options.retry_interrupted && safe_to_repeat(&tool.tool);
        let alone = self.runs_alone(&call.server_id, &call.tool);
        let _pass = Box::pin(
            self.gates
                .pass(&call.server_id, alone, shared.slots.as_ref()),
        )
        .await;
        // A call taken up keeps its stage (waiting for its answers, or for its
        // task) until its next request goes out.
        let (response, answered) = match start {
            Start::Asked { round, asked } => (
                CallToolResponse::InputRequired(*asked),
                round.saturating_sub(1),
            ),
            Start::Task { task_id } => {
                state.start_clock(timeout);
                let following = server.resume_task(&call.tool, &task_id, context.clone());
                let response = tokio::select! {
                    response = following => response?,
                    () = state.expired() => return Err(Error::new(
                        ErrorKind::Timeout,
                        format!(
                            "following task `{task_id}` took longer than {} ms and was given up",
                            timeout.as_millis()
                        ),
                    )),
                };
                (response, 0)
            }
            Start::Fresh => return Err(Error::new(ErrorKind::Input, "nothing to take up")),
        };
        self.rounds
            .complete_boxed(
                call,
                server.as_ref(),
                context,
                response,
                options,
                timeout,
                halted,
                state,
                retry,
                answered,
                shared.journal().map(|_| &mark as &Mark<'_>),
            )
            .await
    }

    /// A call's outcome with its result checked against the tool's
    /// `outputSchema`, as `check` says: a result that breaks it becomes an
    /// error (and is kept beside it, for the call's record), or is passed on
    /// with a warning; and the tool's UI resource, for the record.
    pub(super) fn check_output(
        &self,
        call: &ToolCall,
        toolset: &ToolSet,
        outcome: Result<CallToolResult>,
        check: OutputSchemaCheck,
    ) -> Checked {
        let tool = toolset
            .resolve(&call.exposed_name)
            .filter(|t| t.server_id == call.server_id && t.tool.name == call.tool)
            .or_else(|| toolset.app_tool(&call.server_id, &call.tool))
            .map(|t| &t.tool);
        let mut checked = self.check_schema(call, tool, outcome, check);
        checked.ui_resource = tool.and_then(Tool::ui_resource_uri).map(str::to_owned);
        checked
    }

    fn check_schema(
        &self,
        call: &ToolCall,
        tool: Option<&Tool>,
        outcome: Result<CallToolResult>,
        check: OutputSchemaCheck,
    ) -> Checked {
        let result = match outcome {
            Ok(result) if check != OutputSchemaCheck::Off && !result.is_error => result,
            other => return Checked::as_it_is(other),
        };
        let Some(schema) = tool.and_then(|t| t.output_schema.as_ref()) else {
            return Checked::as_it_is(Ok(result));
        };
        let problems: Vec<String> = match &result.structured_content {
            None => vec![
                "it has no `structuredContent`, though the tool declares an `outputSchema`"
                    .to_owned(),
            ],
            Some(value) => {
                let validator =
                    self.cache
                        .validator(&call.server_id, &call.tool, SchemaOf::Output, schema);
                let Some(validator) = validator.as_ref() else {
                    return Checked::as_it_is(Ok(result));
                };
                broken_rules(validator, schema, value)
            }
        };
        if problems.is_empty() {
            return Checked::as_it_is(Ok(result));
        }
        let why = crate::describe::sanitize_description(&problems.join("; ")).into_owned();
        if check == OutputSchemaCheck::Warn {
            tracing::warn!(server = %call.server_id, tool = %call.tool, call_id = call.call_id.as_deref().unwrap_or(""),
                problems = %why, "the structured result breaks the tool's outputSchema; answered as it is");
            return Checked {
                outcome: Ok(result),
                kept: None,
                ui_resource: None,
                warning: Some(format!(
                    "the result breaks the tool's outputSchema and was passed on as it is: {why}"
                )),
            };
        }
        let error = Error::new(
            ErrorKind::InvalidResult,
            format!("the tool's result breaks its outputSchema, so it is not passed on: {why}"),
        );
        Checked {
            outcome: Err(error),
            kept: Some(Box::new(result)),
            warning: None,
            ui_resource: None,
        }
    }

    /// The checks, the policy (and approver), validation, the `before` hook,
    /// the server's gate and the first request; the pass through the gate is
    /// held until the call has ended.
    #[allow(clippy::too_many_arguments)]
    async fn first_request(
        &self,
        call: &mut Arc<ToolCall>,
        toolset: &ToolSet,
        context: &mut CallContext,
        halted: &Halt,
        retry_interrupted: bool,
        shared: &Shared,
        state: &Arc<CallState>,
    ) -> Result<(&Arc<dyn Server>, CallToolResponse, bool, Pass)> {
        let tool = match shared.caller {
            Caller::Model => toolset
                .resolve(&call.exposed_name)
                .filter(|t| t.server_id == call.server_id && t.tool.name == call.tool),
            Caller::App => toolset.app_tool(&call.server_id, &call.tool),
        };
        let tool = tool.ok_or_else(|| {
            Error::new(
                ErrorKind::UnknownTool,
                format!(
                    "unknown tool `{}`: call one of the tools offered",
                    call.exposed_name
                ),
            )
        })?;
        // The policy first: a call it denies reaches no server, not even
        // to list its tools again.
        {
            let approving = self.check_policy(call, context, halted, shared)?;
            self.cache
                .check_offered(&self.servers, &call.server_id, &call.tool)
                .await?;
            if let Approving::Asking(approval) = approving {
                approval.await?;
            }
        }
        if self.validate {
            self.check_arguments(call, &tool.tool.input_schema)?;
        }
        if let Some(hooks) = self.rounds.hooks() {
            hooks.before(Arc::make_mut(call), context).await?;
            // The handlers see the arguments as sent.
            if let Some(answerer) = &context.answerer {
                answerer.set_arguments(&call.arguments);
            }
        }
        if halted.is_set() {
            return Err(not_run_halted());
        }
        let server = self.server(&call.server_id).ok_or_else(|| {
            Error::new(
                ErrorKind::Unavailable,
                format!("server `{}` is not part of this source", call.server_id),
            )
            .plain()
        })?;
        let retry = retry_interrupted && safe_to_repeat(&tool.tool);
        let alone = self.runs_alone(&call.server_id, &call.tool);
        let slots = shared.slots.as_ref();
        let ungated = self.alone.is_empty();
        let pass = match self.gates.try_pass(&call.server_id, alone, slots, ungated) {
            Some(pass) => pass,
            None => {
                // Waiting for the server is not the call's time.
                let _paused = state.pause();
                Box::pin(self.gates.pass(&call.server_id, alone, slots)).await
            }
        };
        if halted.is_set() {
            return Err(not_run_halted());
        }
        if let Some(journal) = shared.journal() {
            let change = journal.stage(call, Stage::Sent);
            // Sent only once the state that says so is kept; keeping it is
            // not the call's time.
            let _paused = state.pause();
            Box::pin(journal.flush_through(change))
                .await
                .map_err(not_sent)?;
            if halted.is_set() {
                return Err(not_run_halted());
            }
        }
        let response = self
            .rounds
            .send_first(server.as_ref(), call, context, retry)
            .await?;
        Ok((server, response, retry, pass))
    }

    /// The policy's decision: an error when it denies, and otherwise what is
    /// left to await (nothing when it allows, the approver when it asks).
    fn check_policy<'a>(
        &'a self,
        call: &'a ToolCall,
        context: &'a CallContext,
        halted: &'a Halt,
        shared: &'a Shared,
    ) -> Result<Approving<'a>> {
        let Some(policy) = &self.policy else {
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
            Action::Ask => match shared.decision(call) {
                Some(decision) => {
                    decided_by_application(decision, call, halted).map(|()| Approving::Allowed)
                }
                None => Ok(Approving::Asking(Box::pin(
                    self.ask_approver(call, context, halted, shared),
                ))),
            },
        }
    }

    /// Asks the approver about a call the policy asks about. In a turn that
    /// may be suspended, a call no one can answer for now waits.
    async fn ask_approver(
        &self,
        call: &ToolCall,
        context: &CallContext,
        halted: &Halt,
        shared: &Shared,
    ) -> Result<()> {
        let request = ApprovalRequest {
            call: call.clone(),
            principal: context.principal.clone(),
            taint: (*context.taint).clone(),
            sampling: None,
        };
        let approval = if shared.suspend && !self.has_approver() {
            Approval::Later
        } else {
            self.approve(request).await
        };
        match approval {
            Approval::Later if shared.suspend => Err(Waits::error(Stage::WaitingForApproval)),
            Approval::Later => Err(Error::new(
                ErrorKind::Denied,
                "denied: the approver gave no answer now, and this turn cannot be suspended",
            )),
            approval => decided(approval, call, halted),
        }
    }

    /// Whether a call to `server_id`'s `tool` runs alone on its server
    /// ([`SourceBuilder::run_alone`](crate::exec::SourceBuilder::run_alone)).
    fn runs_alone(&self, server_id: &str, tool: &str) -> bool {
        if self.alone.is_empty() {
            return false;
        }
        let name = format!("{server_id}/{tool}");
        self.alone.iter().any(|glob| glob.is_match(&name))
    }

    fn check_arguments(&self, call: &ToolCall, schema: &Value) -> Result<()> {
        let validator = self
            .cache
            .validator(&call.server_id, &call.tool, SchemaOf::Input, schema);
        let Some(validator) = validator.as_ref() else {
            return Ok(());
        };
        let instance = Value::Object(call.arguments.clone());
        let problems = schema_problems(validator, &instance);
        if problems.is_empty() {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::InvalidArguments,
            format!("invalid arguments: {}", problems.join("; ")),
        ))
    }
}

/// Where `instance` breaks the schema and why, as `/path: reason`: the first five.
fn schema_problems(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .take(5)
        .map(|e| {
            let at = e.instance_path().as_str().to_owned();
            format!("{}: {e}", if at.is_empty() { "/" } else { &at })
        })
        .collect()
}

/// Where `instance` breaks `schema` and which rule, as ``/path: breaks
/// `keyword: rule` ``: the first five. The instance's values are never
/// quoted: a result that breaks its schema is not passed on, and what it
/// holds must not reach the model through the error either.
fn broken_rules(
    validator: &jsonschema::Validator,
    schema: &Value,
    instance: &Value,
) -> Vec<String> {
    validator
        .iter_errors(instance)
        .take(5)
        .map(|e| {
            let at = e.instance_path().as_str();
            let at = if at.is_empty() { "/" } else { at };
            let keyword = e.kind().keyword();
            let rule = schema
                .pointer(e.schema_path().as_str())
                .map(Value::to_string)
                .filter(|rule| rule.len() <= 200);
            match rule {
                Some(rule) => format!("{at}: breaks `{keyword}: {rule}`"),
                None => format!("{at}: breaks `{keyword}`"),
            }
        })
        .collect()
}

/// A call's approval decided: `Ok` to run it, or why not (a deny-and-halt
/// halts the turn).
fn decided(approval: Approval, call: &ToolCall, halted: &Halt) -> Result<()> {
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

/// The error of a call not sent because the state saying it is sent could
/// not be kept (the cause, the application's own, is in the log, not in
/// what the model is told).
fn not_sent(error: Error) -> Error {
    let message = format!("not sent: {}", error.message());
    error.with_message(message)
}

/// A call's approval as the application gave it in the turn's options
/// ([`ExecOptions::approve_call`], [`ExecOptions::deny_call`]).
fn decided_by_application(approval: &Approval, call: &ToolCall, halted: &Halt) -> Result<()> {
    match approval {
        Approval::Deny(reason) => Err(Error::new(ErrorKind::Denied, format!("denied: {reason}"))),
        other => decided(other.clone(), call, halted),
    }
}

/// Where a call's pipeline takes up.
pub(super) enum Start {
    /// From the start: checks, policy, the first request.
    Fresh,
    /// A resumed call whose tool asked at `round` and waits for the answers.
    Asked {
        round: usize,
        asked: Box<InputRequiredResult>,
    },
    /// A resumed call its server runs as task `task_id`.
    Task { task_id: String },
}

/// What is left of the policy's decision: nothing, or the approver's answer.
enum Approving<'a> {
    Allowed,
    Asking(BoxFuture<'a, Result<()>>),
}

/// The call's clock running out, boxed: set only for a call still in
/// flight after its first poll.
fn expiry(state: &CallState) -> BoxFuture<'_, ()> {
    Box::pin(state.expired())
}

/// Whether a tool says calling it twice does no harm (`readOnlyHint` or
/// `idempotentHint`).
fn safe_to_repeat(tool: &crate::mcp::Tool) -> bool {
    let hint = |name: &str| {
        tool.annotations
            .as_ref()
            .and_then(|a| a.get(name))
            .and_then(Value::as_bool)
            == Some(true)
    };
    hint("readOnlyHint") || hint("idempotentHint")
}

/// Per-turn values every call's context shares, the turn's slots on each
/// server, and who makes the calls.
pub(super) struct Shared {
    /// The calls' idempotency keys, derived per server from the turn's id.
    pub(super) keys: KeyRing,
    /// Whether calls may wait for answers not available now.
    pub(super) suspend: bool,
    /// Approvals the application gave for calls by id (or `#INDEX`).
    pub(super) decisions: std::collections::BTreeMap<String, Approval>,
    pub(super) principal: Option<String>,
    journal: Option<Journal>,
    assigns: Arc<Map<String, Value>>,
    /// Grows when servers the provider hosts turn out to have answered
    /// in the same response.
    taint: std::sync::Mutex<Arc<BTreeSet<String>>>,
    slots: Option<Slots>,
    caller: Caller,
}

/// Who makes a turn's calls: the model (to the tools it was offered) or the
/// application (to any tool of the toolset, its app-only ones included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Caller {
    Model,
    App,
}

impl Shared {
    /// A model's turn answered in `provider`'s shape.
    pub(super) fn new(options: &ExecOptions, provider: &Provider) -> Self {
        Self::for_caller(options, Caller::Model, Some(provider.id()))
    }

    /// A model's turn taken up again from `state`: its id, taint and halt.
    pub(super) fn resumed(options: &ExecOptions, state: TurnState) -> Self {
        let mut shared = Self::for_caller(options, Caller::Model, None);
        // The same keys as before: the turn's id, and each call's place
        // among the calls to its server.
        shared.keys = KeyRing::new(Arc::from(state.turn.as_str()));
        for entry in &state.calls {
            shared.keys.note_index(&entry.server_id, entry.index);
        }
        shared.add_taint(state.taint.iter().map(String::as_str));
        // What the provider's hosted calls put in the model's context.
        shared.add_taint(state.hosted.servers());
        shared.suspend = options.suspend;
        shared.journal = Some(Journal::new(state, options.checkpoint.clone()));
        shared
    }

    /// The turn's state as it goes, when it may be suspended or is checkpointed.
    pub(super) fn journal(&self) -> Option<&Journal> {
        self.journal.as_ref()
    }

    /// Keeps `call`'s stage in the turn's state, if it is kept: a call's
    /// next request goes out only once the state that says it is sent is
    /// kept (the error says why it was not).
    fn marker<'a>(
        &'a self,
        call: &'a ToolCall,
    ) -> impl Fn(Stage) -> BoxFuture<'a, Result<()>> + Send + Sync + 'a {
        move |stage| {
            Box::pin(async move {
                let Some(journal) = &self.journal else {
                    return Ok(());
                };
                let sent = matches!(stage, Stage::Sent);
                let change = journal.stage(call, stage);
                if sent {
                    journal.flush_through(change).await.map_err(not_sent)
                } else {
                    journal.flush_or_log().await;
                    Ok(())
                }
            })
        }
    }

    /// Puts the turn's calls in its state (as not yet sent), with what the
    /// provider did with the servers it hosts.
    pub(super) fn begin(&self, calls: &[ToolCall], hosted: &HostedItems) {
        for call in calls {
            self.keys.note(call);
        }
        if let Some(journal) = &self.journal {
            let taint = self.taint();
            journal.update(|state| {
                state.taint = (*taint).clone();
                state.hosted = hosted.clone();
                for call in calls {
                    state
                        .calls
                        .push(super::durable::CallEntry::new(call, Stage::Pending));
                }
            });
        }
    }

    /// The application's decision on `call`, if it gave one: by its id, or
    /// by `#INDEX` for one of the model's calls that has no id (a call
    /// with an id is named by it alone, so that `#1` cannot approve
    /// whatever call comes first; a hosted call's approval request,
    /// `usize::MAX`, goes by its id).
    fn decision(&self, call: &ToolCall) -> Option<&Approval> {
        if self.decisions.is_empty() {
            return None;
        }
        match call.call_id.as_deref() {
            Some(id) => self.decisions.get(id),
            None if call.index == usize::MAX => None,
            None => self.decisions.get(&format!("#{}", call.index)),
        }
    }

    /// The servers whose output is in the model's context.
    pub(super) fn taint(&self) -> Arc<BTreeSet<String>> {
        self.taint
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Adds `servers` to the taint of the calls started from now on.
    pub(super) fn add_taint<'a>(&self, servers: impl IntoIterator<Item = &'a str>) {
        let mut taint = self
            .taint
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut grown = (**taint).clone();
        let before = grown.len();
        grown.extend(servers.into_iter().map(str::to_owned));
        if grown.len() != before {
            if let Some(journal) = &self.journal {
                journal.update(|state| state.taint.clone_from(&grown));
            }
            *taint = Arc::new(grown);
        }
    }

    /// `provider`: the turn's answers' shape, when its state is kept.
    pub(super) fn for_caller(
        options: &ExecOptions,
        caller: Caller,
        provider: Option<&str>,
    ) -> Self {
        let turn = uuid::Uuid::new_v4().to_string();
        let journal = provider
            .filter(|_| options.suspend || options.checkpoint.is_some())
            .map(|provider| {
                Journal::new(
                    TurnState::new(turn.clone(), provider.to_owned()),
                    options.checkpoint.clone(),
                )
            });
        Shared {
            keys: KeyRing::new(Arc::from(turn)),
            // A turn whose state is not kept cannot be resumed: nothing waits.
            suspend: options.suspend && journal.is_some(),
            decisions: options.decisions.clone(),
            principal: options.principal.clone(),
            journal,
            assigns: Arc::new(options.assigns.clone()),
            taint: std::sync::Mutex::new(Arc::new(options.taint.clone())),
            slots: options.max_concurrency_per_server.map(Slots::new),
            caller,
        }
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        format!("panicked: {s}")
    } else if let Some(s) = panic.downcast_ref::<String>() {
        format!("panicked: {s}")
    } else {
        "panicked".to_owned()
    }
}
