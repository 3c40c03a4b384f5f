//! Turns in a store (`sqlite:PATH`, `postgres://...`): `run --suspend URL`
//! puts them there, `run --resume URL` claims one under a lease that the
//! worker renews, and `turns` lists them and records decisions.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use mcp_adapters::exec::{StateKey, TurnState};
use mcp_adapters::store::{self, Decided, Decision, TurnHold, TurnStore, Worker};
use mcp_adapters::{Error, ErrorKind, ExecOptions, Result};

use super::commands::block_on;
use super::{RunArgs, TurnsAction, TurnsArgs};

/// The exit status of `run --resume URL` when no turn is ready.
pub const NONE_READY: u8 = 4;

/// The store `path` names, if it names one rather than a file.
pub fn url_of(path: Option<&Path>) -> Option<&str> {
    path.and_then(Path::to_str)
        .filter(|target| store::is_store_url(target))
}

/// `url` as it may be shown: a password in it left out.
pub fn shown(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}

/// The store `run` keeps turns in, and who this worker is.
pub struct Stored {
    /// The URL as shown.
    pub shown: String,
    store: Arc<dyn TurnStore>,
    worker: Worker,
    key: Option<StateKey>,
}

/// A claimed turn: its state, the hold that keeps it, the decisions
/// recorded for its waiting calls.
pub struct Claim {
    /// The turn's id in the store.
    pub turn: String,
    pub state: TurnState,
    pub hold: TurnHold,
    pub decisions: Vec<Decided>,
}

/// Refuses flags that do not go together with a store.
pub fn check(args: &RunArgs) -> Result<()> {
    let resume = url_of(args.resume.as_deref());
    let suspend = url_of(args.suspend.as_deref());
    let refuse = |why: &str| Err(Error::new(ErrorKind::Input, why.to_owned()));
    if args.turn.is_some() && resume.is_none() {
        return refuse("--turn names a turn of the --resume store: give --resume URL with it");
    }
    for (given, flag) in [
        (args.lease.is_some(), "--lease"),
        (args.worker.is_some(), "--worker"),
    ] {
        if given && resume.is_none() && suspend.is_none() {
            return refuse(&format!(
                "{flag} is for a turn in a store: give --suspend URL or --resume URL with it"
            ));
        }
    }
    if let (Some(resume), Some(suspend)) = (resume, args.suspend.as_deref())
        && Some(resume) != suspend.to_str()
    {
        return refuse(
            "--resume URL puts a turn that waits again back in its store: leave --suspend out, or give the same URL",
        );
    }
    if let Some(seconds) = args.lease
        && !(seconds.is_finite() && seconds >= 0.0)
    {
        return refuse("--lease is a number of seconds, 0 or more");
    }
    Ok(())
}

/// The store of `--resume URL` or `--suspend URL`, opened, or `None`.
pub async fn open(args: &RunArgs, key: Option<&StateKey>) -> Result<Option<Stored>> {
    let resume = url_of(args.resume.as_deref());
    let Some(url) = resume.or(url_of(args.suspend.as_deref())) else {
        return Ok(None);
    };
    let store = store::open(url).await?;
    let name = args.worker.clone().unwrap_or_else(|| {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "host".to_owned());
        format!("{host}:{}", std::process::id())
    });
    let lease = args
        .lease
        .map_or(store::DEFAULT_LEASE, Duration::from_secs_f64);
    Ok(Some(Stored {
        shown: shown(url),
        store,
        worker: Worker::new(name).lease(lease),
        key: key.cloned(),
    }))
}

impl Stored {
    /// Claims the turn `turn`, or the oldest ready one; `None` when none
    /// is ready. A document that does not read is let go, and the error
    /// names the turn.
    pub async fn claim(&self, turn: Option<&str>) -> Result<Option<Claim>> {
        let Some(claimed) = self.store.claim(&self.worker, turn).await? else {
            return Ok(None);
        };
        let id = claimed.lease.turn().to_owned();
        let read = match &self.key {
            Some(key) => TurnState::from_json_with_mac(&claimed.document, key),
            None => TurnState::from_json(&claimed.document),
        };
        let decisions = claimed.decisions.clone();
        let hold = self.hold_of(TurnHold::claimed(self.store.clone(), &self.worker, claimed));
        let state = match read {
            Ok(state) => state,
            Err(e) => {
                let _ = hold.release().await;
                return Err(Error::new(
                    e.kind(),
                    format!(
                        "turn `{}` of {}: {}",
                        mcp_adapters::toolset::escape_visible(&id),
                        self.shown,
                        e.message()
                    ),
                ));
            }
        };
        Ok(Some(Claim {
            turn: id,
            state,
            hold,
            decisions,
        }))
    }

