//! DPoP-bound tokens (RFC 9449) and workload identity (RFC 7523) against the
//! local authorization server and the MCP server it protects (`oauth/lab.rs`,
//! which checks every proof with the `jsonwebtoken` crate): proofs on every
//! request, nonces at both ends, a refresh bound to the same key, a token
//! copied out of the store refused without its key, nothing falling back
//! silently; a workload signing in with its token file.
#![cfg(feature = "oauth")]

#[path = "oauth/lab.rs"]
mod lab;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lab::{JWT_BEARER, Lab, LabDpop};
use mcp_adapters::client::Lifecycle;
use mcp_adapters::client::auth::{
    Dpop, DpopKey, FileTokenStore, JwtAlgorithm, OAuth, SignInAnswer, SignInRequest, StoredSignIn,
    WorkloadIdentity,
};
use mcp_adapters::{
    ClientOptions, ErrorKind, ExecOptions, ListOptions, McpClient, Policy, Registry, Source,
};
use serde_json::{Value, json};

const REDIRECT: &str = "http://127.0.0.1:9/callback";
const HOUR: Duration = Duration::from_secs(3600);

/// A person who signs in at once, counted.
fn person(count: &Arc<AtomicUsize>) -> OAuth {
    let count = count.clone();
    OAuth::new(REDIRECT, move |request: SignInRequest| {
        count.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let client = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap();
            let response = client.get(&request.authorization_url).send().await.unwrap();
            let location = response.headers()["location"].to_str().unwrap().to_owned();
            SignInAnswer::Redirect(location)
        })
    })
}

/// A lab whose servers require DPoP, with nonces at both ends.
async fn strict_lab() -> Lab {
    let dpop = LabDpop {
        algs: vec!["ES256", "RS256"],
        required: true,
        as_nonce: true,
        rs_nonce: true,
        ..LabDpop::default()
    };
    Lab::start_dpop("notes", HOUR, dpop).await
}

async fn connect(lab: &Lab, oauth: OAuth) -> mcp_adapters::Result<McpClient> {
    let options = ClientOptions::new()
        .lifecycle(Lifecycle::Legacy)
        .init_timeout(Duration::from_secs(20))
        .oauth(oauth);
    McpClient::connect_http(lab.name, &lab.mcp_url, &BTreeMap::new(), &options).await
}

/// One model turn calling `tool`: the answer's text, and why it failed.
async fn call(client: McpClient, tool: &str) -> (String, Option<ErrorKind>) {
    let source = Source::client("notes", client)
        .policy(Policy::allow_all())
        .build()
        .unwrap();
    call_source(&source, tool).await
}

async fn call_source(source: &Source, tool: &str) -> (String, Option<ErrorKind>) {
    let provider = Registry::builtin().unwrap().get("anthropic").unwrap();
    let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
    let response = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": tool, "input": {}}]});
    let run = source
        .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
        .await
        .unwrap();
    let text = run.turn.results[0]["content"]
        .as_array()
        .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect())
        .unwrap_or_else(|| run.turn.results[0]["content"].to_string());
    (text, run.calls[0].error.as_ref().map(|e| e.kind()))
}

