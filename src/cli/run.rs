//! `run`: the servers listed, the model's calls run and answered, turn
//! after turn. Every input is read and checked before anything is sent;
//! each turn's output is written as the turn ends; SIGINT and SIGTERM stop
//! the run without losing what finished (see `signals`).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mcp_adapters::exec::{StateKey, TurnState};
use mcp_adapters::store::{Renewing, TurnHold};
use mcp_adapters::{
    Error, ErrorKind, ExecOptions, Execution, ListOptions, Listing, Policy, Provider, Result,
    ResultOptions, Source, Status,
};
use serde_json::{Value, json};

use super::commands::{block_on, stream_framing, telemetry, to_json};
use super::input::{option_pairs, read_bytes, read_json, registry};
use super::output::Output;
use super::report::{
    self, kept_if_suspended, server_states, summarize, summarize_hosted, summarize_programs,
};
use super::signals::Signals;
use super::{NamingArgs, RunArgs, asks, decisions, demo, live, state, stored};

/// Runs the command: its output on stdout, errors on stderr, and the exit
/// status (0, 1 for an error, 3 when a turn is suspended, 130 or 143 when
/// SIGINT or SIGTERM stopped it).
pub fn main(args: &RunArgs) -> ExitCode {
    match main_run(args) {
        Ok(status) => status,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// One turn to play, its input read whole before anything starts.
enum Step {
    /// No server and no response: the bundled demo's recorded response.
    Demo(Value),
    /// A recorded stream (`--stream`).
    Stream { file: String, bytes: Vec<u8> },
    /// A suspended turn (`--resume`), from a file or claimed in a store.
    Resume {
        file: PathBuf,
        state: Box<TurnState>,
        claimed: Option<Box<stored::Claim>>,
    },
    /// A model response.
    Response { path: String, response: Value },
}

/// Reads every input: the responses (each parsed), the stream, the
/// suspended turn's state; `-` (stdin) may be given once. A suspended turn
/// comes first, the responses after it.
fn read_steps(
    args: &RunArgs,
    live: bool,
    provider: &Provider,
    key: Option<&StateKey>,
) -> Result<Vec<Step>> {
    if args.response.iter().filter(|r| *r == "-").count() > 1 {
        return Err(Error::new(
            ErrorKind::Input,
            "`-` (stdin) is given as a RESPONSE more than once: stdin holds one response",
        ));
    }
    let mut steps = Vec::with_capacity(args.response.len() + 1);
    if let Some(path) = &args.resume {
        // A store's turn is claimed once the store is open.
        if stored::url_of(Some(path)).is_none() {
            let state = state::read(path, key)?;
            steps.push(Step::Resume {
                file: path.clone(),
                state: Box::new(state),
                claimed: None,
            });
        }
    } else if !args.stream.stream.is_empty() {
        if args.stream.stream.iter().filter(|f| *f == "-").count() > 1 {
            return Err(Error::new(
                ErrorKind::Input,
                "`-` (stdin) is given as a --stream more than once: stdin holds one stream",
            ));
        }
        for file in &args.stream.stream {
            steps.push(Step::Stream {
                file: file.clone(),
                bytes: read_bytes(file)?,
            });
        }
    } else if args.response.is_empty() {
        if live {
            return Err(Error::new(
                ErrorKind::Input,
                "give the model RESPONSE (or --stream FILE) to run against the servers",
            ));
        }
        steps.push(Step::Demo(demo::response(provider.id())?));
    }
    for path in &args.response {
        steps.push(Step::Response {
            path: path.clone(),
            response: read_json(path)?,
        });
    }
    Ok(steps)
}

impl Step {
    /// What the turn plays, as the command line named it.
    fn name(&self) -> String {
        match self {
            Step::Demo(_) => "the bundled response".to_owned(),
            Step::Stream { file, .. } => file.clone(),
            Step::Resume { file, .. } => file.display().to_string(),
            Step::Response { path, .. } => path.clone(),
        }
    }
}

/// A note for the `later` turns not played, if any, from the one named `first`.
fn not_played(first: Option<&str>, later: usize, why: &str) {
    if later == 0 {
        return;
    }
    let from = first.map(|f| format!(", from {f} on")).unwrap_or_default();
    eprintln!("note: {why}; the {later} later turn(s) were not played{from}");
}

/// What every turn of the run shares.
struct Run<'a> {
    args: &'a RunArgs,
    provider: &'a Provider,
    list: ListOptions,
    options: ExecOptions,
    asks: asks::Asks,
    output: Output,
    signals: Signals,
    /// Several turns: each output says which it is and where the servers are.
    many: bool,
    /// The key that binds the `--suspend` document to its content.
    key: Option<StateKey>,
    /// The store of `--suspend URL` or `--resume URL`.
    stored: Option<stored::Stored>,
}

fn main_run(args: &RunArgs) -> Result<ExitCode> {
    let _telemetry = telemetry(&args.live)?;
    let registry = registry(args.specs.specs.as_deref())?;
    let provider = registry.get(&args.provider)?;
    let (list, options) = options(args)?;
    stored::check(args)?;
    let asks = asks::read(&args.asks, suspends(args))?;
    let rules = policy(args)?;
    let live_given = !args.live.servers.is_empty() || args.live.config.is_some();
    let key = state::key(args)?;
    let mut steps = read_steps(args, live_given, provider, key.as_ref())?;
    block_on(async {
        let stored = stored::open(args, key.as_ref()).await?;
        let claimed = match (&stored, stored::url_of(args.resume.as_deref())) {
            (Some(store), Some(url)) => match claim(store, args, url).await? {
                Some(step) => {
                    steps.insert(0, step);
                    // Let go whatever happens next (a turn kept at its end
                    // is let go already, and letting go again changes nothing).
                    match &steps[0] {
                        Step::Resume {
                            claimed: Some(claim),
                            ..
                        } => Some(claim.hold.clone()),
                        _ => None,
                    }
                }
                None => return Ok(ExitCode::from(stored::NONE_READY)),
            },
            _ => None,
        };
        let shared = Shared {
            list,
            options,
            asks,
            key,
            stored,
        };
        // The lease is renewed from the claim on, while the servers start.
        let _renewing = claimed.as_ref().map(TurnHold::renewing);
        let ran = start_and_play(args, provider, rules, shared, steps).await;
        if let Some(hold) = claimed {
            let _ = hold.release().await;
        }
        ran
    })?
}

/// Whether a turn that waits is suspended (`--suspend`, or `--resume URL`).
fn suspends(args: &RunArgs) -> bool {
    args.suspend.is_some() || stored::url_of(args.resume.as_deref()).is_some()
}

/// The policy of `--policy` (allow all without it), with `--programmatic`
/// and its kin added to its callers rule.
fn policy(args: &RunArgs) -> Result<live::Rules> {
    let (policy, bindings) = match &args.policy {
        Some(path) => {
            let rules = live::read_policy(path)?;
            (rules.policy.unwrap_or_else(Policy::new), rules.bindings)
        }
        None => {
            eprintln!("note: no --policy given: every call to an offered tool is allowed");
            (Policy::allow_all(), Vec::new())
        }
    };
    // --programmatic and its kin add to the policy's callers rule.
    let policy = super::commands::open_to_code(policy, &args.programmatic)?;
    Ok(live::Rules {
        policy: Some(policy),
        bindings,
    })
}

/// The turn of `--resume URL` claimed, as the first step; `None` (said on
/// stderr) when no turn is ready.
async fn claim(store: &stored::Stored, args: &RunArgs, url: &str) -> Result<Option<Step>> {
    let Some(claim) = store.claim(args.turn.as_deref()).await? else {
        eprintln!(
            "note: no turn in {} is ready: each waits for a decision not recorded yet (`mcp-adapters turns list {}`), or a worker holds it",
            store.shown, store.shown
        );
        return Ok(None);
    };
    eprintln!("resume: turn {} of {}", claim.turn, store.shown);
    Ok(Some(Step::Resume {
        file: PathBuf::from(stored::shown(url)),
        state: Box::new(claim.state.clone()),
        claimed: Some(Box::new(claim)),
    }))
}

/// What every turn shares, made before the servers start.
struct Shared {
    list: ListOptions,
    options: ExecOptions,
    asks: asks::Asks,
    key: Option<StateKey>,
    stored: Option<stored::Stored>,
}

/// Starts the servers and plays the turns.
async fn start_and_play(
    args: &RunArgs,
    provider: &Provider,
    rules: live::Rules,
    shared: Shared,
    steps: Vec<Step>,
) -> Result<ExitCode> {
    let many = steps.len() > 1;
    let output = Output::new(args.ndjson, many);
    let closing = output.clone();
    let signals = Signals::listen(move || closing.close())?;
    let run = Run {
        args,
        provider,
        list: shared.list,
        options: shared.options,
        asks: shared.asks,
        output,
        signals,
        many,
        key: shared.key,
        stored: shared.stored,
    };
    let source = tokio::select! {
        source = start(args, rules, &run.asks) => source?,
        caught = run.signals.stopped() => return Ok(caught.status()),
    };
    let played = run.play(&source, steps).await;
    run.output.close();
    source.close().await;
    let suspended = played?;
    Ok(match run.signals.caught() {
        Some(caught) => caught.status(),
        None if suspended => ExitCode::from(3),
        None => ExitCode::SUCCESS,
    })
}

/// The limits of `--select-steps`, `--select-time-ms`, `--select-output-bytes` and
/// `--select-memory-bytes`.
fn select_limits(args: &super::SelectLimitArgs) -> mcp_adapters::SelectLimits {
    let mut limits = mcp_adapters::SelectLimits::default();
    if let Some(steps) = args.select_steps {
        limits = limits.steps(steps);
    }
    if let Some(ms) = args.select_time_ms {
        limits = limits.time(std::time::Duration::from_millis(ms));
    }
    if let Some(bytes) = args.select_output_bytes {
        limits = limits.output_bytes(bytes);
    }
    if let Some(bytes) = args.select_memory_bytes {
        limits = limits.memory(bytes);
    }
    limits
}

/// The listing and execution options of the flags.
fn options(args: &RunArgs) -> Result<(ListOptions, ExecOptions)> {
    let mut list = ListOptions::new();
    if let Some(mode) = args.strict {
        list = list.strict(mode.into());
    }
    let mut results = ResultOptions::new();
    for (name, value) in option_pairs(&args.options)? {
        list = list.option(name, value);
        results = results.option(name, value);
    }
    if let Some(tokens) = args.max_result_tokens {
        results = results.max_result_tokens(tokens);
    }
    if let Some(tokens) = args.max_turn_tokens {
        results = results.max_turn_tokens(tokens);
    }
    if let Some(argument) = &args.select.select {
        list = list.select(argument);
    }
    results = results.select_limits(select_limits(&args.select_limits));
    list = list.read_on(results.budget());
    let mut options = ExecOptions::new()
        .max_concurrency(args.max_concurrency.unwrap_or(0))
        .results(results);
    if let Some(check) = args.output_schema {
        options = options.output_schema(check.into());
    }
    if let Some(calls) = args.max_server_concurrency {
        options = options.max_concurrency_per_server(calls);
    }
    if let Some(ms) = args.call_timeout {
        options = options.call_timeout(Duration::from_millis(ms));
    }
    options =
        options.suspend(args.suspend.is_some() || stored::url_of(args.resume.as_deref()).is_some());
    Ok((list, options))
}

/// The servers of `--server` / `--config`, started (the first listing
/// checks that they did), or the bundled demo server.
async fn start(args: &RunArgs, rules: live::Rules, asks: &asks::Asks) -> Result<Source> {
    let no_filters = NamingArgs {
        hub: false,
        prefix: args.prefix.clone(),
        allow: Vec::new(),
        deny: Vec::new(),
        refuse_hidden: args.refuse_hidden,
        bind: args.bind.clone(),
    };
    let policy = rules.policy.clone().unwrap_or_else(Policy::allow_all);
    let mut bindings = live::parse_binds(&args.bind)?;
    bindings.extend(rules.bindings.iter().cloned());
    let source = live::source(&args.live, &no_filters, rules, args.validate, asks).await?;
    match source {
        Some(source) => Ok(source),
        None => {
            if !args.response.is_empty() || args.resume.is_some() || !args.stream.stream.is_empty()
            {
                eprintln!("note: no --server or --config: running against the bundled demo server");
            }
            let demo = demo::Demo {
                policy,
                validate: args.validate,
                bindings,
            };
            demo.server(&asks.handlers, asks.suspend)
        }
    }
}

impl Run<'_> {
    /// Plays the turns, each written as it ends; `Ok(true)` when the last
    /// one played is suspended. A turn that halts or is suspended ends the
    /// run, as a signal does.
    async fn play(&self, source: &Source, steps: Vec<Step>) -> Result<bool> {
        let total = steps.len();
        let Some(mut listing) = self.listing(source).await? else {
            return Ok(false);
        };
        // The servers started, as the first listing says.
        live::check_started(source, &listing.report.toolset, &self.args.live).await?;
        super::shown::warn_of(&listing.report.toolset);
        // Every response is read as one before the first turn runs, and
        // each decision is bound to the one turn whose call it names.
        let mut calls = Vec::with_capacity(steps.len());
        for step in &steps {
            calls.push(self.calls_of(step, &listing)?);
        }
        let mut per_turn = decisions::options(self.args, &self.options, &calls)?.into_iter();
        self.output.start();
        // What each turn is, for the notes on the turns not played.
        let names: Vec<String> = steps.iter().map(Step::name).collect();
        let unplayed = |from: usize| names.get(from).map(String::as_str);
        let mut taint = BTreeSet::new();
        for (i, step) in steps.into_iter().enumerate() {
            let turn = i + 1;
            if i > 0 {
                match self.listing(source).await? {
                    Some(again) => listing = again,
                    None => {
                        not_played(unplayed(i), total - i, "a signal stopped the run");
                        return Ok(false);
                    }
                }
            }
            let options = per_turn.next().unwrap_or_else(|| self.options.clone());
            let run = self
                .step(source, &listing, (step, options), turn, &mut taint)
                .await?;
            taint.extend(run.ran_servers.iter().cloned());
            let later = total - turn;
            match run.status {
                Status::Suspended => {
                    not_played(unplayed(turn), later, &format!("turn {turn} is suspended"));
                    if later > 0 {
                        eprintln!(
                            "note: to go on, resume the turn and give the later responses after it: --resume FILE RESPONSE..."
                        );
                    }
                    return Ok(true);
                }
                _ if self.signals.caught().is_some() => {
                    not_played(unplayed(turn), later, "a signal stopped the run");
                    return Ok(false);
                }
                Status::Halt => {
                    not_played(unplayed(turn), later, &format!("turn {turn} halted"));
                    return Ok(false);
                }
                _ => {}
            }
        }
        Ok(false)
    }

    /// The listing for the next turn, or `None` when a signal stops the run first.
    async fn listing(&self, source: &Source) -> Result<Option<Listing>> {
        if self.signals.caught().is_some() {
            return Ok(None);
        }
        tokio::select! {
            listing = source.tools(self.provider, &self.list) => listing.map(Some),
            _ = self.signals.stopped() => Ok(None),
        }
    }

    /// The calls of `step` a decision may name; a response that does not
    /// read as one of the provider's is an error naming its file.
    fn calls_of(&self, step: &Step, listing: &Listing) -> Result<decisions::TurnCalls> {
        let provider = self.provider;
        Ok(match step {
            Step::Response { path, response } => decisions::TurnCalls::of(
                &provider
                    .extract_calls(response, listing)
                    .map_err(|e| e.with_file(path))?,
            ),
            Step::Demo(response) => decisions::TurnCalls::extracted(provider, listing, response),
            Step::Resume { state, .. } => decisions::TurnCalls::waiting(state),
            Step::Stream { bytes, .. } => {
                let spec = provider.stream(listing)?.framing_used();
                let framing = stream_framing(&self.args.stream, bytes, spec);
                decisions::TurnCalls::streamed(provider, listing, framing, bytes)?
            }
        })
    }

    /// A turn's options with its state's decisions and taint taken in and,
    /// in a store, its checkpoints kept under a lease: the hold, and the
    /// renewal of a lease taken for this turn (a claimed turn's is renewed
    /// since it was claimed).
    fn held(
        &self,
        step: &Step,
        options: ExecOptions,
        taint: &mut BTreeSet<String>,
    ) -> (ExecOptions, Option<TurnHold>, Option<Renewing>) {
        let mut options = options;
        if let Step::Resume { state, claimed, .. } = step {
            taint.extend(state.taint().iter().cloned());
            decisions::announce(self.args, state);
            if let Some(claim) = claimed {
                options = stored::apply(&claim.decisions, state, options);
            }
        }
        // In a store, the turn's state is kept as it goes, under a lease
        // renewed while the turn runs.
        let (hold, renewing) = match step {
            // Renewed since it was claimed.
            Step::Resume {
                claimed: Some(claim),
                ..
            } => (Some(claim.hold.clone()), None),
            _ => {
                let hold = self.stored.as_ref().map(stored::Stored::hold);
                let renewing = hold.as_ref().map(TurnHold::renewing);
                (hold, renewing)
            }
        };
        if let Some(hold) = &hold {
            options = hold.options(options);
        }
        (options, hold, renewing)
    }

    /// Plays one turn with its options and writes its output; its taint
    /// grows with a resumed turn's.
    async fn step(
        &self,
        source: &Source,
        listing: &Listing,
        (step, options): (Step, ExecOptions),
        turn: usize,
        taint: &mut BTreeSet<String>,
    ) -> Result<Execution> {
        let (options, hold, _renewing) = self.held(&step, options, taint);
        let hold = hold.as_ref();
        let options = options
            .taint(taint.iter().cloned())
            .interrupt(self.signals.interrupt().clone());
        let provider = self.provider;
        let (run, extra) = match step {
            Step::Response { path, response } => {
                let run = source
                    .execute_tool_calls(provider, &response, listing, &options)
                    .await?;
                (run, self.many.then(|| ("response", json!(path))))
            }
            Step::Resume { file, state, .. } => {
                let run = source
                    .resume_turn(provider, *state, listing, &options)
                    .await?;
                let file = file.display().to_string();
                (run, self.many.then(|| ("resumed", json!(file))))
            }
            Step::Demo(response) => {
                let run = source
                    .execute_tool_calls(provider, &response, listing, &options)
                    .await?;
                let mut value = self.reported(&run, listing, turn, hold).await?;
                if let Value::Object(map) = &mut value {
                    map.insert("tools".into(), json!(listing.tools));
                    map.insert("response".into(), response);
                }
                self.output.turn(&value);
                return Ok(run);
            }
            Step::Stream { file, bytes } => {
                let spec = provider.stream(listing)?.framing_used();
                let framing = stream_framing(&self.args.stream, &bytes, spec);
                let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(bytes)]);
                let streamed = source
                    .execute_stream(provider, chunks, listing, &options.framing(framing))
                    .await
                    .map_err(|e| e.with_file(&file))?;
                let mut value = self
                    .reported(&streamed.execution, listing, turn, hold)
                    .await?;
                if let Value::Object(map) = &mut value {
                    map.insert("message".into(), streamed.message);
                    if let Some(error) = &streamed.error {
                        map.insert("stream_error".into(), json!(format!("{error:#}")));
                    }
                }
                self.output.turn(&value);
                return Ok(streamed.execution);
            }
        };
        let mut value = self.reported(&run, listing, turn, hold).await?;
        if let (Some((key, input)), Value::Object(map)) = (extra, &mut value) {
            map.insert(key.into(), input);
            map.insert("servers".into(), server_states(source));
        }
        self.output.turn(&value);
        Ok(run)
    }

    /// One turn's output, with what it says on stderr: what was asked and
    /// answered, the summary, the provider's hosted calls; a suspended
    /// turn's state in its `--suspend` file (with its MAC under the key).
    /// A turn in a store is kept there (waiting, or ended) and let go.
    async fn reported(
        &self,
        run: &Execution,
        listing: &Listing,
        turn: usize,
        hold: Option<&TurnHold>,
    ) -> Result<Value> {
        self.asks.report(&run.calls);
        summarize(run, self.many.then_some(turn));
        summarize_hosted(run);
        summarize_programs(run);
        match (hold, &self.stored) {
            (Some(hold), Some(store)) => {
                let kept = hold.finish(run).await?;
                if let (Some(id), Some(_)) = (kept, &run.suspended) {
                    report::waiting_lines(run);
                    store.waits_note(&id);
                }
            }
            _ => kept_if_suspended(run, self.args.suspend.as_deref(), self.key.as_ref())?,
        }
        let mut out = to_json(run)?;
        if let Value::Object(map) = &mut out {
            map.insert("report".into(), to_json(&listing.report)?);
            // What the next request carries on for the programs (a container).
            let request = self.provider.program_request(&run.programs)?;
            if !request.is_empty() {
                map.insert("request".into(), Value::Object(request));
            }
        }
        Ok(out)
    }
}