    /// A hold for a new turn, put in the store at its first checkpoint.
    pub fn hold(&self) -> TurnHold {
        self.hold_of(TurnHold::new(self.store.clone(), &self.worker))
    }

    fn hold_of(&self, hold: TurnHold) -> TurnHold {
        match self.key.clone() {
            Some(key) => hold.encode_with(move |state| state.to_json_with_mac(&key)),
            None => hold,
        }
    }

    /// The note for a turn that waits in the store.
    pub fn waits_note(&self, turn: &str) {
        eprintln!(
            "note: the turn is suspended; it waits in {} as turn {turn}: record decisions with `mcp-adapters turns decide {} --turn {turn} ...`, and a worker (`run --resume {}`) takes it up",
            self.shown, self.shown, self.shown
        );
    }
}

/// `options` with the decisions recorded in the store, each announced on
/// stderr with what it sends.
pub fn apply(decisions: &[Decided], state: &TurnState, mut options: ExecOptions) -> ExecOptions {
    let escape = mcp_adapters::toolset::escape_visible;
    for decided in decisions {
        let waiting = state.waiting().into_iter().find(|w| {
            let name = match (&w.call_id, w.index) {
                (Some(id), _) => id.clone(),
                (None, index) => format!("#{index}"),
            };
            name == decided.call
        });
        let what = waiting.map_or_else(String::new, |w| {
            let arguments = serde_json::to_string(&w.arguments).unwrap_or_default();
            format!(
                " `{}/{}` with {}",
                escape(&w.server_id),
                escape(&w.tool),
                escape(&arguments)
            )
        });
        let call = escape(&decided.call);
        match &decided.decision {
            Decision::Approve => {
                eprintln!("resume: approved in the store: call {call} sends{what}");
                options = options.approve_call(&decided.call);
            }
            Decision::Deny { reason } => {
                eprintln!("resume: denied in the store: call {call}{what}");
                options = options.deny_call(&decided.call, reason);
            }
            Decision::Answer { .. } => eprintln!(
                "note: the store holds answers for call {call}; the command line answers a tool's questions with --answers only"
            ),
        }
    }
    options
}

/// `turns`: lists a store's turns, or records decisions.
pub fn turns(args: &TurnsArgs) -> ExitCode {
    match block_on(turns_action(&args.action)).and_then(|r| r) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn turns_action(action: &TurnsAction) -> Result<()> {
    match action {
        TurnsAction::List { store } => {
            let store = opened(store).await?;
            let turns = store.waiting().await?;
            let text = serde_json::to_string_pretty(&turns).map_err(|e| {
                Error::new(ErrorKind::Input, "the turns cannot be written").with_source(e)
            })?;
            println!("{text}");
            Ok(())
        }
        TurnsAction::Decide {
            store,
            turn,
            approve_calls,
            deny_calls,
            reason,
        } => {
            if approve_calls.is_empty() && deny_calls.is_empty() {
                return Err(Error::new(
                    ErrorKind::Input,
                    "nothing to decide: give --approve-call ID or --deny-call ID",
                ));
            }
            if let Some(both) = approve_calls.iter().find(|c| deny_calls.contains(c)) {
                return Err(Error::new(
                    ErrorKind::Input,
                    format!(
                        "call `{}` is both approved and denied",
                        mcp_adapters::toolset::escape_visible(both)
                    ),
                ));
            }
            let store = opened(store).await?;
            let deny = Decision::Deny {
                reason: reason.clone(),
            };
            let decisions = approve_calls
                .iter()
                .map(|c| (c, &Decision::Approve, "approved"))
                .chain(deny_calls.iter().map(|c| (c, &deny, "denied")));
            for (call, decision, said) in decisions {
                store.decide(turn, call, decision).await?;
                eprintln!(
                    "decided: call {} of turn {} is {said}",
                    mcp_adapters::toolset::escape_visible(call),
                    mcp_adapters::toolset::escape_visible(turn)
                );
            }
            Ok(())
        }
    }
}

async fn opened(url: &str) -> Result<Arc<dyn TurnStore>> {
    if !store::is_store_url(url) {
        return Err(Error::new(
            ErrorKind::Input,
            format!(
                "`{}` is not a turn store's URL: give `sqlite:PATH` or `postgres://...`",
                mcp_adapters::toolset::escape_visible(url)
            ),
        ));
    }
    store::open(url).await
}
