//! A code-mode program: the model's call to the code tool, run in the
//! sandbox, each call it makes through the pipeline ([`TurnRun::call`]),
//! its journal kept in the turn's state. Run again after a suspension, the
//! program is answered from its journal (in the order its outcomes reached
//! it) until it goes on live; nothing its journal holds is sent again.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use futures_util::StreamExt;
use serde_json::Value;
use tracing::Instrument;

use super::answerer::CallState;
use super::approve::Approving;
use super::call::Start;
use super::durable::{Ended, ProgramJournal, Stage, Waits};
use super::turn::Checked;
use super::turn_run::TurnRun;
use crate::budget::LIBRARY_SERVER;
use crate::callers::{Caller, CodeCaller};
use crate::calls::ToolCall;
use crate::code::sandbox::{self, CallError, Failure, Launch, Reply, Request, Running};
use crate::code::{CODE_TOOL_NAME, CodeLimits, Variation};
use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{CallToolResult, Content};
use crate::toolset::ExposedTool;

/// A call's outcome as the program takes it.
type Outcome = std::result::Result<Value, CallError>;

/// How a program's run ended.
enum Finish {
    /// The program ended (or failed).
    Ended(sandbox::Ended),
    /// Its calls that are left wait for answers not available now: the
    /// turn is suspended, and the program runs again when it is resumed.
    Waits,
    /// Run again, it did not make the calls its journal holds.
    Diverged(String),
}

/// One run of a program.
struct Program<'r> {
    run: &'r TurnRun<'r>,
    id: String,
    index: usize,
    limits: CodeLimits,
    /// The tools it may call, by the name it calls them.
    tools: BTreeMap<&'r str, &'r ExposedTool>,
    /// Its journal from an earlier run: the calls it made and the order
    /// their outcomes reached it.
    journal: Option<ProgramJournal>,
}

/// What a program's run keeps track of as it goes.
#[derive(Default)]
struct Progress {
    /// Outcomes sent to the program.
    replied: usize,
    /// The calls that wait (for an approval, an answer, a task).
    waiting: BTreeSet<usize>,
    /// Journaled outcomes the program asked for again, not yet given back.
    ready: HashMap<usize, Outcome>,
    /// Live outcomes held back until the journaled ones are all given.
    held: Vec<(usize, Outcome)>,
    /// How many of the journal's outcomes were given back.
    replayed: usize,
    /// The servers whose answers reached the program.
    ran: BTreeSet<String>,
    /// How many outcomes the program had taken in when it last said it
    /// waits.
    idle: Option<usize>,
}

impl<'r> TurnRun<'r> {
    /// Runs the model's call to the code tool: the program in the sandbox,
    /// its calls governed one by one. Its answer is the program's return
    /// value and console output; a program whose calls wait suspends the
    /// call (and the turn) until it is resumed.
    pub(super) async fn program(&'r self, call: ToolCall) -> (ToolCall, Checked) {
        let span = program_span(&call);
        let outcome = self.run_program(&call).instrument(span.clone()).await;
        if let Err(error) = &outcome
            && !span.is_disabled()
        {
            crate::telemetry::record_failure(&span, error);
        }
        if let Some(journal) = self.journal() {
            let stage = match &outcome {
                Err(error) => Waits::of(error).cloned(),
                Ok(_) => None,
            };
            let stage = stage.unwrap_or_else(|| Stage::Ended(Ended::of(&outcome)));
            journal.stage(&call, stage);
            Box::pin(journal.flush_or_log()).await;
        }
        (call, Checked::as_it_is(outcome))
    }

