//! `select/1` and `empty/0` as native filters.
//!
//! jaq defines both in jq: `def select(f): if f then . else empty end;` and
//! `def empty: {}[] as $x | .;`, so that every value `select` drops goes
//! through two definitions' calls and builds an empty object to iterate.
//! The natives here do the same work without them and build nothing. They
//! replace those two definitions among the standard ones (see
//! [`super::meter::prelude`]), so that the standard definitions that use
//! them (`values`, `recurse/2`, `paths/1`, `del`, `isempty`...) call them
//! too, while a filter's own definition of either name still shadows them
//! (jaq looks a name up in the filter's definitions, then in the standard
//! ones, then among the natives).
//!
//! Their outputs, paths and updates are those of jaq's definitions: for
//! each output of `f` on the input, in turn, `select(f)` yields the input
//! (or its path) when the output is true (neither `false` nor `null`) and
//! nothing when it is not, and passes an error on; updating through it
//! applies the update once for each true output, each to what the previous
//! one gave, as jaq updates through `if f then . else empty end`.
//! `empty` yields nothing, has no path, and leaves what it updates as it
//! is. Both are metered as any filter is: each term `f` evaluates is a step.

use std::collections::VecDeque;

use jaq_core::box_iter::box_once;
use jaq_core::{Bind, Native, PathsPtr, RunPtr, UpdatePtr, ValT, ValX, ValXs, native};
use jaq_json::Val;

use super::meter::Metered;

/// The standard definitions the natives replace, by name and arity.
pub(super) const REPLACED: [(&str, usize); 2] = [("select", 1), ("empty", 0)];

/// The natives, to be given to the compiler.
pub(super) fn funs() -> [native::Fun<Metered>; 2] {
    let select_run: RunPtr<Metered> = |mut cv| {
        let (f, ctx) = cv.0.pop_fun();
        let conds = f.run((ctx, cv.1.clone()));
        when_true(conds, cv.1)
    };
    let select_paths: PathsPtr<Metered> = |mut cv| {
        let (f, ctx) = cv.0.pop_fun();
        let conds = f.run((ctx, cv.1.0.clone()));
        when_true(conds, cv.1)
    };
    let select_update: UpdatePtr<Metered> = |mut cv, update| {
        let (f, ctx) = cv.0.pop_fun();
        let conds = f.run((ctx, cv.1.clone()));
        updated(conds, cv.1, update)
    };
    let empty_run: RunPtr<Metered> = |_| Box::new(std::iter::empty());
    let empty_paths: PathsPtr<Metered> = |_| Box::new(std::iter::empty());
    let empty_update: UpdatePtr<Metered> = |cv, _| box_once(Ok(cv.1));
    [
        (
            "select",
            [Bind::Fun(())].into(),
            Native::<Metered>::new(select_run)
                .with_paths(select_paths)
                .with_update(select_update),
        ),
        (
            "empty",
            [].into(),
            Native::<Metered>::new(empty_run)
                .with_paths(empty_paths)
                .with_update(empty_update),
        ),
    ]
}

/// `x` once for each true output of `conds`, their errors passed on.
fn when_true<'a, T: Clone + 'a>(mut conds: ValXs<'a, Val>, x: T) -> ValXs<'a, T, Val> {
    // One output, the usual case: no iterator kept for it.
    if conds.size_hint().1 == Some(1) {
        return match conds.next() {
            Some(Ok(cond)) if cond.as_bool() => box_once(Ok(x)),
            Some(Err(e)) => box_once(Err(e)),
            _ => Box::new(std::iter::empty()),
        };
    }
    Box::new(conds.filter_map(move |cond| match cond {
        Ok(cond) => cond.as_bool().then(|| Ok(x.clone())),
        Err(e) => Some(Err(e)),
    }))
}

/// A branch of an update through `select`: the value it has reached before
/// the condition's output at an index, or the outputs of the update at the
/// output before an index, each to go on from there.
enum Branch<'a> {
    At(usize, Val),
    Each(usize, ValXs<'a, Val>),
}

impl Branch<'_> {
    fn index(&self) -> usize {
        match self {
            Branch::At(i, _) | Branch::Each(i, _) => *i,
        }
    }
}

