//! Running calls while the model streams: each call starts the moment the
//! stream completes it.

use std::collections::VecDeque;

use futures_util::stream::FuturesUnordered;
use futures_util::{Stream, StreamExt};
use serde_json::Value;

use super::answering::Answering;
use super::call::Start;
use super::durable::{Journal, Stage};
use super::options::{CallStart, ExecOptions};
use super::source::Source;
use super::turn::Execution;
use super::turn_run::TurnRun;
use crate::calls::ToolCall;
use crate::error::{Error, ErrorKind, Result};
use crate::hosted::HostedItems;
use crate::listing::Listing;
use crate::spec::Provider;
use crate::stream::{CallStream, StreamedCall};

/// What a streamed turn came to.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamedExecution {
    /// The answers to every complete call, in the model's order.
    pub execution: Execution,
    /// The assistant message for the history, in the provider's non-streamed
    /// shape (see [`Streamed::message`](crate::stream::Streamed::message)).
    pub message: Value,
    /// Where and why the stream broke, if it did: the calls it had not
    /// completed were never sent.
    pub error: Option<Error>,
}

/// The calls a stream completed: to run, or answered already (searches are
/// answered by the library at once).
struct Sorter<'s, 'l> {
    source: &'s Source,
    provider: &'l Provider,
    listing: &'l Listing,
    options: &'l ExecOptions,
    journal: Option<&'l Journal>,
}

impl Sorter<'_, '_> {
    fn sort(
        &self,
        completed: Vec<StreamedCall>,
        queued: &mut VecDeque<ToolCall>,
        turn: &mut Answering<'_>,
    ) -> Result<()> {
        for call in completed {
            match call {
                StreamedCall::Ready(call) => {
                    if let Some(journal) = self.journal {
                        journal.stage(&call, Stage::Pending);
                    }
                    queued.push_back(call);
                }
                StreamedCall::Rejected(rejected) => turn.rejected(rejected),
                StreamedCall::Search(search) => {
                    self.source
                        .search(self.provider, &search, self.listing, self.options, turn)?
                }
            }
        }
        Ok(())
    }
}

impl Source {
    /// Reads a model's streamed response (the bytes as the HTTP client
    /// receives them, in chunks cut anywhere: a reqwest response's
    /// `bytes_stream()`), runs each call through the governed pipeline the
    /// moment the stream completes it, and answers every one in the model's
    /// order, as [`execute_tool_calls`](Self::execute_tool_calls) would have
    /// for the whole response. With
    /// [`CallStart::AfterStream`] calls start
    /// only once the stream has ended.
    ///
    /// If the stream breaks (its error event, bytes it cannot read, an end
    /// before it said it was complete, or an error from `stream` itself),
    /// every call it completed before the break runs and is answered, a call
    /// it had not completed is never sent, and [`StreamedExecution::error`]
    /// says where it broke.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when the provider's spec has no `stream:`
    /// section, `listing` is another provider's, or an answer cannot be
    /// shaped (a call without the id the provider requires).
    pub async fn execute_stream<S, B, E>(
        &self,
        provider: &Provider,
        stream: S,
        listing: &Listing,
        options: &ExecOptions,
    ) -> Result<StreamedExecution>
    where
        S: Stream<Item = std::result::Result<B, E>>,
        B: AsRef<[u8]>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let reader = match options.framing {
            Some(framing) => provider.stream(listing)?.framing(framing),
            None => provider.stream(listing)?,
        };
        let mut stream = std::pin::pin!(stream);
        let run = TurnRun::new(self, listing.toolset(), options, provider);
        let mut turn = Answering::new(provider, options, self.reader(listing))
            .journal(run.journal())
            .offered(listing);
        // A provider that hosts servers may put their output in the model's
        // context anywhere in the stream: under a policy that looks at what
        // the conversation has seen, calls wait for the stream's end.
        let wait = options.call_start == CallStart::AfterStream
            || (provider.hosts_mcp()
                && self
                    .policy
                    .as_ref()
                    .is_some_and(super::policy::Policy::depends_on_taint));
        let mut running = FuturesUnordered::new();
        let mut queued: VecDeque<ToolCall> = VecDeque::new();
        let mut reading = Reading::new(reader);
        let sorter = Sorter {
            source: self,
            provider,
            listing,
            options,
            journal: run.journal(),
        };
        loop {
            if !wait || reading.reader.is_none() {
                while running.len() < run.limit {
                    let Some(call) = queued.pop_front() else {
                        break;
                    };
                    // In the model's order: every earlier call is counted.
                    run.keys.note(&call);
                    running.push(run.start(call, Start::Fresh));
                }
            }
            if reading.reader.is_none() && running.is_empty() && queued.is_empty() {
                break;
            }
            tokio::select! {
                chunk = stream.next(), if reading.reader.is_some() => {
                    let done = reading.read(chunk);
                    sorter.sort(done, &mut queued, &mut turn)?;
                    if let Some(hosted) = reading.hosted() {
                        run.add_taint(hosted.servers());
                    }
                }
                Some((call, checked)) = running.next(), if !running.is_empty() => {
                    turn.ended(call, checked);
                }
            }
        }
        // The programs are known once the stream has ended.
        run.keep_programs(&reading.programs);
        turn.programs(std::mem::take(&mut reading.programs));
        let execution = turn.finish(run.halt())?;
        let execution = run
            .with_hosted(provider, reading.hosted, Vec::new(), execution)
            .await;
        Ok(StreamedExecution {
            execution,
            message: reading.message,
            error: reading.error,
        })
    }
}

