//! Where `run` writes its turns, each as it ends: one JSON value for one
//! turn; for several, a JSON array whose elements are written as their
//! turns end and which is closed however the run ends (an error, a signal,
//! a panic); or, with `--ndjson`, one document per line. A closed stdout
//! (`| head`) ends the writing quietly.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

/// The turns' writer; cloned handles write to the same stdout state.
#[derive(Clone)]
pub struct Output(Arc<Mutex<State>>);

struct State {
    /// One document per line.
    lines: bool,
    /// Several turns: an array (unless `lines`).
    many: bool,
    /// Elements written so far.
    written: usize,
    /// Whether the turns started: only then is an array closed (an empty
    /// one when no turn ended), so that input refused before anything ran
    /// prints nothing.
    started: bool,
    /// Whether the array is closed (or was never to be opened).
    closed: bool,
}

impl Output {
    /// A writer for one turn, or for `many`; `lines` writes one document
    /// per line.
    pub fn new(lines: bool, many: bool) -> Self {
        Output(Arc::new(Mutex::new(State {
            lines,
            many,
            written: 0,
            started: false,
            closed: false,
        })))
    }

    /// Says that the turns start: from now on the array is written, if
    /// only as `[]`.
    pub fn start(&self) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .started = true;
    }

    /// Writes one turn's output at once, and flushes it.
    pub fn turn(&self, value: &Value) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let text = match state.lines {
            true => serde_json::to_string(value),
            false => serde_json::to_string_pretty(value),
        }
        .unwrap_or_default();
        let separator = match (state.lines, state.many, state.written) {
            (true, _, _) | (false, false, _) => "",
            (false, true, 0) => "[\n",
            (false, true, _) => ",\n",
        };
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "{separator}{text}");
        if state.lines || !state.many {
            let _ = writeln!(out);
        }
        let _ = out.flush();
        state.written += 1;
        state.started = true;
    }

    /// Closes the array (an empty one when no turn was written); nothing to
    /// do for one turn or for lines, before the turns start, or when
    /// already closed. The last
    /// handle dropped closes it too.
    pub fn close(&self) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .close();
    }
}

impl State {
    fn close(&mut self) {
        if std::mem::replace(&mut self.closed, true) || !self.started || self.lines || !self.many {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = match self.written {
            0 => writeln!(out, "[]"),
            _ => writeln!(out, "\n]"),
        };
        let _ = out.flush();
    }
}

impl Drop for State {
    fn drop(&mut self) {
        self.close();
    }
}
