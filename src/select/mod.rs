//! Result selection: a jq filter the model writes with its call runs on the
//! call's result, and the model reads what the filter outputs.
//!
//! Filters run with [jaq](https://github.com/01mf02/jaq), a maintained jq
//! implementation in safe Rust: it needs no C library, it is faster than jq
//! on most inputs, and its interpreter is generic over the data it runs on,
//! which is where the step meter below hooks in.
//!
//! A filter is written by a model, so it is treated as hostile. Each runs on
//! a thread of its own, never on the async threads, under [`SelectLimits`]:
//!
//! - its text is bounded in bytes and in nesting before jaq parses it (jaq's
//!   parser recurses on nesting);
//! - every term jaq evaluates is a step: past the step limit, or when the
//!   evaluation nests so deep that it would run out of stack, or when the
//!   caller stopped waiting at the time limit, the run unwinds from its next
//!   step, so a filter that loops (`def f: f; f`, `repeat(.)`) or recurses
//!   without end stops there, and its thread with it; `range` counts each of
//!   its numbers as a step too;
//! - the values it builds are charged to a memory limit before they are
//!   built (`+`, `*`, string interpolation, `tojson` and the built-ins whose
//!   output grows with their input): a string repeated a trillion times, or
//!   a value doubled until its text would fill the machine, stops the run
//!   with an error that names the limit, before anything is allocated;
//! - its output is bounded in bytes, and in nesting before it is written;
//! - built-ins that reach outside the result (`env`, `halt`, `debug`,
//!   `stderr`, `input`) answer with an error.
//!
//! A filter that does not parse, fails, or passes a limit is answered with
//! jaq's message or the limit it passed. The limits need panics to unwind
//! (the default `panic = "unwind"`): a build with `panic = "abort"` refuses
//! to run filters rather than let one stop the process.
//!
//! What is not metered: comparing or sorting values that share their parts
//! (a value doubled forty times holds little memory but takes long to
//! compare) is bounded by the time limit only, past which the model is
//! answered and the thread stops at its next step.

mod meter;
mod natives;

use std::borrow::Cow;
use std::hash::BuildHasher;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use indexmap::map::RawEntryApiV1;
use indexmap::map::raw_entry_v1::RawEntryMut;
use jaq_core::load::parse::Def;
use jaq_core::load::{Arena, File, Lexer, Loader, Parser};
use jaq_core::{Compiler, Ctx, Vars};
use jaq_json::{Num, Val};
use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use meter::{Gauge, MAIN, Meter, Metered, Stop};

/// The name of the selection argument when the application does not name it.
pub const SELECT_ARGUMENT: &str = "jq_filter";

/// The selection argument's description: what it is for, and one example.
pub(crate) const SELECT_DESCRIPTION: &str = "Optional jq filter applied to this tool's JSON result before you read it; only its output is returned. Example: [.items[] | {name, id}]";

/// How deep a result may nest for a filter to run on it.
const MAX_INPUT_DEPTH: usize = 512;

/// How deep an output may nest for it to be written.
const MAX_OUTPUT_DEPTH: usize = 512;

/// The stack of a filter's thread: large enough for every limit below to be
/// reached before the stack ends (only the pages used are committed).
const THREAD_STACK: usize = 256 << 20;

/// The limits a selection filter runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectLimits {
    filter_bytes: usize,
    nesting: usize,
    steps: u64,
    output_bytes: usize,
    memory: usize,
    time: Duration,
}

impl Default for SelectLimits {
    /// A filter of at most 4 KiB, nesting at most 64 brackets deep, 10
    /// million steps, 256 MiB of values built, 1 MiB of output, 5 seconds.
    fn default() -> Self {
        SelectLimits {
            filter_bytes: 4 << 10,
            nesting: 64,
            steps: 10_000_000,
            output_bytes: 1 << 20,
            memory: 256 << 20,
            time: Duration::from_secs(5),
        }
    }
}

impl SelectLimits {
    /// The most bytes a filter's text may have (4 KiB by default).
    pub fn filter_bytes(mut self, bytes: usize) -> Self {
        self.filter_bytes = bytes;
        self
    }

