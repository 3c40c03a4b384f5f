//! The meter a selection filter runs under: steps, stack, the caller's
//! cancel flag, and the memory the values it builds take.
//!
//! Steps are counted where jaq looks up each term it evaluates. Memory is
//! charged before each operation that can build a value larger than its
//! operands: the filter's parsed terms (and those of jaq's standard
//! definitions) are rewritten so that `+`, `*` and `/` (and `+=`, `*=`,
//! `/=`; `/` splits strings), string
//! interpolation, `tojson`, and the built-ins whose output grows with their
//! input go through metered functions here, which charge the size of what
//! they are about to build and stop the run when the filter's memory limit
//! would be passed. Sizes are counted as jaq holds values: a string's
//! bytes, 16 bytes an array element, 40 bytes an object member, a big
//! integer's bytes. What is charged is never given back, so the limit bounds
//! all the values a run builds, and with it what it can hold at once.

use std::cell::Cell;
use std::fmt::Write as _;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use jaq_core::load::lex::StrPart;
use jaq_core::load::parse::{BinaryOp, Def, Pattern, Term};
use jaq_core::ops::Math;
use jaq_core::path::{Part, Path};
use jaq_core::{Cv, DataT, Native, RunPtr, ValXs, data::HasLut, native};
use jaq_json::{Num, Rc, Val};

/// How much of the filter thread's stack the evaluation may use before it
/// is stopped.
const EVAL_STACK: usize = 64 << 20;

/// Bytes charged for an array element and an object member.
const ELEMENT: usize = 16;
const MEMBER: usize = 40;

/// The most bytes an integer a filter builds may take (jq's numbers are
/// doubles; jaq's integers grow without bound, and multiplying two large
/// ones takes long in one step).
pub(super) const MAX_NUMBER_BYTES: usize = 64 << 10;

/// How deep an object merge (`*`) may go before it is refused.
const MAX_MERGE_DEPTH: usize = 512;

/// Why a run was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    Steps,
    Stack,
    Memory,
    Number,
    Cancelled,
}

/// The panic payload that unwinds a stopped run.
struct Stopped;

/// Counts a run's steps and the memory its values take, and watches its
/// stack and its cancel flag.
pub(super) struct Gauge<'c> {
    left: Cell<u64>,
    memory_left: Cell<usize>,
    stack_base: usize,
    cancel: &'c AtomicBool,
    stopped: Cell<Option<Stop>>,
}

impl<'c> Gauge<'c> {
    /// A gauge of `steps` and `memory` bytes whose stack starts here.
    pub(super) fn new(steps: u64, memory: usize, cancel: &'c AtomicBool) -> Self {
        let marker = 0u8;
        Gauge {
            left: Cell::new(steps),
            memory_left: Cell::new(memory),
            stack_base: std::ptr::addr_of!(marker) as usize,
            cancel,
            stopped: Cell::new(None),
        }
    }

    /// Why the run was stopped, if it was.
    pub(super) fn stopped(&self) -> Option<Stop> {
        self.stopped.get()
    }

    fn stop(&self, why: Stop) -> ! {
        self.stopped.set(Some(why));
        std::panic::resume_unwind(Box::new(Stopped));
    }

    pub(super) fn step(&self) {
        let left = self.left.get();
        let marker = 0u8;
        let here = std::ptr::addr_of!(marker) as usize;
        if left == 0 {
            self.stop(Stop::Steps);
        } else if self.stack_base.saturating_sub(here) > EVAL_STACK {
            self.stop(Stop::Stack);
        } else if left.is_multiple_of(4096) && self.cancel.load(Ordering::Relaxed) {
            self.stop(Stop::Cancelled);
        }
        self.left.set(left - 1);
    }

    /// How many steps are left.
    #[cfg(test)]
    pub(super) fn steps_left(&self) -> u64 {
        self.left.get()
    }

    /// Takes `bytes` from the memory left, or stops the run.
    fn charge(&self, bytes: usize) {
        match self.memory_left.get().checked_sub(bytes) {
            Some(left) => self.memory_left.set(left),
            None => self.stop(Stop::Memory),
        }
    }
}

/// Filters whose every term evaluation is metered.
pub(super) struct Metered;