    async fn run_program(&'r self, call: &ToolCall) -> Result<CallToolResult> {
        self.admit_program(call).await?;
        let code = match call.arguments.get("code") {
            Some(Value::String(code)) => code.clone(),
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidArguments,
                    format!("`{CODE_TOOL_NAME}` takes `code`, the program as a string"),
                ));
            }
        };
        let limits = *self
            .source
            .code_mode
            .as_ref()
            .map(crate::code::CodeMode::limits)
            .ok_or_else(|| Error::new(ErrorKind::UnknownTool, "code mode is off"))?;
        let id = call
            .call_id
            .clone()
            .unwrap_or_else(|| format!("#{}", call.index));
        let journal = self
            .journal()
            .and_then(|j| j.snapshot().program(call.index).cloned());
        let variation = journal
            .as_ref()
            .map_or_else(Variation::fresh, |j| j.variation);
        if let Some(kept) = self.journal()
            && journal.is_none()
        {
            kept.update(|state| {
                state.code.push(ProgramJournal {
                    program_index: call.index,
                    program_id: id.clone(),
                    variation,
                    calls: Vec::new(),
                    delivered: Vec::new(),
                });
            });
        }
        let tools = self
            .source
            .open_to_code(self.toolset)
            .map(|t| (t.exposed_name.as_str(), t))
            .collect();
        let program = Program {
            run: self,
            id,
            index: call.index,
            limits,
            tools,
            journal,
        };
        program.run(code, variation).await
    }

    /// The program's own call judged as any call is: the policy on the code
    /// tool (`mcp-adapters/run_code`) and the approver.
    async fn admit_program(&self, call: &ToolCall) -> Result<()> {
        let state = CallState::new(call.clone(), self.rules.clone(), self.taint(), self.timeout);
        let context = self.context(&state);
        if let Approving::Asking(approval) = self.check_policy(call, &context)? {
            approval.await?;
        }
        Ok(())
    }
}

impl<'r> Program<'r> {
    /// Runs the program to its end, or until what is left of it waits.
    async fn run(self, code: String, variation: Variation) -> Result<CallToolResult> {
        let running = sandbox::start(Launch {
            code,
            names: self.tools.keys().map(|name| (*name).to_owned()).collect(),
            limits: self.limits,
            variation,
        })?;
        let (finish, ran) = self.serve(running).await?;
        match finish {
            Finish::Ended(ended) => {
                let mut result = self.answer(ended);
                // What the program made of its calls' answers is in the
                // model's context now.
                if !ran.is_empty() {
                    let servers = ran.into_iter().map(Value::String).collect();
                    result.meta.get_or_insert_default().insert(
                        super::catalogs::ORIGINS_KEY.to_owned(),
                        Value::Array(servers),
                    );
                }
                Ok(result)
            }
            Finish::Waits => Err(Waits::error(Stage::Pending)),
            Finish::Diverged(why) => Ok(CallToolResult::error(format!(
                "the program could not be taken up again: {why}. None of its calls was sent \
                 again; run it anew if its work is still needed"
            ))),
        }
    }

    /// Serves the program's calls until it ends, waits, or diverges from
    /// its journal.
    async fn serve(&self, mut running: Running) -> Result<(Finish, BTreeSet<String>)> {
        let mut inflight = futures_util::stream::FuturesUnordered::new();
        let mut progress = Progress::default();
        loop {
            tokio::select! {
                request = running.requests.recv() => {
                    let Some(request) = request else {
                        return Err(Error::new(ErrorKind::Server, "the program's engine stopped"));
                    };
                    match request {
                        Request::Done(ended) => {
                            // Calls it did not wait for end as they would
                            // have: governed, journaled, their outcomes unread.
                            while inflight.next().await.is_some() {}
                            return Ok((Finish::Ended(ended), progress.ran));
                        }
                        Request::Idle { answered } => progress.idle = Some(answered),
                        Request::Call { seq, name, arguments } => {
                            match self.take(seq, &name, arguments) {
                                Taken::Journaled((outcome, server)) => {
                                    progress.ran.extend(server);
                                    progress.ready.insert(seq, outcome);
                                }
                                Taken::Live(call, start) => {
                                    if let Some(journal) = self.run.journal() {
                                        journal.stage(&call, Stage::Pending);
                                    }
                                    let running = self.run.call(call, start).run();
                                    inflight.push(async move { (seq, running.await) });
                                }
                                Taken::Diverged(why) => {
                                    return Ok((Finish::Diverged(why), progress.ran));
                                }
                            }
                        }
                    }
                }
                Some((seq, (call, checked))) = inflight.next(), if !inflight.is_empty() => {
                    let checked: Checked = checked;
                    match &checked.outcome {
                        Err(error) if Waits::of(error).is_some() => {
                            progress.waiting.insert(seq);
                        }
                        _ => {
                            if checked.outcome.is_ok() {
                                progress.ran.insert(call.server_id.clone());
                            }
                            let outcome = value_of(&call, checked);
                            if self.replaying(&progress) {
                                progress.held.push((seq, outcome));
                            } else {
                                self.give(&running, &mut progress, seq, outcome);
                            }
                        }
                    }
                }
            }
            self.replay(&running, &mut progress);
            // The program has taken in every outcome sent to it, and
            // nothing is in flight: what it waits for is not coming now.
            if progress.idle == Some(progress.replied) && inflight.is_empty() {
                if self.replaying(&progress) {
                    let why = "it did not make again the calls its journal holds";
                    return Ok((Finish::Diverged(why.into()), progress.ran));
                }
                if !progress.waiting.is_empty() {
                    return Ok((Finish::Waits, progress.ran));
                }
            }
        }
    }

