//! The client the official MCP conformance suite (`@modelcontextprotocol/conformance`)
//! runs against this crate: `.ci/conformance` installs the suite and runs every
//! non-auth client scenario with it (see "The MCP conformance suite" in docs/command-line.md).
//!
//! The suite starts a scenario's server and runs `conformance_client <server-url>`
//! with the scenario's name in `MCP_CONFORMANCE_SCENARIO`, the protocol revision
//! in `MCP_CONFORMANCE_PROTOCOL_VERSION` (dated revisions through `2025-11-25`
//! start with `initialize`, `2026-07-28` with `server/discover` and carries
//! `_meta` on every request) and, for some scenarios, data in
//! `MCP_CONFORMANCE_CONTEXT` (JSON). Each scenario is played the way an agent
//! uses the crate: connect with [`McpClient::connect_http`], wrap the client in
//! a [`Source`] with a policy (and an input handler where tools ask questions),
//! list its tools in a provider's format, and run the calls a model made
//! through [`Source::execute_tool_calls`]. The model is a response written
//! here, calling the tools the scenario names; its answers are checked. The
//! suite's server checks the wire; this program exits 1, saying why on
//! stderr, when the crate fails or answers wrongly.
//!
//! Authorization scenarios (`auth/...`) run against a protected server and
//! its authorization servers: the client is connected with an [`OAuth`]
//! whose "person" fetches the authorization URL without following its
//! redirect and answers with the redirect's URL, as a browser would bring it
//! back; the context carries pre-registered or client credentials, the
//! identity provider and its ID token for enterprise-managed authorization,
//! or a workload's JWT (written to a file the client reads, as a Kubernetes
//! projected token is). DPoP is used as the servers ask (the default). Scenarios
//! in which the client must refuse to sign in (a resource or issuer that does
//! not match) pass when the connection fails with
//! [`ErrorKind::Unauthorized`] before any token is sent.
//!
//! Build: `cargo build --example conformance_client --features oauth`.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use mcp_adapters::client::Lifecycle;
use mcp_adapters::client::auth::{
    ClientCredentials, EnterpriseSignIn, JwtAlgorithm, OAuth, RegisteredClient, SignInAnswer,
    WorkloadIdentity,
};
use mcp_adapters::exec::{Handlers, InputAnswer, Roots, Sampling, SamplingAnswer};
use mcp_adapters::mcp::{ElicitResult, Elicitation, InputRequest, InputResponses, Root};
use mcp_adapters::{
    ClientOptions, ErrorKind, ExecOptions, Execution, ListOptions, Listing, McpClient, Policy,
    Provider, Registry, Source, Status,
};
use serde_json::{Map, Value, json};

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

/// The id of the one server of every scenario's source (policy globs use it).
const SERVER: &str = "conformance";

/// Every scenario's policy: the model may call any tool of the server.
fn policy() -> Fallible<Policy> {
    Ok(Policy::new().allow("conformance/*")?)
}

/// Bounds each step well inside the suite's 30 s per scenario.
const STEP: Duration = Duration::from_secs(10);

/// What the suite asks for: where, which scenario, at which revision.
struct Scenario {
    url: String,
    name: String,
    version: String,
    lifecycle: Lifecycle,
    context: Option<Value>,
    registry: &'static Registry,
    /// A folder for files the client reads (a workload's token), removed at the end.
    scratch: tempfile::TempDir,
}