impl DataT for Metered {
    type V<'a> = Val;
    type Data<'a> = Meter<'a>;
}

/// The data a metered run carries: its look-up table and its gauge.
#[derive(Clone)]
pub(super) struct Meter<'a> {
    pub(super) lut: &'a jaq_core::Lut<Metered>,
    pub(super) gauge: &'a Gauge<'a>,
}

impl<'a> HasLut<'a, Metered> for Meter<'a> {
    fn lut(&self) -> &'a jaq_core::Lut<Metered> {
        // jaq looks up each term it evaluates here.
        self.gauge.step();
        self.lut
    }
}

/// Built-ins that reach outside the result: answered with an error.
const REFUSED: &[&str] = &[
    "env",
    "halt",
    "debug_empty",
    "stderr_empty",
    "input",
    "inputs",
];

/// Built-ins whose output can outgrow their input, with how many bytes
/// they may build for each byte of it (as [`size`] counts it): charged
/// before each runs.
const GROWING: &[(&str, &str)] = &[
    ("explode", "16"),
    ("implode", "1"),
    ("escape_sh", "4"),
    ("escape_html", "6"),
    ("encode_uri", "3"),
    ("encode_base64", "2"),
    ("decode_base64", "1"),
    ("unescape_html", "1"),
    ("decode_uri", "1"),
    ("ascii_downcase", "1"),
    ("ascii_upcase", "1"),
    ("reverse", "1"),
    ("sort", "1"),
    ("sort_by", "1"),
    ("group_by", "2"),
    ("keys_unsorted", "1"),
    ("tobytes", "1"),
    ("fromjson", "24"),
    ("indices", "16"),
    ("split_", "16"),
    ("matches", "32"),
    ("split_matches", "32"),
];

const ADD: &str = "_meter_add";
const MUL: &str = "_meter_mul";
const DIV: &str = "_meter_div";
const TEXT: &str = "_meter_text";
const CHARGE: &str = "_meter_charge";
/// The variable an update's operand is bound to (`l += r` is run as
/// `r as $x | l |= . + $x`).
const OPERAND: &str = "$__mcp_adapters_operand";
/// The name the filter is defined under, after the standard definitions.
pub(super) const MAIN: &str = "_meter_main";

/// `term` with each growing operation routed through its metered function.
pub(super) fn rewrite<'s>(term: Term<&'s str>) -> Term<&'s str> {
    use Term as T;
    let bx = |t: Box<T<&'s str>>| Box::new(rewrite(*t));
    match term {
        T::BinOp(l, BinaryOp::Math(op @ (Math::Add | Math::Mul | Math::Div)), r) => {
            T::Call(metered_op(op), vec![rewrite(*l), rewrite(*r)])
        }
        T::BinOp(l, BinaryOp::UpdateMath(op @ (Math::Add | Math::Mul | Math::Div)), r) => {
            let update = T::BinOp(
                bx(l),
                BinaryOp::Update,
                Box::new(T::Call(metered_op(op), vec![T::Id, T::Var(OPERAND)])),
            );
            T::BinOp(
                bx(r),
                BinaryOp::Pipe(Some(Pattern::Var(OPERAND))),
                Box::new(update),
            )
        }
        T::BinOp(l, op, r) => T::BinOp(bx(l), rewrite_op(op), bx(r)),
        T::Str(fmt, parts) => {
            let interpolates = parts.iter().any(|p| matches!(p, StrPart::Term(_)));
            let fmt = match fmt {
                None if interpolates => Some(TEXT),
                fmt => fmt,
            };
            let parts = parts
                .into_iter()
                .map(|part| match part {
                    StrPart::Term(t) => StrPart::Term(rewrite(t)),
                    other => other,
                })
                .collect();
            T::Str(fmt, parts)
        }
        T::Call(name, args) => {
            let args: Vec<_> = args.into_iter().map(rewrite).collect();
            match GROWING.iter().find(|(n, _)| *n == name) {
                Some((_, factor)) => T::BinOp(
                    Box::new(T::Call(CHARGE, vec![T::Num(factor)])),
                    BinaryOp::Pipe(None),
                    Box::new(T::Call(name, args)),
                ),
                None => T::Call(name, args),
            }
        }
        T::Arr(t) => T::Arr(t.map(bx)),
        T::Obj(entries) => T::Obj(
            entries
                .into_iter()
                .map(|(k, v)| (rewrite(k), v.map(rewrite)))
                .collect(),
        ),
        T::Neg(t) => T::Neg(bx(t)),
        T::Label(name, t) => T::Label(name, bx(t)),
        T::Fold(name, xs, pattern, args) => T::Fold(
            name,
            bx(xs),
            rewrite_pattern(pattern),
            args.into_iter().map(rewrite).collect(),
        ),
        T::TryCatch(t, catch) => T::TryCatch(bx(t), catch.map(bx)),
        T::IfThenElse(branches, otherwise) => T::IfThenElse(
            branches
                .into_iter()
                .map(|(cond, then)| (rewrite(cond), rewrite(then)))
                .collect(),
            otherwise.map(bx),
        ),
        T::Def(defs, t) => T::Def(defs.into_iter().map(rewrite_def).collect(), bx(t)),
        T::Path(t, path) => T::Path(bx(t), rewrite_path(path)),
        other @ (T::Id | T::Recurse | T::Num(_) | T::Break(_) | T::Var(_)) => other,
    }
}

