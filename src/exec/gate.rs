//! Who may be in flight on a server at once: a call that must run alone
//! there (so that a question its server sends can only be its own), and the
//! turn's bound on calls per server.
//!
//! Every call passes its server's gate before it is sent and holds the pass
//! until it has ended: a call that runs alone waits for the calls in flight
//! on its server to end, and the calls after it wait for it (first come,
//! first served, so that neither starves). Calls to other servers are never
//! held up.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{
    OwnedRwLockReadGuard, OwnedRwLockWriteGuard, OwnedSemaphorePermit, RwLock, Semaphore,
};

/// One gate per server, for every turn of a source.
#[derive(Debug, Default)]
pub(super) struct Gates {
    servers: Mutex<HashMap<String, Arc<RwLock<()>>>>,
}

/// A call's pass through its server's gate: dropping it lets the next in.
#[derive(Debug)]
pub(super) struct Pass {
    _beside: Option<OwnedRwLockReadGuard<()>>,
    _alone: Option<OwnedRwLockWriteGuard<()>>,
    _slot: Option<OwnedSemaphorePermit>,
}

impl Gates {
    fn gate(&self, server_id: &str) -> Arc<RwLock<()>> {
        let mut servers = self
            .servers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(gate) = servers.get(server_id) {
            return gate.clone();
        }
        let gate = Arc::new(RwLock::new(()));
        servers.insert(server_id.to_owned(), gate.clone());
        gate
    }

    /// The call's pass on `server_id` beside the other calls there, when it
    /// is free now (no bound per server, no call alone there, none waiting
    /// to be); `None` when the call must wait for [`pass`](Self::pass).
    /// A pass without waiting, when none is needed; `ungated`: no call of
    /// the source ever runs alone, so the gates have nothing to keep apart.
    pub(super) fn try_pass(
        &self,
        server_id: &str,
        alone: bool,
        slots: Option<&Slots>,
        ungated: bool,
    ) -> Option<Pass> {
        if alone || slots.is_some() {
            return None;
        }
        if ungated {
            return Some(Pass {
                _beside: None,
                _alone: None,
                _slot: None,
            });
        }
        let beside = self.gate(server_id).try_read_owned().ok()?;
        Some(Pass {
            _beside: Some(beside),
            _alone: None,
            _slot: None,
        })
    }

    /// Waits for the call's turn on `server_id`: alone, or beside the other
    /// calls there, within the turn's per-server bound (`slots`).
    pub(super) async fn pass(&self, server_id: &str, alone: bool, slots: Option<&Slots>) -> Pass {
        let slot = match slots {
            Some(slots) => slots.acquire(server_id).await,
            None => None,
        };
        let gate = self.gate(server_id);
        if alone {
            Pass {
                _beside: None,
                _alone: Some(gate.write_owned().await),
                _slot: slot,
            }
        } else {
            Pass {
                _beside: Some(gate.read_owned().await),
                _alone: None,
                _slot: slot,
            }
        }
    }
}

/// One turn's bound on the calls in flight on each server.
#[derive(Debug)]
pub(super) struct Slots {
    per_server: usize,
    servers: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl Slots {
    /// At most `per_server` calls at once on each server (at least one).
    pub(super) fn new(per_server: usize) -> Self {
        Slots {
            per_server: per_server.max(1),
            servers: Mutex::default(),
        }
    }

    /// A slot on `server_id` (`None` only if its semaphore were closed,
    /// which a turn never does).
    async fn acquire(&self, server_id: &str) -> Option<OwnedSemaphorePermit> {
        let semaphore = {
            let mut servers = self
                .servers
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            servers
                .entry(server_id.to_owned())
                .or_insert_with(|| Arc::new(Semaphore::new(self.per_server)))
                .clone()
        };
        semaphore.acquire_owned().await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_alone_waits_for_the_calls_in_flight_and_holds_the_later_ones() {
        let gates = Gates::default();
        let first = gates.pass("a", false, None).await;
        let other_server = gates.pass("b", true, None).await;
        let alone = gates.pass("a", true, None);
        tokio::pin!(alone);
        assert!(futures_util::poll!(alone.as_mut()).is_pending());
        drop(first);
        let alone = alone.await;
        let later = gates.pass("a", false, None);
        tokio::pin!(later);
        assert!(futures_util::poll!(later.as_mut()).is_pending());
        drop(alone);
        later.await;
        drop(other_server);
    }

    #[tokio::test]
    async fn slots_bound_the_calls_per_server_and_no_more() {
        let gates = Gates::default();
        let slots = Slots::new(2);
        let one = gates.pass("a", false, Some(&slots)).await;
        let _two = gates.pass("a", false, Some(&slots)).await;
        let _elsewhere = gates.pass("b", false, Some(&slots)).await;
        let three = gates.pass("a", false, Some(&slots));
        tokio::pin!(three);
        assert!(futures_util::poll!(three.as_mut()).is_pending());
        drop(one);
        three.await;
    }
}
