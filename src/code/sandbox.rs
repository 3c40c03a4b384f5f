//! The sandbox a program runs in: QuickJS (through `rquickjs`), on a thread
//! of its own, with no file system, network, process, module loader or
//! timers: the one way out is the `tools` object, whose calls go to the
//! thread that started the program and are answered from there.
//!
//! QuickJS's runtime is not `Send`: it lives and dies on the program's
//! thread, and the async side talks to it through two channels (calls go
//! out on one, their outcomes come back on the other), so a program never
//! blocks an executor's thread.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Instant;

use rquickjs::function::{Opt, Rest};
use rquickjs::{CaughtError, Ctx, Exception, Function, Object, Persistent, Promise, Value};
use serde_json::Value as Json;
use tokio::sync::mpsc::UnboundedSender;

use super::{CodeLimits, Limit, Variation, values};
use crate::error::{Error, ErrorKind, Result};

/// What a running program asks of the side that started it.
#[derive(Debug)]
pub(crate) enum Request {
    /// A call of `tools[name](arguments)`, the program's `seq`th (from 0).
    Call {
        seq: usize,
        name: String,
        arguments: serde_json::Map<String, Json>,
    },
    /// The program has run all it can and waits for the outcome of a call:
    /// it has taken in `answered` outcomes so far.
    Idle { answered: usize },
    /// The program's end.
    Done(Ended),
}

/// A program's end: its return value or why it failed, and what it wrote
/// to the console.
#[derive(Debug)]
pub(crate) struct Ended {
    pub(crate) outcome: std::result::Result<Json, Failure>,
    pub(crate) console: String,
}

/// Why a program failed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// It threw (or its promise was rejected) and did not catch it: the
    /// error as JavaScript shows it, with its stack.
    Thrown(String),
    /// It broke one of its limits and was stopped.
    Limit(Limit),
    /// It waits for something that is not a tool call (a promise nothing
    /// settles): it can never end.
    Stuck,
    /// The engine could not run it (its thread did not start, a value could
    /// not cross).
    Engine(String),
}

/// The outcome of one of the program's calls, sent back to it: a value
/// (the call's structured result), or an error it may catch.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) seq: usize,
    pub(crate) outcome: std::result::Result<Json, CallError>,
}

/// A failed call as the program sees it: an `Error` with `message`, and
/// `kind` (the library's error kind, in snake case) and the tool's
/// `result` when the tool answered with an error result.
#[derive(Debug)]
pub(crate) struct CallError {
    pub(crate) message: String,
    pub(crate) kind: String,
    pub(crate) result: Option<Json>,
}

/// A program on its thread: its requests, the way to answer its calls, and
/// its stop (set when this is dropped).
pub(crate) struct Running {
    pub(crate) requests: tokio::sync::mpsc::UnboundedReceiver<Request>,
    replies: Sender<Reply>,
    stop: Arc<AtomicBool>,
}

impl Running {
    /// Answers the program's call `reply.seq`. A program that has ended
    /// takes no answer, and none is owed to it.
    pub(crate) fn reply(&self, reply: Reply) {
        let _ = self.replies.send(reply);
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// What a program is run with.
pub(crate) struct Launch {
    /// The program: the body of an async function.
    pub(crate) code: String,
    /// The names `tools` holds, each a function that calls the tool.
    pub(crate) names: Vec<String>,
    pub(crate) limits: CodeLimits,
    pub(crate) variation: Variation,
}

/// The stack the program's thread is given: QuickJS's own bound
/// ([`CodeLimits`]'s) is checked well before it.
const THREAD_STACK: usize = 16 * 1024 * 1024;

/// Starts the program on a thread of its own.
///
/// # Errors
///
/// [`ErrorKind::Unavailable`] when the thread cannot be started.
pub(crate) fn start(launch: Launch) -> Result<Running> {
    let (requests_tx, requests) = tokio::sync::mpsc::unbounded_channel();
    let (replies, replies_rx) = std::sync::mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    std::thread::Builder::new()
        .name("mcp-adapters-code".to_owned())
        .stack_size(THREAD_STACK.max(launch.limits.stack_bytes * 4))
        .spawn(move || {
            let done = requests_tx.clone();
            let ended = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run(launch, &requests_tx, &replies_rx, &stopped)
            })) {
                Ok(ended) => ended,
                Err(_) => Ended {
                    outcome: Err(Failure::Engine("the JavaScript engine panicked".into())),
                    console: String::new(),
                },
            };
            let _ = done.send(Request::Done(ended));
        })
        .map_err(|e| {
            Error::new(
                ErrorKind::Unavailable,
                "the program's thread could not be started",
            )
            .with_source(e)
        })?;
    Ok(Running {
        requests,
        replies,
        stop,
    })
}

