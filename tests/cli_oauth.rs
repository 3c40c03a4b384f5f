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

/// A lab whose servers take DPoP-bound tokens only, with nonces at both ends.
async fn dpop_lab() -> Lab {
    let dpop = lab::LabDpop {
        algs: vec!["ES256"],
        required: true,
        as_nonce: true,
        rs_nonce: true,
        ..lab::LabDpop::default()
    };
    Lab::start_dpop("notes", Duration::from_secs(3600), dpop).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_signs_in_with_its_token_file_from_the_flag_or_the_config() {
    let lab = dpop_lab().await;
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, lab.workload_jwt("ci-job")).unwrap();
    let plain = dir.path().join("mcp.json");
    std::fs::write(
        &plain,
        serde_json::json!({"mcpServers": {"notes": {"url": lab.mcp_url}}}).to_string(),
    )
    .unwrap();
    let named = dir.path().join("named.json");
    std::fs::write(
        &named,
        serde_json::json!({"mcpServers": {"notes": {"url": lab.mcp_url,
            "oauth": {"workloadToken": token, "clientId": "ci-job"}}}})
        .to_string(),
    )
    .unwrap();
    let token = token.to_str().unwrap();
    for args in [
        vec![
            "--config",
            plain.to_str().unwrap(),
            "--workload-token",
            token,
        ],
        vec!["--config", named.to_str().unwrap()],
    ] {
        let mut all = vec!["tools", "--provider", "anthropic"];
        all.extend(args);
        let (stdout, stderr, code) = run(&all, false).await;
        assert_eq!(code, 0, "{stderr}");
        assert!(!stderr.contains("requires sign-in"), "{stderr}");
        assert_eq!(tool_names(&stdout), ["read_notes", "write_note"]);
    }
    let seen = lab.seen();
    assert!(seen.iter().all(|s| s.path != "/authorize"));
    let grants: Vec<_> = seen
        .iter()
        .filter(|s| s.path == "/token")
        .filter(|s| s.field("grant_type").as_deref() == Some(lab::JWT_BEARER))
        .map(|s| s.field("client_id"))
        .collect();
    // Each run's grant, retried once with the nonce; the config's with its client id.
    assert_eq!(
        grants,
        [None, None, Some("ci-job".into()), Some("ci-job".into())],
        "{:?}",
        lab.refusals()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dpop_bound_sign_in_is_kept_with_its_key_and_a_copied_token_is_refused() {
    let lab = dpop_lab().await;
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
    assert_eq!(tool_names(&stdout), ["read_notes", "write_note"]);
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&store).unwrap()).unwrap();
    let entry = &kept["servers"][&lab.mcp_url];
    assert!(entry["dpop_key"]["pkcs8"].is_string(), "{entry}");
    let token = entry["access_token"].as_str().unwrap().to_owned();
    for text in [&stdout, &stderr] {
        assert!(
            !text.contains(&token) && !text.contains(entry["dpop_key"]["pkcs8"].as_str().unwrap())
        );
    }
    // The next run uses the kept sign-in and its key: no browser.
    let (stdout, stderr, code) = run(&args, false).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("requires sign-in"), "{stderr}");
    assert_eq!(tool_names(&stdout), ["read_notes", "write_note"]);
    // The token alone, copied out of the file, opens nothing.
    let response = reqwest::Client::new()
        .post(&lab.mcp_url)
        .header("authorization", format!("Bearer {token}"))
        .header("accept", "application/json, text/event-stream")
        .json(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert!(
        lab.refusals()
            .iter()
            .any(|r| r == "a DPoP-bound token sent as a Bearer token")
    );

    // With DPoP off, the server that requires it is refused, saying so.
    let (stdout, stderr, code) = run(
        &[
            "tools",
            "--provider",
            "anthropic",
            "--config",
            config.to_str().unwrap(),
            "--dpop",
            "off",
        ],
        false,
    )
    .await;
    assert_ne!(code, 0, "{stdout}");
    assert!(stderr.contains("DPoP is off"), "{stderr}");
}
