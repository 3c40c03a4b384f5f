//! The lines of a stdio server's output that the SDK cannot take, read as
//! they pass: one over its size limit, one that is not UTF-8, one nested
//! deeper than its JSON parser goes. The SDK drops such a line without a
//! word, so the request it answers would wait out its whole timeout; the
//! tap finds the line's `id` on the way (wherever it stands in the line)
//! and answers the request at once with an error that says why.

use serde_json::Value;

use crate::mcp::Tool;

/// The longest line the SDK reads, its line feed included (rmcp's
/// `DEFAULT_MAX_LINE_LENGTH`): a longer one is dropped.
pub(crate) const MAX_LINE: usize = 16 << 20;

/// The deepest nesting the SDK's JSON parser reads (serde_json's recursion
/// limit of 128 leaves 127 levels of arrays and objects).
pub(crate) const MAX_DEPTH: u32 = 127;

/// The key of a request's method, with its closing quote.
const METHOD: &[u8] = b"method\"";

/// The longest `id` kept, in bytes.
const MAX_ID: usize = 256;

/// What the scanner is doing with the line's top-level `"id"`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Id {
    /// Looking for the key.
    Seeking,
    /// The key was read: its value comes after the colon.
    Keyed,
    /// Reading the value's bytes.
    Reading,
    /// The value, as written (a JSON number or string, unchecked).
    Read,
    /// The value is not one the scanner keeps (too long, an object).
    Unusable,
}

/// One line read as it passes: its length, its deepest nesting and its
/// top-level `id` (or another key's value), without parsing it.
#[derive(Debug, Clone)]
pub(crate) struct LineScan {
    /// The key looked for, with its closing quote (`id"`).
    wanted: &'static [u8],
    /// The line has a top-level `method`: a request or a notification of
    /// the server's own, not an answer.
    request: bool,
    len: usize,
    depth: u32,
    deepest: u32,
    in_string: bool,
    escaped: bool,
    /// At the top level, the next string is an object key.
    key_next: bool,
    /// Reading a top-level key (its first bytes).
    key: Option<Vec<u8>>,
    id: Id,
    id_bytes: Vec<u8>,
}

impl Default for LineScan {
    fn default() -> Self {
        LineScan {
            wanted: b"id\"",
            request: false,
            len: 0,
            depth: 0,
            deepest: 0,
            in_string: false,
            escaped: false,
            key_next: false,
            key: None,
            id: Id::Seeking,
            id_bytes: Vec::new(),
        }
    }
}

/// Why the SDK cannot take a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// Over [`MAX_LINE`] bytes (its length, line feed included).
    TooLarge(usize),
    /// Not UTF-8 (the offset of the first bad byte).
    NotUtf8(usize),
    /// Nested deeper than [`MAX_DEPTH`] (its depth).
    TooDeep(u32),
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::TooLarge(len) => write!(
                f,
                "the message is {len} bytes, over the {} MiB a message may have",
                MAX_LINE >> 20
            ),
            Unreadable::NotUtf8(at) => write!(f, "the message is not UTF-8 (byte {at})"),
            Unreadable::TooDeep(depth) => write!(
                f,
                "the message nests {depth} levels deep, deeper than the {MAX_DEPTH} a message may"
            ),
        }
    }
}

