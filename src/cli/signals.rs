//! SIGINT and SIGTERM during `run`: the first stops the run (no new turn, no
//! new call; the calls in flight have [`GRACE`] to end), the second (or the
//! end of the grace) answers the calls still in flight as interrupted, and
//! a third ends the process at once. The command then exits with the
//! conventional status of the first signal: 130 for SIGINT, 143 for SIGTERM.

use std::process::ExitCode;
use std::time::Duration;

use mcp_adapters::exec::Interrupt;
use mcp_adapters::{Error, ErrorKind, Result};
use tokio::sync::watch;

/// How long the calls in flight have to end once a signal stopped the run.
pub const GRACE: Duration = Duration::from_secs(5);

/// The signal that stopped the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caught {
    Int,
    Term,
}

impl Caught {
    fn name(self) -> &'static str {
        match self {
            Caught::Int => "SIGINT",
            Caught::Term => "SIGTERM",
        }
    }

    /// 128 plus the signal's number, as shells report a process it ended.
    pub fn status(self) -> ExitCode {
        ExitCode::from(match self {
            Caught::Int => 130,
            Caught::Term => 143,
        })
    }
}

/// The run's signals: what was caught, and the interrupt every turn is given.
pub struct Signals {
    caught: watch::Receiver<Option<Caught>>,
    interrupt: Interrupt,
    listener: tokio::task::JoinHandle<()>,
}

impl Drop for Signals {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

impl Signals {
    /// Listens for SIGINT and SIGTERM from now on (on the current runtime).
    /// `at_once` runs before a third signal ends the process.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`] when the handlers cannot be installed.
    pub fn listen(at_once: impl Fn() + Send + 'static) -> Result<Signals> {
        let cannot = |e: std::io::Error| {
            Error::new(ErrorKind::Io, "cannot listen for SIGINT and SIGTERM").with_source(e)
        };
        let mut signals = caught_signals().map_err(cannot)?;
        let (tell, caught) = watch::channel(None);
        let interrupt = Interrupt::new();
        let cutting = interrupt.clone();
        let listener = tokio::spawn(async move {
            let first = signals.next().await;
            eprintln!(
                "note: {}: no new turn or call is started; the calls in flight have {} s to end (a second signal ends them now)",
                first.name(),
                GRACE.as_secs()
            );
            cutting.stop();
            let _ = tell.send(Some(first));
            tokio::select! {
                () = tokio::time::sleep(GRACE) => {}
                _ = signals.next() => {}
            }
            if !cutting.is_cut() {
                eprintln!(
                    "note: the calls still in flight are answered as interrupted (a third signal ends the process at once)"
                );
                cutting.cut();
            }
            signals.next().await;
            at_once();
            std::process::exit(i32::from(match first {
                Caught::Int => 130u8,
                Caught::Term => 143,
            }));
        });
        Ok(Signals {
            caught,
            interrupt,
            listener,
        })
    }

    /// The interrupt to give every turn.
    pub fn interrupt(&self) -> &Interrupt {
        &self.interrupt
    }

    /// The signal that stopped the run, if one did.
    pub fn caught(&self) -> Option<Caught> {
        *self.caught.borrow()
    }

    /// Completes once a signal stops the run.
    pub async fn stopped(&self) -> Caught {
        let mut caught = self.caught.clone();
        match caught.wait_for(Option::is_some).await {
            Ok(first) => first.unwrap_or(Caught::Term),
            // The listener ended without a signal: never.
            Err(_) => std::future::pending().await,
        }
    }
}

/// SIGINT and SIGTERM (Ctrl-C where there are no Unix signals), caught.
struct Listening {
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
}

fn caught_signals() -> std::io::Result<Listening> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Listening {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
        })
    }
    #[cfg(not(unix))]
    Ok(Listening {})
}

impl Listening {
    /// The next signal.
    async fn next(&mut self) -> Caught {
        #[cfg(unix)]
        tokio::select! {
            Some(()) = self.int.recv() => Caught::Int,
            Some(()) = self.term.recv() => Caught::Term,
            else => std::future::pending::<Caught>().await,
        }
        #[cfg(not(unix))]
        match tokio::signal::ctrl_c().await {
            Ok(()) => Caught::Int,
            Err(_) => std::future::pending::<Caught>().await,
        }
    }
}