fn metered_op(op: Math) -> &'static str {
    match op {
        Math::Mul => MUL,
        Math::Div => DIV,
        _ => ADD,
    }
}

fn rewrite_op(op: BinaryOp<&str>) -> BinaryOp<&str> {
    match op {
        BinaryOp::Pipe(Some(pattern)) => BinaryOp::Pipe(Some(rewrite_pattern(pattern))),
        other => other,
    }
}

fn rewrite_pattern(pattern: Pattern<&str>) -> Pattern<&str> {
    match pattern {
        Pattern::Var(v) => Pattern::Var(v),
        Pattern::Arr(items) => Pattern::Arr(items.into_iter().map(rewrite_pattern).collect()),
        Pattern::Obj(entries) => Pattern::Obj(
            entries
                .into_iter()
                .map(|(k, p)| (rewrite(k), rewrite_pattern(p)))
                .collect(),
        ),
    }
}

fn rewrite_path(path: Path<Term<&str>>) -> Path<Term<&str>> {
    Path(
        path.0
            .into_iter()
            .map(|(part, opt)| {
                let part = match part {
                    Part::Index(i) => Part::Index(rewrite(i)),
                    Part::Range(from, to) => Part::Range(from.map(rewrite), to.map(rewrite)),
                };
                (part, opt)
            })
            .collect(),
    )
}

pub(super) fn rewrite_def(def: Def<&str>) -> Def<&str> {
    Def {
        name: def.name,
        args: def.args,
        body: rewrite(def.body),
    }
}

/// jaq's standard definitions, rewritten once, less those the natives of
/// [`super::natives`] replace.
pub(super) fn prelude() -> &'static [Def<&'static str>] {
    static PRELUDE: OnceLock<Vec<Def<&'static str>>> = OnceLock::new();
    PRELUDE.get_or_init(|| {
        let replaced =
            |def: &Def<&str>| super::natives::REPLACED.contains(&(def.name, def.args.len()));
        standard_defs().filter(|def| !replaced(def)).collect()
    })
}

/// jaq's standard definitions, rewritten.
pub(super) fn standard_defs() -> impl Iterator<Item = Def<&'static str>> {
    jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs())
        .map(rewrite_def)
}

/// The bytes `value` takes of its own, its children (already built) not
/// counted.
fn size(value: &Val) -> usize {
    match value {
        Val::TStr(b) | Val::BStr(b) => b.len(),
        Val::Arr(items) => items.len().saturating_mul(ELEMENT),
        Val::Obj(map) => map.len().saturating_mul(MEMBER),
        Val::Num(Num::BigInt(i)) => usize::try_from(i.bits() / 8).unwrap_or(usize::MAX),
        Val::Num(Num::Dec(text)) => text.len(),
        _ => 0,
    }
}