    /// How deep brackets, braces and parentheses may nest in a filter (64
    /// by default).
    pub fn nesting(mut self, depth: usize) -> Self {
        self.nesting = depth;
        self
    }

    /// The most terms a filter may evaluate (10 million by default).
    pub fn steps(mut self, steps: u64) -> Self {
        self.steps = steps;
        self
    }

    /// The most bytes a filter may output, as compact JSON (1 MiB by default).
    pub fn output_bytes(mut self, bytes: usize) -> Self {
        self.output_bytes = bytes;
        self
    }

    /// The most bytes of values a filter may build (256 MiB by default):
    /// strings, array elements and object members made by its operators
    /// and built-ins, counted before each is made and never given back, so
    /// that no filter can take more memory than this, however it is
    /// written. The result it runs on is not counted.
    pub fn memory(mut self, bytes: usize) -> Self {
        self.memory = bytes;
        self
    }

    /// How long a filter may run (5 seconds by default).
    pub fn time(mut self, time: Duration) -> Self {
        self.time = time;
        self
    }

    /// The most steps a filter may take.
    pub fn max_steps(&self) -> u64 {
        self.steps
    }

    /// How long a filter may run.
    pub fn max_time(&self) -> Duration {
        self.time
    }

    /// The most bytes of values a filter may build.
    pub fn max_memory(&self) -> usize {
        self.memory
    }

    /// The most bytes a filter may output.
    pub fn max_output_bytes(&self) -> usize {
        self.output_bytes
    }
}

/// What a filter runs on: the structured result, or the text when it is JSON.
///
/// A structured result that only wraps JSON text (an object whose one member
/// is a string holding a JSON object or array, as the reference filesystem
/// server answers) is read as that JSON.
pub(crate) enum Subject<'r> {
    /// The structured result itself.
    Structured,
    /// JSON read from the result's text, or from the text a structured
    /// result wraps, with that text.
    Read(Value, Cow<'r, str>),
}

impl<'r> Subject<'r> {
    /// The subject of a result with `structured` content and `texts`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when there is nothing to select from: no
    /// structured result and a text that is not JSON, or a result nested
    /// too deep.
    pub(crate) fn of(structured: Option<&'r Value>, texts: &[&'r str]) -> Result<Self> {
        if let Some(value) = structured {
            if crate::json::deeper_than(value, MAX_INPUT_DEPTH) {
                return Err(too_deep(value));
            }
            if let Value::Object(map) = value
                && map.len() == 1
                && let Some(Value::String(inner)) = map.values().next()
                && let Some(parsed) = parse_container(inner)
            {
                return Ok(Subject::Read(parsed, Cow::Borrowed(inner)));
            }
            return Ok(Subject::Structured);
        }
        let text: Cow<'r, str> = match texts {
            [one] => Cow::Borrowed(one),
            _ => Cow::Owned(texts.concat()),
        };
        match serde_json::from_str(text.trim()) {
            Ok(value) => Ok(Subject::Read(value, text)),
            Err(e) => Err(Error::input(format!(
                "the result is not JSON ({e}), so a jq filter has nothing to select from; call again without the filter"
            ))),
        }
    }
}

fn too_deep(value: &Value) -> Error {
    let at = crate::json::first_too_deep(value, MAX_INPUT_DEPTH).unwrap_or_default();
    Error::input(format!(
        "the result nests deeper than {MAX_INPUT_DEPTH} levels (at {at}); no jq filter runs on it"
    ))
}

fn parse_container(text: &str) -> Option<Value> {
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// Runs `filter` on `input` under `limits`, on a thread of its own, and
/// gives its outputs as compact JSON, one a line.
///
/// The thread reads `input` into jaq's values first and lets go of its
/// reference then: once this returns, the caller holds the only one again
/// (`Arc::try_unwrap` takes the value back without a copy), unless the time
/// limit came first.
///
/// # Errors
///
/// [`ErrorKind::Input`] quoting jaq's message when the filter does not parse
/// or fails, or naming the limit it passed.
pub async fn select(filter: &str, input: Arc<Value>, limits: &SelectLimits) -> Result<String> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let cancel = spawn(filter, input, *limits, move |answer| {
        let _ = sender.send(answer);
    })?;
    match tokio::time::timeout(limits.time, receiver).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) => Err(Error::new(
            ErrorKind::Input,
            "the jq filter's thread ended without an answer",
        )),
        Err(_) => {
            cancel.store(true, Ordering::Relaxed);
            Err(passed_time(limits))
        }
    }
}

