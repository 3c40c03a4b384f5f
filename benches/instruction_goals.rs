//! The figures of `benches/instructions.rs` (run it first) as ratios against
//! their baselines, each measured in the same run, and against their goals:
//! exits with an error when a figure passes its goal by more than 10%.
//!
//! gungraun keeps each benchmark's counts in a `summary.json` beside its
//! profiles (`GUNGRAUN_SAVE_SUMMARY=json`, which `benches/README.md` sets);
//! this reads them from `target/gungraun/`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Which count of a benchmark a figure reads.
type Pick = fn(&mut Report, &str) -> Option<f64>;

/// A figure passes its goal by more than this before the check fails.
const TOLERANCE: f64 = 1.10;

/// What one benchmark counted: instructions (Callgrind's `Ir`) and, where
/// DHAT ran, the heap blocks allocated.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    instructions: Option<f64>,
    blocks: Option<f64>,
}

fn summaries(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            summaries(&path, out);
        } else if path.file_name().is_some_and(|n| n == "summary.json") {
            out.push(path);
        }
    }
}

/// A metric of a profile's totals: `{"values": {"new": n, "old": m}}`,
/// the old value there when an earlier run is kept to compare with.
fn metric(metrics: &Value, key: &str) -> Option<f64> {
    metrics[key]["values"]["new"].as_f64()
}

/// Every benchmark's counts, by `function.id` (`exec_turn.calls_100`).
fn read_counts(root: &Path) -> BTreeMap<String, Counts> {
    let mut files = Vec::new();
    summaries(root, &mut files);
    let mut counts = BTreeMap::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(summary) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let name = summary["function_name"].as_str().unwrap_or_default();
        let id = summary["id"].as_str().unwrap_or_default();
        let mut found = Counts::default();
        for profile in summary["profiles"].as_array().into_iter().flatten() {
            let total = &profile["data"]["total"]["metrics"];
            match profile["tool"].as_str() {
                Some("Callgrind") => found.instructions = metric(total, "Ir"),
                Some("DHAT") => found.blocks = metric(total, "TotalBlocks"),
                _ => {}
            }
        }
        counts.insert(format!("{name}.{id}"), found);
    }
    counts
}

struct Report {
    counts: BTreeMap<String, Counts>,
    over: Vec<String>,
    /// Benchmarks whose figure was not found (a run of only some groups).
    missing: BTreeSet<String>,
}

impl Report {
    fn get(&mut self, key: &str, pick: fn(&Counts) -> Option<f64>) -> Option<f64> {
        let found = self.counts.get(key).and_then(pick);
        if found.is_none() {
            self.missing.insert(key.to_owned());
        }
        found
    }

    fn ir(&mut self, key: &str) -> Option<f64> {
        self.get(key, |c| c.instructions)
    }

    fn blocks(&mut self, key: &str) -> Option<f64> {
        self.get(key, |c| c.blocks)
    }

    /// `(more - less) / n`: a figure per call between two runs `n` calls
    /// apart (their setup cancels out).
    fn per(&mut self, pick: Pick, more: &str, less: &str, n: f64) -> Option<f64> {
        let (more, less) = (pick(self, more), pick(self, less));
        Some((more? - less?) / n)
    }

    /// Prints a figure and its goal, and keeps it when it passes the goal
    /// by more than the tolerance.
    fn check(&mut self, what: &str, figure: Option<f64>, goal: Option<f64>, unit: &str) {
        let Some(figure) = figure else {
            println!("{what}: not counted (its benchmarks did not run)");
            return;
        };
        let verdict = match goal {
            None => String::new(),
            Some(goal) if figure <= goal => format!(" (goal <= {goal}{unit}: met)"),
            Some(goal) if figure <= goal * TOLERANCE => {
                format!(" (goal <= {goal}{unit}: not met, within 10%)")
            }
            Some(goal) => {
                let shown = if unit == "x" {
                    format!("{figure:.2}x")
                } else {
                    format!("{figure:.0}{unit}")
                };
                self.over
                    .push(format!("{}: {shown} > {goal}{unit}", what.trim_start()));
                format!(" (goal <= {goal}{unit}: NOT MET)")
            }
        };
        if unit == "x" {
            println!("{what}: {figure:.2}x{verdict}");
        } else {
            println!("{what}: {figure:.0}{unit}{verdict}");
        }
    }
}

