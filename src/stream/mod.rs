//! Streamed responses: tool calls assembled from a model's stream as it
//! arrives, each handed out the moment it is complete.
//!
//! A spec's `stream:` section says how the provider's events build the
//! assistant message; [`Provider::stream`] reads a stream with it. Push the
//! bytes as the HTTP client receives them (cut anywhere), or events an SDK
//! already decoded; each push returns the calls it completed, ready to run
//! (or rejected, with their answers). [`CallStream::finish`] returns what
//! [`Provider::extract_calls`] would have read from the equivalent whole
//! response, and the assistant message for the history in the provider's
//! non-streamed shape, opaque pieces (thinking signatures, encrypted
//! reasoning) kept as sent.
//!
//! A call is complete at its own end event, or, for formats without one,
//! at the end of the stream: never because its arguments so far happen to
//! parse as JSON. A call still incomplete when a stream breaks is never
//! handed out.
//!
//! Each event is read as soon as it is cut, in place: serde_json's parser
//! reads it into a tree whose strings borrow from the bytes and whose lists
//! live in an arena emptied before the next event, and only what the
//! message keeps (an item, a value, a fragment) is copied out of it. A
//! stream holds the arena as large as its largest event (events are capped
//! at 16 MiB) until it is dropped.

mod assemble;
mod event;
mod framing;

use serde_json::Value;

use crate::calls::{Extracted, RejectedCall, ToolCall};
use crate::error::{Error, ErrorKind, Result};
use crate::listing::Listing;
use crate::spec::Provider;
pub use crate::spec::stream::Framing;
use assemble::Assembler;
use framing::{Decoder, Payload};

/// Reads one event cut from the bytes; after an event that breaks the
/// stream, the rest are cut (the bytes must still frame) but not read.
fn read_payload(
    assembler: &mut Assembler<'_>,
    payload: Payload<'_>,
    out: &mut Vec<StreamedCall>,
    read: &mut Result<()>,
) {
    if read.is_err() {
        return;
    }
    *read = match payload {
        Payload::Json(event) => assembler.event(&event, out),
        Payload::Text(text) => assembler.text(text, out),
    };
}

/// A call a stream completed: ready to run, or rejected with its answer.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum StreamedCall {
    /// A call to a tool in the listing, ready to be sent.
    Ready(ToolCall),
    /// A call that will not be sent (unknown tool, bad arguments, ...), with
    /// the answer to give the model.
    Rejected(RejectedCall),
    /// A search for deferred tools, to be answered with
    /// [`Provider::answer_search`](crate::Provider::answer_search).
    Search(crate::search::SearchCall),
}

impl StreamedCall {
    /// The call's position among the response's calls.
    pub fn index(&self) -> usize {
        match self {
            StreamedCall::Ready(call) => call.index,
            StreamedCall::Rejected(rejected) => rejected.index,
            StreamedCall::Search(search) => search.index,
        }
    }
}

/// What a whole stream held.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Streamed {
    /// Every call, as [`Provider::extract_calls`] reads them from the
    /// equivalent non-streamed response.
    pub extracted: Extracted,
    /// The assistant message for the history, in the provider's non-streamed
    /// shape (for a provider whose answer is a list of items, that list).
    pub message: Value,
}

/// One model stream being read; see [`Provider::stream`].
pub struct CallStream<'a> {
    assembler: Assembler<'a>,
    decoder: Decoder,
    framing: Framing,
    bytes: u64,
    error: Option<Error>,
    /// Where an event an SDK decoded is read as an [`event::Event`].
    arena: bumpalo::Bump,
}

impl std::fmt::Debug for CallStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallStream")
            .field("framing", &self.framing)
            .field("bytes", &self.bytes)
            .field("events", &self.assembler.events())
            .finish_non_exhaustive()
    }
}

impl Provider {
    /// Starts reading a streamed response to a request that offered
    /// `listing`'s tools, with the framing the spec names.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when the spec has no `stream:` section or
    /// `listing` was made for another provider.
    pub fn stream<'a>(&'a self, listing: &'a Listing) -> Result<CallStream<'a>> {
        if listing.provider_id() != self.id() {
            return Err(Error::input(format!(
                "the listing is in the format of provider `{}`, not `{}`",
                listing.provider_id(),
                self.id()
            )));
        }
        let plan = self.stream.as_ref().ok_or_else(|| {
            Error::input(format!(
                "provider `{}` has no `stream:` section: its streams cannot be read",
                self.id()
            ))
            .with_file(self.source())
        })?;
        Ok(CallStream {
            assembler: Assembler::new(self, plan, listing),
            decoder: Decoder::new(plan.framing),
            framing: plan.framing,
            bytes: 0,
            error: None,
            arena: bumpalo::Bump::new(),
        })
    }
}

