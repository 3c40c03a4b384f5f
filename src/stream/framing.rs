//! Cutting a stream's bytes into events, whatever the chunks' boundaries.
//!
//! - **SSE** through the `sse-stream` crate (the parser the MCP SDK uses):
//!   its async decoder is driven by hand, so bytes can be pushed as they
//!   arrive and every complete event taken out at once.
//! - **JSON values** one after another (newline-delimited or not): a scanner
//!   finds where each top-level value ends, then serde_json reads it. Work is
//!   linear in the bytes however they are cut.
//! - **AWS event stream** binary frames (feature `eventstream`), through
//!   `aws-smithy-eventstream`: each frame becomes `{"<event type>": payload}`,
//!   the payload read in place from the frame and the name borrowed from its
//!   header (the SDK's decoder copies the frame's headers and payload out of
//!   the buffer as it checks the CRC).
//!
//! Each event is handed out as soon as it is cut, as an [`Event`] that
//! borrows from the bytes it was read from and from the decoder's arena,
//! emptied before the next event (see `event.rs`): nothing of an event is
//! copied before a rule keeps it. The arena keeps the room the stream's
//! largest event took until the stream is dropped.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bumpalo::Bump;
use bytes::Bytes;
use futures_util::Stream;

use super::event::{self, Event};
use crate::spec::Framing;