/// The `alg` of a proof's header.
fn alg(proof: &str) -> String {
    jsonwebtoken::decode_header(proof)
        .map(|h| format!("{:?}", h.alg))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_carries_a_fresh_proof_and_both_nonces_are_answered() {
    let lab = strict_lab().await;
    let asked = Arc::new(AtomicUsize::new(0));
    let client = connect(&lab, person(&asked))
        .await
        .unwrap_or_else(|e| panic!("{e:#}"));
    let source = Source::client("notes", client)
        .policy(Policy::allow_all())
        .build()
        .unwrap();
    assert_eq!(
        call_source(&source, "read_notes").await.0,
        "notes ran read_notes"
    );
    // The token is refused from now on: the next call refreshes it, with a
    // proof by the same key.
    lab.expire_tokens();
    assert_eq!(
        call_source(&source, "read_notes").await.0,
        "notes ran read_notes"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1, "one sign-in");

    let seen = lab.seen();
    let grants: Vec<_> = seen
        .iter()
        .filter(|s| s.path == "/token")
        .filter_map(|s| s.field("grant_type"))
        .collect();
    // Each grant first without the nonce it did not know, then with it.
    assert_eq!(
        grants,
        ["authorization_code", "authorization_code", "refresh_token"],
        "{:?}",
        lab.refusals()
    );
    assert!(
        seen.iter()
            .filter(|s| s.path == "/token")
            .all(|s| s.dpop.is_some())
    );
    let (as_nonces, rs_nonces) = lab.nonce_challenges();
    assert_eq!(
        as_nonces, 1,
        "the authorization server's nonce, once learned, is used"
    );
    assert!(rs_nonces >= 1);
    // Both tokens are bound to one key: the refresh kept it.
    let keys = lab.bound_keys();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0], keys[1]);
    // Every request to the server with a token is DPoP's, never Bearer.
    let presented: Vec<_> = seen
        .iter()
        .filter(|s| s.path == "/mcp")
        .filter_map(|s| s.authorization.as_deref())
        .collect();
    assert!(presented.len() >= 4, "{presented:?}");
    assert!(
        presented.iter().all(|a| a.starts_with("DPoP notes-at-")),
        "{presented:?}"
    );
    assert!(
        seen.iter()
            .filter(|s| s.authorization.is_some())
            .all(|s| s.dpop.as_deref().is_some_and(|p| alg(p) == "ES256"))
    );
    // Refusals: nonces asked for, and the expired token; no proof was bad.
    for why in lab.refusals() {
        assert!(
            why == "a nonce is required" || why == "an unknown or expired token",
            "{why}"
        );
    }
    assert_eq!(lab.ran(), ["read_notes", "read_notes"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_copied_out_of_the_store_is_refused_without_its_key() {
    let lab = strict_lab().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    let asked = Arc::new(AtomicUsize::new(0));
    let client = connect(&lab, person(&asked).token_store(FileTokenStore::new(&path)))
        .await
        .unwrap();
    assert_eq!(call(client, "read_notes").await.0, "notes ran read_notes");

    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let entry = &kept["servers"][&lab.mcp_url];
    let token = entry["access_token"].as_str().unwrap().to_owned();
    assert!(
        entry["token_type"]
            .as_str()
            .unwrap()
            .eq_ignore_ascii_case("dpop")
    );
    assert_eq!(entry["dpop_jkt"], lab.bound_keys()[0].as_str());
    assert!(
        entry.get("dpop_key").is_none(),
        "the key stays in memory: {entry}"
    );

    // The thief has the token, not the key.
    let thief = reqwest::Client::new();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "read_notes", "arguments": {}}});
    let their_key = DpopKey::generate(JwtAlgorithm::Es256).unwrap();
    let rs_nonce = "notes-rs-nonce";
    let attempts = [
        (format!("Bearer {token}"), None),
        (format!("DPoP {token}"), None),
        (
            format!("DPoP {token}"),
            Some(
                their_key
                    .proof("POST", &lab.mcp_url, Some(&token), Some(rs_nonce))
                    .unwrap(),
            ),
        ),
    ];
    for (authorization, proof) in attempts {
        let mut request = thief
            .post(&lab.mcp_url)
            .header("authorization", &authorization)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(proof) = proof {
            request = request.header("dpop", proof);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 401, "{}", &authorization[..5]);
    }
    assert_eq!(lab.ran(), ["read_notes"], "the thief ran nothing");
    let refusals = lab.refusals();
    for why in [
        "a DPoP-bound token sent as a Bearer token",
        "no DPoP proof",
        "a proof by another key than the token's",
    ] {
        assert!(refusals.iter().any(|r| r == why), "{why}: {refusals:?}");
    }

    // A new process holds the file, not the key: the kept tokens are of no
    // use, so the person signs in again (never a Bearer attempt with them).
    let before = lab.seen().len();
    let client = connect(&lab, person(&asked).token_store(FileTokenStore::new(&path)))
        .await
        .unwrap();
    assert_eq!(call(client, "read_notes").await.0, "notes ran read_notes");
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    assert!(
        lab.seen()[before..].iter().all(|s| !s
            .authorization
            .as_deref()
            .is_some_and(|a| a.contains(&token))),
        "the old token was sent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_kept_in_the_store_lets_a_restart_use_the_sign_in() {
    let lab = strict_lab().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    let asked = Arc::new(AtomicUsize::new(0));
    let oauth = || {
        person(&asked)
            .token_store(FileTokenStore::new(&path))
            .dpop(Dpop::when_supported().keep_key_in_store())
    };
    let client = connect(&lab, oauth()).await.unwrap();
    assert_eq!(call(client, "read_notes").await.0, "notes ran read_notes");
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: Value = serde_json::from_str(&text).unwrap();
    let entry = &kept["servers"][&lab.mcp_url];
    assert_eq!(entry["dpop_key"]["alg"], "ES256", "{entry}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let stored: StoredSignIn = serde_json::from_value(entry.clone()).unwrap();
    assert!(stored.is_bound());
    let debug = format!("{stored:?}");
    let private = entry["dpop_key"]["pkcs8"].as_str().unwrap();
    assert!(
        !debug.contains(private) && !debug.contains("notes-at-"),
        "{debug}"
    );

    // A restart: the same file, the same key, no one asked.
    let client = connect(&lab, oauth()).await.unwrap();
    assert_eq!(call(client, "read_notes").await.0, "notes ran read_notes");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(lab.bound_keys().len(), 1, "no new token");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_falls_back_silently() {
    // DPoP off, a server that requires it: refused before any token request.
    let lab = strict_lab().await;
    let asked = Arc::new(AtomicUsize::new(0));
    let err = connect(&lab, person(&asked).dpop(Dpop::off()))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unauthorized);
    let text = format!("{err:#}");
    assert!(
        text.contains("server `notes`")
            && text.contains("DPoP-bound tokens only")
            && text.contains("DPoP is off"),
        "{text}"
    );
    assert!(
        lab.seen()
            .iter()
            .all(|s| s.path != "/token" && s.path != "/authorize")
    );

    // DPoP required, an authorization server that issues Bearer tokens: the
    // sign-in fails saying so, and no token reaches the server.
    let dpop = LabDpop {
        ignore_proofs: true,
        ..LabDpop::default()
    };
    let lab = Lab::start_dpop("plain", HOUR, dpop).await;
    let err = connect(&lab, person(&asked).dpop(Dpop::required()))
        .await
        .unwrap_err();
    let text = format!("{err:#}");
    assert!(
        text.contains("not a DPoP-bound one") && text.contains("requires DPoP"),
        "{text}"
    );
    // (The token request authenticates the client with its registered
    // secret; no access token is presented anywhere.)
    assert!(lab.seen().iter().all(|s| {
        s.authorization
            .as_deref()
            .is_none_or(|a| a.starts_with("Basic "))
    }));

    // Algorithms the client cannot sign: refused, naming them.
    let dpop = LabDpop {
        algs: vec!["EdDSA"],
        ..LabDpop::default()
    };
    let lab = Lab::start_dpop("odd", HOUR, dpop).await;
    let err = connect(&lab, person(&asked)).await.unwrap_err();
    assert!(
        format!("{err:#}")
            .contains("its authorization server takes DPoP proofs signed with EdDSA only"),
        "{err:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_algorithm_the_server_lists_and_the_applications_signer_are_used() {
    // An authorization server that lists ES384 alone.
    let dpop = LabDpop {
        algs: vec!["ES384"],
        ..LabDpop::default()
    };
    let lab = Lab::start_dpop("notes", HOUR, dpop).await;
    let asked = Arc::new(AtomicUsize::new(0));
    let client = connect(&lab, person(&asked)).await.unwrap();
    assert_eq!(call(client, "read_notes").await.0, "notes ran read_notes");
    let proofs: Vec<_> = lab.seen().into_iter().filter_map(|s| s.dpop).collect();
    assert!(!proofs.is_empty() && proofs.iter().all(|p| alg(p) == "ES384"));

    // A key the application holds (here another key in memory, as a KMS
    // would hold it): every proof goes through its signer.
    let lab = strict_lab().await;
    let held = Arc::new(
        aws_lc_rs::signature::EcdsaKeyPair::generate(
            &aws_lc_rs::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
        )
        .unwrap(),
    );
    let jwk = {
        use aws_lc_rs::signature::KeyPair as _;
        use base64::Engine as _;
        let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
        let point = held.public_key().as_ref();
        json!({"kty": "EC", "crv": "P-256", "x": b64(&point[1..33]), "y": b64(&point[33..])})
    };
    let signed = Arc::new(AtomicUsize::new(0));
    let (key, count) = (held.clone(), signed.clone());
    let dpop = Dpop::when_supported()
        .signer(JwtAlgorithm::Es256, jwk.clone(), move |input| {
            count.fetch_add(1, Ordering::SeqCst);
            let rng = aws_lc_rs::rand::SystemRandom::new();
            let signature = key
                .sign(&rng, &input)
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| "the key would not sign".to_owned());
            Box::pin(async move { signature })
        })
        .unwrap();
    let client = connect(&lab, person(&asked).dpop(dpop)).await.unwrap();
    assert_eq!(call(client, "read_notes").await.0, "notes ran read_notes");
    let proofs = lab.seen().into_iter().filter(|s| s.dpop.is_some()).count();
    assert_eq!(signed.load(Ordering::SeqCst), proofs);
    let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(jwk).unwrap();
    let thumbprint = jwk
        .thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
        .unwrap();
    assert_eq!(lab.bound_keys(), [thumbprint]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_signs_in_with_its_token_file_and_a_rotated_token_is_used() {
    let lab = strict_lab().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    let first = lab.workload_jwt("job-1");
    std::fs::write(&file, format!("{first}\n")).unwrap();
    let oauth = OAuth::workload_identity(WorkloadIdentity::token_file(&file));
    let client = connect(&lab, oauth)
        .await
        .unwrap_or_else(|e| panic!("{e:#}"));
    let source = Source::client("notes", client)
        .policy(Policy::allow_all())
        .build()
        .unwrap();
    assert_eq!(
        call_source(&source, "read_notes").await.0,
        "notes ran read_notes"
    );
    // The platform rotates the token; once the access token is refused, the
    // next grant presents the new one.
    let second = lab.workload_jwt("job-2");
    std::fs::write(&file, &second).unwrap();
    lab.expire_tokens();
    assert_eq!(
        call_source(&source, "read_notes").await.0,
        "notes ran read_notes"
    );

    let seen = lab.seen();
    assert!(
        seen.iter()
            .all(|s| s.path != "/authorize" && s.path != "/register")
    );
    let grants: Vec<_> = seen
        .iter()
        .filter(|s| s.path == "/token")
        .filter_map(|s| s.field("grant_type"))
        .collect();
    assert!(grants.iter().all(|g| g == JWT_BEARER), "{grants:?}");
    let mut presented = lab.assertions();
    presented.dedup();
    assert_eq!(presented, [first, second]);
    let resources: Vec<_> = seen
        .iter()
        .filter(|s| s.path == "/token")
        .filter_map(|s| s.field("resource"))
        .collect();
    assert!(resources.iter().all(|r| *r == lab.mcp_url), "{resources:?}");
    // The workload's tokens are DPoP-bound too.
    assert!(
        seen.iter()
            .filter(|s| s.path == "/mcp")
            .filter_map(|s| s.authorization.as_deref())
            .all(|a| a.starts_with("DPoP "))
    );
    assert_eq!(lab.ran(), ["read_notes", "read_notes"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_workload_token_fails_without_another_attempt_or_grant() {
    let lab = Lab::start("notes", HOUR).await;
    let jwt = lab.foreign_jwt("intruder");
    let given = jwt.clone();
    let oauth = OAuth::workload_identity(WorkloadIdentity::token_fn(move || {
        let jwt = given.clone();
        Box::pin(async move { Ok(jwt) })
    }))
    .dpop(Dpop::off());
    let err = connect(&lab, oauth).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unauthorized);
    let text = format!("{err:#}");
    assert!(
        text.contains("server `notes`") && text.contains("`invalid_grant`"),
        "{text}"
    );
    let token_requests = lab
        .seen()
        .into_iter()
        .filter(|s| s.path == "/token")
        .count();
    assert_eq!(token_requests, 1, "one grant, not retried");
    assert!(
        lab.seen()
            .iter()
            .all(|s| s.path != "/authorize" && s.path != "/register")
    );
    assert_eq!(lab.assertions(), std::slice::from_ref(&jwt));
    assert!(!text.contains(&jwt), "the JWT is not in the error");
}