impl<'a> CallStream<'a> {
    /// Reads the bytes with another framing than the spec's (say, Bedrock
    /// events an SDK decoded and wrote out as JSON). Call it before pushing.
    pub fn framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self.decoder = Decoder::new(framing);
        self
    }

    /// The framing the bytes are read with.
    pub fn framing_used(&self) -> Framing {
        self.framing
    }

    /// Takes the next bytes of the stream, cut anywhere, and returns the
    /// calls they completed, in the model's order.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Stream`] when the bytes cannot be read in the stream's
    /// framing, or the stream reports an error (the provider's message is
    /// named): the stream is broken, and every later push and
    /// [`finish`](Self::finish) return the same error. Calls the bytes
    /// completed before the break are handed out first: then this push
    /// returns them, and the error comes with the next call.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<StreamedCall>> {
        self.check()?;
        let mut out = Vec::new();
        let mut read = Ok(());
        let assembler = &mut self.assembler;
        let decoded = self.decoder.push(bytes, &mut |payload| {
            read_payload(assembler, payload, &mut out, &mut read)
        });
        self.bytes += bytes.len() as u64;
        self.handed(out, decoded, read)
    }

    /// Whether the stream broke (the error is returned by the next call).
    pub(crate) fn is_broken(&self) -> bool {
        self.error.is_some()
    }

    fn handed(
        &mut self,
        out: Vec<StreamedCall>,
        decoded: std::result::Result<(), framing::FramingError>,
        read: Result<()>,
    ) -> Result<Vec<StreamedCall>> {
        match self.settle(decoded, read) {
            Err(error) if out.is_empty() => Err(error),
            _ => Ok(out),
        }
    }

    /// Takes one event an SDK already decoded (the JSON a `data:` line holds,
    /// or a Bedrock event object) and returns the calls it completed.
    ///
    /// # Errors
    ///
    /// As [`push`](Self::push).
    pub fn push_event(&mut self, event: &Value) -> Result<Vec<StreamedCall>> {
        self.check()?;
        if crate::json::deeper_than(event, crate::json::MAX_NESTING) {
            let error = Error::new(
                ErrorKind::Stream,
                format!(
                    "event {} nests deeper than {} levels",
                    self.assembler.events() + 1,
                    crate::json::MAX_NESTING
                ),
            );
            self.error = Some(error.clone());
            return Err(error);
        }
        let mut out = Vec::new();
        self.arena.reset();
        let read = self
            .assembler
            .event(&event::borrow(event, &self.arena), &mut out);
        self.handed(out, Ok(()), read)
    }

    /// The end of the stream: the calls and the assistant message.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Stream`] when the stream broke: an error it reported,
    /// bytes that could not be read, or an end before the stream said it
    /// was complete. Calls handed out before stay valid; the rest never ran.
    pub fn finish(self) -> Result<Streamed> {
        let (_, streamed, error) = self.finish_parts();
        match error {
            Some(error) => Err(error),
            None => Ok(streamed),
        }
    }

    /// The end of the stream, with what was complete even when it broke:
    /// the calls the end completed, the whole result, and the error.
    pub(crate) fn finish_parts(mut self) -> (Vec<StreamedCall>, Streamed, Option<Error>) {
        let mut out = Vec::new();
        if self.error.is_none() {
            let mut read = Ok(());
            let assembler = &mut self.assembler;
            let decoded = self
                .decoder
                .finish(&mut |payload| read_payload(assembler, payload, &mut out, &mut read));
            let _ = self.settle(decoded, read);
        }
        if self.error.is_none() && !self.assembler.ended() {
            self.error = Some(Error::new(
                ErrorKind::Stream,
                format!(
                    "the stream ended before it said it was complete ({} events, {} bytes); calls still open were not run",
                    self.assembler.events(),
                    self.bytes
                ),
            ));
        }
        (out, self.assembler.finish(), self.error)
    }

    fn check(&self) -> Result<()> {
        match &self.error {
            Some(error) => Err(error.clone()),
            None => Ok(()),
        }
    }

    /// Records the first error of a push, with where the stream broke.
    fn settle(
        &mut self,
        decoded: std::result::Result<(), framing::FramingError>,
        read: Result<()>,
    ) -> Result<()> {
        let error = match (read, decoded) {
            (Err(error), _) => error,
            (Ok(()), Err(e)) => Error::new(
                ErrorKind::Stream,
                format!(
                    "the stream cannot be read as {} after {} events ({} bytes)",
                    self.framing.name(),
                    self.assembler.events(),
                    self.bytes
                ),
            )
            .with_source(e),
            (Ok(()), Ok(())) => return Ok(()),
        };
        self.error = Some(error.clone());
        Err(error)
    }
}
