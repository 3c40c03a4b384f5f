//! A call's server time: a deadline that stops while the application
//! answers what the server asked, so that `call_timeout` bounds the server
//! and `input_timeout` the person (or model) answering.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// The deadline of the request of a call now on the wire, which pauses while
/// a question it asked is being answered. One clock serves each of the
/// call's requests in turn ([`start`](Self::start)); it lives inside what
/// holds it, so a call that completes at once costs no allocation for it.
#[derive(Debug)]
pub(super) struct CallClock {
    state: Mutex<ClockState>,
    /// Woken whenever the deadline or the pause count changes.
    changed: Notify,
}

#[derive(Debug, Clone, Copy)]
struct ClockState {
    deadline: Instant,
    /// Questions being answered right now, and since when the first one.
    paused: usize,
    since: Instant,
    /// Which request the clock times: a pause taken for an earlier request
    /// does not restart this one's clock.
    request: u64,
}

/// What holds a [`CallClock`] (shared, so that a pause can outlive the
/// borrow that took it).
pub(super) trait Clocked: Send + Sync {
    fn clock(&self) -> &CallClock;
}

impl CallClock {
    /// A clock that runs out `timeout` from now.
    pub(super) fn new(timeout: Duration) -> Self {
        let now = Instant::now();
        CallClock {
            state: Mutex::new(ClockState {
                deadline: deadline(now, timeout),
                paused: 0,
                since: now,
                request: 0,
            }),
            changed: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ClockState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts timing a new request, which runs out `timeout` from now.
    pub(super) fn start(&self, timeout: Duration) {
        let now = Instant::now();
        {
            let mut state = self.lock();
            *state = ClockState {
                deadline: deadline(now, timeout),
                paused: 0,
                since: now,
                request: state.request.wrapping_add(1),
            };
        }
        self.changed.notify_waiters();
    }

    /// Stops the clock of `holder` until the guard is dropped; the time it
    /// was stopped is added to the deadline.
    pub(super) fn pause<T: Clocked>(holder: &Arc<T>) -> Paused<T> {
        let request = {
            let mut state = holder.clock().lock();
            if state.paused == 0 {
                state.since = Instant::now();
            }
            state.paused += 1;
            state.request
        };
        holder.clock().changed.notify_waiters();
        Paused {
            holder: holder.clone(),
            request,
        }
    }

    /// Completes when the clock has run out (never while it is paused).
    pub(super) async fn expired(&self) {
        loop {
            let changed = self.changed.notified();
            let mut changed = std::pin::pin!(changed);
            // Registered before the state is read, so no change is missed.
            changed.as_mut().enable();
            let state = *self.lock();
            if state.paused > 0 {
                changed.await;
                continue;
            }
            tokio::select! {
                () = tokio::time::sleep_until(state.deadline) => {
                    let now = *self.lock();
                    if now.paused == 0 && Instant::now() >= now.deadline {
                        return;
                    }
                }
                () = changed => {}
            }
        }
    }
}

fn deadline(now: Instant, timeout: Duration) -> Instant {
    now.checked_add(timeout)
        .unwrap_or(now + Duration::from_secs(86_400 * 365))
}

/// Keeps a [`CallClock`] stopped; dropping it starts the clock again.
pub(super) struct Paused<T: Clocked> {
    holder: Arc<T>,
    request: u64,
}

impl<T: Clocked> std::fmt::Debug for Paused<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Paused")
            .field("request", &self.request)
            .finish_non_exhaustive()
    }
}

impl<T: Clocked> Drop for Paused<T> {
    fn drop(&mut self) {
        let clock = self.holder.clock();
        {
            let mut s = clock.lock();
            if s.request != self.request {
                // Taken for a request that has ended: this one's clock runs on.
                return;
            }
            s.paused = s.paused.saturating_sub(1);
            if s.paused == 0 {
                let stopped = Instant::now().saturating_duration_since(s.since);
                s.deadline += stopped;
            }
        }
        clock.changed.notify_waiters();
    }
}

/// Interrupts turns from outside them, as a process told to stop (SIGTERM,
/// Ctrl-C) interrupts its work: hand a clone to each turn with
/// [`ExecOptions::interrupt`](crate::exec::ExecOptions::interrupt), then
/// [`stop`](Self::stop) and, once the calls in flight have had the time the
/// application gives them, [`cut`](Self::cut).
///
/// ```
/// use mcp_adapters::exec::Interrupt;
/// use mcp_adapters::ExecOptions;
///
/// let interrupt = Interrupt::new();
/// let options = ExecOptions::new().interrupt(interrupt.clone());
/// // On SIGTERM: send nothing more, let the calls in flight end...
/// interrupt.stop();
/// // ...and when they have had their time, answer those still running.
/// interrupt.cut();
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Default)]
pub struct Interrupt(Arc<Interrupted>);

#[derive(Debug, Default)]
struct Interrupted {
    stopped: AtomicBool,
    cut: AtomicBool,
    changed: Notify,
}

impl Interrupt {
    /// An interrupt not yet triggered.
    pub fn new() -> Self {
        Self::default()
    }