/// A stream being read: its reader until it ends or breaks, and then what
/// it came to.
struct Reading<'a> {
    reader: Option<CallStream<'a>>,
    message: Value,
    hosted: HostedItems,
    programs: crate::programs::ProgramItems,
    error: Option<Error>,
    /// The bytes read so far, for the error of a stream that fails.
    bytes: u64,
    /// Whether the stream ended with the last chunk read.
    ended_now: bool,
}

impl<'a> Reading<'a> {
    fn new(reader: CallStream<'a>) -> Self {
        Reading {
            reader: Some(reader),
            message: Value::Null,
            hosted: HostedItems::default(),
            programs: Default::default(),
            error: None,
            bytes: 0,
            ended_now: false,
        }
    }

    /// The calls `chunk` completed (all those left, when the stream ended
    /// or broke with it: calls completed before a break come first, and
    /// the error follows).
    fn read<B, E>(&mut self, chunk: Option<std::result::Result<B, E>>) -> Vec<StreamedCall>
    where
        B: AsRef<[u8]>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let mut broke = None;
        let mut ended = false;
        let mut done = Vec::new();
        match (chunk, self.reader.as_mut()) {
            (Some(Ok(chunk)), Some(calls)) => {
                let chunk = chunk.as_ref();
                self.bytes += chunk.len() as u64;
                match calls.push(chunk) {
                    Ok(completed) => done = completed,
                    Err(e) => broke = Some(e),
                }
                ended = calls.is_broken();
            }
            (Some(Err(e)), _) => {
                broke = Some(
                    Error::new(
                        ErrorKind::Stream,
                        format!("reading the stream failed after {} bytes", self.bytes),
                    )
                    .with_source(e),
                );
            }
            _ => ended = true,
        }
        if (ended || broke.is_some())
            && let Some(calls) = self.reader.take()
        {
            let (rest, streamed, finish_error) = calls.finish_parts();
            done.extend(rest);
            self.hosted = streamed.extracted.hosted;
            self.programs = streamed.extracted.programs;
            self.message = streamed.message;
            self.error = broke.or(finish_error);
            self.ended_now = true;
        }
        done
    }

    /// What the provider did with the servers it hosts, once, when the
    /// stream has just ended.
    fn hosted(&mut self) -> Option<&HostedItems> {
        std::mem::take(&mut self.ended_now).then_some(&self.hosted)
    }
}
