//! The key that binds `run --suspend` documents to their content, and the
//! documents written and read with it.

use std::path::Path;

use mcp_adapters::exec::{StateKey, TurnState};
use mcp_adapters::{Error, ErrorKind, Result};

use super::RunArgs;

/// The environment variable that holds the key when `--state-key-file` is
/// not given.
pub const KEY_VARIABLE: &str = "MCP_ADAPTERS_STATE_KEY";

/// The key of `--state-key-file` (the file's bytes, a final line feed
/// left out), or of [`KEY_VARIABLE`]; `None` without either.
///
/// # Errors
///
/// [`ErrorKind::Io`] for a file that cannot be read, [`ErrorKind::Input`]
/// for a key shorter than [`StateKey::MIN_LEN`] bytes.
pub fn key(args: &RunArgs) -> Result<Option<StateKey>> {
    if let Some(path) = &args.state_key_file {
        let bytes = std::fs::read(path).map_err(|e| {
            Error::new(ErrorKind::Io, "cannot read the turn state key")
                .with_file(path)
                .with_source(e)
        })?;
        let key = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        let key = key.strip_suffix(b"\r").unwrap_or(key);
        return StateKey::new(key).map(Some).map_err(|e| e.with_file(path));
    }
    match std::env::var_os(KEY_VARIABLE) {
        Some(value) if !value.is_empty() => {
            let key = StateKey::new(value.as_encoded_bytes()).map_err(|e| {
                Error::new(ErrorKind::Input, format!("{KEY_VARIABLE}: {}", e.message()))
            })?;
            Ok(Some(key))
        }
        _ => Ok(None),
    }
}

/// `state` written to `path` as its owner's only file, with its MAC under
/// `key` when there is one.
///
/// # Errors
///
/// As [`TurnState::write_file`].
pub fn write(state: &TurnState, path: &Path, key: Option<&StateKey>) -> Result<()> {
    match key {
        Some(key) => state.write_file_with_mac(path, key),
        None => state.write_file(path),
    }
}

/// The turn state in `path`, checked against its MAC under `key` when
/// there is one.
///
/// # Errors
///
/// [`ErrorKind::Io`] for a file that cannot be read; as
/// [`TurnState::from_json_with_mac`] otherwise.
pub fn read(path: &Path, key: Option<&StateKey>) -> Result<TurnState> {
    let bytes = std::fs::read(path).map_err(|e| {
        Error::new(ErrorKind::Io, "cannot read the turn state")
            .with_file(path)
            .with_source(e)
    })?;
    let state = match key {
        Some(key) => TurnState::from_json_with_mac(&bytes, key),
        None => TurnState::from_json(&bytes),
    };
    state.map_err(|e| e.with_file(path))
}
