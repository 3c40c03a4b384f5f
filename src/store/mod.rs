//! Durable turns kept in a database that many workers share.
//!
//! A suspended turn's [`TurnState`] document is what workers pass around;
//! a [`TurnStore`] keeps it with the few columns a fleet needs to share it
//! safely: the turn's version (each [checkpoint](TurnStore::keep) is a
//! compare-and-set on it), the worker that holds the turn and until when
//! (its lease, which the worker [renews](TurnStore::renew)), what the turn
//! waits for, and the decisions (approvals, answers) recorded for its
//! waiting calls. A turn is resumed only by the worker holding its lease,
//! and a worker whose lease ran out or was taken over can keep no more
//! checkpoints, so it sends nothing more (a request goes out only once the
//! checkpoint that says so is kept: see
//! [`ExecOptions::checkpoint`](crate::exec::ExecOptions::checkpoint)).
//!
//! The store does not read the document: it keeps its bytes (plain JSON,
//! or bound to its content with a [`StateKey`](crate::exec::StateKey)).
//! Every time a lease is compared with the present, the database's clock
//! is the one read, never the worker's.
//!
//! [`SqlStore`] keeps turns in SQLite (feature `sqlite`: embedded, the
//! default on one machine) or PostgreSQL (feature `postgres`: a fleet),
//! chosen by the URL given to [`open`]; it creates and migrates its own
//! tables. [`TurnHold`] runs a turn against any store: it serves
//! the turn's checkpoints, renews the lease while the turn runs, and keeps
//! the turn's end. See `docs/workers.md`.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::exec::{BoxFuture, TurnState, Wait};

mod hold;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;

pub use hold::{Renewing, TurnHold};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use sql::SqlStore;

/// How long a lease lasts unless the worker says otherwise: a worker renews
/// it every third of that while its turn runs.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// The store behind `url`: `sqlite:PATH` (the file is created when it does
/// not exist; `sqlite::memory:` for one process's memory) with the `sqlite`
/// feature, `postgres://...` (or `postgresql://`) with the `postgres`
/// feature. Its tables are created or migrated first.
///
/// # Errors
///
/// [`ErrorKind::Input`] for a URL of another scheme, or of a backend this
/// build leaves out; [`ErrorKind::Store`] when the database cannot be
/// reached or migrated.
pub async fn open(url: &str) -> Result<Arc<dyn TurnStore>> {
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    {
        Ok(Arc::new(SqlStore::open(url).await?))
    }
    #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
    {
        Err(Error::new(
            ErrorKind::Input,
            format!(
                "`{}` names a turn store, and this build has none (features `sqlite`, `postgres`)",
                crate::describe::escape_visible(url)
            ),
        ))
    }
}

/// Whether `target` names a store (`sqlite:`, `postgres://`,
/// `postgresql://`) rather than a file.
pub fn is_store_url(target: &str) -> bool {
    ["sqlite:", "postgres://", "postgresql://"]
        .iter()
        .any(|scheme| target.starts_with(scheme))
}