/// What the program's functions share on its thread.
struct Bridge {
    requests: UnboundedSender<Request>,
    limits: CodeLimits,
    /// The limit the program broke, once it broke one: the interrupt
    /// handler then stops it, whatever it catches.
    broken: Cell<Option<Limit>>,
    /// Calls made so far.
    calls: Cell<usize>,
    /// The settlers of the calls not yet answered, by sequence number.
    pending: RefCell<HashMap<usize, Settlers>>,
    console: RefCell<String>,
    /// `Object.prototype` as it was before the program ran: what a plain
    /// object's prototype is, for values read in place.
    plain: RefCell<Option<Persistent<Object<'static>>>>,
}

struct Settlers {
    resolve: Persistent<Function<'static>>,
    reject: Persistent<Function<'static>>,
}

impl Bridge {
    fn break_limit(&self, limit: Limit) {
        if self.broken.get().is_none() {
            self.broken.set(Some(limit));
        }
    }
}

/// The program's thread: runs the program to its end, answering its calls
/// as the replies come.
fn run(
    launch: Launch,
    requests: &UnboundedSender<Request>,
    replies: &Receiver<Reply>,
    stop: &Arc<AtomicBool>,
) -> Ended {
    let engine = |e: rquickjs::Error| Ended {
        outcome: Err(Failure::Engine(e.to_string())),
        console: String::new(),
    };
    let runtime = match rquickjs::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => return engine(e),
    };
    let limits = launch.limits;
    runtime.set_memory_limit(limits.memory_bytes);
    runtime.set_max_stack_size(limits.stack_bytes);
    let bridge = Rc::new(Bridge {
        requests: requests.clone(),
        limits,
        broken: Cell::new(None),
        calls: Cell::new(0),
        pending: RefCell::new(HashMap::new()),
        console: RefCell::new(String::new()),
        plain: RefCell::new(None),
    });
    let deadline = Instant::now() + limits.time;
    {
        let bridge = bridge.clone();
        let stop = stop.clone();
        runtime.set_interrupt_handler(Some(Box::new(move || {
            if stop.load(Ordering::Relaxed) {
                return true;
            }
            if Instant::now() >= deadline {
                bridge.break_limit(Limit::Time);
            }
            bridge.broken.get().is_some()
        })));
    }
    let context = match rquickjs::Context::full(&runtime) {
        Ok(context) => context,
        Err(e) => return engine(e),
    };
    let outcome = drive(
        &context, &runtime, &bridge, &launch, replies, deadline, stop,
    );
    // Every value kept outside the engine goes before the engine does.
    context.with(|_| {
        bridge.pending.borrow_mut().clear();
        bridge.plain.borrow_mut().take();
    });
    let console = std::mem::take(&mut *bridge.console.borrow_mut());
    drop(context);
    runtime.set_interrupt_handler(None);
    Ended { outcome, console }
}

/// Declares the tools to the program and starts it: the promise of its
/// body, run as an async function.
fn evaluate(
    context: &rquickjs::Context,
    bridge: &Rc<Bridge>,
    launch: &Launch,
) -> std::result::Result<Persistent<Promise<'static>>, Failure> {
    context.with(|ctx| {
        prepare(&ctx, bridge, launch).map_err(|e| thrown(&ctx, e))?;
        let source = format!("(async () => {{\n{}\n}})()", launch.code);
        let mut options = rquickjs::context::EvalOptions::default();
        options.global = true;
        options.strict = false;
        options.filename = Some("program.js".to_owned());
        let promise: Promise = ctx
            .eval_with_options(source, options)
            .map_err(|e| failure(&ctx, bridge, e))?;
        Ok(Persistent::save(&ctx, promise))
    })
}