    /// No call of the turns given this interrupt is sent from now on (nor
    /// asked about: the policy and the approver are not consulted for a
    /// call not yet started). The calls in flight go on to their end. A
    /// turn that may be suspended
    /// ([`ExecOptions::suspend`](crate::exec::ExecOptions::suspend)) comes
    /// back suspended, its calls not sent waiting
    /// ([`Wait::Resume`](crate::exec::Wait::Resume)) to be sent when it is
    /// resumed; any other turn comes back halted
    /// ([`Status::Halt`](crate::exec::Status::Halt)), its calls not sent
    /// answered as not run.
    pub fn stop(&self) {
        self.0.stopped.store(true, Ordering::SeqCst);
        self.0.changed.notify_waiters();
    }

    /// [`stop`](Self::stop), and every call still in flight is answered now
    /// as interrupted ([`ErrorKind::Interrupted`](crate::ErrorKind::Interrupted):
    /// it may or may not have run, and it is not sent again); its request
    /// is dropped, so a real client tells its server
    /// (`notifications/cancelled`).
    pub fn cut(&self) {
        self.0.stopped.store(true, Ordering::SeqCst);
        self.0.cut.store(true, Ordering::SeqCst);
        self.0.changed.notify_waiters();
    }

    /// Whether [`stop`](Self::stop) (or [`cut`](Self::cut)) was called.
    pub fn is_stopped(&self) -> bool {
        self.0.stopped.load(Ordering::SeqCst)
    }

    /// Whether [`cut`](Self::cut) was called.
    pub fn is_cut(&self) -> bool {
        self.0.cut.load(Ordering::SeqCst)
    }

    /// Completes once the interrupt is cut.
    pub(super) async fn cut_off(&self) {
        loop {
            let changed = self.0.changed.notified();
            let mut changed = std::pin::pin!(changed);
            // Registered before the flag is read, so no cut is missed.
            changed.as_mut().enable();
            if self.is_cut() {
                return;
            }
            changed.await;
        }
    }
}

/// A turn's halt: set by an approver's deny-and-halt or an input handler's
/// cancel; calls not yet sent are then answered as not run, and running tasks
/// are cancelled. The application's [`Interrupt`] stops the turn sending
/// too: as a halt where the turn cannot be suspended, and otherwise holding
/// the calls not sent back for the turn's resumption.
#[derive(Debug, Clone, Default)]
pub(super) struct Halt {
    own: Arc<AtomicBool>,
    interrupt: Option<Interrupt>,
    /// Whether the turn may be suspended.
    suspend: bool,
}

impl Halt {
    /// The halt of a turn given `interrupt`, which may be suspended when
    /// `suspend` says so.
    pub(super) fn for_turn(interrupt: Option<&Interrupt>, suspend: bool) -> Self {
        Halt {
            own: Arc::default(),
            interrupt: interrupt.cloned(),
            suspend,
        }
    }

    pub(super) fn set(&self) {
        self.own.store(true, Ordering::SeqCst);
    }

    /// Whether the turn is halted: by an approver or a handler, or
    /// interrupted where it cannot be suspended.
    pub(super) fn is_set(&self) -> bool {
        self.own.load(Ordering::SeqCst) || (!self.suspend && self.interrupted())
    }

    /// Whether the application's interrupt stopped the turn.
    pub(super) fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(Interrupt::is_stopped)
    }

    /// Whether nothing more may be sent: halted, or interrupted.
    pub(super) fn stops_sending(&self) -> bool {
        self.is_set() || self.interrupted()
    }

    /// Whether calls not sent wait for the turn's resumption rather than
    /// being answered: interrupted, not halted, and the turn may be suspended.
    pub(super) fn holds_back(&self) -> bool {
        !self.is_set() && self.interrupted()
    }

    /// The application's interrupt, if the turn has one.
    pub(super) fn interrupt(&self) -> Option<&Interrupt> {
        self.interrupt.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Clocked for CallClock {
        fn clock(&self) -> &CallClock {
            self
        }
    }

    #[tokio::test(start_paused = true)]
    async fn runs_out_after_its_timeout() {
        let clock = CallClock::new(Duration::from_secs(5));
        let started = Instant::now();
        clock.expired().await;
        assert_eq!(started.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_moves_the_deadline() {
        let clock = Arc::new(CallClock::new(Duration::from_secs(5)));
        let started = Instant::now();
        let waiter = {
            let clock = clock.clone();
            tokio::spawn(async move { clock.expired().await })
        };
        tokio::time::sleep(Duration::from_secs(2)).await;
        let outer = CallClock::pause(&clock);
        let inner = CallClock::pause(&clock);
        tokio::time::sleep(Duration::from_secs(10)).await;
        drop(inner);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!waiter.is_finished(), "paused time does not count");
        drop(outer);
        waiter.await.unwrap();
        // 2 s before the pause, 11 s paused, 3 s after.
        assert_eq!(started.elapsed(), Duration::from_secs(16));
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_request_is_timed_afresh_and_an_old_pause_leaves_it_running() {
        let clock = Arc::new(CallClock::new(Duration::from_secs(5)));
        let stale = CallClock::pause(&clock);
        tokio::time::sleep(Duration::from_secs(30)).await;
        clock.start(Duration::from_secs(5));
        let started = Instant::now();
        let waiter = {
            let clock = clock.clone();
            tokio::spawn(async move { clock.expired().await })
        };
        tokio::time::sleep(Duration::from_secs(1)).await;
        // The first request's pause ends: the second request's deadline stays.
        drop(stale);
        waiter.await.unwrap();
        assert_eq!(started.elapsed(), Duration::from_secs(5));
    }
}