impl LineScan {
    /// Reads the next bytes of the line (no line feed among them).
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len();
        while !bytes.is_empty() {
            if self.in_string {
                bytes = self.string(bytes);
                continue;
            }
            let b = bytes[0];
            bytes = &bytes[1..];
            self.structural(b);
        }
    }

    /// Inside a string: up to its end (or the bytes' end), skipping what
    /// cannot end it.
    fn string<'b>(&mut self, bytes: &'b [u8]) -> &'b [u8] {
        if self.escaped {
            self.escaped = false;
            self.keep(&bytes[..1]);
            return &bytes[1..];
        }
        match memchr::memchr2(b'"', b'\\', bytes) {
            None => {
                self.keep(bytes);
                &[]
            }
            Some(at) => {
                self.keep(&bytes[..=at]);
                if bytes[at] == b'\\' {
                    self.escaped = true;
                } else {
                    self.in_string = false;
                    self.string_ended();
                }
                &bytes[at + 1..]
            }
        }
    }

    /// Keeps string bytes for the key or the id being read.
    fn keep(&mut self, bytes: &[u8]) {
        if let Some(key) = &mut self.key {
            // A key longer than the one looked for is not it; its first
            // bytes say so.
            let room = (self.wanted.len().max(METHOD.len()) + 1).saturating_sub(key.len());
            key.extend_from_slice(&bytes[..bytes.len().min(room)]);
        } else if self.id == Id::Reading {
            self.keep_id(bytes);
        }
    }

    fn keep_id(&mut self, bytes: &[u8]) {
        if self.id_bytes.len() + bytes.len() > MAX_ID {
            self.id = Id::Unusable;
            self.id_bytes = Vec::new();
        } else {
            self.id_bytes.extend_from_slice(bytes);
        }
    }

    fn string_ended(&mut self) {
        if let Some(key) = self.key.take() {
            // The last of several is the one a JSON reader keeps.
            if key == METHOD {
                self.request = true;
            }
            if key == self.wanted {
                self.id = Id::Keyed;
                self.id_bytes.clear();
            }
        } else if self.id == Id::Reading && self.depth == 1 {
            self.id = Id::Read;
        }
    }

    fn structural(&mut self, b: u8) {
        let top = self.depth == 1;
        match b {
            b'"' => {
                self.in_string = true;
                if top && self.key_next {
                    self.key_next = false;
                    self.key = Some(Vec::new());
                } else if top && self.id == Id::Keyed {
                    self.id = Id::Reading;
                    self.id_bytes.push(b'"');
                }
            }
            b'{' | b'[' => {
                if top && matches!(self.id, Id::Keyed | Id::Reading) {
                    self.id = Id::Unusable;
                }
                self.depth += 1;
                self.deepest = self.deepest.max(self.depth);
                self.key_next = self.depth == 1 && b == b'{';
            }
            b'}' | b']' => {
                if top {
                    self.end_number();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b',' if top => {
                self.end_number();
                self.key_next = true;
            }
            b' ' | b'\t' | b'\r' | b':' => {}
            other if top && matches!(self.id, Id::Keyed | Id::Reading) => {
                self.id = Id::Reading;
                self.keep_id(&[other]);
            }
            _ => {}
        }
    }

    /// A number (or a literal) read as the id ends at a comma or the end.
    fn end_number(&mut self) {
        if self.id == Id::Reading {
            self.id = Id::Read;
        }
    }

    /// Why the SDK cannot take the line, given the whole of it when it was
    /// kept (`line`; `None` for a line too large to keep).
    pub(crate) fn unreadable(&self, line: Option<&[u8]>) -> Option<Unreadable> {
        // The SDK counts the line feed too.
        if self.len + 1 > MAX_LINE {
            return Some(Unreadable::TooLarge(self.len + 1));
        }
        if let Some(Err(e)) = line.map(std::str::from_utf8) {
            return Some(Unreadable::NotUtf8(e.valid_up_to()));
        }
        (self.deepest > MAX_DEPTH).then_some(Unreadable::TooDeep(self.deepest))
    }

    /// The `id` of the request the line answers: its top-level `id`,
    /// when it is a JSON number or string and the line is not a request
    /// of the server's own (which has a `method`, and ids of its own).
    pub(crate) fn answered(&self) -> Option<Value> {
        self.id().filter(|_| !self.request)
    }

    /// The line's top-level `id` (or the key looked for), when it is a
    /// JSON number or string.
    pub(crate) fn id(&self) -> Option<Value> {
        if self.id != Id::Read {
            return None;
        }
        serde_json::from_slice::<Value>(&self.id_bytes)
            .ok()
            .filter(|v| v.is_number() || v.is_string())
    }
}

/// A `tools/list` answer the SDK cannot take because of some of its tools
/// (one nested too deep, one not UTF-8), written again without them: the
/// line to pass on instead, and each tool left out (its name, when it has
/// one that reads) with why. `None` when the line is not such an answer,
/// or is still unreadable without them (or not JSON: a line broken
/// elsewhere too, or whose brackets do not pair, is answered with the
/// error instead).
pub(crate) fn without_unreadable_tools(line: &[u8]) -> Option<Salvaged> {
    let (open, close) = tools_array(line)?;
    let mut kept = Vec::with_capacity(line.len());
    kept.extend_from_slice(&line[..=open]);
    let mut left_out = Vec::new();
    let mut first = true;
    for (start, end) in elements(line, open + 1, close) {
        let tool = &line[start..end];
        let mut scan = LineScan {
            wanted: b"name\"",
            ..LineScan::default()
        };
        scan.push(tool);
        // The tool sits three levels down in the answer.
        let depth = scan.deepest + 3;
        let why = match std::str::from_utf8(tool) {
            Err(e) => Some(Unreadable::NotUtf8(start + e.valid_up_to())),
            Ok(_) if depth > MAX_DEPTH => Some(Unreadable::TooDeep(depth)),
            Ok(_) => None,
        };
        match why {
            Some(why) => {
                let name = match scan.id() {
                    Some(serde_json::Value::String(name)) => name,
                    _ => "?".to_owned(),
                };
                left_out.push((name, why.to_string()));
            }
            None => {
                if !first {
                    kept.push(b',');
                }
                first = false;
                kept.extend_from_slice(tool);
            }
        }
    }
    if left_out.is_empty() {
        return None;
    }
    kept.extend_from_slice(&line[close..]);
    let mut scan = LineScan::default();
    scan.push(&kept);
    if scan.unreadable(Some(&kept)).is_some()
        || serde_json::from_slice::<serde::de::IgnoredAny>(&kept).is_err()
    {
        return None;
    }
    kept.push(b'\n');
    Some(Salvaged {
        line: kept,
        left_out,
    })
}

/// A `tools/list` answer written again without the tools that could not
/// be read.
#[derive(Debug)]
pub(crate) struct Salvaged {
    /// The line to pass on, line feed included.
    pub(crate) line: Vec<u8>,
    /// Each tool left out: its name (`?` when it does not read) and why.
    pub(crate) left_out: Vec<(String, String)>,
}

/// The tools of a `tools/list` answer, read from the line into the
/// library's own type, and the line to pass on instead: the same answer
/// with an empty `tools` array, which the SDK reads for the rest (the
/// cursor, the cache hints). `None` when the line is no such answer, or
/// when a tool does not read as the SDK would read it (a name, an object
/// for each schema): the SDK then reads the line as it is.
pub(crate) fn read_tools(line: &[u8]) -> Option<ReadTools> {
    let open = tools_open(line)?;
    let mut stream = serde_json::Deserializer::from_slice(&line[open..]).into_iter::<Vec<Tool>>();
    let tools = stream.next()?.ok()?;
    let close = open + stream.byte_offset();
    let typed = |schema: Option<&Value>| schema.is_none_or(Value::is_object);
    if !tools
        .iter()
        .all(|t| typed(Some(&t.input_schema)) && typed(t.output_schema.as_ref()))
    {
        return None;
    }
    let mut rest = Vec::with_capacity(line.len() - (close - open) + 3);
    rest.extend_from_slice(&line[..open]);
    rest.extend_from_slice(b"[]");
    rest.extend_from_slice(&line[close..]);
    rest.push(b'\n');
    Some(ReadTools { tools, line: rest })
}

/// A `tools/list` answer's tools, read, and the line to pass on instead.
#[derive(Debug)]
pub(crate) struct ReadTools {
    pub(crate) tools: Vec<Tool>,
    /// The answer without its tools, line feed included.
    pub(crate) line: Vec<u8>,
}

/// Where the array of `{"result": {"tools": [...]}}` opens in `line`.
fn tools_open(line: &[u8]) -> Option<usize> {
    let mut walk = Walker::default();
    // The path to the array: the key `result` at depth 1, `tools` at 2.
    let mut in_result = false;
    let mut i = 0;
    while i < line.len() {
        match walk.step(line, i) {
            Step::Key(key) if walk.depth == 1 => in_result = key == b"result",
            Step::Key(key) if walk.depth == 2 && in_result && key == b"tools" => {
                // The value: the next `[` after the colon.
                let rest = &line[walk.after..];
                let at = rest
                    .iter()
                    .position(|b| !matches!(b, b' ' | b'\t' | b'\r' | b':'))?;
                if rest[at] != b'[' {
                    return None;
                }
                return Some(walk.after + at);
            }
            _ => {}
        }
        i = walk.after;
    }
    None
}

/// Where the array of `{"result": {"tools": [...]}}` opens and closes in
/// `line`.
fn tools_array(line: &[u8]) -> Option<(usize, usize)> {
    let open = tools_open(line)?;
    let mut walk = Walker {
        depth: 3,
        ..Walker::default()
    };
    let mut i = open + 1;
    while i < line.len() {
        if let Step::Close = walk.step(line, i)
            && walk.depth == 2
        {
            return Some((open, i));
        }
        i = walk.after;
    }
    None
}

/// The elements of the array whose contents run from `from` to `to`.
fn elements(line: &[u8], from: usize, to: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut walk = Walker {
        depth: 3,
        ..Walker::default()
    };
    let mut start = from;
    let mut i = from;
    while i < to {
        if let Step::Comma = walk.step(line, i)
            && walk.depth == 3
        {
            out.push(trimmed(line, start, i));
            start = walk.after;
        }
        i = walk.after;
    }
    let last = trimmed(line, start, to);
    if last.0 < last.1 {
        out.push(last);
    }
    out
}

fn trimmed(line: &[u8], mut start: usize, mut end: usize) -> (usize, usize) {
    let blank = |b: u8| matches!(b, b' ' | b'\t' | b'\r');
    while start < end && blank(line[start]) {
        start += 1;
    }
    while end > start && blank(line[end - 1]) {
        end -= 1;
    }
    (start, end)
}

/// One step of a walk over JSON text: a string (an object key when a colon
/// follows), a bracket or a comma, or anything else.
#[derive(Debug, Default)]
struct Walker {
    depth: u32,
    /// Where the step ended.
    after: usize,
}

enum Step<'l> {
    Key(&'l [u8]),
    Close,
    Comma,
    Other,
}

impl Walker {
    fn step<'l>(&mut self, line: &'l [u8], at: usize) -> Step<'l> {
        self.after = at + 1;
        match line[at] {
            b'"' => {
                let mut end = at + 1;
                loop {
                    match memchr::memchr2(b'"', b'\\', &line[end..]) {
                        None => {
                            self.after = line.len();
                            return Step::Other;
                        }
                        Some(n) if line[end + n] == b'\\' => end += n + 2,
                        Some(n) => {
                            end += n;
                            break;
                        }
                    }
                    if end >= line.len() {
                        self.after = line.len();
                        return Step::Other;
                    }
                }
                self.after = end + 1;
                let colon = line[self.after..]
                    .iter()
                    .find(|b| !matches!(b, b' ' | b'\t' | b'\r'))
                    == Some(&b':');
                match colon {
                    true => Step::Key(&line[at + 1..end]),
                    false => Step::Other,
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                Step::Other
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                Step::Close
            }
            b',' => Step::Comma,
            _ => Step::Other,
        }
    }
}