/// Runs the program and answers its calls until its promise settles, it
/// breaks a limit, or it is stopped.
fn drive(
    context: &rquickjs::Context,
    runtime: &rquickjs::Runtime,
    bridge: &Rc<Bridge>,
    launch: &Launch,
    replies: &Receiver<Reply>,
    deadline: Instant,
    stop: &AtomicBool,
) -> std::result::Result<Json, Failure> {
    let program = evaluate(context, bridge, launch)?;
    let mut answered = 0;
    let outcome = loop {
        // Every job the program has queued, until it waits for a call.
        loop {
            match runtime.execute_pending_job() {
                Ok(true) => {}
                Ok(false) => break,
                // A job that threw: its promise is rejected, and the
                // program sees it there (or the interrupt stops it).
                Err(_) => {}
            }
            if bridge.broken.get().is_some() || stop.load(Ordering::Relaxed) {
                break;
            }
        }
        if let Some(limit) = bridge.broken.get() {
            break Err(Failure::Limit(limit));
        }
        if stop.load(Ordering::Relaxed) {
            break Err(Failure::Engine("the program was stopped".into()));
        }
        let settled = context.with(|ctx| settled(&ctx, bridge, program.clone()));
        if let Some(outcome) = settled {
            break outcome;
        }
        if bridge.pending.borrow().is_empty() {
            break Err(Failure::Stuck);
        }
        let _ = bridge.requests.send(Request::Idle { answered });
        let left = deadline.saturating_duration_since(Instant::now());
        match replies.recv_timeout(left) {
            Ok(reply) => context.with(|ctx| {
                settle(&ctx, bridge, reply);
                answered += 1;
                // The replies that came meanwhile are settled with it, before
                // the program runs on: one wake of the program for them all.
                while let Ok(reply) = replies.try_recv() {
                    settle(&ctx, bridge, reply);
                    answered += 1;
                }
            }),
            Err(RecvTimeoutError::Timeout) => break Err(Failure::Limit(Limit::Time)),
            Err(RecvTimeoutError::Disconnected) => {
                break Err(Failure::Engine("the program was stopped".into()));
            }
        }
    };
    context.with(|ctx| drop(program.restore(&ctx)));
    let outcome = outcome.and_then(|value| {
        let spent = value.to_string().len() + bridge.console.borrow().len();
        if spent > bridge.limits.output_bytes {
            Err(Failure::Limit(Limit::Output))
        } else {
            Ok(value)
        }
    });
    // A limit broken on the way out is the program's end, whatever it
    // caught.
    match bridge.broken.get() {
        Some(limit) => Err(Failure::Limit(limit)),
        None => outcome,
    }
}

/// The program's promise, once settled: its value as JSON, or what it threw.
fn settled<'js>(
    ctx: &Ctx<'js>,
    bridge: &Bridge,
    program: Persistent<Promise<'static>>,
) -> Option<std::result::Result<Json, Failure>> {
    let promise = program.restore(ctx).ok()?;
    let result = promise.result::<Value>()?;
    Some(match result {
        Ok(value) => read_value(ctx, bridge, &value).map_err(|e| failure(ctx, bridge, e)),
        Err(e) => Err(failure(ctx, bridge, e)),
    })
}

/// Sets the program's world up: the fixed sources of variation, `console`,
/// `tools`.
fn prepare<'js>(ctx: &Ctx<'js>, bridge: &Rc<Bridge>, launch: &Launch) -> rquickjs::Result<()> {
    let plain: Object = ctx.globals().get::<_, Object>("Object")?.get("prototype")?;
    *bridge.plain.borrow_mut() = Some(Persistent::save(ctx, plain));
    let setup: Function = ctx.eval(PRELUDE)?;
    let console = Object::new(ctx.clone())?;
    for (level, prefix) in [
        ("log", ""),
        ("info", ""),
        ("debug", ""),
        ("warn", "warn: "),
        ("error", "error: "),
    ] {
        let bridge = bridge.clone();
        let write = Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, args: Rest<Value<'js>>| -> rquickjs::Result<()> {
                write_console(&ctx, &bridge, prefix, args.0)
            },
        )?;
        console.set(level, write)?;
    }
    let tools = Object::new(ctx.clone())?;
    for name in &launch.names {
        let bridge = bridge.clone();
        let tool = name.clone();
        let call = Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, arguments: Opt<Value<'js>>| -> rquickjs::Result<Promise<'js>> {
                call_tool(&ctx, &bridge, &tool, arguments.0)
            },
        )?
        .with_name(name.as_str())?;
        tools.set(name.as_str(), call)?;
    }
    setup.call::<_, ()>((
        launch.variation.seed,
        launch.variation.clock_ms as f64,
        console,
        tools,
    ))
}