    /// Whether journaled outcomes are still to be given back.
    fn replaying(&self, progress: &Progress) -> bool {
        self.journal
            .as_ref()
            .is_some_and(|j| progress.replayed < j.delivered.len())
    }

    /// Gives back the journaled outcomes the program has asked for again,
    /// in the order they first reached it; then the live ones held back.
    fn replay(&self, running: &Running, progress: &mut Progress) {
        let delivered = self.journal.as_ref().map_or(&[][..], |j| &j.delivered[..]);
        while let Some(&seq) = delivered.get(progress.replayed) {
            let Some(outcome) = progress.ready.remove(&seq) else {
                return;
            };
            progress.replayed += 1;
            progress.replied += 1;
            running.reply(Reply { seq, outcome });
        }
        // Past the journal, what is answered without the pipeline (a call
        // refused here) goes back at once.
        let ready: Vec<(usize, Outcome)> = progress.ready.drain().collect();
        for (seq, outcome) in std::mem::take(&mut progress.held).into_iter().chain(ready) {
            self.give(running, progress, seq, outcome);
        }
    }

    /// Gives a live outcome to the program, and keeps its place in the
    /// journal's order.
    fn give(&self, running: &Running, progress: &mut Progress, seq: usize, outcome: Outcome) {
        if let Some(journal) = self.run.journal() {
            let index = self.index;
            journal.update(|state| {
                if let Some(program) = state.code.iter_mut().find(|j| j.program_index == index) {
                    program.delivered.push(seq);
                }
            });
        }
        progress.replied += 1;
        running.reply(Reply { seq, outcome });
    }