/// [`select`] for code outside an async runtime: blocks until the filter
/// ends or its time is up.
///
/// # Errors
///
/// As [`select`].
pub fn select_blocking(filter: &str, input: Arc<Value>, limits: &SelectLimits) -> Result<String> {
    let (sender, receiver) = std::sync::mpsc::sync_channel(1);
    let cancel = spawn(filter, input, *limits, move |answer| {
        let _ = sender.send(answer);
    })?;
    match receiver.recv_timeout(limits.time) {
        Ok(answer) => answer,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            cancel.store(true, Ordering::Relaxed);
            Err(passed_time(limits))
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(Error::new(
            ErrorKind::Input,
            "the jq filter's thread ended without an answer",
        )),
    }
}

fn passed_time(limits: &SelectLimits) -> Error {
    Error::input(format!(
        "the jq filter ran past its time limit of {:?}; write a narrower filter",
        limits.time
    ))
}

/// Starts the filter's thread; `answer` takes what it found. The flag stops
/// the run at its next step once set.
fn spawn(
    filter: &str,
    input: Arc<Value>,
    limits: SelectLimits,
    answer: impl FnOnce(Result<String>) + Send + 'static,
) -> Result<Arc<AtomicBool>> {
    if !cfg!(panic = "unwind") {
        return Err(Error::input(
            "jq filters are not run in a build with panic = \"abort\": their limits stop a run by unwinding",
        ));
    }
    // Checked before a thread is spent on it.
    check_text(filter, &limits)?;
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    let filter = filter.to_owned();
    std::thread::Builder::new()
        .name("mcp-adapters-select".into())
        .stack_size(THREAD_STACK)
        .spawn(move || {
            let (found, input) = run(&filter, input, &limits, &flag);
            answer(found.map_err(Error::input));
            drop(input);
        })
        .map_err(|e| Error::input(format!("no thread could be started for the jq filter: {e}")))?;
    Ok(cancel)
}

/// How many distinct object keys a result's reading shares (a result's
/// objects mostly repeat a few keys).
const SHARED_KEYS: usize = 1024;

/// The buffers a result's strings are copied into, each string a shared
/// slice of one: one allocation for many strings, rather than one each.
const STRINGS_CHUNK: usize = 64 << 10;

/// Strings longer than this get a buffer of their own, so that no more than
/// this is left unused at a chunk's end.
const OWN_BUFFER: usize = 4 << 10;

/// Reads a result into jaq's values, in one pass that also bounds its
/// nesting: each string copied once, short ones into shared chunks, and
/// each object key read and hashed once and shared by every object that has
/// it.
struct Reader<'v> {
    keys: foldhash::HashMap<&'v str, Key>,
    /// An empty map whose hasher every object read shares, so that a shared
    /// key's hash holds in each of them.
    hashing: jaq_json::Map,
    /// Where the next short string is copied: the free part of a chunk.
    chunk: BytesMut,
}

/// An object key as jaq's value, with its hash in the objects read.
#[derive(Clone)]
struct Key {
    val: Val,
    hash: u64,
}

impl<'v> Reader<'v> {
    fn new() -> Self {
        Reader {
            keys: foldhash::HashMap::default(),
            hashing: jaq_json::Map::default(),
            chunk: BytesMut::new(),
        }
    }

