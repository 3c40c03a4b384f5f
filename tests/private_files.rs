//! Files that hold what only their owner may read: a suspended turn's state
//! (`TurnState::write_file`, `run --suspend FILE`) is written 0600 whatever
//! the umask, through a new file renamed over the path, never through a
//! symbolic link; a token store and its lock file are refused when another
//! user owns them, other users may read them, or a link stands at their
//! path, with an error naming the file. (A crash between writing and
//! renaming is `files::tests` in the library: it needs the write stopped
//! half-way.)
#![cfg(unix)]

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;
use std::process::Command;

use common::*;
use mcp_adapters::exec::TurnState;
use mcp_adapters::mcp::{CallToolResult, Tool};
use mcp_adapters::{ExecOptions, InProcessServer, ListOptions, Policy, Source, Status};
use serde_json::json;

/// The umask most systems start with: group and others may read what is
/// created with the default mode.
fn umask_022() {
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

/// A turn that waits for its one call's approval.
fn suspended_state() -> TurnState {
    current_thread_runtime().block_on(async {
        let server = InProcessServer::new().tool(
            Tool::new("pay", "Pays.", json!({"type": "object"})),
            |_args, _ctx| async { Ok(CallToolResult::text("paid")) },
        );
        let source = Source::client("bank", server)
            .policy(Policy::allow_all().ask("bank/pay").unwrap())
            .build()
            .unwrap();
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let response = model_response("anthropic", &[("pay".into(), json!({"card": "4111"}))]);
        let run = source
            .execute_tool_calls(p, &response, &listing, &ExecOptions::new().suspend(true))
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended);
        *run.suspended.unwrap()
    })
}

#[test]
fn a_state_document_is_its_owners_only_and_never_written_through_a_link() {
    umask_022();
    let state = suspended_state();
    let dir = tempfile::tempdir().unwrap();

    // A new file: 0600, though the umask would let others read it.
    let path = dir.path().join("turn.json");
    state.write_file(&path).unwrap();
    assert_eq!(mode(&path), 0o600);
    assert_eq!(
        TurnState::from_json(&std::fs::read(&path).unwrap()).unwrap(),
        state
    );

    // An existing file open to others is replaced by an owner-only one.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    state.write_file(&path).unwrap();
    assert_eq!(mode(&path), 0o600);

    // A link at the path is replaced, and what it pointed at is untouched.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "the victim's own content").unwrap();
    let linked = dir.path().join("linked.json");
    symlink(&victim, &linked).unwrap();
    state.write_file(&linked).unwrap();
    assert!(std::fs::symlink_metadata(&linked).unwrap().is_file());
    assert_eq!(mode(&linked), 0o600);
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "the victim's own content"
    );

    // Nothing is left beside them.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");

    // A folder that is not there: an error naming the file.
    let missing = dir.path().join("no-such-folder/turn.json");
    let err = state.write_file(&missing).unwrap_err();
    assert!(
        err.to_string().contains("no-such-folder/turn.json"),
        "{err}"
    );
}

#[cfg(feature = "cli")]
#[test]
fn run_suspend_writes_its_state_as_the_owners_only_and_through_no_link() {
    umask_022();
    let dir = tempfile::tempdir().unwrap();
    let response = dir.path().join("response.json");
    std::fs::write(
        &response,
        json!({"content": [{"type": "tool_use", "id": "toolu_1", "name": "notes_create",
            "input": {"title": "t", "body": "b"}}]})
        .to_string(),
    )
    .unwrap();
    let policy = dir.path().join("policy.json");
    std::fs::write(&policy, r#"{"default": "allow", "ask": ["notes/*"]}"#).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    let state = dir.path().join("state.json");
    symlink(&victim, &state).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-adapters"))
        .args(["run", "--provider", "anthropic", "--policy"])
        .arg(&policy)
        .arg("--suspend")
        .arg(&state)
        .arg(&response)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::symlink_metadata(&state).unwrap().is_file());
    assert_eq!(mode(&state), 0o600);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    TurnState::from_json(&std::fs::read(&state).unwrap()).unwrap();
}

#[cfg(feature = "oauth")]
mod token_store {
    use super::*;
    use mcp_adapters::client::auth::{FileTokenStore, TokenStore};

    const URL: &str = "https://mcp.example/mcp";

    fn refused(store: &FileTokenStore, file: &Path, why: &str) {
        let err = current_thread_runtime()
            .block_on(store.load(URL))
            .expect_err("refused");
        let text = err.to_string();
        assert!(text.contains(&file.display().to_string()), "{text}");
        assert!(text.contains(why), "{text}");
        assert_eq!(err.location().file.as_deref(), Some(file), "{text}");
    }

    #[test]
    fn a_store_open_to_others_is_refused_unless_told_to_warn() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.json");
        std::fs::write(&path, r#"{"servers": {}}"#).unwrap();
        for open in [0o666, 0o644, 0o640, 0o604] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(open)).unwrap();
            refused(&FileTokenStore::new(&path), &path, "other users");
            // Left as it was: refusing is not fixing.
            assert_eq!(mode(&path), open);
        }
        let lenient = FileTokenStore::new(&path).warn_when_exposed();
        assert_eq!(
            current_thread_runtime()
                .block_on(lenient.load(URL))
                .unwrap(),
            None
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            current_thread_runtime()
                .block_on(FileTokenStore::new(&path).load(URL))
                .unwrap(),
            None
        );
    }

    #[test]
    fn a_store_another_user_owns_is_refused() {
        let me = rustix::process::geteuid();
        let (path, _dir) = if me.is_root() {
            // Root gives a file away.
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("tokens.json");
            std::fs::write(&path, r#"{"servers": {}}"#).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            std::os::unix::fs::chown(&path, Some(65534), None).unwrap();
            (path, Some(dir))
        } else {
            // Anyone else finds one of root's.
            (Path::new("/etc/passwd").to_path_buf(), None)
        };
        assert_ne!(std::fs::metadata(&path).unwrap().uid(), me.as_raw());
        refused(&FileTokenStore::new(&path), &path, "another user");
    }

    #[test]
    fn a_link_at_the_store_or_its_lock_is_refused_and_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere.json");
        std::fs::write(&target, r#"{"servers": {}}"#).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        let path = dir.path().join("tokens.json");
        symlink(&target, &path).unwrap();
        let store = FileTokenStore::new(&path);
        refused(&store, &path, "symbolic link");

        // The lock beside a store: a link there would create its target.
        let path = dir.path().join("other.json");
        let lock = dir.path().join(".other.json.lock");
        let created = dir.path().join("created-through-the-link");
        symlink(&created, &lock).unwrap();
        let store = FileTokenStore::new(&path);
        let err = current_thread_runtime()
            .block_on(store.clear(URL))
            .expect_err("refused");
        assert!(err.to_string().contains(".other.json.lock"), "{err}");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(!created.exists());
        assert!(!path.exists());

        // A lock file open to others is refused too.
        std::fs::remove_file(&lock).unwrap();
        std::fs::write(&lock, "").unwrap();
        std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = current_thread_runtime()
            .block_on(store.clear(URL))
            .expect_err("refused");
        assert!(err.to_string().contains(".other.json.lock"), "{err}");
        // Once it is the owner's only, the store is written, 0600.
        std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o600)).unwrap();
        umask_022();
        current_thread_runtime().block_on(store.clear(URL)).unwrap();
        assert_eq!(mode(&path), 0o600);
    }
}