/// The largest event read, in bytes: a stream whose event (or line) grows
/// past it is refused instead of buffered without end.
pub(crate) const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One event cut from the bytes, borrowing from them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Payload<'t> {
    /// A JSON event.
    Json(Event<'t>),
    /// A data payload that is not JSON (such as `[DONE]`).
    Text(&'t str),
}

/// Why bytes could not be cut into events.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FramingError {
    #[error("not valid server-sent events")]
    Sse(#[source] sse_stream::Error),
    #[error("an event is not valid JSON")]
    Json(#[source] serde_json::Error),
    #[error("expected a JSON object or array, found byte {byte:#04x}")]
    NotJson { byte: u8 },
    #[error("the stream ended inside a JSON value ({0} bytes unread)")]
    Unfinished(usize),
    #[error("an event is over {MAX_EVENT_BYTES} bytes")]
    TooLarge,
    #[cfg(feature = "eventstream")]
    #[error("not a valid AWS event-stream frame")]
    EventStream(#[source] aws_smithy_eventstream::error::Error),
    #[cfg(feature = "eventstream")]
    #[error("an event-stream frame's payload is not valid JSON")]
    EventStreamJson(#[source] serde_json::Error),
    #[cfg(not(feature = "eventstream"))]
    #[error("binary event streams need the `eventstream` cargo feature")]
    EventStreamDisabled,
}

/// A push decoder for one framing.
pub(crate) enum Decoder {
    Sse(SseDecoder),
    Lines(LineSplitter),
    Json(JsonSplitter),
    #[cfg(feature = "eventstream")]
    EventStream(EventStreamDecoder),
    #[cfg(not(feature = "eventstream"))]
    EventStream,
}

impl Decoder {
    pub(crate) fn new(framing: Framing) -> Decoder {
        match framing {
            Framing::Sse => Decoder::Sse(SseDecoder::new()),
            Framing::Ndjson => Decoder::Lines(LineSplitter::default()),
            Framing::Json => Decoder::Json(JsonSplitter::default()),
            #[cfg(feature = "eventstream")]
            Framing::EventStream => Decoder::EventStream(EventStreamDecoder::default()),
            #[cfg(not(feature = "eventstream"))]
            Framing::EventStream => Decoder::EventStream,
        }
    }

    /// Takes `bytes` and hands every event they complete to `out`, each as
    /// soon as it is cut (so that one event is read before the next is
    /// parsed, and only one is held at a time).
    pub(crate) fn push(
        &mut self,
        bytes: &[u8],
        out: &mut impl FnMut(Payload<'_>),
    ) -> Result<(), FramingError> {
        match self {
            Decoder::Sse(d) => d.push(bytes, out),
            Decoder::Lines(d) => d.push(bytes, out),
            Decoder::Json(d) => d.push(bytes, out),
            #[cfg(feature = "eventstream")]
            Decoder::EventStream(d) => d.push(bytes, out),
            #[cfg(not(feature = "eventstream"))]
            Decoder::EventStream => Err(FramingError::EventStreamDisabled),
        }
    }

    /// The end of the bytes: hands out what they complete.
    pub(crate) fn finish(&mut self, out: &mut impl FnMut(Payload<'_>)) -> Result<(), FramingError> {
        match self {
            Decoder::Sse(d) => d.finish(out),
            Decoder::Lines(d) => d.finish(out),
            Decoder::Json(d) => d.finish(),
            #[cfg(feature = "eventstream")]
            Decoder::EventStream(d) => d.finish(),
            #[cfg(not(feature = "eventstream"))]
            Decoder::EventStream => Ok(()),
        }
    }
}

/// The chunks not yet read by the SSE parser, and whether more will come.
#[derive(Default)]
struct Feed {
    chunks: VecDeque<Bytes>,
    closed: bool,
}

/// The parser's input: the feed's chunks, pending while it is empty and open.
struct FeedStream(Arc<Mutex<Feed>>);

impl Stream for FeedStream {
    type Item = Result<Bytes, std::convert::Infallible>;

    fn poll_next(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        // A poisoned lock can only come from a panic inside this module's own
        // short critical sections; its data is still consistent.
        let mut feed = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match feed.chunks.pop_front() {
            Some(chunk) => Poll::Ready(Some(Ok(chunk))),
            None if feed.closed => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}

/// The SSE parser, driven synchronously: after each push it is polled until
/// it needs more input. Nothing waits, so a no-op waker is enough.
pub(crate) struct SseDecoder {
    feed: Arc<Mutex<Feed>>,
    parser: Pin<Box<sse_stream::SseByteStream<FeedStream>>>,
    /// Bytes pushed since the last complete event.
    pending: usize,
    arena: Bump,
}

impl SseDecoder {
    fn new() -> SseDecoder {
        let feed = Arc::new(Mutex::new(Feed::default()));
        let parser = Box::pin(sse_stream::SseByteStream::new(FeedStream(feed.clone())));
        SseDecoder {
            feed,
            parser,
            pending: 0,
            arena: Bump::new(),
        }
    }

    fn push(
        &mut self,
        bytes: &[u8],
        out: &mut impl FnMut(Payload<'_>),
    ) -> Result<(), FramingError> {
        if !bytes.is_empty() {
            let mut feed = self.feed.lock().unwrap_or_else(|p| p.into_inner());
            feed.chunks.push_back(Bytes::copy_from_slice(bytes));
        }
        self.drain(out)?;
        // The parser holds the unfinished event; bytes since the last event bound it.
        self.pending += bytes.len();
        if self.pending > MAX_EVENT_BYTES {
            return Err(FramingError::TooLarge);
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut impl FnMut(Payload<'_>)) -> Result<(), FramingError> {
        self.feed.lock().unwrap_or_else(|p| p.into_inner()).closed = true;
        self.drain(out)
    }

    fn drain(&mut self, out: &mut impl FnMut(Payload<'_>)) -> Result<(), FramingError> {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        while let Poll::Ready(Some(event)) = self.parser.as_mut().poll_next(&mut cx) {
            let event = event.map_err(FramingError::Sse)?;
            self.pending = 0;
            let Some(data) = event.data else { continue };
            let text = data.trim();
            if text.is_empty() {
                continue;
            }
            self.arena.reset();
            out(match event::parse(text, &self.arena) {
                Ok(value) => Payload::Json(value),
                Err(_) => Payload::Text(text),
            });
        }
        Ok(())
    }
}

/// Newline-delimited JSON: each complete line is one event (blank lines and
/// a trailing `\r` are skipped); a last line without its newline is read at
/// the end.
#[derive(Debug, Default)]
pub(crate) struct LineSplitter {
    buf: Vec<u8>,
    arena: Bump,
}

impl LineSplitter {
    fn push(
        &mut self,
        bytes: &[u8],
        out: &mut impl FnMut(Payload<'_>),
    ) -> Result<(), FramingError> {
        let mut rest = bytes;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            if self.buf.is_empty() {
                line(&rest[..end], &mut self.arena, out)?;
            } else {
                // The buffer is kept for the next line cut across pushes.
                self.buf.extend_from_slice(&rest[..end]);
                let read = line(&self.buf, &mut self.arena, out);
                self.buf.clear();
                read?;
            }
            rest = &rest[end + 1..];
        }
        self.buf.extend_from_slice(rest);
        if self.buf.len() > MAX_EVENT_BYTES {
            return Err(FramingError::TooLarge);
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut impl FnMut(Payload<'_>)) -> Result<(), FramingError> {
        let read = line(&self.buf, &mut self.arena, out);
        self.buf.clear();
        read
    }
}

/// One line of newline-delimited JSON.
fn line(
    bytes: &[u8],
    arena: &mut Bump,
    out: &mut impl FnMut(Payload<'_>),
) -> Result<(), FramingError> {
    let bytes = bytes.trim_ascii();
    if bytes.is_empty() {
        return Ok(());
    }
    if !matches!(bytes[0], b'{' | b'[') {
        return Err(FramingError::NotJson { byte: bytes[0] });
    }
    arena.reset();
    hand_out(parse(bytes, arena)?, out);
    Ok(())
}

/// Reads JSON bytes. The text is checked as UTF-8 once, whole (faster than
/// string by string); bytes that are not UTF-8 get serde_json's own error.
fn parse<'x>(bytes: &'x [u8], arena: &'x Bump) -> Result<Event<'x>, FramingError> {
    event::parse_slice(bytes, arena).map_err(FramingError::Json)
}

/// A JSON value read from the bytes: an event, or a list of events.
fn hand_out(value: Event<'_>, out: &mut impl FnMut(Payload<'_>)) {
    match value {
        Event::Array(events) => events.iter().copied().map(Payload::Json).for_each(out),
        other => out(Payload::Json(other)),
    }
}

/// Finds complete top-level JSON values in bytes that arrive in pieces.
#[derive(Debug, Default)]
pub(crate) struct JsonSplitter {
    buf: Vec<u8>,
    /// Where scanning resumes.
    pos: usize,
    /// Where the value being read starts.
    start: Option<usize>,
    depth: usize,
    in_string: bool,
    escaped: bool,
    arena: Bump,
}

impl JsonSplitter {
    fn push(
        &mut self,
        bytes: &[u8],
        out: &mut impl FnMut(Payload<'_>),
    ) -> Result<(), FramingError> {
        self.buf.extend_from_slice(bytes);
        while self.pos < self.buf.len() {
            let b = self.buf[self.pos];
            self.pos += 1;
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' if self.start.is_some() => self.in_string = true,
                b'{' | b'[' => {
                    if self.start.is_none() {
                        self.start = Some(self.pos - 1);
                    }
                    self.depth += 1;
                }
                b'}' | b']' if self.start.is_some() => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        let start = self.start.take().unwrap_or_default();
                        self.arena.reset();
                        hand_out(parse(&self.buf[start..self.pos], &self.arena)?, out);
                    }
                }
                b' ' | b'\t' | b'\r' | b'\n' => {}
                _ if self.start.is_some() => {}
                other => return Err(FramingError::NotJson { byte: other }),
            }
        }
        // Keep only the value being read, if any: everything before it is
        // whitespace or values already read.
        let keep_from = self.start.unwrap_or(self.pos);
        if keep_from > 0 {
            self.buf.drain(..keep_from);
            self.pos -= keep_from;
            if let Some(start) = &mut self.start {
                *start = 0;
            }
        }
        if self.buf.len() > MAX_EVENT_BYTES {
            return Err(FramingError::TooLarge);
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), FramingError> {
        match self.start {
            Some(_) => Err(FramingError::Unfinished(self.buf.len())),
            None => Ok(()),
        }
    }
}

/// AWS event-stream frames, decoded by the AWS SDK's own decoder.
#[cfg(feature = "eventstream")]
#[derive(Debug, Default)]
pub(crate) struct EventStreamDecoder {
    buf: bytes::BytesMut,
    frames: aws_smithy_eventstream::frame::MessageFrameDecoder,
    arena: Bump,
}

#[cfg(feature = "eventstream")]
impl EventStreamDecoder {
    fn push(
        &mut self,
        bytes: &[u8],
        out: &mut impl FnMut(Payload<'_>),
    ) -> Result<(), FramingError> {
        use aws_smithy_eventstream::frame::DecodedFrame;
        use aws_smithy_eventstream::smithy::parse_response_headers;
        self.buf.extend_from_slice(bytes);
        loop {
            match self
                .frames
                .decode_frame(&mut self.buf)
                .map_err(FramingError::EventStream)?
            {
                DecodedFrame::Incomplete => return Ok(()),
                DecodedFrame::Complete(message) => {
                    let headers =
                        parse_response_headers(&message).map_err(FramingError::EventStream)?;
                    let name = headers.smithy_type.as_str();
                    self.arena.reset();
                    let payload = if message.payload().is_empty() {
                        Event::Object(&[])
                    } else {
                        event::parse_slice(message.payload(), &self.arena)
                            .map_err(FramingError::EventStreamJson)?
                    };
                    let wrapped = [(name, payload)];
                    out(Payload::Json(Event::Object(&wrapped)));
                }
            }
        }
    }

    fn finish(&mut self) -> Result<(), FramingError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(FramingError::Unfinished(self.buf.len()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// A payload as a test keeps it, after the bytes it borrowed from are gone.
    #[derive(Debug, PartialEq)]
    enum Seen {
        Json(Value),
        Text(String),
    }

    fn seen(payload: Payload<'_>) -> Seen {
        match payload {
            Payload::Json(event) => Seen::Json(event::to_value(&event)),
            Payload::Text(text) => Seen::Text(text.to_owned()),
        }
    }

    fn cut_everywhere(framing: Framing, text: &[u8]) -> Vec<Seen> {
        let mut whole = Vec::new();
        let mut d = Decoder::new(framing);
        d.push(text, &mut |p: Payload<'_>| whole.push(seen(p)))
            .unwrap();
        d.finish(&mut |p: Payload<'_>| whole.push(seen(p))).unwrap();
        for cut in 0..=text.len() {
            let mut out = Vec::new();
            let mut d = Decoder::new(framing);
            d.push(&text[..cut], &mut |p: Payload<'_>| out.push(seen(p)))
                .unwrap();
            d.push(&text[cut..], &mut |p: Payload<'_>| out.push(seen(p)))
                .unwrap();
            d.finish(&mut |p: Payload<'_>| out.push(seen(p))).unwrap();
            assert_eq!(out, whole, "cut at {cut}");
        }
        let mut out = Vec::new();
        let mut d = Decoder::new(framing);
        for b in text {
            d.push(std::slice::from_ref(b), &mut |p: Payload<'_>| {
                out.push(seen(p))
            })
            .unwrap();
        }
        d.finish(&mut |p: Payload<'_>| out.push(seen(p))).unwrap();
        assert_eq!(out, whole, "byte by byte");
        whole
    }

    #[test]
    fn sse_events_whatever_the_cut() {
        let text = "event: a\r\ndata: {\"x\": \"é\"}\r\n\r\n: comment\n\ndata: {\"y\":\ndata: 2}\n\ndata: [DONE]\n\n";
        let events = cut_everywhere(Framing::Sse, text.as_bytes());
        assert_eq!(
            events,
            [
                Seen::Json(json!({"x": "é"})),
                Seen::Json(json!({"y": 2})),
                Seen::Text("[DONE]".into())
            ]
        );
    }

    #[test]
    fn json_values_whatever_the_cut() {
        let text = "{\"a\": \"}{\\\"\"}\n{\"b\": [1, {\"c\": null}]}[{\"d\": 1}, {\"e\": 2}]";
        let events = cut_everywhere(Framing::Json, text.as_bytes());
        assert_eq!(
            events,
            [
                Seen::Json(json!({"a": "}{\""})),
                Seen::Json(json!({"b": [1, {"c": null}]})),
                Seen::Json(json!({"d": 1})),
                Seen::Json(json!({"e": 2}))
            ]
        );
    }

    #[test]
    fn json_lines_whatever_the_cut() {
        let text = "{\"a\": \"\\n\"}\r\n\n[{\"b\": 1}, {\"c\": 2}]\n{\"d\": \"é\"}";
        let events = cut_everywhere(Framing::Ndjson, text.as_bytes());
        assert_eq!(
            events,
            [
                Seen::Json(json!({"a": "\n"})),
                Seen::Json(json!({"b": 1})),
                Seen::Json(json!({"c": 2})),
                Seen::Json(json!({"d": "é"}))
            ]
        );
    }

    #[test]
    fn bad_json_is_an_error_and_a_cut_value_is_unfinished() {
        let mut d = Decoder::new(Framing::Json);
        let mut out = |_: Payload<'_>| {};
        assert!(matches!(
            d.push(b"42", &mut out),
            Err(FramingError::NotJson { byte: b'4' })
        ));
        let mut d = Decoder::new(Framing::Json);
        d.push(b"{\"a\": [1,", &mut out).unwrap();
        assert!(matches!(
            d.finish(&mut out),
            Err(FramingError::Unfinished(_))
        ));
        let mut d = Decoder::new(Framing::Json);
        assert!(matches!(
            d.push(b"{\"a\" 1}", &mut out),
            Err(FramingError::Json(_))
        ));
    }
}