/// The outputs of `v | select(f) |= update`, `conds` being those of `f` on
/// `v`: jaq's update of `if f then . else empty end` (a `reduce` over the
/// outputs of `f`), each branch followed depth first; an error ends its
/// branch.
fn updated<'a, U>(conds: ValXs<'a, Val>, v: Val, update: U) -> ValXs<'a, Val>
where
    U: Fn(Val) -> ValXs<'a, Val> + 'a,
{
    let mut conds = Outputs {
        first: 0,
        kept: VecDeque::new(),
        rest: conds.fuse(),
    };
    // The branches' indices never fall from the bottom of the stack to its
    // top: outputs before the bottom's are no longer needed.
    let mut stack = vec![Branch::At(0, v)];
    Box::new(std::iter::from_fn(move || {
        loop {
            match stack.pop()? {
                Branch::At(i, v) => {
                    conds.forget_before(stack.first().map_or(i, Branch::index));
                    match conds.get(i) {
                        None => return Some(Ok(v)),
                        Some(Err(e)) => return Some(Err(e)),
                        Some(Ok(cond)) if cond.as_bool() => {
                            stack.push(Branch::Each(i + 1, update(v)));
                        }
                        Some(Ok(_)) => stack.push(Branch::At(i + 1, v)),
                    }
                }
                Branch::Each(i, mut ys) => {
                    if let Some(y) = ys.next() {
                        stack.push(Branch::Each(i, ys));
                        match y {
                            Ok(y) => stack.push(Branch::At(i, y)),
                            Err(e) => return Some(Err(e)),
                        }
                    }
                }
            }
        }
    }))
}

/// A filter's outputs, read as they are first asked for and kept until no
/// branch needs them.
struct Outputs<'a> {
    /// The index of the first output kept.
    first: usize,
    kept: VecDeque<ValX<'a, Val>>,
    rest: std::iter::Fuse<ValXs<'a, Val>>,
}