/// The program's world, set up before it runs (so that nothing it does
/// reaches what this holds): `Math.random` seeded from the journal, `Date`
/// (and `performance.now`) at the journal's time, `console` and `tools`
/// frozen on `globalThis`, and no module loader, timers or host objects.
const PRELUDE: &str = r#"(function (seed, now, console, tools) {
  "use strict";
  let state = seed >>> 0;
  const random = function random() {
    state = (state + 0x6D2B79F5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  Object.defineProperty(Math, "random", { value: random, writable: false, configurable: false });
  const RealDate = Date;
  class FixedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) { super(now); } else { super(...args); }
    }
    static now() { return now; }
  }
  Object.defineProperty(globalThis, "Date", { value: FixedDate, writable: false, configurable: false });
  if (typeof performance === "object" && performance !== null) {
    Object.defineProperty(globalThis, "performance", {
      value: Object.freeze({ now: () => 0, timeOrigin: now }), writable: false, configurable: false,
    });
  }
  Object.setPrototypeOf(tools, null);
  Object.freeze(tools);
  Object.freeze(console);
  Object.defineProperty(globalThis, "tools", { value: tools, writable: false, configurable: false });
  Object.defineProperty(globalThis, "console", { value: console, writable: false, configurable: false });
})"#;

/// `console.*`: the arguments as text (strings as they are, other values
/// as JSON), one line, kept within the output limit.
fn write_console<'js>(
    ctx: &Ctx<'js>,
    bridge: &Bridge,
    prefix: &str,
    args: Vec<Value<'js>>,
) -> rquickjs::Result<()> {
    let mut line = String::from(prefix);
    for (i, arg) in args.into_iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        match arg.as_string() {
            Some(text) => line.push_str(&text.to_string()?),
            None => match ctx.json_stringify(arg.clone())? {
                Some(json) => line.push_str(&json.to_string()?),
                None => line.push_str(&format!("{arg:?}")),
            },
        }
    }
    line.push('\n');
    let mut console = bridge.console.borrow_mut();
    if console.len() + line.len() > bridge.limits.output_bytes {
        drop(console);
        bridge.break_limit(Limit::Output);
        return Err(Exception::throw_range(
            ctx,
            "the program's output is over its limit",
        ));
    }
    console.push_str(&line);
    Ok(())
}

/// `tools[name](arguments)`: the call sent out, a promise back.
fn call_tool<'js>(
    ctx: &Ctx<'js>,
    bridge: &Bridge,
    name: &str,
    arguments: Option<Value<'js>>,
) -> rquickjs::Result<Promise<'js>> {
    if bridge.broken.get().is_some() {
        return Err(Exception::throw_internal(ctx, "the program broke a limit"));
    }
    let arguments = match arguments {
        None => Json::Object(serde_json::Map::new()),
        Some(value) if value.is_undefined() => Json::Object(serde_json::Map::new()),
        Some(value) => read_value(ctx, bridge, &value)?,
    };
    let Json::Object(arguments) = arguments else {
        return Err(Exception::throw_type(
            ctx,
            &format!("tools.{name} takes one object of arguments"),
        ));
    };
    let seq = bridge.calls.get();
    if seq >= bridge.limits.max_calls {
        bridge.break_limit(Limit::Calls);
        return Err(Exception::throw_range(
            ctx,
            "the program made more tool calls than its limit",
        ));
    }
    bridge.calls.set(seq + 1);
    let (promise, resolve, reject) = ctx.promise()?;
    bridge.pending.borrow_mut().insert(
        seq,
        Settlers {
            resolve: Persistent::save(ctx, resolve),
            reject: Persistent::save(ctx, reject),
        },
    );
    let sent = bridge.requests.send(Request::Call {
        seq,
        name: name.to_owned(),
        arguments,
    });
    if sent.is_err() {
        return Err(Exception::throw_internal(ctx, "the program was stopped"));
    }
    Ok(promise)
}

/// Settles the promise of call `reply.seq`.
fn settle<'js>(ctx: &Ctx<'js>, bridge: &Bridge, reply: Reply) {
    let Some(settlers) = bridge.pending.borrow_mut().remove(&reply.seq) else {
        return;
    };
    let settled = (|| -> rquickjs::Result<()> {
        let resolve = settlers.resolve.restore(ctx)?;
        let reject = settlers.reject.restore(ctx)?;
        match reply.outcome {
            Ok(value) => resolve.call::<_, ()>((values::from_json(ctx, &value)?,)),
            Err(error) => {
                let exception = Exception::from_message(ctx.clone(), &error.message)?;
                exception.set("name", "ToolError")?;
                exception.set("kind", error.kind.as_str())?;
                if let Some(result) = error.result {
                    exception.set("result", values::from_json(ctx, &result)?)?;
                }
                reject.call::<_, ()>((exception,))
            }
        }
    })();
    if let Err(e) = settled {
        // The value could not cross (the memory limit, most likely): the
        // program's own end says why.
        let _ = CaughtError::from_error(ctx, e);
    }
}