/// Durable turns shared by workers: one contract, whatever the database.
///
/// - [`put`](Self::put) a new turn, held by the worker that puts it;
/// - [`claim`](Self::claim) a turn (a named one, or the oldest ready one)
///   with a lease, [`renew`](Self::renew) it, [`release`](Self::release) it;
/// - [`keep`](Self::keep) a checkpoint: refused unless the lease is still
///   the worker's, unexpired by the database's clock, and the turn is at the
///   version the worker last kept;
/// - [`waiting`](Self::waiting) lists the turns not ended and what they
///   wait for; [`decide`](Self::decide) records an approval, a denial or an
///   answer for a waiting call, without resuming the turn;
/// - [`expired`](Self::expired) lists the turns whose lease ran out.
///
/// A turn is ready when no worker holds it and it is either waiting with
/// every decision it needs recorded (a call waiting for a task or for the
/// resumption alone needs none), or was left running by a worker whose lease
/// ran out. A turn waiting for a decision not recorded yet is never ready:
/// it is left alone, never denied.
pub trait TurnStore: Send + Sync + std::fmt::Debug {
    /// Puts a new turn, held by `worker`'s new lease, at version 1.
    fn put<'a>(&'a self, worker: &'a Worker, turn: &'a Checkpoint) -> BoxFuture<'a, Result<Lease>>;

    /// Claims the turn `turn` (whether or not its decisions are all
    /// recorded), or without one the oldest ready turn, for `worker`, with
    /// the decisions recorded for its waiting calls. `Ok(None)` when no
    /// turn is ready.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Held`] when another worker's lease holds `turn`;
    /// [`ErrorKind::Input`] when there is no such turn, or it has ended.
    fn claim<'a>(
        &'a self,
        worker: &'a Worker,
        turn: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<Claimed>>>;

    /// Extends `lease` by its length, from the database's present.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseLost`] when the lease ran out or another worker
    /// holds the turn.
    fn renew<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<()>>;

    /// Keeps `turn` as the turn's checkpoint: a compare-and-set on the
    /// version `lease` last kept, which it then holds.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseLost`] when the lease ran out, another worker
    /// holds the turn, or the turn moved on from the lease's version.
    fn keep<'a>(&'a self, lease: &'a Lease, turn: &'a Checkpoint) -> BoxFuture<'a, Result<()>>;

    /// Lets go of the turn, which another worker may claim at once.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseLost`] when the lease is no longer the worker's.
    fn release<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<()>>;

    /// The turns not ended, oldest first, with what they wait for.
    fn waiting(&self) -> BoxFuture<'_, Result<Vec<WaitingTurn>>>;

    /// Records `decision` for the call `call` (its id, or `#INDEX`) that the
    /// turn `turn` waits on. A later decision for the same wait replaces
    /// it, until a worker has acted on it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when there is no such turn, it has ended, the
    /// call does not wait for a decision, or it waits for another kind
    /// (an answer, not an approval).
    fn decide<'a>(
        &'a self,
        turn: &'a str,
        call: &'a str,
        decision: &'a Decision,
    ) -> BoxFuture<'a, Result<()>>;

    /// The turns not ended whose lease ran out, oldest first: their workers
    /// died or stopped renewing, and any worker may claim them.
    fn expired(&self) -> BoxFuture<'_, Result<Vec<String>>>;

    /// The turn `turn` as last kept, or `None` when there is no such turn.
    fn turn<'a>(&'a self, turn: &'a str) -> BoxFuture<'a, Result<Option<StoredTurn>>>;
}

/// A worker: its name (shown in [`WaitingTurn::worker`]) and the length of
/// the leases it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worker {
    name: String,
    lease: Duration,
}

impl Worker {
    /// A worker named `name`, with leases of [`DEFAULT_LEASE`].
    pub fn new(name: impl Into<String>) -> Self {
        Worker {
            name: name.into(),
            lease: DEFAULT_LEASE,
        }
    }

    /// The length of the leases it takes (a lease of zero runs out at
    /// once: the worker can keep no checkpoint with it).
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The length of its leases.
    pub fn lease_length(&self) -> Duration {
        self.lease
    }
}

/// A worker's hold on a turn: the turn, the lease's own token, and the
/// turn's version as the worker last kept it.
#[derive(Debug)]
pub struct Lease {
    turn: String,
    token: String,
    worker: String,
    length: Duration,
    version: AtomicI64,
}

impl Lease {
    /// A lease on `turn` of `worker`, at `version` (for a [`TurnStore`]'s
    /// implementation).
    pub fn new(turn: String, worker: &Worker, version: i64) -> Self {
        Lease {
            turn,
            token: uuid::Uuid::new_v4().to_string(),
            worker: worker.name.clone(),
            length: worker.lease,
            version: AtomicI64::new(version),
        }
    }

    /// The turn's id in the store.
    pub fn turn(&self) -> &str {
        &self.turn
    }

    /// The lease's token: what the store compares to know the holder.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The worker's name.
    pub fn worker(&self) -> &str {
        &self.worker
    }

    /// How long the lease lasts from each renewal.
    pub fn length(&self) -> Duration {
        self.length
    }

    /// The lease's length in whole milliseconds, as stores count it.
    pub fn length_ms(&self) -> i64 {
        i64::try_from(self.length.as_millis()).unwrap_or(i64::MAX)
    }

    /// The turn's version as this worker last kept it.
    pub fn version(&self) -> i64 {
        self.version.load(Ordering::SeqCst)
    }

    /// Notes that the store now holds `version` (for a [`TurnStore`]'s
    /// implementation, after a checkpoint).
    pub fn set_version(&self, version: i64) {
        self.version.store(version, Ordering::SeqCst);
    }
}

/// What a checkpoint keeps: the document's bytes, the turn's status, and
/// what it waits for.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// The [`TurnState`] document, as the application wrote it.
    pub document: Vec<u8>,
    /// Where the turn is.
    pub status: TurnStatus,
    /// What it waits for.
    pub waits: Vec<WaitEntry>,
}

impl Checkpoint {
    /// `document` (written from `state`) with `state`'s waits.
    pub fn of(state: &TurnState, document: Vec<u8>, status: TurnStatus) -> Self {
        Checkpoint {
            document,
            status,
            waits: state.waiting().iter().map(WaitEntry::of).collect(),
        }
    }
}

/// Where a stored turn is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    /// A worker runs it (or ran it, and died: once its lease runs out the
    /// turn is ready again).
    Running,
    /// It waits for what [`Checkpoint::waits`] says.
    Waiting,
    /// It ended: no worker takes it up again.
    Done,
}

