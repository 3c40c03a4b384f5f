//! Ratios measured in the same run: each candidate against its baseline, with
//! interleaved rounds so that load on a shared machine hits both alike.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Whether the binary runs as a benchmark (`cargo bench` passes `--bench`);
/// otherwise (`cargo test --benches`) the ratio loops only smoke-test.
pub fn full_run() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// How many rounds to time: 20 in a benchmark run, 1 as a smoke test.
pub fn rounds() -> usize {
    if full_run() { 20 } else { 1 }
}

fn time(iters: u32, f: &mut impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    start.elapsed()
}

/// Iterations of `f` that take about `target` (at least one).
fn calibrate(target: Duration, f: &mut impl FnMut()) -> u32 {
    f();
    let one = time(1, f).max(Duration::from_nanos(1));
    (target.as_nanos() / one.as_nanos()).clamp(1, 1_000_000) as u32
}

/// Median over `rounds` interleaved rounds of time(candidate) / time(baseline),
/// each side running a batch of about 20 ms.
#[allow(dead_code)] // the stdio bench uses longer batches
pub fn median_ratio<A: FnMut() -> RA, RA, B: FnMut() -> RB, RB>(
    rounds: usize,
    candidate: A,
    baseline: B,
) -> f64 {
    median_ratio_batched(rounds, Duration::from_millis(20), candidate, baseline)
}

/// [`median_ratio`] with batches of about `batch` each: longer batches for
/// work whose time varies from one run to the next (a server process's
/// garbage collection, its scheduling on a shared machine).
#[allow(dead_code)] // only some benches need longer batches
pub fn median_ratio_batched<A: FnMut() -> RA, RA, B: FnMut() -> RB, RB>(
    rounds: usize,
    batch: Duration,
    mut candidate: A,
    mut baseline: B,
) -> f64 {
    let mut a = || {
        black_box(candidate());
    };
    let mut b = || {
        black_box(baseline());
    };
    let ia = calibrate(batch, &mut a);
    let ib = calibrate(batch, &mut b);
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|round| {
            // Alternate which side goes first so that neither always runs on a warmer cache.
            let (ta, tb) = if round % 2 == 0 {
                let ta = time(ia, &mut a);
                (ta, time(ib, &mut b))
            } else {
                let tb = time(ib, &mut b);
                (time(ia, &mut a), tb)
            };
            (ta.as_secs_f64() / f64::from(ia)) / (tb.as_secs_f64() / f64::from(ib))
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

/// Median over `rounds` interleaved rounds of time(candidate) /
/// time(baseline), as [`median_ratio`], where every run of either side takes
/// an input of its own that `setup` makes before the timed part and that is
/// dropped after it (each side's output is dropped inside it).
#[allow(dead_code)] // only some benches time a run apart from its setup
pub fn median_ratio_with_setup<I, S, A, RA, B, RB>(
    rounds: usize,
    mut setup: S,
    mut candidate: A,
    mut baseline: B,
) -> f64
where
    S: FnMut() -> I,
    A: FnMut(&I) -> RA,
    B: FnMut(&I) -> RB,
{
    fn timed<I, R>(inputs: &[I], f: &mut impl FnMut(&I) -> R) -> Duration {
        let start = Instant::now();
        for input in inputs {
            black_box(f(input));
        }
        start.elapsed()
    }
    let target = Duration::from_millis(20);
    let mut iterations = |f: &mut dyn FnMut(&[I]) -> Duration| {
        let one = f(&[setup()]).max(Duration::from_nanos(1));
        (target.as_nanos() / one.as_nanos()).clamp(1, 10_000) as usize
    };
    let ia = iterations(&mut |inputs| timed(inputs, &mut candidate));
    let ib = iterations(&mut |inputs| timed(inputs, &mut baseline));
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|round| {
            let (inputs_a, inputs_b): (Vec<I>, Vec<I>) = (
                (0..ia).map(|_| setup()).collect(),
                (0..ib).map(|_| setup()).collect(),
            );
            // Alternate which side goes first so that neither always runs on a warmer cache.
            let (ta, tb) = if round % 2 == 0 {
                let ta = timed(&inputs_a, &mut candidate);
                (ta, timed(&inputs_b, &mut baseline))
            } else {
                let tb = timed(&inputs_b, &mut baseline);
                (timed(&inputs_a, &mut candidate), tb)
            };
            drop((inputs_a, inputs_b));
            (ta.as_secs_f64() / ia as f64) / (tb.as_secs_f64() / ib as f64)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

/// Prints `ratio <what>: X.XXx (goal <= G.Gx: met)`, marking a missed goal;
/// outside a benchmark run (one unoptimized round) no verdict is given.
pub fn report(what: &str, ratio: f64, goal: Option<f64>) {
    match goal {
        _ if !full_run() => println!("ratio {what}: {ratio:.2}x (smoke test, not a measurement)"),
        Some(g) if ratio > g => println!("ratio {what}: {ratio:.2}x (goal <= {g}x: MISSED)"),
        Some(g) => println!("ratio {what}: {ratio:.2}x (goal <= {g}x: met)"),
        None => println!("ratio {what}: {ratio:.2}x"),
    }
}
