//! Sign-in (the `oauth` feature) against a local authorization server and
//! the MCP server it protects (`oauth/lab.rs`): refresh mid-session, step-up,
//! refusal, one server's token never sent to another, tokens kept in a file.
#![cfg(feature = "oauth")]

#[path = "oauth/lab.rs"]
mod lab;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lab::Lab;
use mcp_adapters::client::Lifecycle;
use mcp_adapters::client::auth::{
    FileTokenStore, MemoryTokenStore, OAuth, SignInAnswer, SignInReason, SignInRequest,
};
use mcp_adapters::{
    ClientOptions, ErrorKind, ExecOptions, HubConfig, ListOptions, McpClient, Policy, Registry,
    ServerConfig, Source,
};
use serde_json::{Value, json};

const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// What the "person" did: every request they were shown.
#[derive(Clone, Default)]
struct Person {
    asked: Arc<std::sync::Mutex<Vec<SignInRequest>>>,
    count: Arc<AtomicUsize>,
}

/// Signs in every time.
const ALWAYS: usize = usize::MAX;

impl Person {
    /// Signs in at once (follows the authorization page to its redirect)
    /// the first `accept` times, and refuses after that.
    fn oauth(&self, accept: usize) -> OAuth {
        let person = self.clone();
        OAuth::new(REDIRECT, move |request: SignInRequest| {
            person.asked.lock().unwrap().push(request.clone());
            let refuse = person.count.fetch_add(1, Ordering::SeqCst) >= accept;
            Box::pin(async move {
                if refuse {
                    return SignInAnswer::Refuse("the person closed the window".into());
                }
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

    fn asked(&self) -> Vec<SignInRequest> {
        self.asked.lock().unwrap().clone()
    }
}

fn options(oauth: OAuth) -> ClientOptions {
    ClientOptions::new()
        .lifecycle(Lifecycle::Legacy)
        .init_timeout(Duration::from_secs(20))
        .oauth(oauth)
}

async fn connect(lab: &Lab, oauth: OAuth) -> mcp_adapters::Result<McpClient> {
    McpClient::connect_http(lab.name, &lab.mcp_url, &BTreeMap::new(), &options(oauth)).await
}

/// One model turn calling `tool` of the client's server; the answer's text
/// and whether it is an error.
async fn call(source: &Source, tool: &str) -> (String, bool, Option<ErrorKind>) {
    let provider = Registry::builtin().unwrap().get("anthropic").unwrap();
    let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
    let response = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": tool, "input": {}}]});
    let run = source
        .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
        .await
        .unwrap();
    let result = &run.turn.results[0];
    let text = match &result["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    };
    let kind = run.calls[0].error.as_ref().map(|e| e.kind());
    (text, result["is_error"] == true, kind)
}

fn source(lab: &Lab, client: McpClient) -> Source {
    Source::client(lab.name, client)
        .policy(Policy::allow_all())
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_that_expires_mid_session_is_refreshed_without_the_model_noticing() {
    // The first token expires at once; the refreshed one outlives the test, so
    // that a slow machine cannot need a second refresh.
    let lab = Lab::start_with("notes", Duration::from_secs(1), Duration::from_secs(3600)).await;
    let person = Person::default();
    let client = connect(&lab, person.oauth(ALWAYS))
        .await
        .unwrap_or_else(|e| panic!("{e:#}"));
    let source = source(&lab, client);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (text, is_error, _) = call(&source, "read_notes").await;
    assert_eq!((text.as_str(), is_error), ("notes ran read_notes", false));
    assert_eq!(person.asked().len(), 1, "one sign-in");
    let seen = lab.seen();
    let grants: Vec<_> = seen
        .iter()
        .filter(|s| s.path == "/token")
        .filter_map(|s| s.field("grant_type"))
        .collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    // The call carried the refreshed token, not the first one.
    let call = seen
        .iter()
        .rfind(|s| s.rpc_method().as_deref() == Some("tools/call"))
        .unwrap();
    assert_ne!(call.authorization.as_deref(), Some("Bearer notes-at-1"));
    assert!(
        call.authorization
            .as_deref()
            .unwrap()
            .starts_with("Bearer notes-at-")
    );
    assert_eq!(lab.ran(), ["read_notes"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_needs_a_wider_scope_steps_up_once_and_succeeds() {
    let lab = Lab::start("notes", Duration::from_secs(3600)).await;
    let person = Person::default();
    let client = connect(&lab, person.oauth(ALWAYS))
        .await
        .unwrap_or_else(|e| panic!("{e:#}"));
    let source = source(&lab, client);
    let (text, is_error, _) = call(&source, "write_note").await;
    assert_eq!((text.as_str(), is_error), ("notes ran write_note", false));
    let asked = person.asked();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0].reason, SignInReason::Required);
    assert_eq!(asked[1].reason, SignInReason::StepUp);
    // The challenge's scope first, offline_access because the authorization
    // server lists it; the step-up keeps what was granted.
    assert_eq!(asked[0].scopes, ["notes:read", "offline_access"]);
    for scope in ["notes:read", "notes:write", "offline_access"] {
        assert!(
            asked[1].scopes.iter().any(|s| s == scope),
            "{:?}",
            asked[1].scopes
        );
    }
    let authorizations = lab.seen().iter().filter(|s| s.path == "/authorize").count();
    assert_eq!(authorizations, 2);
    // A second call needs nothing more.
    let (text, _, _) = call(&source, "write_note").await;
    assert_eq!(text, "notes ran write_note");
    assert_eq!(person.asked().len(), 2);
    assert_eq!(lab.ran(), ["write_note", "write_note"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_sign_in_ends_with_an_error_naming_the_server_and_nothing_is_run() {
    let lab = Lab::start("notes", Duration::from_secs(3600)).await;
    let person = Person::default();
    let err = connect(&lab, person.oauth(0)).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unauthorized, "{err:#}");
    let text = format!("{err:#}");
    assert!(text.contains("server `notes`"), "{text}");
    assert!(
        text.contains("refused") && text.contains("the person closed the window"),
        "{text}"
    );
    // No token was issued, so none was sent; no tool ran.
    let seen = lab.seen();
    assert!(seen.iter().all(|s| s.path != "/token"), "{seen:?}");
    assert!(seen.iter().all(|s| s.authorization.is_none()), "{seen:?}");
    assert!(lab.ran().is_empty());

    // Mid-session: a step-up that is refused answers the call with the
    // error, and the tool does not run.
    let lab = Lab::start("notes", Duration::from_secs(3600)).await;
    let person = Person::default();
    let client = connect(&lab, person.oauth(1)).await.unwrap();
    let source = source(&lab, client);
    let (text, is_error, kind) = call(&source, "write_note").await;
    assert!(is_error, "{text}");
    assert_eq!(kind, Some(ErrorKind::Unauthorized), "{text}");
    // The model is told the kind and the server; why is the application's.
    assert!(
        text.starts_with("server `notes` requires a sign-in that did not complete")
            && text.contains("was not run"),
        "{text}"
    );
    assert!(lab.ran().is_empty());
    // Nothing secret in what the model is told.
    for seen in lab.seen() {
        if let Some(token) = seen
            .authorization
            .as_deref()
            .and_then(|a| a.strip_prefix("Bearer "))
        {
            assert!(!text.contains(token), "{text}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_token_is_never_sent_to_another_server() {
    let (a, b) = (
        Lab::start("alpha", Duration::from_secs(3600)).await,
        Lab::start("beta", Duration::from_secs(3600)).await,
    );
    let person = Person::default();
    let store = MemoryTokenStore::new();
    let hub = HubConfig::new()
        .server("alpha", ServerConfig::http(a.mcp_url.clone()))
        .server("beta", ServerConfig::http(b.mcp_url.clone()));
    let options = options(person.oauth(ALWAYS).token_store(store.clone()));
    let source = hub
        .connect_with(&options)
        .await
        .unwrap()
        .policy(Policy::allow_all())
        .build()
        .unwrap();
    assert_eq!(
        call(&source, "alpha__read_notes").await.0,
        "alpha ran read_notes"
    );
    assert_eq!(
        call(&source, "beta__read_notes").await.0,
        "beta ran read_notes"
    );
    assert_eq!(person.asked().len(), 2);
    for (lab, other) in [(&a, &b), (&b, &a)] {
        let sent: Vec<_> = lab
            .seen()
            .into_iter()
            .filter_map(|s| s.authorization)
            .collect();
        assert!(!sent.is_empty());
        for header in sent {
            // The client's own secret, to its own authorization server.
            if let Some(basic) = header.strip_prefix("Basic ") {
                use base64::Engine as _;
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(basic)
                    .unwrap();
                let decoded = String::from_utf8(decoded).unwrap();
                assert!(
                    decoded.starts_with(&format!("{}-client:", lab.name)),
                    "{decoded}"
                );
                continue;
            }
            assert!(
                header.starts_with(&format!("Bearer {}", lab.issued_prefix())),
                "{header}"
            );
            assert!(!header.contains(&other.issued_prefix()), "{header}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_sign_in_is_used_again_after_a_restart() {
    let lab = Lab::start("notes", Duration::from_secs(3600)).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    let person = Person::default();
    let first = connect(
        &lab,
        person.oauth(ALWAYS).token_store(FileTokenStore::new(&path)),
    )
    .await
    .unwrap();
    first.close().await;
    let kept = std::fs::read_to_string(&path).unwrap();
    assert!(kept.contains(&lab.mcp_url), "{kept}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // A new process: the same file, no one asked.
    let second = connect(
        &lab,
        person.oauth(ALWAYS).token_store(FileTokenStore::new(&path)),
    )
    .await
    .unwrap();
    let source = source(&lab, second);
    assert_eq!(call(&source, "read_notes").await.0, "notes ran read_notes");
    assert_eq!(person.asked().len(), 1);
    // The options' Debug output names no secret.
    let debug = format!("{:?}", options(person.oauth(ALWAYS)));
    assert!(
        !debug.contains("notes-at-") && !debug.contains("notes-rt-"),
        "{debug}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_authorization_header_of_any_scheme_is_never_signed_in_beside() {
    for header in ["Basic dXNlcjpwYXNz", "bearer not-a-token-of-the-lab"] {
        let lab = Lab::start("notes", Duration::from_secs(3600)).await;
        let person = Person::default();
        let headers = BTreeMap::from([("Authorization".to_owned(), header.to_owned())]);
        let err = McpClient::connect_http(
            lab.name,
            &lab.mcp_url,
            &headers,
            &options(person.oauth(ALWAYS)),
        )
        .await
        .err()
        .unwrap_or_else(|| panic!("{header}: the lab took a header it never issued"));
        assert!(person.asked().is_empty(), "{header}: {err:#}");
        assert!(
            lab.seen().iter().all(|s| s.path != "/token"),
            "{header}: a sign-in ran"
        );
        // The configured value went as it is, whatever the case of its scheme.
        assert!(
            lab.seen()
                .iter()
                .any(|s| s.authorization.as_deref() == Some(header)
                    || s.authorization.as_deref() == Some("Bearer not-a-token-of-the-lab")),
            "{header}: {:?}",
            lab.seen()
        );
    }
}