impl Scenario {
    fn from_env() -> Fallible<Self> {
        let url = std::env::args()
            .skip(1)
            .last()
            .ok_or("usage: conformance_client <server-url> (the suite appends the URL)")?;
        let name = std::env::var("MCP_CONFORMANCE_SCENARIO")
            .map_err(|_| "MCP_CONFORMANCE_SCENARIO is not set")?;
        let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
            .map_err(|_| "MCP_CONFORMANCE_PROTOCOL_VERSION is not set")?;
        let lifecycle = lifecycle_for(&version)?;
        let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
            Ok(text) => Some(
                serde_json::from_str(&text)
                    .map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}"))?,
            ),
            Err(_) => None,
        };
        let registry = Registry::builtin()?;
        Ok(Scenario {
            url,
            name,
            version,
            lifecycle,
            context,
            registry,
            scratch: tempfile::tempdir()?,
        })
    }

    /// The provider whose format the scenario's model speaks.
    fn provider(&self) -> Fallible<&Provider> {
        Ok(self.registry.get("anthropic")?)
    }

    /// Lists `source`'s tools for the model.
    async fn tools(&self, source: &Source) -> Fallible<Listing> {
        Ok(source.tools(self.provider()?, &ListOptions::new()).await?)
    }

    /// Runs one model turn calling `calls` (exposed name, arguments) and
    /// returns the answers in the model's order. Fails unless the turn
    /// completed with one answer per call.
    async fn turn(
        &self,
        source: &Source,
        listing: &Listing,
        calls: &[(String, Value)],
    ) -> Fallible<Vec<Answer>> {
        let options = ExecOptions::new().call_timeout(STEP).input_timeout(STEP);
        let response = model_response(calls);
        let run = source
            .execute_tool_calls(self.provider()?, &response, listing, &options)
            .await?;
        answers(&run, calls.len())
    }

    /// A session with the scenario's server, started as its revision asks,
    /// declaring what `handlers` answer.
    async fn connect(&self, handlers: Handlers) -> Fallible<McpClient> {
        let options = ClientOptions::new()
            .lifecycle(self.lifecycle)
            .init_timeout(STEP)
            .list_timeout(STEP)
            .handlers(handlers);
        Ok(McpClient::connect_http(SERVER, &self.url, &BTreeMap::new(), &options).await?)
    }

    /// A source over a fresh session whose policy allows every tool of the server.
    async fn source(&self) -> Fallible<Source> {
        self.source_answering(None).await
    }

    /// The same, with a person who accepts every form with `user_values`
    /// (see [`accept_forms`]).
    /// The client declares elicitation and answers it with the same
    /// handler, whichever way the server asks; the source takes the client's
    /// handlers.
    async fn source_answering(&self, user_values: Option<Value>) -> Fallible<Source> {
        let mut handlers = Handlers::new();
        if let Some(values) = user_values {
            handlers = handlers.input(move |questions| {
                let answer = accept_forms(&questions.requests, &values);
                Box::pin(async move { answer })
            });
        }
        let client = self.connect(handlers).await?;
        Ok(Source::client(SERVER, client).policy(policy()?).build()?)
    }

    /// A context field the scenario must have sent.
    fn context(&self, field: &str) -> Fallible<&Value> {
        self.context
            .as_ref()
            .and_then(|c| c.get(field))
            .ok_or_else(|| format!("MCP_CONFORMANCE_CONTEXT has no `{field}`").into())
    }
}

/// `initialize` for the dated revisions through 2025-11-25, `server/discover` for 2026-07-28.
fn lifecycle_for(version: &str) -> Fallible<Lifecycle> {
    let dated = version.len() == 10
        && version.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    match version {
        "2026-07-28" => Ok(Lifecycle::Modern),
        v if dated && v <= "2025-11-25" => Ok(Lifecycle::Legacy),
        v => Err(format!("MCP_CONFORMANCE_PROTOCOL_VERSION `{v}`: not a revision this client speaks (2024-11-05 to 2025-11-25, 2026-07-28)").into()),
    }
}

/// A model response calling `calls` (exposed name, arguments), in that order.
fn model_response(calls: &[(String, Value)]) -> Value {
    let blocks: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": input}))
        .collect();
    json!({"role": "assistant", "stop_reason": "tool_use", "content": blocks})
}

/// One answer, as the model reads it (its text, whether it is an error), and
/// why the call failed when it did.
struct Answer {
    text: String,
    is_error: bool,
    failure: Option<ErrorKind>,
}

