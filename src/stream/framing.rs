//! Cutting a stream's bytes into events, whatever the chunks' boundaries.
//!
//! - **SSE** through the `sse-stream` crate (the parser the MCP SDK uses):
//!   its async decoder is driven by hand, so bytes can be pushed as they
//!   arrive and every complete event taken out at once.
//! - **JSON values** one after another (newline-delimited or not): a scanner
//!   finds where each top-level value ends, then serde_json reads it. Work is
//!   linear in the bytes however they are cut.
//! - **AWS event stream** binary frames (feature `eventstream`): each frame
//!   becomes `{"<event type>": payload}`, its CRC-32s checked (`crc32fast`),
//!   its payload read where it lies and its name borrowed from its header.
//!   The frames are read here rather than by `aws-smithy-eventstream`, whose
//!   decoder copies every header and payload out of the buffer; the tests
//!   hold this reader to that decoder on generated and corrupted frames.
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
    #[error("not a valid AWS event-stream frame: {0}")]
    EventStream(&'static str),
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

/// AWS event-stream frames (`application/vnd.amazon.eventstream`), read
/// where they lie: a frame whole in the pushed bytes is checked and parsed
/// there, and only a frame cut across pushes is gathered in a buffer first.
/// Each frame's CRC-32s are checked; its name comes from its `:event-type`
/// header (or `:exception-type` on an exception frame), borrowed from the
/// bytes.
#[cfg(feature = "eventstream")]
#[derive(Debug, Default)]
pub(crate) struct EventStreamDecoder {
    /// The start of a frame cut across pushes.
    buf: Vec<u8>,
    arena: Bump,
}

/// A frame's fixed start: its total length, its headers' length and the
/// CRC-32 of those two.
#[cfg(feature = "eventstream")]
const PRELUDE_LEN: usize = 12;
/// The prelude and the CRC-32 that ends every frame.
#[cfg(feature = "eventstream")]
const MIN_FRAME_LEN: usize = PRELUDE_LEN + 4;
/// The largest headers section the format allows.
#[cfg(feature = "eventstream")]
const MAX_HEADERS_LEN: usize = 128 * 1024;

#[cfg(feature = "eventstream")]
impl EventStreamDecoder {
    fn push(
        &mut self,
        bytes: &[u8],
        out: &mut impl FnMut(Payload<'_>),
    ) -> Result<(), FramingError> {
        let mut rest = bytes;
        // First the frame begun in an earlier push: its prelude, then the rest.
        while !self.buf.is_empty() && !rest.is_empty() {
            let want = if self.buf.len() < PRELUDE_LEN {
                PRELUDE_LEN
            } else {
                frame_len(&self.buf)?
            };
            let take = (want - self.buf.len()).min(rest.len());
            self.buf.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.buf.len() >= PRELUDE_LEN && self.buf.len() == frame_len(&self.buf)? {
                let read = frame(&self.buf, &mut self.arena, out);
                self.buf.clear();
                read?;
            }
        }
        // Then every frame whole in the bytes, where it lies.
        while rest.len() >= PRELUDE_LEN {
            let len = frame_len(rest)?;
            if rest.len() < len {
                break;
            }
            frame(&rest[..len], &mut self.arena, out)?;
            rest = &rest[len..];
        }
        self.buf.extend_from_slice(rest);
        Ok(())
    }

    fn finish(&mut self) -> Result<(), FramingError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(FramingError::Unfinished(self.buf.len()))
        }
    }
}

/// A big-endian `u32` at `at` (the caller checked the length).
#[cfg(feature = "eventstream")]
fn be_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// The length of the frame whose prelude starts `bytes` (at least
/// [`PRELUDE_LEN`] of them), once its checksum and lengths are checked.
#[cfg(feature = "eventstream")]
fn frame_len(bytes: &[u8]) -> Result<usize, FramingError> {
    let total = be_u32(bytes, 0) as usize;
    let headers = be_u32(bytes, 4) as usize;
    let crc = be_u32(bytes, 8);
    if crc32fast::hash(&bytes[..8]) != crc {
        return Err(FramingError::EventStream(
            "the prelude's checksum does not match",
        ));
    }
    if total < MIN_FRAME_LEN {
        return Err(FramingError::EventStream(
            "the frame is shorter than its prelude and checksum",
        ));
    }
    if total > MAX_EVENT_BYTES {
        return Err(FramingError::TooLarge);
    }
    if headers > MAX_HEADERS_LEN || headers > total - MIN_FRAME_LEN {
        return Err(FramingError::EventStream(
            "the headers' length does not fit the frame",
        ));
    }
    Ok(total)
}