impl TurnStatus {
    /// The name it is stored under.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnStatus::Running => "running",
            TurnStatus::Waiting => "waiting",
            TurnStatus::Done => "done",
        }
    }

    /// The status stored under `name`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Store`] for a name no status has.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "running" => Ok(TurnStatus::Running),
            "waiting" => Ok(TurnStatus::Waiting),
            "done" => Ok(TurnStatus::Done),
            other => Err(Error::new(
                ErrorKind::Store,
                format!("a stored turn has the status `{other}`, which this library does not know"),
            )),
        }
    }
}

/// One thing a turn waits for: a call (or a hosted call's approval request).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitEntry {
    /// The call's id, or `#INDEX` for a call without one: what
    /// [`TurnStore::decide`] and [`ExecOptions::approve_call`](crate::exec::ExecOptions::approve_call) name.
    pub call: String,
    /// What it waits for: `approval`, `hosted_approval`, `input`, `task`
    /// or `resume` (as [`Wait`] is serialized).
    pub waits_for: String,
    /// Whether the turn is ready only once a decision is recorded for it
    /// (an approval, an answer); a task or the resumption alone needs none.
    pub needs_decision: bool,
    /// The [`Waiting`](crate::exec::Waiting) record, as JSON: the tool, its
    /// arguments, the questions asked.
    pub detail: Value,
}

impl WaitEntry {
    /// The entry for `waiting`.
    pub fn of(waiting: &crate::exec::Waiting) -> Self {
        let call = match &waiting.call_id {
            Some(id) => id.clone(),
            None => format!("#{}", waiting.index),
        };
        let (waits_for, needs_decision) = match &waiting.what {
            Wait::Approval => ("approval", true),
            Wait::HostedApproval => ("hosted_approval", true),
            Wait::Input { .. } => ("input", true),
            Wait::Task { .. } => ("task", false),
            Wait::Resume => ("resume", false),
        };
        WaitEntry {
            call,
            waits_for: waits_for.to_owned(),
            needs_decision,
            detail: serde_json::to_value(waiting).unwrap_or(Value::Null),
        }
    }

    /// Whether `decision` is of the kind this wait needs.
    pub fn takes(&self, decision: &Decision) -> bool {
        match decision {
            Decision::Approve | Decision::Deny { .. } => {
                matches!(self.waits_for.as_str(), "approval" | "hosted_approval")
            }
            Decision::Answer { .. } => self.waits_for == "input",
        }
    }
}

/// A decision recorded for a waiting call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// The call is approved (as [`ExecOptions::approve_call`](crate::exec::ExecOptions::approve_call)).
    Approve,
    /// The call is denied, with a reason for the model (as
    /// [`ExecOptions::deny_call`](crate::exec::ExecOptions::deny_call)).
    Deny {
        /// What the model is told.
        reason: String,
    },
    /// The answers to the tool's questions, one per question's key (an
    /// `InputResponses` object).
    Answer {
        /// The answers.
        answers: Value,
    },
}

/// A decision recorded for one of a claimed turn's waiting calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decided {
    /// The call (its id, or `#INDEX`).
    pub call: String,
    /// The decision.
    pub decision: Decision,
}

/// A claimed turn: the lease, the document as last kept, and the decisions
/// recorded for its waiting calls.
#[derive(Debug)]
pub struct Claimed {
    /// The worker's lease on the turn.
    pub lease: Lease,
    /// The document's bytes.
    pub document: Vec<u8>,
    /// The turn's status as last kept (`Running` when its last worker died).
    pub status: TurnStatus,
    /// The decisions recorded for the calls it waits on.
    pub decisions: Vec<Decided>,
}

/// A turn not ended, as [`TurnStore::waiting`] lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaitingTurn {
    /// The turn's id in the store.
    pub turn: String,
    /// Where it is.
    pub status: TurnStatus,
    /// The worker whose lease holds it now, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// Whether a worker would take it up now.
    pub ready: bool,
    /// What it waits for, each with the decision recorded for it.
    pub waits: Vec<WaitingCall>,
}

/// A wait of a [`WaitingTurn`], with its decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaitingCall {
    /// What it waits for.
    #[serde(flatten)]
    pub wait: WaitEntry,
    /// The decision recorded for it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided: Option<Decision>,
}

/// A turn as last kept ([`TurnStore::turn`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTurn {
    /// Its version: 1 when put, one more for each checkpoint.
    pub version: i64,
    /// Where it is.
    pub status: TurnStatus,
    /// The document's bytes.
    pub document: Vec<u8>,
    /// What it waits for.
    pub waits: Vec<WaitEntry>,
}
