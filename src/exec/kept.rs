//! The texts a result budget cut, kept for the library's read tool
//! (`read_result`): the model reads on in them by a handle and an offset,
//! answered here, never by a server.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::mcp::CallToolResult;

/// How many bytes of cut texts a source keeps: past it, the oldest go.
pub(crate) const MAX_KEPT_BYTES: usize = 64 << 20;

/// The cut texts of a source's turns, newest last.
#[derive(Debug, Default)]
pub(crate) struct KeptResults {
    state: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    next: u64,
    bytes: usize,
    entries: VecDeque<Entry>,
}

#[derive(Debug)]
struct Entry {
    handle: String,
    server_id: String,
    /// Who the turn that cut it ran for ([`ExecOptions::principal`](crate::ExecOptions::principal)):
    /// only a call for the same principal reads it.
    principal: Option<String>,
    text: Arc<str>,
}

impl KeptResults {
    /// Keeps `text`, cut from a result of `server_id` in a turn run for
    /// `principal`, and gives its handle (`r1`, `r2`, ...). The oldest texts
    /// go once the kept ones pass [`MAX_KEPT_BYTES`].
    pub(crate) fn keep(&self, server_id: &str, principal: Option<&str>, text: &str) -> String {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.next += 1;
        let handle = format!("r{}", state.next);
        state.bytes += text.len();
        state.entries.push_back(Entry {
            handle: handle.clone(),
            server_id: server_id.to_owned(),
            principal: principal.map(str::to_owned),
            text: Arc::from(text),
        });
        while state.bytes > MAX_KEPT_BYTES && state.entries.len() > 1 {
            if let Some(old) = state.entries.pop_front() {
                state.bytes -= old.text.len();
            }
        }
        handle
    }

    /// The server whose result `handle` was cut from.
    pub(crate) fn origin(&self, handle: &str) -> Option<String> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state
            .entries
            .iter()
            .find(|e| e.handle == handle)
            .map(|e| e.server_id.clone())
    }

    /// Answers a call of the read tool for `principal`: the text of `handle`
    /// from `offset` on (the budget then keeps what fits of it), or why there
    /// is none. A text cut for another principal is not found.
    pub(crate) fn read(
        &self,
        arguments: &Map<String, Value>,
        principal: Option<&str>,
    ) -> Result<CallToolResult> {
        let handle = arguments
            .get("handle")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::input("`handle` must be a string, such as \"r1\""))?;
        let offset = match arguments.get("offset") {
            None | Some(Value::Null) => 0,
            Some(v) => v.as_u64().ok_or_else(|| {
                Error::input(format!("`offset` must be a whole number of bytes, not {v}"))
            })?,
        };
        let text = {
            let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let entry = state
                .entries
                .iter()
                .find(|e| e.handle == handle && e.principal.as_deref() == principal);
            match entry {
                Some(entry) => Arc::clone(&entry.text),
                None => {
                    return Ok(CallToolResult::error(format!(
                        "no result is kept under the handle `{handle}`: a handle names a result cut in an earlier answer, and the oldest are let go past {} MiB",
                        MAX_KEPT_BYTES >> 20
                    )));
                }
            }
        };
        let Ok(offset) = usize::try_from(offset) else {
            return Err(Error::input("`offset` is too large"));
        };
        if offset >= text.len() {
            return Ok(CallToolResult::error(format!(
                "offset {offset} is at or past the end of the result under `{handle}` ({} bytes)",
                text.len()
            )));
        }
        if !text.is_char_boundary(offset) {
            let mut before = offset;
            while !text.is_char_boundary(before) {
                before -= 1;
            }
            return Ok(CallToolResult::error(format!(
                "offset {offset} falls inside a character of the result under `{handle}`: read from {before}"
            )));
        }
        Ok(CallToolResult::text(&text[offset..]))
    }
}