impl<'a> Outputs<'a> {
    /// The output at `i` (at least the first kept), or `None` past the last.
    fn get(&mut self, i: usize) -> Option<ValX<'a, Val>> {
        while self.first + self.kept.len() <= i {
            self.kept.push_back(self.rest.next()?);
        }
        self.kept.get(i - self.first).cloned()
    }

    fn forget_before(&mut self, i: usize) {
        while self.first < i && self.kept.pop_front().is_some() {
            self.first += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use jaq_core::load::parse::Def;
    use jaq_core::{Ctx, Vars};
    use serde_json::{Value, json};

    use super::super::meter::{self, Gauge, Meter, Metered};
    use super::super::{Reader, compile};

    const STEPS: u64 = 10_000_000;

    /// What `filter` gives on `input` compiled after `prelude` (at most 100
    /// outputs, errors in their place), and the steps it took.
    fn outputs(filter: &str, input: &Value, prelude: &[Def<&'static str>]) -> (Vec<String>, u64) {
        let compiled = compile(filter, prelude).unwrap_or_else(|e| panic!("{filter}: {e}"));
        let cancel = AtomicBool::new(false);
        let gauge = Gauge::new(STEPS, 1 << 30, &cancel);
        let meter = Meter {
            lut: &compiled.lut,
            gauge: &gauge,
        };
        let input = Reader::new().read(input, 1).expect("shallow input");
        let ctx = Ctx::<Metered>::new(meter, Vars::new([]));
        let found = compiled
            .id
            .run((ctx, input))
            .take(100)
            .map(|y| match y {
                Ok(v) => v.to_string(),
                Err(exn) => match exn.get_err() {
                    Ok(e) => format!("error: {e}"),
                    Err(other) => format!("exception: {other:?}"),
                },
            })
            .collect();
        (found, STEPS - gauge.steps_left())
    }

    /// jaq's own definitions of `select` and `empty` among the standard ones.
    fn jaq_defs() -> Vec<Def<&'static str>> {
        meter::standard_defs().collect()
    }

    const INPUTS: &str = r#"[
        [0, 1, 2, 3, 1],
        [{"a": 1}, {"a": null}, {"a": false}, {}, {"a": {"b": 2}}, {"a": [true, 0]}],
        {"a": 1, "b": null, "c": [1, "x", {"d": 2.5, "e": null}], "e": false},
        null,
        3,
        "text"
    ]"#;

    /// Filters through `select` and `empty`, direct and through the standard
    /// definitions that use them: outputs, several outputs of the condition,
    /// errors in it, paths and updates.
    const FILTERS: &[&str] = &[
        "select(.)",
        "select(. == null)",
        ".[] | select(. > 1)",
        ".[] | select(.a)",
        "[.[]? | select(.a?)]",
        "select(true, false, true)",
        "[.[]? | select(. > 0, . > 1, null)]",
        "select(error(\"boom\"))",
        "select(true, error(\"boom\"), true)",
        "[.[]? | try select(.a) catch \"caught\"]",
        "select(empty)",
        "[.[]? | select(.) | empty]",
        "empty",
        "[empty]",
        "first(empty)",
        "[first(empty)]",
        "[limit(3; .[]? | select(. > 0))]",
        "[limit(1; select(true, true))]",
        "first(.[]? | select(. > 1))",
        "last(.[]? | select(. > 1))",
        "nth(1; .[]? | select(. > 0))",
        "isempty(.[]? | select(. > 10))",
        "any(.[]?; . > 2)",
        "all(.[]?; . > 0)",
        "[.[]? | values]",
        "[.[]? | nulls]",
        "[.. | numbers]",
        "[.. | scalars]",
        "[.. | iterables]",
        "[.. | strings, booleans, objects, arrays]",
        "[recurse(.[]?; . != 3)]",
        "[recurse(if . < 3 then . + 1 else empty end)]",
        "[while(. < 5; . + 1)]",
        "[range(6) | select(. % 2 == 0)]",
        "reduce (.[]? | select(. > 1)) as $x (0; . + $x)",
        "[foreach .[]? as $x (0; . + $x; select(. > 2))]",
        "path(..|select(type==\"number\"))",
        "[path(..|select(type==\"number\"))]",
        "[path(select(.a?))]",
        "[path(select(true, false, true))]",
        "[path(select(error(\"p\")))]",
        "[path(empty)]",
        "[path(first(select(true, true)))]",
        "[path(.[]? | select(. == null))]",
        "[paths]",
        "[paths(type == \"number\")]",
        "[paths(. == null)]",
        "del(.[]? | select(. > 1))",
        "del(..|select(. == null))",
        "del(.[0, 2])",
        "delpaths([[0], [1]])",
        "to_entries",
        "with_entries(select(.value))",
        "map(select(. != null))",
        "map_values(select(. > 1))",
        ".[]? |= select(. > 1)",
        "(.[]? | select(.a?)) |= 5",
        "(.[]? | select(. > 1)) = 0",
        "(.[]? | select(. > 1)) += 10",
        "(.. | select(type == \"number\")) |= . + 1",
        "select(true, true) |= (. + 1, . + 10)",
        "select(true, false, true) |= [.]",
        "select(true, true) |= empty",
        "select(false) |= 1",
        "select(empty) |= 1",
        "select(error(\"u\")) |= 1",
        "select(true, error(\"u\"), true) |= [.]",
        "(.[]? | select(.a)) |= 1",
        "empty |= 1",
        "getpath([\"a\"]) |= empty",
        "walk(if type == \"number\" then . + 1 else . end)",
        "flatten?",
        "[splits(\"x\")?]",
        "label $out | select(true, break $out, true)",
        "def select(f): 1; select(false)",
        "def empty: 2; [empty]",
        "def empty: 2; [.[]? | values]",
    ];

    #[test]
    fn the_natives_give_what_jaqs_definitions_give() {
        let inputs: Vec<Value> = serde_json::from_str(INPUTS).unwrap();
        let jaq = jaq_defs();
        for filter in FILTERS {
            for input in &inputs {
                let (ours, _) = outputs(filter, input, meter::prelude());
                let (theirs, _) = outputs(filter, input, &jaq);
                assert_eq!(ours, theirs, "{filter} on {input}");
            }
        }
    }

    #[test]
    fn the_natives_are_the_ones_called() {
        // Every caller, the standard definitions' included: dropping values
        // through them takes fewer steps than through jaq's definitions.
        let input = json!([0, null, 1, null, 2]);
        let jaq = jaq_defs();
        for filter in ["[.[] | select(. == 3)]", "[.[] | values]", "[.[] | empty]"] {
            let (ours, our_steps) = outputs(filter, &input, meter::prelude());
            let (theirs, their_steps) = outputs(filter, &input, &jaq);
            assert_eq!(ours, theirs, "{filter}");
            assert!(
                our_steps < their_steps,
                "{filter}: {our_steps} steps, jaq's {their_steps}"
            );
        }
        let replaced = |def: &&Def<&str>| super::REPLACED.contains(&(def.name, def.args.len()));
        assert_eq!(meter::prelude().iter().filter(replaced).count(), 0);
        assert_eq!(jaq.iter().filter(replaced).count(), super::REPLACED.len());
    }

    #[test]
    fn an_update_applies_itself_for_each_of_many_true_outputs() {
        let filter = "select(range(20000) | . % 2 == 0) |= . + 1";
        let (ours, _) = outputs(filter, &json!(0), meter::prelude());
        assert_eq!(ours, ["10000"]);
        assert_eq!(ours, outputs(filter, &json!(0), &jaq_defs()).0);
    }
}
