//! A worker's hold on one turn in a store: its checkpoints, its lease kept
//! alive, its end.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::{Checkpoint, Claimed, Lease, TurnStatus, TurnStore, Worker};
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{ExecOptions, Execution, Status, TurnState};

/// How a hold writes a state as a document's bytes.
type Encode = dyn Fn(&TurnState) -> Result<Vec<u8>> + Send + Sync;

/// A worker's hold on one turn in a [`TurnStore`]: it serves the turn's
/// [checkpoints](ExecOptions::checkpoint), renews the lease while the turn
/// runs, and keeps the turn's end.
///
/// A new turn ([`TurnHold::new`]) is put in the store at its first
/// checkpoint, held by the worker; a claimed one
/// ([`TurnHold::claimed`]) goes on under the claim's lease. Each
/// checkpoint is a compare-and-set: once the lease is lost (it ran out, or
/// another worker took the turn over), no checkpoint is kept, so no more
/// request goes out for the turn, and [`finish`](Self::finish) says so.
///
/// ```no_run
/// # async fn run(source: mcp_adapters::Source, provider: &mcp_adapters::Provider,
/// #     listing: &mcp_adapters::Listing) -> mcp_adapters::Result<()> {
/// use mcp_adapters::ExecOptions;
/// use mcp_adapters::exec::TurnState;
/// use mcp_adapters::store::{self, TurnHold, Worker};
///
/// let store = store::open("sqlite:turns.db").await?;
/// let worker = Worker::new("worker-1");
/// let Some(claimed) = store.claim(&worker, None).await? else {
///     return Ok(()); // no turn is ready
/// };
/// let state = TurnState::from_json(&claimed.document)?;
/// let mut options = ExecOptions::new().suspend(true);
/// for decided in &claimed.decisions {
///     if decided.decision == store::Decision::Approve {
///         options = options.approve_call(&decided.call);
///     }
/// }
/// let hold = TurnHold::claimed(store.clone(), &worker, claimed);
/// let _renewing = hold.renewing();
/// let run = source.resume_turn(provider, state, listing, &hold.options(options)).await?;
/// hold.finish(&run).await?; // waiting again, or done
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct TurnHold {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn TurnStore>,
    worker: Worker,
    encode: Box<Encode>,
    /// The lease; `None` until a new turn's first checkpoint puts it.
    lease: tokio::sync::Mutex<Option<Arc<Lease>>>,
    /// The last checkpoint kept.
    last: Mutex<Option<Checkpoint>>,
    /// Why the lease was lost, once it is.
    lost: Mutex<Option<Error>>,
}

impl std::fmt::Debug for TurnHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnHold")
            .field("worker", &self.inner.worker)
            .finish_non_exhaustive()
    }
}

impl TurnHold {
    /// A hold for a new turn, put in `store` at its first checkpoint.
    pub fn new(store: Arc<dyn TurnStore>, worker: &Worker) -> Self {
        Self::with(store, worker, None)
    }