fn answers(run: &Execution, expected: usize) -> Fallible<Vec<Answer>> {
    if run.status != Status::Ok {
        return Err(format!("the turn halted: {:?}", run.calls).into());
    }
    if run.turn.results.len() != expected {
        return Err(format!(
            "{} answers for {expected} calls: {:?}",
            run.turn.results.len(),
            run.turn.results
        )
        .into());
    }
    Ok(run
        .turn
        .results
        .iter()
        .zip(&run.calls)
        .map(|(result, call)| {
            let text = match &result["content"] {
                Value::String(text) => text.clone(),
                Value::Array(blocks) => blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                other => other.to_string(),
            };
            let failure = call.error.as_ref().map(|e| e.kind());
            Answer {
                text,
                is_error: result["is_error"] == true,
                failure,
            }
        })
        .collect())
}

/// Fails unless the answer to call `name` is `expected`, not an error.
fn expect_answer(name: &str, answer: &Answer, expected: &str) -> Fallible<()> {
    if answer.is_error || answer.text != expected {
        let kind = if answer.is_error {
            "an error"
        } else {
            "an answer"
        };
        return Err(format!(
            "`{name}` was answered with {kind}: {:?} (expected {expected:?})",
            answer.text
        )
        .into());
    }
    Ok(())
}

/// The tool names the listing offers the model.
fn offered(listing: &Listing) -> Vec<String> {
    listing
        .toolset()
        .tools()
        .iter()
        .map(|t| t.exposed_name.clone())
        .collect()
}

/// Fails unless the listing offers every tool in `names`.
fn require_offered(listing: &Listing, names: &[&str]) -> Fallible<()> {
    let offered = offered(listing);
    for name in names {
        if !offered.iter().any(|o| o == name) {
            return Err(format!(
                "the listing does not offer `{name}`; it offers {offered:?} (report: {:?})",
                listing.report
            )
            .into());
        }
    }
    Ok(())
}