/// The line that answers request `id` in place of one the SDK cannot take:
/// a JSON-RPC error saying why, line feed included.
pub(crate) fn answer(id: &Value, why: &Unreadable, server: &str) -> Vec<u8> {
    let message = format!("the client could not read the answer of server `{server}`: {why}");
    let error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32603, "message": message},
    });
    let mut line = serde_json::to_vec(&error).unwrap_or_default();
    line.push(b'\n');
    line
}

/// Checks the stdio framing on `bytes`, a server's output read `chunk`
/// bytes at a time (for the `stdio_framing` fuzz target): every byte is
/// passed on in order but for a `tools/list` answer's tools (which the tap
/// reads itself: the rest of the answer passes), an answer is put in only
/// after a line the SDK cannot take and only for that line's `id`, a line
/// serde_json reads is never taken for an unreadable one, and one too deep
/// for it always is.
///
/// # Panics
///
/// When one of these does not hold.
#[doc(hidden)]
pub fn check_stdio_framing(bytes: &[u8], chunk: usize) {
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use tokio::io::{AsyncRead, ReadBuf};

    /// `bytes`, `chunk` at a time, always ready.
    struct Chunks<'a>(&'a [u8], usize);

    impl AsyncRead for Chunks<'_> {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let n = self.0.len().min(self.1).min(buf.remaining());
            buf.put_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Poll::Ready(Ok(()))
        }
    }

    // Each line that reads as a tool list answers a `tools/list` request
    // the tap waits for (as many as it waits for at once).
    let tap = super::stdio::Tap::default();
    let mut waiting: Vec<Value> = Vec::new();
    for body in bytes
        .split_inclusive(|&b| b == b'\n')
        .filter_map(|l| l.strip_suffix(b"\n"))
    {
        let mut scan = LineScan::default();
        scan.push(body);
        if let Some(id) = scan.answered()
            && read_tools(body).is_some()
        {
            tap.expect_list(id.clone());
            if waiting.len() == super::stdio::MAX_LISTED {
                waiting.remove(0);
            }
            waiting.push(id);
        }
    }
    let mut reader = super::stdio::TapReader::new(Chunks(bytes, chunk.max(1)), tap, "fuzz");
    let waker = futures_util::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    let mut out = Vec::new();
    let mut space = [0u8; 97];
    loop {
        let mut buf = ReadBuf::new(&mut space);
        match Pin::new(&mut reader).poll_read(&mut cx, &mut buf) {
            Poll::Ready(Ok(())) if buf.filled().is_empty() => break,
            Poll::Ready(Ok(())) => out.extend_from_slice(buf.filled()),
            other => panic!("the reader answered {other:?}"),
        }
    }
    let mut put_in = out.split_inclusive(|&b| b == b'\n').peekable();
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let Some(body) = line.strip_suffix(b"\n") else {
            assert_eq!(put_in.next(), Some(line), "a byte was lost or changed");
            continue;
        };
        let mut scan = LineScan::default();
        scan.push(body);
        let verdict = scan.unreadable(Some(body));
        // The answer to a tool list request waited for passes without its
        // tools, read by the tap.
        let waited = verdict.is_none()
            && memchr::memmem::find(body, b"\"tools\"").is_some()
            && scan.answered().is_some_and(|id| {
                let at = waiting.iter().position(|w| *w == id);
                at.map(|at| waiting.remove(at)).is_some()
            });
        let read = waited.then(|| read_tools(body)).flatten();
        match &read {
            Some(read) => assert_eq!(
                put_in.next(),
                Some(&read.line[..]),
                "a tool list passed with its tools"
            ),
            None => assert_eq!(put_in.next(), Some(line), "a byte was lost or changed"),
        }
        match serde_json::from_slice::<Value>(body) {
            Ok(value) => {
                assert_eq!(verdict, None, "a line serde_json reads was refused");
                let id = value.get("id").filter(|v| v.is_number() || v.is_string());
                if value.is_object() {
                    assert_eq!(scan.id().as_ref(), id, "the id was misread");
                }
            }
            // Refused, for its depth or for what else is wrong with it
            // (bytes that are not UTF-8 come first).
            Err(e) if e.to_string().contains("recursion limit") => {
                assert!(
                    verdict.is_some(),
                    "a line too deep for serde_json was taken"
                );
            }
            Err(_) => {}
        }
        if let (Some(_), Some(id)) = (verdict, scan.answered()) {
            let answer = put_in.next().expect("an unreadable line was not answered");
            let answer: Value = serde_json::from_slice(answer).expect("the answer is JSON");
            assert_eq!(answer["id"], id, "the answer is for another request");
        }
    }
    assert_eq!(
        put_in.next(),
        None,
        "something was put in after the last line"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scan(line: &[u8], cut: usize) -> LineScan {
        let mut scan = LineScan::default();
        for chunk in line.chunks(cut.max(1)) {
            scan.push(chunk);
        }
        scan
    }

    #[test]
    fn the_id_is_found_wherever_it_stands() {
        let lines: [(&[u8], Value); 5] = [
            (br#"{"jsonrpc":"2.0","id":7,"result":{"id":9}}"#, json!(7)),
            (
                br#"{"result":{"id":9,"x":[1,{"id":3}]},"jsonrpc":"2.0","id":"a\"b"}"#,
                json!("a\"b"),
            ),
            (br#"{ "id" : -12 , "result" : {} }"#, json!(-12)),
            (br#"{"idx":1,"result":"id","id":2}"#, json!(2)),
            (br#"{"method":"x","params":{"id":4}}"#, Value::Null),
        ];
        for (line, id) in lines {
            for cut in [1, 2, 3, 5, 100] {
                let found = scan(line, cut).id().unwrap_or(Value::Null);
                assert_eq!(found, id, "{} cut {cut}", String::from_utf8_lossy(line));
            }
        }
    }

    #[test]
    fn depth_size_and_encoding_are_told() {
        let deep = format!(
            r#"{{"id":1,"result":{}{}}}"#,
            "[".repeat(127),
            "]".repeat(127)
        );
        let scanned = scan(deep.as_bytes(), 7);
        assert_eq!(
            scanned.unreadable(Some(deep.as_bytes())),
            Some(Unreadable::TooDeep(128))
        );
        assert!(serde_json::from_str::<Value>(&deep).is_err());
        let fits = format!(
            r#"{{"id":1,"result":{}{}}}"#,
            "[".repeat(126),
            "]".repeat(126)
        );
        assert_eq!(
            scan(fits.as_bytes(), 7).unreadable(Some(fits.as_bytes())),
            None
        );
        assert!(serde_json::from_str::<Value>(&fits).is_ok());
        let bad = b"{\"id\":3,\"result\":{\"text\":\"\xff\"}}";
        assert_eq!(
            scan(bad, 4).unreadable(Some(bad)),
            Some(Unreadable::NotUtf8(26))
        );
        // Brackets inside strings do not count.
        let quoted = format!(r#"{{"id":1,"result":"{}"}}"#, "[".repeat(500));
        assert_eq!(
            scan(quoted.as_bytes(), 9).unreadable(Some(quoted.as_bytes())),
            None
        );
        let mut large = LineScan::default();
        large.push(&vec![b' '; MAX_LINE]);
        assert_eq!(
            large.unreadable(None),
            Some(Unreadable::TooLarge(MAX_LINE + 1))
        );
    }

    #[test]
    fn a_tool_list_loses_only_the_tools_that_cannot_be_read() {
        let deep = format!("{}{}", "[".repeat(130), "]".repeat(130));
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":2,"result":{{"tools":[{{"name":"ok","inputSchema":{{"type":"object","description":"a, b [c] {{d}}"}}}}, {{"name":"deep","inputSchema":{{"default":{deep}}}}},{{"name":"fine","inputSchema":{{}}}}]}}}}"#
        );
        let mut bytes = line.into_bytes();
        let Salvaged {
            line: kept,
            left_out,
        } = without_unreadable_tools(&bytes).unwrap();
        let value: Value = serde_json::from_slice(&kept).unwrap();
        let names: Vec<&str> = value["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["ok", "fine"]);
        assert_eq!(value["id"], 2);
        assert_eq!(left_out.len(), 1);
        assert_eq!(left_out[0].0, "deep");
        assert!(left_out[0].1.contains("levels deep"), "{left_out:?}");
        // Not UTF-8 in one tool.
        let at = bytes.windows(4).position(|w| w == b"fine").unwrap();
        bytes[at + 1] = 0xff;
        let Salvaged {
            line: kept,
            left_out,
        } = without_unreadable_tools(&bytes).unwrap();
        let value: Value = serde_json::from_slice(&kept).unwrap();
        assert_eq!(value["result"]["tools"].as_array().unwrap().len(), 1);
        assert_eq!(left_out.len(), 2);
        // Anything else is not rewritten.
        assert!(without_unreadable_tools(br#"{"id":1,"result":{"content":[]}}"#).is_none());
    }

    #[test]
    fn a_tool_list_is_read_and_passed_on_without_its_tools() {
        let line = br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},{"name":"b","description":"B","inputSchema":{},"outputSchema":{"type":"object"}}] ,"nextCursor":"c2"}}"#;
        let read = read_tools(line).unwrap();
        let names: Vec<&str> = read.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(
            read.tools[0].extra["execution"],
            json!({"taskSupport": "required"})
        );
        assert_eq!(read.tools[1].description.as_deref(), Some("B"));
        assert_eq!(
            read.line,
            br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[] ,"nextCursor":"c2"}}
"#
        );
        // What the SDK would not read as a tool list is left to it.
        for line in [
            &br#"{"id":3,"result":{"tools":[{"name":"a"}]}}"#[..],
            br#"{"id":3,"result":{"tools":[{"name":"a","inputSchema":true}]}}"#,
            br#"{"id":3,"result":{"tools":[{"name":"a","inputSchema":{},"outputSchema":[]}]}}"#,
            br#"{"id":3,"result":{"tools":[{"inputSchema":{}}]}}"#,
            br#"{"id":3,"result":{"tools":{"name":"a"}}}"#,
            br#"{"id":3,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"tools":[]}}}"#,
            br#"{"id":3,"error":{"code":1,"message":"m","data":{"tools":[]}}}"#,
        ] {
            assert!(read_tools(line).is_none(), "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn the_framing_check_holds_on_hostile_lines() {
        let deep = format!(
            r#"{{"id":4,"result":{}{}}}"#,
            "[".repeat(130),
            "]".repeat(130)
        );
        let mut bytes = Vec::new();
        bytes.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
        bytes.extend_from_slice(deep.as_bytes());
        bytes.extend_from_slice(b"\n{\"id\":\"x\",\"result\":\"caf\xe9\"}\n{\"id\":1,\"id\":2}\n");
        // A request of the server's own is never answered in the SDK's place.
        bytes.extend_from_slice(b"{\"id\":1,\"method\":\"x\",\"params\":\"\xe9\"}\n");
        // A tool list, passed on without its tools, between a request and
        // a line cut short.
        bytes.extend_from_slice(
            br#"{"jsonrpc":"2.0","id":9,"result":{"tools":[{"name":"t","inputSchema":{}}]}}"#,
        );
        bytes.extend_from_slice(b"\npartial");
        for chunk in [1, 2, 7, 64, 4096] {
            check_stdio_framing(&bytes, chunk);
        }
        // Found by the `stdio_framing` fuzz target (its seed
        // `regression-deep-and-not-utf8.bin`): too deep, and not UTF-8
        // where serde_json stops for the depth first.
        let mut line = b"{\"jsonrpc\":\"2.0\",\"result\":{\"v\":".to_vec();
        line.extend_from_slice(&[b'['; 130]);
        line.extend_from_slice(&[b']'; 44]);
        line.extend_from_slice(&[0xff; 8]);
        line.extend_from_slice(&[b']'; 86]);
        line.extend_from_slice(b"},\"id\":7}\n");
        check_stdio_framing(&line, 8);
        // Found by the same target (its seed
        // `regression-salvaged-not-json.bin`): a tool list whose deep tool
        // also holds bytes no JSON has, and closes more brackets than it
        // opens, is answered with the error, not with a salvaged line that
        // does not read either.
        let mut line = br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"ok","inputSchema":{}},{"name":"deep","inputSchema":{"default":"#.to_vec();
        line.extend_from_slice(&[b'['; 130]);
        line.extend_from_slice(&[b']'; 50]);
        line.extend_from_slice(b"\x02\x00");
        line.extend_from_slice(&[b']'; 96]);
        line.extend_from_slice(b"}}]}}");
        assert!(without_unreadable_tools(&line).is_none());
        line.push(b'\n');
        check_stdio_framing(&line, 201);
    }

    #[test]
    fn the_answer_is_an_error_for_the_request() {
        let line = answer(&json!(5), &Unreadable::TooDeep(200), "s");
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["id"], 5);
        assert!(
            value["error"]["message"]
                .as_str()
                .unwrap()
                .contains("200 levels")
        );
        assert!(line.ends_with(b"\n"));
    }
}