    /// A hold on the turn `claimed` (read its document and decisions
    /// first): its end is kept even when the resumed turn keeps no
    /// checkpoint of its own.
    pub fn claimed(store: Arc<dyn TurnStore>, worker: &Worker, claimed: Claimed) -> Self {
        let hold = Self::with(store, worker, Some(Arc::new(claimed.lease)));
        *hold
            .inner
            .last
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Checkpoint {
            document: claimed.document,
            status: claimed.status,
            waits: Vec::new(),
        });
        hold
    }

    fn with(store: Arc<dyn TurnStore>, worker: &Worker, lease: Option<Arc<Lease>>) -> Self {
        TurnHold {
            inner: Arc::new(Inner {
                store,
                worker: worker.clone(),
                encode: Box::new(TurnState::to_json),
                lease: tokio::sync::Mutex::new(lease),
                last: Mutex::new(None),
                lost: Mutex::new(None),
            }),
        }
    }

    /// Writes each document with `encode` (bound to its content with a
    /// [`StateKey`](crate::exec::StateKey), say) instead of
    /// [`TurnState::to_json`]. Give it before the first checkpoint.
    #[must_use]
    pub fn encode_with(
        self,
        encode: impl Fn(&TurnState) -> Result<Vec<u8>> + Send + Sync + 'static,
    ) -> Self {
        let inner = &self.inner;
        TurnHold {
            inner: Arc::new(Inner {
                store: inner.store.clone(),
                worker: inner.worker.clone(),
                encode: Box::new(encode),
                lease: tokio::sync::Mutex::new(inner.lease.try_lock().ok().and_then(|l| l.clone())),
                last: Mutex::new(
                    inner
                        .last
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .clone(),
                ),
                lost: Mutex::new(None),
            }),
        }
    }

    /// `options` with the turn's checkpoints kept in the store.
    pub fn options(&self, options: ExecOptions) -> ExecOptions {
        let hold = self.clone();
        options.checkpoint(move |state| {
            let hold = hold.clone();
            Box::pin(async move { hold.keep(&state, TurnStatus::Running).await })
        })
    }

    /// The turn's id in the store, once it is there.
    pub async fn turn(&self) -> Option<String> {
        let lease = self.inner.lease.lock().await;
        lease.as_ref().map(|l| l.turn().to_owned())
    }

    /// Renews the lease every third of its length until the returned guard
    /// is dropped, or a renewal is refused (the lease is lost: no
    /// checkpoint is kept any more). Call it within a Tokio runtime.
    pub fn renewing(&self) -> Renewing {
        let hold = self.clone();
        let every = (self.inner.worker.lease_length() / 3).max(Duration::from_millis(10));
        let task = tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let lease = hold.inner.lease.lock().await.clone();
                let Some(lease) = lease else { continue };
                if let Err(e) = hold.inner.store.renew(&lease).await {
                    if e.kind() == ErrorKind::LeaseLost {
                        hold.note_lost(e);
                        return;
                    }
                    tracing::warn!(error = %e, "a turn's lease could not be renewed");
                }
            }
        });
        Renewing(task)
    }

    /// Keeps `state` as the turn's checkpoint, with `status`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseLost`] once the lease is lost; the document's or
    /// the store's errors.
    pub async fn keep(&self, state: &TurnState, status: TurnStatus) -> Result<()> {
        let checkpoint = Checkpoint::of(state, (self.inner.encode)(state)?, status);
        self.keep_checkpoint(checkpoint).await
    }

    async fn keep_checkpoint(&self, checkpoint: Checkpoint) -> Result<()> {
        if let Some(e) = self.lost() {
            return Err(e);
        }
        let mut lease = self.inner.lease.lock().await;
        let kept = match lease.as_ref() {
            Some(held) => self.inner.store.keep(held, &checkpoint).await,
            None => match self.inner.store.put(&self.inner.worker, &checkpoint).await {
                Ok(put) => {
                    *lease = Some(Arc::new(put));
                    Ok(())
                }
                Err(e) => Err(e),
            },
        };
        match kept {
            Ok(()) => {
                *self
                    .inner
                    .last
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(checkpoint);
                Ok(())
            }
            Err(e) => {
                if e.kind() == ErrorKind::LeaseLost {
                    self.note_lost(e.clone());
                }
                Err(e)
            }
        }
    }

    fn note_lost(&self, e: Error) {
        let mut lost = self
            .inner
            .lost
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        lost.get_or_insert(e);
    }

    /// Why the lease was lost, once it is.
    pub fn lost(&self) -> Option<Error> {
        self.inner
            .lost
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Keeps the turn's end and releases it: a suspended turn waits again
    /// (for what [`Execution::waiting`] lists), any other ends. `Ok(None)`
    /// when the turn never reached the store (it kept no checkpoint);
    /// otherwise its id.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseLost`] when the lease was lost while the turn ran:
    /// another worker holds the turn, and this worker's answers are not
    /// the turn's; the store's errors.
    pub async fn finish(&self, run: &Execution) -> Result<Option<String>> {
        if let Some(e) = self.lost() {
            return Err(e);
        }
        match (&run.status, &run.suspended) {
            (Status::Suspended, Some(state)) => self.keep(state, TurnStatus::Waiting).await?,
            _ => {
                let last = self
                    .inner
                    .last
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                // A new turn that kept no checkpoint never reached the store.
                let Some(mut last) = last else {
                    return Ok(None);
                };
                last.status = TurnStatus::Done;
                last.waits.clear();
                self.keep_checkpoint(last).await?;
            }
        }
        let lease = self.inner.lease.lock().await.clone();
        let Some(lease) = lease else { return Ok(None) };
        self.inner.store.release(&lease).await?;
        Ok(Some(lease.turn().to_owned()))
    }

    /// Lets go of the turn as it was last kept (a worker that stops before
    /// its turn ends).
    ///
    /// # Errors
    ///
    /// As [`TurnStore::release`].
    pub async fn release(&self) -> Result<()> {
        let lease = self.inner.lease.lock().await.clone();
        match lease {
            Some(lease) => self.inner.store.release(&lease).await,
            None => Ok(()),
        }
    }
}

/// Renews a [`TurnHold`]'s lease until dropped.
#[derive(Debug)]
pub struct Renewing(tokio::task::JoinHandle<()>);

impl Drop for Renewing {
    fn drop(&mut self) {
        self.0.abort();
    }
}