/// A value of the program's as JSON (`undefined` as `null`), read in
/// place.
fn read_value<'js>(ctx: &Ctx<'js>, bridge: &Bridge, value: &Value<'js>) -> rquickjs::Result<Json> {
    let plain = bridge.plain.borrow().clone();
    match plain.map(|p| p.restore(ctx)).transpose()? {
        Some(plain) => values::to_json(ctx, value, &plain),
        None => to_json(ctx, value.clone()),
    }
}

/// A value as JSON (`undefined` as `null`), through its text.
fn to_json<'js>(ctx: &Ctx<'js>, value: Value<'js>) -> rquickjs::Result<Json> {
    let Some(text) = ctx.json_stringify(value)? else {
        return Ok(Json::Null);
    };
    let text = text.to_string()?;
    serde_json::from_str(&text)
        .map_err(|e| Exception::throw_type(ctx, &format!("the value is not JSON: {e}")))
}

/// What an error thrown in the program says, or the limit it broke.
fn failure<'js>(ctx: &Ctx<'js>, bridge: &Bridge, error: rquickjs::Error) -> Failure {
    if let Some(limit) = bridge.broken.get() {
        return Failure::Limit(limit);
    }
    let failure = thrown(ctx, error);
    // The engine's own errors for its limits, by their first line.
    let first = match &failure {
        Failure::Thrown(text) => text.lines().next().unwrap_or_default(),
        _ => return failure,
    };
    match first {
        "InternalError: out of memory" => Failure::Limit(Limit::Memory),
        "RangeError: Maximum call stack size exceeded" | "InternalError: stack overflow" => {
            Failure::Limit(Limit::Stack)
        }
        _ => failure,
    }
}