/// What `l + r` builds.
fn added(l: &Val, r: &Val) -> usize {
    match (l, r) {
        (Val::Null, _) | (_, Val::Null) => 0,
        (Val::Num(_), Val::Num(_)) => size(l).max(size(r)).saturating_add(8),
        // An array held only here grows in place.
        (Val::Arr(items), Val::Arr(_)) if Rc::strong_count(items) == 1 => size(r),
        _ => size(l).saturating_add(size(r)),
    }
}

/// What `l * r` builds; `None` past `cap`.
fn multiplied(l: &Val, r: &Val, cap: usize) -> Option<usize> {
    let repeat = |s: &Val, n: &Num| match n {
        Num::Int(i) if *i > 0 => size(s).checked_mul(*i as usize),
        Num::BigInt(_) => (size(s) > 0).then_some(usize::MAX),
        _ => Some(0),
    };
    match (l, r) {
        (s @ (Val::TStr(_) | Val::BStr(_)), Val::Num(n))
        | (Val::Num(n), s @ (Val::TStr(_) | Val::BStr(_))) => repeat(s, n),
        (Val::Num(_), Val::Num(_)) => Some(size(l).saturating_add(size(r)).saturating_add(8)),
        (Val::Obj(_), Val::Obj(_)) => merged(l, r, cap),
        _ => Some(0),
    }
}

/// What merging `r` into `l` builds (each object on the way copied), found
/// without recursion; `None` past `cap` or [`MAX_MERGE_DEPTH`].
fn merged(l: &Val, r: &Val, cap: usize) -> Option<usize> {
    let mut total = 0usize;
    let mut stack = vec![(l, r, 1usize)];
    while let Some((l, r, depth)) = stack.pop() {
        let (Val::Obj(lm), Val::Obj(rm)) = (l, r) else {
            continue;
        };
        if depth > MAX_MERGE_DEPTH {
            return None;
        }
        total = total.saturating_add((lm.len() + rm.len()).saturating_mul(MEMBER));
        if total > cap {
            return None;
        }
        for (k, rv) in rm.iter() {
            if let (Some(lv @ Val::Obj(_)), Val::Obj(_)) = (lm.get(k), rv) {
                stack.push((lv, rv, depth + 1));
            }
        }
    }
    Some(total)
}

fn gauge<'a>(cv: &Cv<'a, Metered>) -> &'a Gauge<'a> {
    cv.0.data().gauge
}

/// Stops the run when `l` and `r` are numbers whose result would take more
/// than [`MAX_NUMBER_BYTES`].
fn check_number(gauge: &Gauge<'_>, l: &Val, r: &Val, bytes: usize) {
    if matches!((l, r), (Val::Num(_), Val::Num(_))) && bytes > MAX_NUMBER_BYTES {
        gauge.stop(Stop::Number);
    }
}

/// `$l + $r`, charged first.
fn metered_add<'a>(mut cv: Cv<'a, Metered>) -> ValXs<'a, Val> {
    let r = cv.0.pop_var();
    let l = cv.0.pop_var();
    let bytes = added(&l, &r);
    check_number(gauge(&cv), &l, &r, bytes);
    gauge(&cv).charge(bytes);
    native::bome(l + r)
}

/// `$l * $r`, charged first.
fn metered_mul<'a>(mut cv: Cv<'a, Metered>) -> ValXs<'a, Val> {
    let r = cv.0.pop_var();
    let l = cv.0.pop_var();
    let gauge = gauge(&cv);
    match multiplied(&l, &r, gauge.memory_left.get()) {
        Some(bytes) => {
            check_number(gauge, &l, &r, bytes);
            gauge.charge(bytes);
        }
        None => gauge.stop(Stop::Memory),
    }
    native::bome(l * r)
}

/// What `l / r` builds: a string split in as many pieces as it can give,
/// each an element holding a slice of it.
fn divided(l: &Val, r: &Val) -> usize {
    const PIECE: usize = ELEMENT + 32;
    match (l, r) {
        (Val::TStr(s) | Val::BStr(s), Val::TStr(sep) | Val::BStr(sep)) => {
            let pieces = s.len() / sep.len().max(1) + 1;
            pieces.saturating_mul(PIECE)
        }
        _ => size(l).max(size(r)).saturating_add(8),
    }
}