    /// `value`, a container at level `depth` (the root is 1), as jaq's value;
    /// `None` when it nests deeper than
    /// [`MAX_INPUT_DEPTH`] (the filter's thread has the stack for that).
    fn read(&mut self, value: &'v Value, depth: usize) -> Option<Val> {
        Some(match value {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => Val::Num(match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Num::from_integral(i),
                (None, Some(u)) => Num::from_integral(u),
                _ => Num::Float(n.as_f64().unwrap_or(f64::NAN)),
            }),
            Value::String(text) => Val::utf8_str(self.text(text)),
            _ if depth > MAX_INPUT_DEPTH => return None,
            Value::Array(items) => {
                let mut read = Vec::with_capacity(items.len());
                for item in items {
                    read.push(self.read(item, depth + 1)?);
                }
                Val::Arr(read.into())
            }
            Value::Object(map) => {
                let hasher = *self.hashing.hasher();
                let mut read = jaq_json::Map::with_capacity_and_hasher(map.len(), hasher);
                for (k, v) in map {
                    let v = self.read(v, depth + 1)?;
                    let Key { val, hash } = self.key(k);
                    match read.raw_entry_mut_v1().from_key_hashed_nocheck(hash, &val) {
                        RawEntryMut::Vacant(slot) => {
                            slot.insert_hashed_nocheck(hash, val, v);
                        }
                        RawEntryMut::Occupied(mut slot) => {
                            slot.insert(v);
                        }
                    }
                }
                Val::obj(read)
            }
        })
    }

    /// `text`'s bytes, copied into the current chunk (a new one when it is
    /// full) or, when long, into a buffer of their own.
    fn text(&mut self, text: &str) -> Bytes {
        if text.is_empty() {
            return Bytes::new();
        }
        if text.len() > OWN_BUFFER {
            return Bytes::copy_from_slice(text.as_bytes());
        }
        if self.chunk.capacity() < text.len() {
            self.chunk = BytesMut::with_capacity(STRINGS_CHUNK);
        }
        self.chunk.extend_from_slice(text.as_bytes());
        self.chunk.split().freeze()
    }

    fn key(&mut self, key: &'v str) -> Key {
        if let Some(shared) = self.keys.get(key) {
            return shared.clone();
        }
        let val = Val::utf8_str(self.text(key));
        let hash = self.hashing.hasher().hash_one(&val);
        let read = Key { val, hash };
        if self.keys.len() < SHARED_KEYS {
            self.keys.insert(key, read.clone());
        }
        read
    }
}