fn thrown<'js>(ctx: &Ctx<'js>, error: rquickjs::Error) -> Failure {
    match CaughtError::from_error(ctx, error) {
        CaughtError::Exception(exception) => {
            let name: Option<String> = exception.get("name").ok();
            let message = exception.message().unwrap_or_default();
            let mut text = match name {
                Some(name) if !name.is_empty() => format!("{name}: {message}"),
                _ => message,
            };
            if let Some(stack) = exception.stack().filter(|s| !s.trim().is_empty()) {
                text.push('\n');
                text.push_str(stack.trim_end());
            }
            Failure::Thrown(text)
        }
        CaughtError::Value(value) => {
            let shown = to_json(ctx, value.clone())
                .map(|j| j.to_string())
                .unwrap_or_else(|_| format!("{value:?}"));
            Failure::Thrown(format!("the program threw {shown}"))
        }
        CaughtError::Error(e) => Failure::Engine(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Runs `code` with a tool `echo` that answers its arguments (and a
    /// tool `fail` that fails), and answers its end and its calls.
    fn run_program(code: &str, limits: CodeLimits) -> (Ended, Vec<Json>) {
        let mut running = start(Launch {
            code: code.to_owned(),
            names: vec!["echo".into(), "fail".into(), "a-b".into()],
            limits,
            variation: Variation {
                seed: 7,
                clock_ms: 1_000,
            },
        })
        .unwrap();
        let mut calls = Vec::new();
        loop {
            match running.requests.blocking_recv().expect("the program ends") {
                Request::Call {
                    seq,
                    name,
                    arguments,
                } => {
                    calls.push(Json::Object(arguments.clone()));
                    let outcome = match name.as_str() {
                        "fail" => Err(CallError {
                            message: "no".into(),
                            kind: "denied".into(),
                            result: None,
                        }),
                        _ => Ok(Json::Object(arguments)),
                    };
                    running.reply(Reply { seq, outcome });
                }
                Request::Done(ended) => return (ended, calls),
                Request::Idle { .. } => {}
            }
        }
    }

    fn ok(code: &str) -> Json {
        let (ended, _) = run_program(code, CodeLimits::default());
        ended.outcome.unwrap_or_else(|f| panic!("{f:?}"))
    }

    fn failed(code: &str, limits: CodeLimits) -> Failure {
        let (ended, _) = run_program(code, limits);
        ended.outcome.expect_err("the program fails")
    }

    #[test]
    fn calls_come_back_as_values_and_errors_as_exceptions() {
        assert_eq!(
            ok(
                "const [a, b] = await Promise.all([tools.echo({n: 1}), tools[\"a-b\"]({n: 2})]);\n\
                let caught; try { await tools.fail({}); } catch (e) { caught = [e.name, e.message, e.kind]; }\n\
                return {a, b, caught};"
            ),
            json!({"a": {"n": 1}, "b": {"n": 2}, "caught": ["ToolError", "no", "denied"]})
        );
    }

    #[test]
    fn random_and_date_come_from_the_variation() {
        let first = ok("return [Math.random(), Date.now(), new Date().getTime()];");
        assert_eq!(
            first,
            ok("return [Math.random(), Date.now(), new Date().getTime()];")
        );
        assert_eq!(first[1], json!(1000));
        assert_eq!(first[2], json!(1000));
    }

    #[test]
    fn console_is_captured() {
        let (ended, _) = run_program(
            "console.log('a', {b: 1}); console.error('c'); return 1;",
            CodeLimits::default(),
        );
        assert_eq!(ended.console, "a {\"b\":1}\nerror: c\n");
    }

    #[test]
    fn limits_end_the_program() {
        let quick = CodeLimits {
            time: std::time::Duration::from_millis(300),
            ..CodeLimits::default()
        };
        assert_eq!(
            failed("while (true) {}", quick),
            Failure::Limit(Limit::Time)
        );
        assert_eq!(
            failed("for (;;) { try { while (true) {} } catch (e) {} }", quick),
            Failure::Limit(Limit::Time)
        );
        let small = CodeLimits {
            memory_bytes: 8 << 20,
            ..CodeLimits::default()
        };
        assert_eq!(
            failed(
                "const a = []; for (;;) a.push('x'.repeat(1 << 16) + a.length);",
                small
            ),
            Failure::Limit(Limit::Memory)
        );
        assert_eq!(
            failed(
                "function f(n) { return f(n + 1) + 1; } return f(0);",
                CodeLimits::default()
            ),
            Failure::Limit(Limit::Stack)
        );
        assert_eq!(
            failed("return 'x'.repeat(1 << 20);", CodeLimits::default()),
            Failure::Limit(Limit::Output)
        );
        assert_eq!(
            failed(
                "for (;;) { try { console.log('x'.repeat(1000)); } catch (e) {} }",
                CodeLimits::default()
            ),
            Failure::Limit(Limit::Output)
        );
        let few = CodeLimits {
            max_calls: 3,
            ..CodeLimits::default()
        };
        let (ended, calls) = run_program(
            "for (let i = 0; ; i++) { try { await tools.echo({i}); } catch (e) {} }",
            few,
        );
        assert_eq!(ended.outcome, Err(Failure::Limit(Limit::Calls)));
        assert_eq!(calls.len(), 3);
    }

    #[test]
    fn the_host_is_out_of_reach() {
        for code in [
            "return require('fs');",
            "return process.env;",
            "return await fetch('http://example.com');",
            "return eval(await fetch('http://example.com'));",
            "return await import('fs');",
            "return setTimeout(() => 1, 1);",
        ] {
            match failed(code, CodeLimits::default()) {
                Failure::Thrown(text) => assert!(
                    text.contains("not defined")
                        || text.contains("module")
                        || text.contains("not a function"),
                    "{code}: {text}"
                ),
                other => panic!("{code}: {other:?}"),
            }
        }
        match failed("import fs from 'fs'; return 1;", CodeLimits::default()) {
            Failure::Thrown(text) => assert!(text.starts_with("SyntaxError"), "{text}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_tools_object_cannot_be_changed() {
        assert_eq!(
            ok("'use strict'; const tries = [];\n\
                for (const f of [() => { tools.evil = 1; }, () => { tools.echo = tools.fail; }, () => { globalThis.tools = {}; }, () => { Object.setPrototypeOf(tools, {}); }]) {\n\
                  try { f(); tries.push('changed'); } catch (e) { tries.push(e.name); } }\n\
                return [tries, Object.keys(tools), await tools.echo({x: 1})];"),
            json!([["TypeError", "TypeError", "TypeError", "TypeError"], ["echo", "fail", "a-b"], {"x": 1}])
        );
    }

    #[test]
    fn a_program_that_waits_on_nothing_is_stuck() {
        assert_eq!(
            failed("await new Promise(() => {});", CodeLimits::default()),
            Failure::Stuck
        );
    }
}