/// An input handler's answer from a person who accepts every form: each
/// field the form gives a `default` starts with it (SEP-1034: what the person
/// leaves alone is sent as its default), and `user_values` are what they
/// entered. Questions that are not forms are declined.
fn accept_forms(requests: &mcp_adapters::mcp::InputRequests, user_values: &Value) -> InputAnswer {
    let mut answers = InputResponses::new();
    for (key, request) in requests {
        let InputRequest::Elicitation(Elicitation::Form(form)) = request else {
            return InputAnswer::Decline(format!(
                "`{key}`: cannot answer a {} request",
                request.method()
            ));
        };
        let mut content = form.defaults();
        if let Some(values) = user_values.as_object() {
            content.extend(values.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        answers.insert(
            key.clone(),
            ElicitResult::accept(Value::Object(content)).into(),
        );
    }
    InputAnswer::Respond(answers)
}

/// A value a model would send for a property of `schema`'s type.
fn sample_value(schema: &Value) -> Value {
    match schema["type"].as_str() {
        Some("string") => json!("sample"),
        Some("integer") | Some("number") => json!(1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("null") => Value::Null,
        _ => json!({}),
    }
}

/// Arguments for every required property of an input schema.
fn sample_arguments(input_schema: &Value) -> Value {
    let mut arguments = Map::new();
    for name in input_schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        arguments.insert(
            name.to_owned(),
            sample_value(&input_schema["properties"][name]),
        );
    }
    Value::Object(arguments)
}

async fn initialize(s: &Scenario) -> Fallible<()> {
    let client = s.connect(Handlers::new()).await?;
    let info = client
        .server_info()
        .ok_or("no server info after the handshake")?;
    if info["serverInfo"]["name"] != "test-server" {
        return Err(format!("server info not read: {info}").into());
    }
    let source = Source::client(SERVER, client).policy(policy()?).build()?;
    let listing = s.tools(&source).await?;
    if !listing.tools.is_empty() {
        return Err(format!(
            "the server lists no tool, the listing has {:?}",
            listing.tools
        )
        .into());
    }
    Ok(())
}

async fn tools_call(s: &Scenario) -> Fallible<()> {
    let source = s.source().await?;
    let listing = s.tools(&source).await?;
    require_offered(&listing, &["add_numbers"])?;
    let answers = s
        .turn(
            &source,
            &listing,
            &[("add_numbers".into(), json!({"a": 2, "b": 3}))],
        )
        .await?;
    expect_answer("add_numbers", &answers[0], "The sum of 2 and 3 is 5")
}

/// The Skills extension (SEP-2640): the model is offered the server's
/// skills (listing reads only `skills/list`). In `sep-2640-client-no-prefetch`
/// the model loads nothing, and nothing may be read. In the `verify-*`
/// scenarios the server tampers with `SKILL.md` (its digest, its size, or
/// its frontmatter against the listed entry): the model loads the skill and
/// then asks for its supporting file; both must be refused as failing
/// verification, and the supporting file never read.
async fn skills(s: &Scenario) -> Fallible<()> {
    let client = s.connect(Handlers::new()).await?;
    let source = Source::client(SERVER, client)
        .policy(Policy::allow_all())
        .skills("*")
        .build()?;
    let listing = s.tools(&source).await?;
    require_offered(&listing, &["load_skill"])?;
    let catalogue = listing
        .tools
        .iter()
        .find(|t| t["name"] == "load_skill")
        .and_then(|t| t["description"].as_str())
        .unwrap_or_default();
    if !catalogue.contains("- pdf-processing: ") {
        return Err(format!("the catalogue does not list pdf-processing: {catalogue}").into());
    }
    if s.name == "sep-2640-client-no-prefetch" {
        return Ok(());
    }
    let load = ("load_skill".to_owned(), json!({"skill": "pdf-processing"}));
    let read = (
        "load_skill".to_owned(),
        json!({"skill": "pdf-processing", "file": "references/FORMS.md"}),
    );
    for call in [load, read] {
        let answers = s
            .turn(&source, &listing, std::slice::from_ref(&call))
            .await?;
        let answer = &answers[0];
        if !answer.is_error || answer.failure != Some(ErrorKind::InvalidResult) {
            return Err(format!(
                "{} was answered {:?} ({:?}), not refused as failing verification",
                call.1, answer.text, answer.failure
            )
            .into());
        }
    }
    Ok(())
}

/// The server asks, during the call, for a form whose every field has a
/// default; the person accepts it as it stands.
async fn elicitation_defaults(s: &Scenario) -> Fallible<()> {
    let source = s.source_answering(Some(json!({}))).await?;
    let listing = s.tools(&source).await?;
    let tool = "test_client_elicitation_defaults";
    require_offered(&listing, &[tool])?;
    let answers = s
        .turn(&source, &listing, &[(tool.into(), json!({}))])
        .await?;
    let answer = &answers[0];
    if answer.is_error || !answer.text.starts_with("Elicitation completed: ") {
        return Err(format!(
            "`{tool}` was answered {:?}: the server's elicitation/create did not reach the input handler",
            answer.text
        )
        .into());
    }
    Ok(())
}

/// The server ends the call's SSE stream early, with a `retry` field; the
/// result arrives on the stream the client reopens.
async fn sse_retry(s: &Scenario) -> Fallible<()> {
    let source = s.source().await?;
    let listing = s.tools(&source).await?;
    require_offered(&listing, &["test_reconnection"])?;
    let answers = s
        .turn(
            &source,
            &listing,
            &[("test_reconnection".into(), json!({}))],
        )
        .await?;
    expect_answer(
        "test_reconnection",
        &answers[0],
        "Reconnection test completed successfully",
    )
}

/// Every request carries the revision's `_meta` and header; the server
/// refuses the first with an unsupported-version error.
async fn request_metadata(s: &Scenario) -> Fallible<()> {
    // Every handler, so that every capability is declared on each request.
    let handlers = Handlers::new()
        .input(|_| Box::pin(async { InputAnswer::Decline("nobody is here".into()) }))
        .sampling(Sampling::new(|_| {
            Box::pin(async { SamplingAnswer::Decline("no model here".into()) })
        }))
        .roots(Roots::new([Root::from_path(std::env::current_dir()?)?]));
    let client = s.connect(handlers).await?;
    let source = Source::client(SERVER, client).policy(policy()?).build()?;
    let listing = s.tools(&source).await?;
    if !listing.tools.is_empty() {
        return Err(format!(
            "the server lists no tool, the listing has {:?}",
            listing.tools
        )
        .into());
    }
    Ok(())
}

/// Four tools in one turn: two ask for a confirmation (one with a request
/// state, one without), one is unrelated and one answers without `resultType`.
async fn request_state(s: &Scenario) -> Fallible<()> {
    let source = s.source_answering(Some(json!({"confirmed": true}))).await?;
    let listing = s.tools(&source).await?;
    let expected = [
        ("test_mrtr_echo_state", "echo-state-ok"),
        ("test_mrtr_unrelated", "unrelated-ok"),
        ("test_mrtr_no_state", "no-state-ok"),
        ("test_mrtr_no_result_type", "no-result-type-test-ok"),
    ];
    require_offered(&listing, &expected.map(|(name, _)| name))?;
    let calls: Vec<_> = expected
        .iter()
        .map(|(name, _)| (name.to_string(), json!({})))
        .collect();
    let answers = s.turn(&source, &listing, &calls).await?;
    for ((name, text), answer) in expected.iter().zip(&answers) {
        expect_answer(name, answer, text)?;
    }
    Ok(())
}

/// `Mcp-Method` on every request, `Mcp-Name` on calls (a hyphenated name too).
async fn standard_headers(s: &Scenario) -> Fallible<()> {
    let source = s.source().await?;
    let listing = s.tools(&source).await?;
    let names = ["test_headers", "my-hyphenated-tool"];
    require_offered(&listing, &names)?;
    let calls: Vec<_> = names
        .iter()
        .map(|name| (name.to_string(), json!({})))
        .collect();
    let answers = s.turn(&source, &listing, &calls).await?;
    for (name, answer) in names.iter().zip(&answers) {
        expect_answer(name, answer, "Headers test completed")?;
    }
    Ok(())
}

/// Arguments whose parameters carry `x-mcp-header` become `Mcp-Param-*`
/// headers; the calls and their arguments come from the scenario's context.
async fn custom_headers(s: &Scenario) -> Fallible<()> {
    let calls: Vec<(String, Value)> = s
        .context("toolCalls")?
        .as_array()
        .ok_or("MCP_CONFORMANCE_CONTEXT: `toolCalls` is not a list")?
        .iter()
        .map(|call| {
            let name = call["name"]
                .as_str()
                .ok_or_else(|| format!("a tool call without a name: {call}"))?;
            Ok((name.to_owned(), call["arguments"].clone()))
        })
        .collect::<Fallible<_>>()?;
    let source = s.source().await?;
    let listing = s.tools(&source).await?;
    require_offered(
        &listing,
        &calls
            .iter()
            .map(|(name, _)| name.as_str())
            .collect::<Vec<_>>(),
    )?;
    let answers = s.turn(&source, &listing, &calls).await?;
    for ((name, _), answer) in calls.iter().zip(&answers) {
        expect_answer(name, answer, "Custom headers test completed")?;
    }
    Ok(())
}

/// One valid tool and ten whose `x-mcp-header` annotations are invalid: the
/// model calls every tool it is offered, and must be offered the valid one only.
async fn invalid_tool_headers(s: &Scenario) -> Fallible<()> {
    let source = s.source().await?;
    let listing = s.tools(&source).await?;
    let calls: Vec<(String, Value)> = listing
        .toolset()
        .tools()
        .iter()
        .map(|t| {
            (
                t.exposed_name.clone(),
                sample_arguments(&t.tool.input_schema),
            )
        })
        .collect();
    let answers = s.turn(&source, &listing, &calls).await?;
    for ((name, _), answer) in calls.iter().zip(&answers) {
        expect_answer(name, answer, "Tool call received")?;
    }
    let offered = offered(&listing);
    if offered != ["valid_tool"] {
        return Err(
            format!("the listing should offer `valid_tool` alone, it offers {offered:?}").into(),
        );
    }
    Ok(())
}

/// A tool whose schema has a same-document `$ref` and one to a URL the
/// server watches. Listing it (as it is, and converted to a strict schema,
/// which follows references) and calling it with argument validation must not
/// fetch the URL. The scenario's server implements `tools/list` only, so the
/// call, once sent, is refused by the server.
async fn ref_no_deref(s: &Scenario) -> Fallible<()> {
    let client = s.connect(Handlers::new()).await?;
    let source = Source::client(SERVER, client)
        .policy(policy()?)
        .validate_arguments()
        .build()?;
    let tool = "lookup_user";
    let listing = s.tools(&source).await?;
    require_offered(&listing, &[tool])?;
    let strict = source
        .tools(s.registry.get("openai-chat")?, &ListOptions::new())
        .await?;
    require_offered(&strict, &[tool])?;
    let answers = s
        .turn(&source, &listing, &[(tool.into(), json!({"id": "user-1"}))])
        .await?;
    if answers[0].failure != Some(ErrorKind::Server) {
        return Err(format!(
            "`{tool}` was not sent to the server: {:?} ({:?})",
            answers[0].text, answers[0].failure
        )
        .into());
    }
    Ok(())
}

/// The model is offered a tool whose schema uses JSON Schema 2020-12
/// (`$schema`, `$defs`, `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else`) and
/// sends back, through the echo tool, the schema it was offered.
async fn schema_preservation(s: &Scenario) -> Fallible<()> {
    let source = s.source().await?;
    let listing = s.tools(&source).await?;
    let (focal, echo) = ("json_schema_2020_12_tool", "json_schema_echo");
    require_offered(&listing, &[focal, echo])?;
    let offered_schema = listing
        .tools
        .iter()
        .find(|t| t["name"] == focal)
        .map(|t| t["input_schema"].clone())
        .ok_or_else(|| format!("no `{focal}` definition in {:?}", listing.tools))?;
    let answers = s
        .turn(
            &source,
            &listing,
            &[(echo.into(), json!({"schema": offered_schema}))],
        )
        .await?;
    expect_answer(echo, &answers[0], "echoed")
}

/// The Client ID Metadata Document the suite's authorization servers accept
/// as a client id (they do not fetch it).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Where the authorization servers send the "browser" back; nothing listens
/// there: the redirect is read from the authorization server's answer.
const REDIRECT_URI: &str = "http://127.0.0.1:3000/callback";

/// A person who signs in at once: the authorization page is fetched and the
/// redirect it answers with is where the browser would go.
async fn sign_in_headless(authorization_url: String) -> SignInAnswer {
    let client = match reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
    {
        Ok(client) => client,
        Err(e) => return SignInAnswer::Refuse(format!("no HTTP client: {e}")),
    };
    match client.get(&authorization_url).send().await {
        Ok(response) => match response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
        {
            Some(location) => SignInAnswer::Redirect(location.to_owned()),
            None => SignInAnswer::Refuse(format!(
                "the authorization page answered {} without a redirect",
                response.status()
            )),
        },
        Err(e) => SignInAnswer::Refuse(format!("the authorization page is unreachable: {e}")),
    }
}

impl Scenario {
    /// How this scenario signs in: workload identity when the context
    /// carries a workload's JWT, client credentials when it carries a
    /// private key or names no redirect flow, otherwise a person, with the
    /// pre-registered client the context names.
    fn oauth(&self) -> Fallible<OAuth> {
        let text = |field: &str| {
            self.context
                .as_ref()
                .and_then(|c| c.get(field))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        if let Some(jwt) = text("valid_jwt") {
            let file = self.scratch.path().join("workload-token");
            std::fs::write(&file, jwt)?;
            let mut workload = WorkloadIdentity::token_file(file);
            if let Some(id) = text("client_id") {
                workload = workload.client_id(id);
            }
            return Ok(OAuth::workload_identity(workload));
        }
        if let Some(id_token) = text("idp_id_token") {
            let field = |name: &str| {
                text(name).ok_or_else(|| format!("MCP_CONFORMANCE_CONTEXT has no `{name}`"))
            };
            let mut client = RegisteredClient::new(field("client_id")?);
            if let Some(secret) = text("client_secret") {
                client = client.with_secret(secret);
            }
            let enterprise = EnterpriseSignIn::new(
                field("idp_issuer")?,
                field("idp_token_endpoint")?,
                RegisteredClient::new(field("idp_client_id")?),
                client,
                move || {
                    let token = id_token.clone();
                    Box::pin(async move { Ok(token) })
                },
            );
            return Ok(OAuth::enterprise(enterprise));
        }
        let client_credentials = self.name.starts_with("auth/client-credentials-");
        if client_credentials {
            let id = text("client_id").ok_or("MCP_CONFORMANCE_CONTEXT has no `client_id`")?;
            let credentials = match (text("private_key_pem"), text("client_secret")) {
                (Some(pem), _) => {
                    let name = text("signing_algorithm").unwrap_or_else(|| "ES256".into());
                    let algorithm = JwtAlgorithm::from_name(&name)
                        .ok_or_else(|| format!("signing algorithm `{name}` is not supported"))?;
                    ClientCredentials::private_key_jwt(id, pem, algorithm)
                }
                (None, Some(secret)) => ClientCredentials::secret(id, secret),
                (None, None) => return Err("the context has neither a key nor a secret".into()),
            };
            return Ok(OAuth::client_credentials(credentials));
        }
        let mut oauth = OAuth::new(REDIRECT_URI, |request| {
            Box::pin(sign_in_headless(request.authorization_url))
        })
        .client_name("mcp-adapters conformance client")
        .client_metadata_url(CLIENT_METADATA_URL);
        if let Some(id) = text("client_id") {
            let mut client = RegisteredClient::new(id);
            if let Some(secret) = text("client_secret") {
                client = client.with_secret(secret);
            }
            oauth = oauth.client(client);
        }
        Ok(oauth)
    }

    /// A session that signs in as the scenario asks.
    async fn connect_signed_in(&self) -> mcp_adapters::Result<McpClient> {
        let oauth = self.oauth().map_err(|e| {
            mcp_adapters::Error::new(ErrorKind::Input, format!("cannot sign in: {e}"))
        })?;
        let options = ClientOptions::new()
            .lifecycle(self.lifecycle)
            .init_timeout(STEP)
            .list_timeout(STEP)
            .oauth(oauth);
        McpClient::connect_http(SERVER, &self.url, &BTreeMap::new(), &options).await
    }
}

/// Signs in, lists the protected server's tools and calls its one tool.
async fn signed_in(s: &Scenario) -> Fallible<()> {
    let client = s.connect_signed_in().await?;
    let source = Source::client(SERVER, client).policy(policy()?).build()?;
    let listing = s.tools(&source).await?;
    require_offered(&listing, &["test-tool"])?;
    let answers = s
        .turn(&source, &listing, &[("test-tool".into(), json!({}))])
        .await?;
    expect_answer("test-tool", &answers[0], "test")
}

/// The sign-in must be refused (a resource, issuer or redirect that does not
/// match, scopes that never suffice): the scenario passes when the client
/// fails with [`ErrorKind::Unauthorized`], and fails when it got through.
async fn refuses_sign_in(s: &Scenario) -> Fallible<()> {
    let failure = match s.connect_signed_in().await {
        Err(err) => err,
        Ok(client) => {
            let source = Source::client(SERVER, client).policy(policy()?).build()?;
            match source.tools(s.provider()?, &ListOptions::new()).await {
                Err(err) => err,
                Ok(listing) if !listing.report.toolset.failed_servers.is_empty() => {
                    let failed = &listing.report.toolset.failed_servers;
                    let reason = format!("{failed:?}");
                    if reason.contains("Unauthorized") || reason.contains("sign-in") {
                        println!("conformance_client: the listing failed as it should: {reason}");
                        return Ok(());
                    }
                    return Err(format!("the listing failed for another reason: {reason}").into());
                }
                Ok(listing) => {
                    let answers = s
                        .turn(&source, &listing, &[("test-tool".into(), json!({}))])
                        .await?;
                    match answers[0].failure {
                        Some(ErrorKind::Unauthorized) => {
                            println!(
                                "conformance_client: the call failed as it should: {}",
                                answers[0].text
                            );
                            return Ok(());
                        }
                        _ => {
                            return Err(format!(
                                "signed in and called the tool, which this scenario must refuse: {:?}",
                                answers[0].text
                            )
                            .into());
                        }
                    }
                }
            }
        }
    };
    if failure.kind() == ErrorKind::Unauthorized {
        println!("conformance_client: refused as it should: {failure}");
        Ok(())
    } else {
        Err(format!("failed, but not by refusing the sign-in: {failure:#}").into())
    }
}

async fn run(s: &Scenario) -> Fallible<()> {
    match s.name.as_str() {
        "auth/resource-mismatch"
        | "auth/iss-supported-missing"
        | "auth/iss-wrong-issuer"
        | "auth/iss-unexpected"
        | "auth/iss-normalized"
        | "auth/metadata-issuer-mismatch"
        | "auth/scope-retry-limit" => refuses_sign_in(s).await,
        name if name.starts_with("auth/") => signed_in(s).await,
        "initialize" => initialize(s).await,
        "tools_call" => tools_call(s).await,
        "elicitation-sep1034-client-defaults" => elicitation_defaults(s).await,
        "sse-retry" => sse_retry(s).await,
        "request-metadata" => request_metadata(s).await,
        "sep-2322-client-request-state" => request_state(s).await,
        "http-standard-headers" => standard_headers(s).await,
        "http-custom-headers" => custom_headers(s).await,
        "http-invalid-tool-headers" => invalid_tool_headers(s).await,
        "json-schema-ref-no-deref" => ref_no_deref(s).await,
        "json-schema-2020-12-preservation" => schema_preservation(s).await,
        "sep-2640-client-no-prefetch"
        | "sep-2640-client-verify-digest"
        | "sep-2640-client-verify-size"
        | "sep-2640-client-verify-frontmatter" => skills(s).await,
        other => Err(format!("scenario `{other}` is not one this client plays").into()),
    }
}

/// The error and its causes, one per line.
fn describe(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(e) = cause {
        text.push_str(&format!("\n  caused by: {e}"));
        cause = e.source();
    }
    text
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let scenario = match Scenario::from_env() {
        Ok(scenario) => scenario,
        Err(err) => {
            eprintln!("conformance_client: {}", describe(err.as_ref()));
            return ExitCode::FAILURE;
        }
    };
    match run(&scenario).await {
        Ok(()) => {
            println!(
                "conformance_client: scenario `{}` at {}: done",
                scenario.name, scenario.version
            );
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!(
                "conformance_client: scenario `{}` at {}: {}",
                scenario.name,
                scenario.version,
                describe(err.as_ref())
            );
            ExitCode::FAILURE
        }
    }
}
