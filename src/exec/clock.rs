//! A call's server time: a deadline that stops while the application
//! answers what the server asked, so that `call_timeout` bounds the server
//! and `input_timeout` the person (or model) answering.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// The deadline of one request to a server, which pauses while a question it
/// asked is being answered.
#[derive(Debug)]
pub(super) struct CallClock {
    state: watch::Sender<ClockState>,
}

#[derive(Debug, Clone, Copy)]
struct ClockState {
    deadline: Instant,
    /// Questions being answered right now, and since when the first one.
    paused: usize,
    since: Instant,
}

impl CallClock {
    /// A clock that runs out `timeout` from now.
    pub(super) fn new(timeout: Duration) -> Arc<Self> {
        let now = Instant::now();
        let deadline = now
            .checked_add(timeout)
            .unwrap_or(now + Duration::from_secs(86_400 * 365));
        Arc::new(CallClock {
            state: watch::Sender::new(ClockState {
                deadline,
                paused: 0,
                since: now,
            }),
        })
    }

    /// Stops the clock until the guard is dropped; the time it was stopped
    /// is added to the deadline.
    pub(super) fn pause(self: &Arc<Self>) -> Paused {
        self.state.send_modify(|s| {
            if s.paused == 0 {
                s.since = Instant::now();
            }
            s.paused += 1;
        });
        Paused(self.clone())
    }

    /// Completes when the clock has run out (never while it is paused).
    pub(super) async fn expired(&self) {
        let mut rx = self.state.subscribe();
        loop {
            let state = *rx.borrow_and_update();
            if state.paused > 0 {
                if rx.changed().await.is_err() {
                    return std::future::pending().await;
                }
                continue;
            }
            tokio::select! {
                () = tokio::time::sleep_until(state.deadline) => {
                    let now = *rx.borrow();
                    if now.paused == 0 && Instant::now() >= now.deadline {
                        return;
                    }
                }
                changed = rx.changed() => {
                    if changed.is_err() {
                        return std::future::pending().await;
                    }
                }
            }
        }
    }
}

/// Keeps a [`CallClock`] stopped; dropping it starts the clock again.
#[derive(Debug)]
pub(super) struct Paused(Arc<CallClock>);

impl Drop for Paused {
    fn drop(&mut self) {
        self.0.state.send_modify(|s| {
            s.paused = s.paused.saturating_sub(1);
            if s.paused == 0 {
                let stopped = Instant::now().saturating_duration_since(s.since);
                s.deadline += stopped;
            }
        });
    }
}

/// A turn's halt: set by an approver's deny-and-halt or an input handler's
/// cancel; calls not yet sent are then answered as not run, and running tasks
/// are cancelled.
#[derive(Debug, Clone, Default)]
pub(super) struct Halt(Arc<AtomicBool>);

impl Halt {
    pub(super) fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub(super) fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn runs_out_after_its_timeout() {
        let clock = CallClock::new(Duration::from_secs(5));
        let started = Instant::now();
        clock.expired().await;
        assert_eq!(started.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_moves_the_deadline() {
        let clock = CallClock::new(Duration::from_secs(5));
        let started = Instant::now();
        let waiter = {
            let clock = clock.clone();
            tokio::spawn(async move { clock.expired().await })
        };
        tokio::time::sleep(Duration::from_secs(2)).await;
        let outer = clock.pause();
        let inner = clock.pause();
        tokio::time::sleep(Duration::from_secs(10)).await;
        drop(inner);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!waiter.is_finished(), "paused time does not count");
        drop(outer);
        waiter.await.unwrap();
        // 2 s before the pause, 11 s paused, 3 s after.
        assert_eq!(started.elapsed(), Duration::from_secs(16));
    }
}