/// `$l / $r`, charged first.
fn metered_div<'a>(mut cv: Cv<'a, Metered>) -> ValXs<'a, Val> {
    let r = cv.0.pop_var();
    let l = cv.0.pop_var();
    gauge(&cv).charge(divided(&l, &r));
    native::bome(l / r)
}

/// `value` as compact JSON, charged as it is written.
fn charged_json(gauge: &Gauge<'_>, value: &Val) -> String {
    let mut text = String::new();
    let mut bounded = super::Bounded {
        text: &mut text,
        max: gauge.memory_left.get(),
    };
    if write!(bounded, "{value}").is_err() {
        gauge.stop(Stop::Memory);
    }
    gauge.charge(text.len());
    text
}

/// A string interpolation's part: a string as it is, anything else as JSON.
fn metered_text<'a>(cv: Cv<'a, Metered>) -> ValXs<'a, Val> {
    let gauge = gauge(&cv);
    match cv.1 {
        Val::TStr(b) | Val::BStr(b) => native::bome(Ok(Val::TStr(b))),
        value => native::bome(Ok(Val::utf8_str(charged_json(gauge, &value)))),
    }
}

fn metered_tojson<'a>(cv: Cv<'a, Metered>) -> ValXs<'a, Val> {
    native::bome(Ok(Val::utf8_str(charged_json(gauge(&cv), &cv.1))))
}

/// Passes its input on, charged `$factor` times its size.
fn charge<'a>(mut cv: Cv<'a, Metered>) -> ValXs<'a, Val> {
    let factor = match cv.0.pop_var() {
        Val::Num(Num::Int(n)) => n.unsigned_abs(),
        _ => 1,
    };
    gauge(&cv).charge(size(&cv.1).saturating_mul(factor));
    native::bome(Ok(cv.1))
}

fn refused<'a>(cv: Cv<'a, Metered>) -> ValXs<'a, Val> {
    let _ = cv;
    native::bome(Err(jaq_core::Error::str(
        "this built-in reaches outside the result and is not available to a selection filter",
    )))
}

/// `range($from; $to; $by)`, each number a step.
fn metered_range<'a>(mut cv: Cv<'a, Metered>) -> ValXs<'a, Val> {
    let by = cv.0.pop_var();
    let to = cv.0.pop_var();
    let from = cv.0.pop_var();
    let gauge = gauge(&cv);
    let rising = by > Val::from(0isize);
    let falling = by < Val::from(0isize);
    let mut next = Some(from);
    Box::new(std::iter::from_fn(move || {
        let x = next.take()?;
        let go_on = if rising {
            x < to
        } else if falling {
            x > to
        } else {
            x != to
        };
        if !go_on {
            return None;
        }
        gauge.step();
        match x.clone() + by.clone() {
            Ok(after) => next = Some(after),
            Err(e) => return Some(Err(e.into())),
        }
        Some(Ok(x))
    }))
}

/// jaq's built-ins, with those that reach outside refused, `range` and
/// `tojson` metered, and the metered operations and the natives of
/// [`super::natives`] added.
pub(super) fn funs() -> impl Iterator<Item = native::Fun<Metered>> {
    let range: RunPtr<Metered> = metered_range;
    let refuse: RunPtr<Metered> = refused;
    let tojson: RunPtr<Metered> = metered_tojson;
    let ours: [(&'static str, usize, RunPtr<Metered>); 5] = [
        (ADD, 2, metered_add),
        (MUL, 2, metered_mul),
        (DIV, 2, metered_div),
        (TEXT, 0, metered_text),
        (CHARGE, 1, charge),
    ];
    jaq_core::funs::<Metered>()
        .chain(jaq_std::funs::<Metered>())
        .chain(jaq_json::funs::<Metered>())
        .map(move |(name, args, f)| match name {
            "range" if args.len() == 3 => (name, args, Native::<Metered>::new(range)),
            "tojson" => (name, args, Native::<Metered>::new(tojson)),
            _ if REFUSED.contains(&name) => (name, args, Native::<Metered>::new(refuse)),
            _ => (name, args, f),
        })
        .chain(
            ours.into_iter()
                .map(|(name, arity, f)| (name, native::v(arity), Native::<Metered>::new(f))),
        )
        .chain(super::natives::funs())
}
