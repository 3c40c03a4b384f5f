//! What the test helpers that install things (the conformance venv, the
//! end-to-end servers) share: where `target/` is, and an inter-process lock.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Cargo's target folder (`CARGO_TARGET_DIR`, relative to the manifest, or `target/`).
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => manifest_dir().join(dir),
        _ => manifest_dir().join("target"),
    }
}

/// An exclusive lock on a path: the file is created with `create_new`, which is
/// atomic, and removed on drop. A lock older than `STALE` (its holder crashed)
/// is broken; waiting longer than `WAIT` is an error naming the file.
pub struct Lock(PathBuf);

const STALE: Duration = Duration::from_secs(15 * 60);
const WAIT: Duration = Duration::from_secs(20 * 60);

impl Lock {
    /// Takes the lock; `what` names the caller in error messages.
    pub fn acquire(path: &Path, what: &str) -> Result<Lock, String> {
        let start = Instant::now();
        loop {
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
            {
                Ok(mut f) => {
                    let _ = writeln!(f, "{}", std::process::id());
                    return Ok(Lock(path.to_path_buf()));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let age = fs::metadata(path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| SystemTime::now().duration_since(t).ok());
                    if age.is_some_and(|a| a > STALE) {
                        let _ = fs::remove_file(path);
                        continue;
                    }
                    if start.elapsed() > WAIT {
                        return Err(format!(
                            "{what}: waited {WAIT:?} for {} (another test installing); delete it if no install is running",
                            path.display()
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(250));
                }
                Err(e) => {
                    return Err(format!(
                        "{what}: cannot create lock {}: {e}",
                        path.display()
                    ));
                }
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}