/// Bounds the filter's text before jaq parses it.
fn check_text(filter: &str, limits: &SelectLimits) -> Result<()> {
    if filter.len() > limits.filter_bytes {
        return Err(Error::input(format!(
            "the jq filter has {} bytes, more than the {} allowed",
            filter.len(),
            limits.filter_bytes
        )));
    }
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut in_string = false;
    let mut escaped = false;
    for c in filter.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' | '[' | '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if deepest > limits.nesting {
        return Err(Error::input(format!(
            "the jq filter nests {deepest} brackets deep, more than the {} allowed",
            limits.nesting
        )));
    }
    Ok(())
}

/// Parses, compiles and runs `filter` on `input`: its outputs, or jaq's
/// message or the limit passed.
fn run(
    filter: &str,
    input: Arc<Value>,
    limits: &SelectLimits,
    cancel: &AtomicBool,
) -> (std::result::Result<String, String>, Val) {
    let Some(read) = Reader::new().read(&input, 1) else {
        return (Err(too_deep(&input).message().to_owned()), Val::Null);
    };
    // The caller takes its value back as soon as it is read.
    drop(input);
    let input = read;
    let gauge = Gauge::new(limits.steps, limits.memory, cancel);
    // The input is dropped after the answer is sent, not before.
    let ran = std::panic::catch_unwind(AssertUnwindSafe(|| {
        compile_and_run(filter, input.clone(), limits, &gauge)
    }));
    let found = match (ran, gauge.stopped()) {
        (Ok(found), _) => found,
        (Err(_), Some(Stop::Steps)) => Err(format!(
            "the jq filter passed its limit of {} steps; write a narrower filter",
            limits.steps
        )),
        (Err(_), Some(Stop::Stack)) => {
            Err("the jq filter recursed too deep; write one that recurses less".to_owned())
        }
        (Err(_), Some(Stop::Memory)) => Err(format!(
            "the jq filter passed its memory limit of {} bytes of values built; write a narrower filter",
            limits.memory
        )),
        (Err(_), Some(Stop::Number)) => Err(format!(
            "the jq filter built an integer of more than {} bytes; jq numbers are doubles",
            meter::MAX_NUMBER_BYTES
        )),
        (Err(_), Some(Stop::Cancelled)) => Err("the jq filter ran past its time limit".to_owned()),
        (Err(panic), None) => Err(format!(
            "jaq failed on the filter: {}",
            panic
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("an internal error")
        )),
    };
    (found, input)
}

fn compile_and_run(
    filter: &str,
    input: Val,
    limits: &SelectLimits,
    gauge: &Gauge<'_>,
) -> std::result::Result<String, String> {
    let compiled = compile(filter, meter::prelude())?;
    let meter = Meter {
        lut: &compiled.lut,
        gauge,
    };
    let ctx = Ctx::<Metered>::new(meter, Vars::new([]));
    let mut out = Output::new(limits.output_bytes);
    for y in compiled.id.run((ctx, input)) {
        match y {
            Ok(value) => out.push(&value)?,
            Err(exn) => {
                return Err(match exn.get_err() {
                    Ok(e) => format!("the jq filter failed: {}", quoted(&e)),
                    Err(_) => "the jq filter failed: it broke out of its run".to_owned(),
                });
            }
        }
        gauge.step();
    }
    Ok(out.text)
}

/// `filter` compiled after the standard definitions `prelude`, with the
/// metered built-ins.
fn compile(
    filter: &str,
    prelude: &[Def<&'static str>],
) -> std::result::Result<jaq_core::Filter<Metered>, String> {
    let term = parse(filter)?;
    let main = Def {
        name: MAIN,
        args: Vec::new(),
        body: meter::rewrite(term),
    };
    let loader = Loader::new(prelude.iter().cloned().chain([main]));
    let arena = Arena::default();
    let file = File {
        code: MAIN,
        path: (),
    };
    let modules = loader
        .load(&arena, file)
        .map_err(|errors| load_message(filter, errors))?;
    Compiler::default()
        .with_funs(meter::funs())
        .compile(modules)
        .map_err(|errors| compile_message(filter, errors))
}

/// The filter's term, parsed as jaq's loader parses a main module less its
/// module directives (no module can be loaded).
fn parse(filter: &str) -> std::result::Result<jaq_core::load::parse::Term<&str>, String> {
    use jaq_core::load::{Error as E, lex::Token};
    let failed = |error| {
        let file = File {
            code: filter,
            path: (),
        };
        load_message(filter, vec![(file, error)])
    };
    let tokens = Lexer::new(filter).lex().map_err(|e| failed(E::Lex(e)))?;
    Parser::new(&tokens).parse(|p| p.term()).map_err(|e| {
        let at = |(expected, found)| (expected, Token::opt_as_str(found, filter));
        failed(E::Parse(e.into_iter().map(at).collect()))
    })
}

/// Where `rest` (a slice of `code`) starts, as a byte offset.
fn offset_in(code: &str, rest: &str) -> usize {
    (rest.as_ptr() as usize)
        .saturating_sub(code.as_ptr() as usize)
        .min(code.len())
}

fn load_message(code: &str, errors: jaq_core::load::Errors<&str, ()>) -> String {
    use jaq_core::load::Error as E;
    let mut parts = Vec::new();
    for (_, error) in errors {
        match error {
            E::Io(io) => parts.extend(io.into_iter().map(|(path, e)| format!("{path}: {e}"))),
            E::Lex(lex) => parts.extend(lex.into_iter().map(|(expect, at)| {
                let what = match expect {
                    jaq_core::load::lex::Expect::Delim(d)
                        if !["(", "[", "{", "\""].contains(&d) =>
                    {
                        "closing delimiter"
                    }
                    other => other.as_str(),
                };
                format!("expected {what} at byte {}", offset_in(code, at))
            })),
            E::Parse(parse) => parts.extend(parse.into_iter().map(|(expect, at)| {
                format!(
                    "expected {} at byte {}",
                    expect.as_str(),
                    offset_in(code, at)
                )
            })),
        }
    }
    format!("the jq filter does not parse: {}", parts.join("; "))
}

fn compile_message(code: &str, errors: jaq_core::compile::Errors<&str, ()>) -> String {
    let parts: Vec<String> = errors
        .into_iter()
        .flat_map(|(_, undefined)| undefined)
        .map(|(name, what)| {
            format!(
                "undefined {} `{name}` at byte {}",
                what.as_str(),
                offset_in(code, name)
            )
        })
        .collect();
    format!("the jq filter does not compile: {}", parts.join("; "))
}

/// A filter's outputs as compact JSON, one a line, bounded in bytes.
struct Output {
    text: String,
    max: usize,
}

impl Output {
    fn new(max: usize) -> Self {
        Output {
            text: String::new(),
            max,
        }
    }

    fn push(&mut self, value: &Val) -> std::result::Result<(), String> {
        if deeper_than(value, MAX_OUTPUT_DEPTH, self.max) {
            return Err(format!(
                "the jq filter's output nests deeper than {MAX_OUTPUT_DEPTH} levels"
            ));
        }
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        let mut bounded = Bounded {
            text: &mut self.text,
            max: self.max,
        };
        use std::fmt::Write;
        if write!(bounded, "{value}").is_err() || self.text.len() > self.max {
            return Err(format!(
                "the jq filter's output passed its limit of {} bytes; select less",
                self.max
            ));
        }
        Ok(())
    }
}

/// A writer that fails past `max` bytes.
struct Bounded<'t> {
    pub(super) text: &'t mut String,
    pub(super) max: usize,
}

impl std::fmt::Write for Bounded<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.text.len() + s.len() > self.max {
            return Err(std::fmt::Error);
        }
        self.text.push_str(s);
        Ok(())
    }
}

