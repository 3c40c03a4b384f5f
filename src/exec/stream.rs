//! Running calls while the model streams: each call starts the moment the
//! stream completes it.

use std::collections::VecDeque;

use futures_util::stream::FuturesUnordered;
use futures_util::{Stream, StreamExt};
use serde_json::Value;

use super::clock::Halt;
use super::durable::{Journal, Stage};
use super::options::{CallStart, ExecOptions};
use super::run::{Shared, Start};
use super::source::Source;
use super::turn::{Answering, Execution};
use crate::calls::ToolCall;
use crate::error::{Error, ErrorKind, Result};
use crate::hosted::HostedItems;
use crate::listing::Listing;
use crate::spec::Provider;
use crate::stream::StreamedCall;

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
        let mut reader = Some(match options.framing {
            Some(framing) => provider.stream(listing)?.framing(framing),
            None => provider.stream(listing)?,
        });
        let mut stream = std::pin::pin!(stream);
        let toolset = listing.toolset();
        let shared = Shared::new(options, provider);
        let mut turn =
            Answering::new(provider, options, self.reader(listing)).journal(shared.journal());
        let (limit, timeout) = options.limits();
        let halted = Halt::default();
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
        let mut message = Value::Null;
        let mut hosted = HostedItems::default();
        let mut error: Option<Error> = None;
        let mut bytes: u64 = 0;
        let sorter = Sorter {
            source: self,
            provider,
            listing,
            options,
            journal: shared.journal(),
        };
        loop {
            if !wait || reader.is_none() {
                while running.len() < limit {
                    let Some(call) = queued.pop_front() else {
                        break;
                    };
                    // In the model's order: every earlier call is counted.
                    shared.keys.note(&call);
                    running.push(self.guarded(
                        call,
                        toolset,
                        options,
                        &shared,
                        timeout,
                        &halted,
                        Start::Fresh,
                    ));
                }
            }
            if reader.is_none() && running.is_empty() && queued.is_empty() {
                break;
            }
            tokio::select! {
                chunk = stream.next(), if reader.is_some() => {
                    let mut broke = None;
                    let mut ended = false;
                    match (chunk, reader.as_mut()) {
                        (Some(Ok(chunk)), Some(calls)) => {
                            let chunk = chunk.as_ref();
                            bytes += chunk.len() as u64;
                            match calls.push(chunk) {
                                Ok(done) => sorter.sort(done, &mut queued, &mut turn)?,
                                Err(e) => broke = Some(e),
                            }
                            // Calls completed before a break come first; the error follows.
                            ended = calls.is_broken();
                        }
                        (Some(Err(e)), _) => {
                            broke = Some(Error::new(
                                ErrorKind::Stream,
                                format!("reading the stream failed after {bytes} bytes"),
                            ).with_source(e));
                        }
                        _ => ended = true,
                    }
                    if (ended || broke.is_some()) && let Some(calls) = reader.take() {
                        let (done, streamed, finish_error) = calls.finish_parts();
                        sorter.sort(done, &mut queued, &mut turn)?;
                        hosted = streamed.extracted.hosted;
                        shared.add_taint(hosted.servers());
                        message = streamed.message;
                        error = broke.or(finish_error);
                    }
                }
                Some((call, outcome)) = running.next(), if !running.is_empty() => {
                    let checked = self.check_output(&call, toolset, outcome, options.output_schema);
                    turn.ended(call, checked);
                }
            }
        }
        let execution = turn.finish(&halted)?;
        let execution = self
            .with_hosted(provider, hosted, Vec::new(), &shared, &halted, execution)
            .await;
        Ok(StreamedExecution {
            execution,
            message,
            error,
        })
    }
}