fn main() {
    // `cargo test --benches` runs this as a test: there is nothing to read then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/gungraun/mcp-adapters/instructions");
    let mut report = Report {
        counts: read_counts(&root),
        over: Vec::new(),
        missing: BTreeSet::new(),
    };
    in_process(&mut report);
    stdio(&mut report);
    specs_and_listing(&mut report);
    event_stream(&mut report);

    if !report.missing.is_empty() {
        eprintln!(
            "\nno figure for these benchmarks (run `cargo bench --bench instructions --features rmcp,eventstream` whole first):"
        );
        for key in &report.missing {
            eprintln!("  {key}");
        }
    }
    if !report.over.is_empty() {
        eprintln!("\nfigures over their goals by more than 10%:");
        for over in &report.over {
            eprintln!("  {over}");
        }
    }
    if !report.over.is_empty() || !report.missing.is_empty() {
        std::process::exit(1);
    }
}

/// In-process calls: (turn - floor) per call, between 100 and 200 calls.
fn in_process(report: &mut Report) {
    let turn = report.per(
        Report::ir,
        "exec_turn.calls_200",
        "exec_turn.calls_100",
        100.0,
    );
    let floor = report.per(
        Report::ir,
        "exec_floor.calls_200",
        "exec_floor.calls_100",
        100.0,
    );
    let spawn = report.per(
        Report::ir,
        "exec_spawn_join.tasks_200",
        "exec_spawn_join.tasks_100",
        100.0,
    );
    let machinery = turn.zip(floor).map(|(turn, floor)| turn - floor);
    report.check(
        "in-process call through the pipeline, instructions a call",
        turn,
        None,
        "",
    );
    report.check("  reading it and shaping its answer alone", floor, None, "");
    report.check(
        "  the execution machinery (the difference)",
        machinery,
        Some(4000.0),
        "",
    );
    report.check("  a spawn and join on the same runtime", spawn, None, "");
    report.check(
        "  the machinery / a spawn and join",
        machinery.zip(spawn).map(|(m, s)| m / s),
        None,
        "x",
    );
}

/// A stdio call: the library's own share, between 25 and 50 calls.
fn stdio(report: &mut Report) {
    let through = (
        "stdio_through_library.calls_50",
        "stdio_through_library.calls_25",
    );
    let direct = ("stdio_with_rmcp.calls_50", "stdio_with_rmcp.calls_25");
    let counts: [(&str, Pick, f64); 2] = [
        ("instructions", Report::ir, 15000.0),
        ("allocations", Report::blocks, 20.0),
    ];
    for (unit, pick, goal) in counts {
        let library = report.per(pick, through.0, through.1, 25.0);
        let rmcp = report.per(pick, direct.0, direct.1, 25.0);
        report.check(
            &format!("stdio echo call through the library, {unit} a call"),
            library,
            None,
            "",
        );
        report.check("  the same call made with rmcp directly", rmcp, None, "");
        report.check(
            "  the library's own share",
            library.zip(rmcp).map(|(l, r)| l - r),
            Some(goal),
            "",
        );
    }
}

/// The first strict listing of the corpus, and loading the built-in specs.
fn specs_and_listing(report: &mut Report) {
    let baseline = report.ir("listing_baseline.handwritten");
    for id in ["openai_chat", "openai_responses"] {
        let figure = report.ir(&format!("listing_first.{id}"));
        report.check(
            &format!("first {id} listing of the corpus / the hand-written converter"),
            figure.zip(baseline).map(|(f, b)| f / b),
            Some(1.3),
            "x",
        );
    }

    // Loading the built-in specs.
    let load = report.ir("specs_load.builtin");
    let yaml = report.ir("specs_yaml.builtin");
    report.check(
        "loading and validating the built-in specs / parsing their YAML",
        load.zip(yaml).map(|(l, y)| l / y),
        Some(1.5),
        "x",
    );
}

/// Bedrock's binary event stream.
fn event_stream(report: &mut Report) {
    let library = report.ir("bedrock_assemble.library");
    let sdk = report.ir("bedrock_by_hand.aws_sdk");
    let payloads = report.ir("bedrock_payloads.payloads");
    report.check(
        "assembling Bedrock's event-stream frames / reading them with the AWS SDK's decoder",
        library.zip(sdk).map(|(l, s)| l / s),
        Some(1.0),
        "x",
    );
    report.check(
        "  the same / parsing their payloads alone",
        library.zip(payloads).map(|(l, p)| l / p),
        None,
        "x",
    );
}