    /// The program's call `seq` to `name`: answered from the journal, or
    /// made now.
    fn take(&self, seq: usize, name: &str, arguments: serde_json::Map<String, Value>) -> Taken {
        let call = match self.tools.get(name) {
            Some(tool) => ToolCall {
                call_id: Some(format!("{}/{seq}", self.id)),
                server_id: tool.server_id.clone(),
                tool: tool.tool.name.clone(),
                exposed_name: tool.exposed_name.clone(),
                arguments,
                index: seq,
                caller: Caller::Code(Box::new(CodeCaller {
                    program_id: self.id.clone(),
                    program_index: self.index,
                    seq,
                })),
                // A program narrows a result itself: its calls offer no
                // selection argument.
                select: None,
            },
            // The sandbox offers only the tools open to code.
            None => {
                let refused = CallError {
                    message: format!("tool `{name}` is not open to code"),
                    kind: "denied".into(),
                    result: None,
                };
                return Taken::Journaled((Err(refused), None));
            }
        };
        let Some(entry) = self
            .journal
            .as_ref()
            .and_then(|j| j.calls.iter().find(|c| c.index == seq))
        else {
            return Taken::Live(call, Start::Fresh);
        };
        if entry.exposed_name != call.exposed_name || entry.arguments != call.arguments {
            return Taken::Diverged(format!(
                "its call {seq} is to `{}` with other arguments than its journal holds (`{}`)",
                call.exposed_name, entry.exposed_name
            ));
        }
        match Start::taken_up(&entry.stage) {
            Ok(start) => Taken::Live(call, start),
            Err(Stage::Ended(ended)) => {
                let tool = self.tools.get(name).map(|t| t.tool.as_ref());
                let check = self.run.options.output_schema;
                let checked = self
                    .run
                    .source
                    .check_against(&call, tool, ended.outcome(), check);
                let server = checked.outcome.is_ok().then(|| call.server_id.clone());
                Taken::Journaled((value_of(&call, checked), server))
            }
            // Sent, and its process ended before its answer came.
            Err(_) => {
                let interrupted = CallError {
                    message: "the call was sent, and the process that sent it ended before its \
                              answer came: it may or may not have run, and it was not sent again"
                        .into(),
                    kind: "interrupted".into(),
                    result: None,
                };
                Taken::Journaled((Err(interrupted), None))
            }
        }
    }

    /// What the model reads of the program's end: its return value, or why
    /// it failed; then its console output.
    fn answer(&self, ended: sandbox::Ended) -> CallToolResult {
        let console = ended.console;
        let mut result = match ended.outcome {
            Ok(value) => CallToolResult::text(value.to_string()),
            Err(failure) => CallToolResult::error(match failure {
                Failure::Thrown(text) => format!("the program threw an error: {text}"),
                Failure::Limit(limit) => limit.describe(&self.limits),
                Failure::Stuck => "the program waits for a promise that nothing settles (only \
                                   tool calls are awaited here: there are no timers)"
                    .to_owned(),
                Failure::Engine(why) => format!("the program could not run: {why}"),
            }),
        };
        if !console.is_empty() {
            result
                .content
                .push(Content::text(format!("console:\n{console}")));
        }
        result
    }
}

/// Where one of the program's calls is answered from.
enum Taken {
    /// From the journal (or refused): the outcome, and the server whose
    /// answer it is.
    Journaled((Outcome, Option<String>)),
    Live(ToolCall, Start),
    Diverged(String),
}

/// A call's outcome as the program takes it: the structured result (or its
/// text, or its content blocks), or an error it may catch.
fn value_of(call: &ToolCall, checked: Checked) -> Outcome {
    match checked.outcome {
        Ok(result) if result.is_error => Err(CallError {
            message: text_of(&result)
                .unwrap_or_else(|| "the tool answered with an error".to_owned()),
            kind: "tool_error".into(),
            result: serde_json::to_value(&result).ok(),
        }),
        Ok(result) => Ok(match result.structured_content {
            Some(value) => value,
            None => match text_of(&result) {
                Some(text) if result.content.iter().all(|c| matches!(c, Content::Text(_))) => {
                    Value::String(text)
                }
                _ => serde_json::to_value(&result.content).unwrap_or(Value::Null),
            },
        }),
        Err(error) => {
            let error = error.of_server(&call.server_id);
            Err(CallError {
                message: error.message().to_owned(),
                kind: serde_json::to_value(error.kind())
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                result: None,
            })
        }
    }
}

/// The text of a result's text blocks, one after the other.
fn text_of(result: &CallToolResult) -> Option<String> {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// The program's span: its calls' spans are its children.
fn program_span(call: &ToolCall) -> tracing::Span {
    tracing::info_span!(
        "execute_tool",
        otel.name = &*crate::telemetry::SpanName::new("execute_tool", CODE_TOOL_NAME).text(),
        otel.kind = "internal",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = CODE_TOOL_NAME,
        gen_ai.tool.call.id = call.call_id.as_deref(),
        mcp_adapters.server = LIBRARY_SERVER,
        error.r#type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    )
}