/// One whole frame: its checksum checked, its name read from its headers,
/// its payload parsed as JSON and handed out as `{"<name>": payload}`.
#[cfg(feature = "eventstream")]
fn frame(
    bytes: &[u8],
    arena: &mut Bump,
    out: &mut impl FnMut(Payload<'_>),
) -> Result<(), FramingError> {
    let end = bytes.len() - 4;
    if crc32fast::hash(&bytes[..end]) != be_u32(bytes, end) {
        return Err(FramingError::EventStream(
            "the frame's checksum does not match",
        ));
    }
    let headers_end = PRELUDE_LEN + be_u32(bytes, 4) as usize;
    let name = frame_name(&bytes[PRELUDE_LEN..headers_end])?;
    let payload = &bytes[headers_end..end];
    arena.reset();
    let payload = if payload.is_empty() {
        Event::Object(&[])
    } else {
        event::parse_slice(payload, arena).map_err(FramingError::EventStreamJson)?
    };
    let wrapped = [(name, payload)];
    out(Payload::Json(Event::Object(&wrapped)));
    Ok(())
}

/// The frame's name: its `:event-type` when its `:message-type` is `event`,
/// its `:exception-type` when it is `exception`.
#[cfg(feature = "eventstream")]
fn frame_name(mut headers: &[u8]) -> Result<&str, FramingError> {
    let bad = FramingError::EventStream;
    // Each header read: `Some(Some(text))` for a string, `Some(None)` for
    // a value of another type.
    let (mut message_type, mut event_type, mut exception_type) = (None, None, None);
    let mut content_type = None;
    while !headers.is_empty() {
        let name_len = usize::from(headers[0]);
        if headers.len() < 2 + name_len {
            return Err(bad("a header's name is cut short"));
        }
        let name = &headers[1..1 + name_len];
        let value_type = headers[1 + name_len];
        let value = &headers[2 + name_len..];
        // The value's length by its type: booleans have none, strings and
        // byte arrays a 16-bit length first.
        let (len, skip) = match value_type {
            0 | 1 => (0, 0),
            2 => (1, 0),
            3 => (2, 0),
            4 => (4, 0),
            5 | 8 => (8, 0),
            9 => (16, 0),
            6 | 7 => {
                if value.len() < 2 {
                    return Err(bad("a header's value is cut short"));
                }
                (usize::from(u16::from_be_bytes([value[0], value[1]])), 2)
            }
            _ => return Err(bad("a header's value has an unknown type")),
        };
        if value.len() < skip + len {
            return Err(bad("a header's value is cut short"));
        }
        let text = if value_type == 7 {
            Some(
                std::str::from_utf8(&value[skip..skip + len])
                    .map_err(|_| bad("a header's string value is not UTF-8"))?,
            )
        } else {
            None
        };
        match name {
            b":message-type" => message_type = Some(text),
            b":event-type" => event_type = Some(text),
            b":exception-type" => exception_type = Some(text),
            b":content-type" => content_type = Some(text),
            // The names above are ASCII; any other is checked.
            _ if std::str::from_utf8(name).is_err() => {
                return Err(bad("a header's name is not UTF-8"));
            }
            _ => {}
        }
        headers = &value[skip + len..];
    }
    // As for every header, the last of a name counts.
    if content_type == Some(None) {
        return Err(bad("the `:content-type` header is not a string"));
    }
    match message_type.flatten() {
        Some("event") => event_type
            .flatten()
            .ok_or(bad("an event frame has no `:event-type` string header")),
        Some("exception") => exception_type.flatten().ok_or(bad(
            "an exception frame has no `:exception-type` string header",
        )),
        Some(_) => Err(bad(
            "the frame's `:message-type` is neither `event` nor `exception`",
        )),
        None => Err(bad("the frame has no `:message-type` string header")),
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

    /// The AWS SDK's codec, which writes the frames and whose decoder this
    /// reader is held to.
    #[cfg(feature = "eventstream")]
    mod event_stream {
        use super::*;
        use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder, write_message_to};
        use aws_smithy_eventstream::smithy::parse_response_headers;
        use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
        use proptest::prelude::*;

        fn encode(messages: &[Message]) -> Vec<u8> {
            let mut bytes = Vec::new();
            for message in messages {
                write_message_to(message, &mut bytes).unwrap();
            }
            bytes
        }

        fn event(name: &str, payload: &str) -> Message {
            Message::new(payload.as_bytes().to_vec())
                .add_header(Header::new(
                    ":message-type",
                    HeaderValue::String("event".into()),
                ))
                .add_header(Header::new(
                    ":event-type",
                    HeaderValue::String(name.to_owned().into()),
                ))
                .add_header(Header::new(
                    ":content-type",
                    HeaderValue::String("application/json".into()),
                ))
        }

        /// What this reader reads from `bytes`, or that it refused them.
        fn ours(bytes: &[u8]) -> Option<Vec<Seen>> {
            let mut out = Vec::new();
            let mut d = Decoder::new(Framing::EventStream);
            d.push(bytes, &mut |p: Payload<'_>| out.push(seen(p)))
                .ok()?;
            d.finish(&mut |p: Payload<'_>| out.push(seen(p))).ok()?;
            Some(out)
        }

        /// What the SDK's decoder reads from `bytes`, wrapped the same way.
        fn sdk(bytes: &[u8]) -> Option<Vec<Seen>> {
            let mut buf = bytes::BytesMut::from(bytes);
            let mut decoder = MessageFrameDecoder::new();
            let mut out = Vec::new();
            loop {
                // The decoder takes a frame's prelude in before the frame is
                // whole: bytes left at the last call are a cut frame.
                let left = !buf.is_empty();
                match decoder.decode_frame(&mut buf).ok()? {
                    DecodedFrame::Incomplete => return (!left).then_some(out),
                    DecodedFrame::Complete(message) => {
                        let headers = parse_response_headers(&message).ok()?;
                        let payload = if message.payload().is_empty() {
                            json!({})
                        } else {
                            serde_json::from_slice(message.payload()).ok()?
                        };
                        out.push(Seen::Json(json!({ headers.smithy_type.as_str(): payload })));
                    }
                }
            }
        }

        #[test]
        fn frames_whatever_the_cut() {
            let bytes = encode(&[
                event("messageStart", r#"{"role":"assistant"}"#),
                event(
                    "contentBlockDelta",
                    r#"{"delta":{"text":"h\u00e9"},"contentBlockIndex":0}"#,
                ),
                event("messageStop", ""),
                Message::new(&br#"{"message":"slow down"}"#[..])
                    .add_header(Header::new(
                        ":message-type",
                        HeaderValue::String("exception".into()),
                    ))
                    .add_header(Header::new(
                        ":exception-type",
                        HeaderValue::String("throttlingException".into()),
                    )),
            ]);
            let events = cut_everywhere(Framing::EventStream, &bytes);
            assert_eq!(Some(&events), sdk(&bytes).as_ref());
            assert_eq!(
                events,
                vec![
                    Seen::Json(json!({"messageStart": {"role": "assistant"}})),
                    Seen::Json(
                        json!({"contentBlockDelta": {"delta": {"text": "hé"}, "contentBlockIndex": 0}})
                    ),
                    Seen::Json(json!({"messageStop": {}})),
                    Seen::Json(json!({"throttlingException": {"message": "slow down"}})),
                ]
            );
        }

        #[test]
        fn a_bad_frame_is_named() {
            let mut bytes = encode(&[event("messageStart", "{}")]);
            let last = bytes.len() - 1;
            bytes[last] ^= 1;
            let mut d = Decoder::new(Framing::EventStream);
            let err = d.push(&bytes, &mut |_| {}).unwrap_err();
            assert_eq!(
                err.to_string(),
                "not a valid AWS event-stream frame: the frame's checksum does not match"
            );
            let unknown = encode(&[Message::new(&b"{}"[..]).add_header(Header::new(
                ":message-type",
                HeaderValue::String("error".into()),
            ))]);
            let err = Decoder::new(Framing::EventStream)
                .push(&unknown, &mut |_| {})
                .unwrap_err();
            assert!(
                err.to_string().contains("neither `event` nor `exception`"),
                "{err}"
            );
        }

        fn header_value() -> impl Strategy<Value = HeaderValue> {
            prop_oneof![
                any::<bool>().prop_map(HeaderValue::Bool),
                any::<i8>().prop_map(HeaderValue::Byte),
                any::<i16>().prop_map(HeaderValue::Int16),
                any::<i32>().prop_map(HeaderValue::Int32),
                any::<i64>().prop_map(HeaderValue::Int64),
                proptest::collection::vec(any::<u8>(), 0..8)
                    .prop_map(|b| HeaderValue::ByteArray(b.into())),
                "[a-zé]{0,8}".prop_map(|s| HeaderValue::String(s.into())),
                any::<u128>().prop_map(HeaderValue::Uuid),
            ]
        }

        fn header_name() -> impl Strategy<Value = String> {
            prop_oneof![
                Just(":message-type".to_owned()),
                Just(":event-type".to_owned()),
                Just(":exception-type".to_owned()),
                Just(":content-type".to_owned()),
                "[a-z:-]{0,12}",
            ]
        }

        fn message() -> impl Strategy<Value = Message> {
            let kind = prop_oneof![Just("event"), Just("exception"), Just("other")];
            let payload = prop_oneof![
                Just(String::new()),
                Just(r#"{"a":1}"#.to_owned()),
                Just(r#"{"delta":{"toolUse":{"input":"{\"x\""}}}"#.to_owned()),
                Just("not json".to_owned()),
            ];
            let extra = proptest::collection::vec((header_name(), header_value()), 0..4);
            (kind, "[a-zA-Z]{1,12}", payload, extra).prop_map(|(kind, name, payload, extra)| {
                let mut message = Message::new(payload.into_bytes()).add_header(Header::new(
                    ":message-type",
                    HeaderValue::String(kind.into()),
                ));
                let key = if kind == "exception" {
                    ":exception-type"
                } else {
                    ":event-type"
                };
                message = message.add_header(Header::new(key, HeaderValue::String(name.into())));
                for (name, value) in extra {
                    message = message.add_header(Header::new(name, value));
                }
                message
            })
        }

        /// Of two headers of one name the last counts, as in the SDK: a
        /// `:content-type` that is not a string is refused only if no string
        /// one follows it.
        #[test]
        fn the_last_header_of_a_name_counts() {
            let frame = |first: HeaderValue, last: HeaderValue| {
                encode(&[event("A", "{}")
                    .add_header(Header::new(":content-type", first))
                    .add_header(Header::new(":content-type", last))])
            };
            let read = frame(HeaderValue::Bool(false), HeaderValue::String("".into()));
            assert_eq!(ours(&read), sdk(&read));
            assert_eq!(ours(&read), Some(vec![Seen::Json(json!({"A": {}}))]));
            let refused = frame(HeaderValue::String("".into()), HeaderValue::Bool(false));
            assert_eq!(ours(&refused), None);
            assert_eq!(sdk(&refused), None);
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2048))]
            /// Generated frames, whole, corrupted at one byte, or cut short:
            /// this reader refuses what the SDK's decoder refuses and reads
            /// the same events from the rest.
            #[test]
            fn reads_what_the_sdk_reads(
                messages in proptest::collection::vec(message(), 1..4),
                flip in proptest::option::of((any::<prop::sample::Index>(), 1u8..=255)),
                cut in proptest::option::of(any::<prop::sample::Index>()),
            ) {
                let mut bytes = encode(&messages);
                if let Some((at, mask)) = flip {
                    let at = at.index(bytes.len());
                    bytes[at] ^= mask;
                }
                if let Some(at) = cut {
                    bytes.truncate(at.index(bytes.len()));
                }
                prop_assert_eq!(ours(&bytes), sdk(&bytes));
            }
        }
    }
}
