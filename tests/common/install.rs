//! What the test helpers that install things share: where the root and
//! `target/` are, and an inter-process lock (from `tests/installs`).

use std::path::PathBuf;

pub use test_installs::target_dir;

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
