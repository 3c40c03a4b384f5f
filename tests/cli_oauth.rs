//! The command line signs in to an HTTP server that requires it: the URL on
//! stderr, the browser's redirect back to a loopback listener, the tokens
//! kept between runs with `--token-store` (owner-only), a timeout.
#![cfg(feature = "cli")]

#[path = "oauth/lab.rs"]
mod lab;

use std::process::Stdio;
use std::time::Duration;

use lab::Lab;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::Command;

/// Runs the command; a "browser" follows every sign-in URL printed on
/// stderr when `browse` is set. Returns stdout, stderr and the exit code.
async fn run(args: &[&str], browse: bool) -> (String, String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-adapters"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let reader = tokio::spawn(async move {
        let mut text = String::new();
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if browse && let Some(url) = line.strip_prefix("  http") {
                let url = format!("http{url}");
                let client = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .unwrap();
                let page = client.get(&url).send().await.unwrap();
                let back = page.headers()["location"].to_str().unwrap().to_owned();
                let shown = client
                    .get(&back)
                    .send()
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap();
                assert!(shown.contains("was received"), "{shown}");
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    let mut out = String::new();
    stdout.read_to_string(&mut out).await.unwrap();
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .unwrap()
        .unwrap();
    (out, reader.await.unwrap(), status.code().unwrap_or(-1))
}

fn tool_names(stdout: &str) -> Vec<String> {
    let value: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    value["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_signs_in_through_the_browser_and_keeps_the_tokens() {
    let lab = Lab::start("notes", Duration::from_secs(3600)).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"notes": {"url": lab.mcp_url}}}).to_string(),
    )
    .unwrap();
    let store = dir.path().join("tokens.json");
    let args = [
        "tools",
        "--provider",
        "anthropic",
        "--config",
        config.to_str().unwrap(),
        "--token-store",
        store.to_str().unwrap(),
    ];
    let (stdout, stderr, code) = run(&args, true).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("server `notes`") && stderr.contains("requires sign-in"),
        "{stderr}"
    );
    assert_eq!(
        tool_names(&stdout),
        ["read_notes", "write_note"],
        "{stderr}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&store).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // No token in what the command printed.
    for seen in lab.seen() {
        if let Some(token) = seen
            .authorization
            .as_deref()
            .and_then(|a| a.strip_prefix("Bearer "))
        {
            assert!(!stderr.contains(token) && !stdout.contains(token));
        }
    }

    // The next run signs in with the kept tokens: no one is asked.
    let (stdout, stderr, code) = run(&args, false).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("requires sign-in"), "{stderr}");
    assert_eq!(tool_names(&stdout), ["read_notes", "write_note"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_nobody_completes_times_out_naming_the_server() {
    let lab = Lab::start("notes", Duration::from_secs(3600)).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"notes": {"url": lab.mcp_url}}}).to_string(),
    )
    .unwrap();
    let (stdout, stderr, _) = run(
        &[
            "tools",
            "--provider",
            "anthropic",
            "--config",
            config.to_str().unwrap(),
            "--sign-in-timeout",
            "1",
        ],
        false,
    )
    .await;
    let all = format!("{stdout}\n{stderr}");
    assert!(
        all.contains("sign-in was not completed within 1 s"),
        "{all}"
    );
    assert!(all.contains("notes"), "{all}");
    assert!(lab.seen().iter().all(|s| s.path != "/token"));
}