/// Whether `value` nests deeper than `cap` levels, found without recursion;
/// past `nodes` values looked at (more than an output of that many bytes
/// can hold) it stops, leaving the output's bound to say what is wrong.
fn deeper_than(value: &Val, cap: usize, nodes: usize) -> bool {
    let mut stack: Vec<(&Val, usize)> = vec![(value, 1)];
    let mut seen = 0usize;
    while let Some((v, depth)) = stack.pop() {
        seen += 1;
        if seen > nodes {
            return false;
        }
        let (children, count): (Box<dyn Iterator<Item = &Val>>, usize) = match v {
            Val::Arr(items) => (Box::new(items.iter()), items.len()),
            Val::Obj(map) => (Box::new(map.values()), map.len()),
            _ => continue,
        };
        if depth > cap {
            return true;
        }
        if count > nodes {
            return false;
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    false
}

/// How much of an error's text is quoted to the model.
const MAX_ERROR_BYTES: usize = 2 << 10;

/// jaq's message, cut at [`MAX_ERROR_BYTES`] (an error may hold any value
/// the filter built).
fn quoted(error: &jaq_core::Error<Val>) -> String {
    use std::fmt::Write;
    let mut text = String::new();
    let mut bounded = Bounded {
        text: &mut text,
        max: MAX_ERROR_BYTES,
    };
    if write!(bounded, "{error}").is_err() {
        text.push_str("...");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sel(filter: &str, input: Value) -> std::result::Result<String, String> {
        select_blocking(filter, Arc::new(input), &SelectLimits::default())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn selects_fields() {
        let input = json!({"items": [{"name": "a", "id": 1, "x": 0}, {"name": "b", "id": 2}]});
        assert_eq!(
            sel("[.items[] | {name, id}]", input).unwrap(),
            r#"[{"name":"a","id":1},{"name":"b","id":2}]"#
        );
        assert_eq!(sel(".[]", json!([1, "two"])).unwrap(), "1\n\"two\"");
    }

    #[test]
    fn parse_and_run_errors_quote_jaq() {
        let err = sel(".items[", json!({})).unwrap_err();
        assert!(err.contains("does not parse"), "{err}");
        let err = sel("nosuchfilter", json!({})).unwrap_err();
        assert!(err.contains("undefined filter `nosuchfilter`"), "{err}");
        let err = sel("error(\"boom\")", json!({})).unwrap_err();
        assert!(err.contains("boom"), "{err}");
    }

    #[test]
    fn built_ins_outside_the_result_are_refused() {
        for filter in ["env", "$ENV", "halt", "halt_error", "debug", "input"] {
            let err = sel(filter, json!(1)).unwrap_err();
            assert!(
                err.contains("not available") || err.contains("undefined"),
                "{filter}: {err}"
            );
        }
    }

    #[test]
    fn recursion_stops_at_the_stack_bound_not_the_stack_end() {
        // Steps enough for the recursion to reach the bound first.
        let limits = SelectLimits::default()
            .steps(u64::MAX)
            .time(Duration::from_secs(600));
        for filter in ["def f: 1 + f; f", "def f: [f]; f", "def f: (f | .) + 1; f"] {
            let err = select_blocking(filter, Arc::new(json!(0)), &limits)
                .unwrap_err()
                .to_string();
            assert!(err.contains("recursed too deep"), "{filter}: {err}");
        }
    }

    #[test]
    fn a_run_stops_at_its_step_limit() {
        let limits = SelectLimits::default().steps(10_000);
        for filter in ["def f: f; f", "[range(1e12)] | length", "last(repeat(1))"] {
            let err = select_blocking(filter, Arc::new(json!(0)), &limits)
                .unwrap_err()
                .to_string();
            assert!(err.contains("10000 steps"), "{filter}: {err}");
        }
    }

    #[test]
    fn a_run_that_outlasts_its_time_is_stopped() {
        let limits = SelectLimits::default()
            .steps(u64::MAX)
            .time(Duration::from_millis(50));
        let err = select_blocking("def f: f; f", Arc::new(json!(0)), &limits)
            .unwrap_err()
            .to_string();
        assert!(err.contains("time limit"), "{err}");
    }

    #[test]
    fn a_result_is_read_to_its_nesting_bound_and_refused_past_it() {
        let nested = |levels: usize| {
            let mut value = json!(1);
            for _ in 0..levels {
                value = json!([value]);
            }
            value
        };
        let limits = SelectLimits::default();
        let at_bound = select_blocking("[.. | numbers]", Arc::new(nested(512)), &limits);
        assert_eq!(at_bound.unwrap(), "[1]");
        let err = select_blocking(".", Arc::new(nested(513)), &limits).unwrap_err();
        assert!(err.to_string().contains("nests deeper"), "{err}");
        // Object keys shared between objects read as their own.
        let objects = json!([{"k": 1, "j": 2}, {"k": 3}, {"j": 4, "k": 5}]);
        let read = select_blocking("[.[] | keys]", Arc::new(objects), &limits).unwrap();
        assert_eq!(read, r#"[["j","k"],["k"],["j","k"]]"#);
    }

    #[test]
    fn strings_read_into_shared_chunks_keep_their_text() {
        // Empty, short, chunk-crossing and long strings; more distinct keys
        // than are shared, each found again by jaq's own lookups.
        let texts: Vec<String> = (0..600usize)
            .map(|i| "é".repeat(i * 37 % 3000) + &i.to_string())
            .chain([String::new(), "x".repeat(OWN_BUFFER + 1)])
            .collect();
        let objects: Vec<Value> = (0..SHARED_KEYS + 500)
            .map(|i| json!({ format!("key {i}"): i, "shared": i }))
            .collect();
        let input = json!({"texts": texts, "objects": objects});
        let limits = SelectLimits::default().output_bytes(16 << 20);
        let run = |filter: &str| select_blocking(filter, Arc::new(input.clone()), &limits);
        assert_eq!(run(".").unwrap(), input.to_string());
        let lengths: Vec<usize> = texts.iter().map(String::len).collect();
        assert_eq!(
            run("[.texts[] | utf8bytelength]").unwrap(),
            json!(lengths).to_string()
        );
        let found = "[.objects[] | .[keys_unsorted[0]] == .shared] | all";
        assert_eq!(run(found).unwrap(), "true");
    }

    #[test]
    fn the_wrapped_json_text_is_read() {
        let wrapped = json!({"content": "[{\"name\": \"a.rs\"}]"});
        match Subject::of(Some(&wrapped), &[]).unwrap() {
            Subject::Read(value, text) => {
                assert_eq!(value, json!([{"name": "a.rs"}]));
                assert_eq!(text, wrapped["content"].as_str().unwrap());
            }
            Subject::Structured => panic!("the wrapped text is read"),
        }
        let plain = json!({"content": "hello"});
        assert!(matches!(
            Subject::of(Some(&plain), &[]).unwrap(),
            Subject::Structured
        ));
        match Subject::of(None, &["[1,", "2]"]).unwrap() {
            Subject::Read(value, _) => assert_eq!(value, json!([1, 2])),
            Subject::Structured => panic!("no structured result"),
        }
        assert!(Subject::of(None, &["not json"]).is_err());
    }
}
