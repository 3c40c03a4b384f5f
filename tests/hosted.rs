//! Provider-hosted MCP: declarations written from spec data and a policy
//! (snapshots, checked against the official SDKs' types), and real recorded
//! responses and streams read back: every hosted call reported, none run
//! here, approval requests answered by the policy and the approver.

mod common;

use std::path::Path;

use common::conformance::{Item, check};
use common::{Stage, provider, read_json, snapshot};
use mcp_adapters::exec::Approval;
use mcp_adapters::hosted::{HostedItems, HostedRefusal, HostedServer, HostedTools};
use mcp_adapters::stream::Framing;
use mcp_adapters::{ExecOptions, InProcessServer, ListOptions, Listing, Policy, Source, ToolSet};
use serde_json::{Value, json};

fn fixture(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosted")
        .join(path)
}

/// A listing of no local tools, for reading a response.
fn empty_listing(id: &str) -> Listing {
    provider(id)
        .list_tools(&ToolSet::hub().build().unwrap(), &ListOptions::new())
        .unwrap()
}

fn read(id: &str, file: &str) -> HostedItems {
    let response = read_json(&fixture(&format!("{id}/{file}")));
    let extracted = provider(id)
        .extract_calls(&response, &empty_listing(id))
        .unwrap();
    assert!(
        extracted.calls.is_empty() && extracted.rejected.is_empty(),
        "{file}: a hosted call was read as a local one: {extracted:?}"
    );
    extracted.hosted
}

fn streamed(id: &str, file: &str) -> HostedItems {
    let bytes = std::fs::read(fixture(&format!("{id}/{file}"))).unwrap();
    let listing = empty_listing(id);
    let framing = if file.ends_with(".jsonl") {
        Framing::Json
    } else {
        Framing::Sse
    };
    let mut stream = provider(id).stream(&listing).unwrap().framing(framing);
    let early = stream.push(&bytes).unwrap();
    assert!(early.is_empty(), "{file}: {early:?}");
    let done = stream.finish().unwrap();
    assert!(done.extracted.calls.is_empty() && done.extracted.rejected.is_empty());
    done.extracted.hosted
}

/// A recording, the calls it holds (server, tool, failed) and how many approval requests.
type Case = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str, bool)],
    usize,
);

/// `(server, tool)` of each call, and whether it failed.
fn calls(items: &HostedItems) -> Vec<(&str, &str, bool)> {
    items
        .calls
        .iter()
        .map(|c| (c.server_id.as_str(), c.tool.as_str(), c.error.is_some()))
        .collect()
}

#[test]
fn recorded_responses_report_every_hosted_call_and_run_none() {
    let cases: &[Case] = &[
        (
            "openai-responses",
            "vercel__openai-mcp-tool.1.json",
            &[("dmcp", "web_search_exa", false)],
            0,
        ),
        (
            "openai-responses",
            "vercel__openai-mcp-tool-approval.1.json",
            &[],
            1,
        ),
        (
            "openai-responses",
            "vercel__openai-mcp-tool-approval.4.json",
            &[("zip1", "create_short_url", false)],
            0,
        ),
        (
            "openai-responses",
            "vercel__openai-issue-19007-hosted-mcp.json",
            &[
                ("deepwiki", "read_wiki_structure", false),
                ("deepwiki", "ask_question", false),
            ],
            0,
        ),
        (
            "openai-responses",
            "pydantic-ai__openai_mcp_server_tool.1.response.json",
            &[("deepwiki", "ask_question", false)],
            0,
        ),
        (
            "openai-responses",
            "pydantic-ai__openai_mcp_connector_failed_call.1.response.json",
            &[
                ("google_calendar", "search_events", true),
                ("google_calendar", "search_events", true),
            ],
            0,
        ),
        (
            "anthropic",
            "vercel__anthropic-mcp.1.json",
            &[("echo", "echo", false)],
            0,
        ),
        (
            "anthropic",
            "pydantic-ai__anthropic_mcp_servers.1.response.json",
            &[("deepwiki", "ask_question", false)],
            0,
        ),
    ];
    for (id, file, expected, approvals) in cases {
        let items = read(id, file);
        assert_eq!(calls(&items), *expected, "{file}");
        assert_eq!(items.approvals.len(), *approvals, "{file}");
        for call in &items.calls {
            assert!(call.arguments.is_object(), "{file}: {:?}", call.arguments);
            assert!(
                call.output.is_some() || call.error.is_some(),
                "{file}: {call:?}"
            );
        }
    }
    // The error is an object in current recordings: read as its type and message.
    let failed = read(
        "openai-responses",
        "pydantic-ai__openai_mcp_connector_failed_call.1.response.json",
    );
    assert_eq!(
        failed.calls[0].error.as_deref(),
        Some("http_error: An unknown error occurred while executing the tool.")
    );
    // The provider's listing of a server's tools is reported.
    let listed = read("openai-responses", "vercel__openai-mcp-tool.1.json");
    assert_eq!(listed.tool_lists[0].server_id, "dmcp");
    assert!(
        listed.tool_lists[0]
            .tools
            .contains(&"web_search_exa".to_owned())
    );
    // An Anthropic result is joined to its call.
    let echo = read("anthropic", "vercel__anthropic-mcp.1.json");
    assert!(
        echo.calls[0]
            .output
            .as_ref()
            .unwrap()
            .to_string()
            .contains("text")
    );
    let approval = read(
        "openai-responses",
        "vercel__openai-mcp-tool-approval.1.json",
    );
    assert_eq!(approval.approvals[0].server_id, "zip1");
    assert_eq!(approval.approvals[0].tool, "create_short_url");
    assert!(approval.approvals[0].arguments.is_object());
}

#[test]
fn recorded_streams_report_the_same_as_their_messages() {
    let cases: &[Case] = &[
        (
            "openai-responses",
            "vercel__openai-mcp-tool.1.chunks.jsonl",
            &[
                ("dmcp", "web_search_exa", false),
                ("dmcp", "web_search_exa", false),
            ],
            0,
        ),
        (
            "openai-responses",
            "vercel__openai-mcp-tool-approval.1.chunks.jsonl",
            &[],
            1,
        ),
        (
            "openai-responses",
            "pydantic-ai__openai_mcp_server_tool_stream.1.response.sse",
            &[("deepwiki", "ask_question", false)],
            0,
        ),
        (
            "anthropic",
            "vercel__anthropic-mcp.1.chunks.jsonl",
            &[("echo", "echo", false)],
            0,
        ),
        (
            "anthropic",
            "pydantic-ai__anthropic_mcp_servers_stream.1.response.sse",
            &[("deepwiki", "ask_question", false)],
            0,
        ),
    ];
    for (id, file, expected, approvals) in cases {
        let items = streamed(id, file);
        assert_eq!(calls(&items), *expected, "{file}");
        assert_eq!(items.approvals.len(), *approvals, "{file}");
        for call in &items.calls {
            // Arguments streamed as deltas are whole at the end.
            assert!(
                call.arguments.as_object().is_some_and(|a| !a.is_empty()),
                "{file}: {call:?}"
            );
        }
    }
}

fn servers() -> Vec<HostedServer> {
    vec![
        HostedServer::new("deepwiki", "https://mcp.deepwiki.com/mcp")
            .description("Answers questions about public repositories"),
        HostedServer::new("github", "https://api.githubcopilot.com/mcp/")
            .header("X-MCP-Toolsets", "issues")
            .tools(HostedTools::Only {
                run: vec!["get_issue".into(), "list_issues".into()],
                ask: vec!["create_issue".into()],
            })
            .deferred(true),
        HostedServer::new("linear", "https://mcp.linear.app/mcp").tools(HostedTools::Only {
            run: vec!["list_issues".into()],
            ask: vec![],
        }),
        HostedServer::new("local", "http://localhost:3000/mcp"),
        HostedServer::new("keyed", "https://mcp.example.com/mcp").header("X-Api-Key", "k"),
        HostedServer::new("signed-in", "https://mcp.example.com/mcp").authorization("token"),
    ]
}

/// The declarations each provider with hosted MCP writes, pinned and
/// checked against its SDK's types; a provider without approvals runs a
/// server whose policy asks locally, and one without hosted MCP all of them.
#[test]
fn hosted_declarations_in_each_providers_shape() {
    let mut items = Vec::new();
    for (id, tool_check, entry_check) in [
        ("openai-responses", "openai-responses/hosted_tool", None),
        (
            "anthropic",
            "anthropic/hosted_toolset",
            Some("anthropic/hosted_server"),
        ),
        (
            "gemini-interactions",
            "gemini-interactions/hosted_tool",
            None,
        ),
    ] {
        let provider = provider(id);
        assert!(provider.hosts_mcp());
        let listing = provider.list_hosted(&servers()).unwrap();
        for (i, tool) in listing.tools.iter().enumerate() {
            items.push(Item::new(
                format!("{id} hosted tool {i}"),
                tool_check,
                tool.clone(),
            ));
        }
        if let Some(check) = entry_check {
            for (i, entry) in listing.request["mcp_servers"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
            {
                items.push(Item::new(format!("{id} server {i}"), check, entry.clone()));
            }
        }
        snapshot(Stage::Listing, Some(id), "hosted", &listing);
        let local: Vec<&str> = listing.local.iter().map(|l| l.server_id.as_str()).collect();
        match id {
            "openai-responses" => assert_eq!(local, ["local"], "{listing:?}"),
            "anthropic" => assert_eq!(local, ["github", "local", "keyed"], "{listing:?}"),
            _ => assert_eq!(local, ["github", "local", "signed-in"], "{listing:?}"),
        }
    }
    let without = provider("openai-chat").list_hosted(&servers()).unwrap();
    assert!(without.tools.is_empty() && without.local.len() == 6);
    assert!(without.local[0].reason.contains("has no hosted MCP"));
    check(&items).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_policy_compiles_into_what_a_hosted_server_may_run() {
    let names: Vec<String> = ["get_issue", "create_issue", "delete_repo"]
        .map(String::from)
        .to_vec();
    let policy = Policy::allow_all()
        .ask("github/create_*")
        .unwrap()
        .deny("delete_*")
        .unwrap();
    assert_eq!(
        policy.hosted_tools("github", Some(&names)),
        Ok(HostedTools::Only {
            run: vec!["get_issue".into()],
            ask: vec!["create_issue".into()]
        })
    );
    // Without the names, rules that single out tools cannot be written.
    assert_eq!(
        policy.hosted_tools("github", None),
        Err(HostedRefusal::ToolNamesNeeded)
    );
    // A glob that cannot be cut at its server concerns every server.
    let braces = Policy::allow_all()
        .deny("{github/delete_*,gitlab/drop_*}")
        .unwrap();
    assert_eq!(
        braces.hosted_tools("github", None),
        Err(HostedRefusal::ToolNamesNeeded)
    );
    assert_eq!(
        braces.hosted_tools("github", Some(&names)),
        Ok(HostedTools::Only {
            run: vec!["get_issue".into(), "create_issue".into()],
            ask: vec![]
        })
    );
    // A server no rule names is open as the default says.
    assert_eq!(
        Policy::allow_all()
            .deny("github/*")
            .unwrap()
            .hosted_tools("deepwiki", None),
        Ok(HostedTools::All)
    );
    assert!(
        Policy::allow_all()
            .deny("github/*")
            .unwrap()
            .hosted_tools("github", None)
            .unwrap_err()
            .to_string()
            .contains("denies every tool")
    );
    assert_eq!(
        Policy::new()
            .allow("deepwiki/*")
            .unwrap()
            .hosted_tools("deepwiki", None),
        Ok(HostedTools::All)
    );
    // Exact names under a default deny are all there is: no listing needed.
    let exact = Policy::new()
        .allow("deepwiki/ask_question")
        .unwrap()
        .ask("read_wiki_contents")
        .unwrap()
        .deny("deepwiki/ask_question")
        .unwrap()
        .allow("deepwiki/read_wiki_structure")
        .unwrap();
    assert_eq!(
        exact.hosted_tools("deepwiki", None),
        Ok(HostedTools::Only {
            run: vec!["read_wiki_structure".into()],
            ask: vec!["read_wiki_contents".into()]
        })
    );
    // Under a default allow, the tools it does not name are allowed too,
    // and their names are needed.
    assert_eq!(
        Policy::allow_all()
            .deny("deepwiki/ask_question")
            .unwrap()
            .hosted_tools("deepwiki", None),
        Err(HostedRefusal::ToolNamesNeeded)
    );
    // One glob among the exact names needs them too.
    assert_eq!(
        Policy::new()
            .allow("deepwiki/ask_question")
            .unwrap()
            .ask("deepwiki/read_*")
            .unwrap()
            .hosted_tools("deepwiki", None),
        Err(HostedRefusal::ToolNamesNeeded)
    );
    // A rule on what the conversation has seen cannot be checked by the provider.
    let tainted = Policy::allow_all()
        .deny_when_tainted("github/*", ["web"])
        .unwrap();
    assert!(
        tainted
            .hosted_tools("github", Some(&names))
            .unwrap_err()
            .to_string()
            .contains("depends on what the conversation has seen")
    );
}

/// The provider's approval requests go to the policy and the approver, and
/// are answered in its shape; its hosted calls taint the turn.
#[test]
fn approval_requests_are_answered_by_the_policy_and_the_approver() {
    let response = read_json(&fixture(
        "openai-responses/vercel__openai-mcp-tool-approval.1.json",
    ));
    let answer = |policy: Policy, approves: Option<bool>| -> Value {
        let mut builder = Source::hub()
            .server("other", InProcessServer::new())
            .policy(policy);
        if let Some(approve) = approves {
            builder = builder.approver(move |request| {
                assert_eq!(request.call.server_id, "zip1");
                assert_eq!(request.call.tool, "create_short_url");
                Box::pin(async move {
                    if approve {
                        Approval::Allow
                    } else {
                        Approval::Deny("not today".into())
                    }
                })
            });
        }
        let source = builder.build().unwrap();
        let provider = provider("openai-responses");
        let run = common::runtime()
            .block_on(async {
                let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
                source
                    .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
                    .await
            })
            .unwrap();
        assert!(run.turn.results.is_empty());
        assert_eq!(run.hosted.approvals.len(), 1);
        assert_eq!(run.approvals.len(), 1);
        assert_eq!(
            run.approvals[0].approved,
            run.approvals[0].item["approve"] == true
        );
        run.approvals[0].item.clone()
    };
    let allowed = answer(Policy::allow_all(), None);
    assert_eq!(allowed["type"], "mcp_approval_response");
    assert_eq!(allowed["approve"], true);
    assert!(
        allowed["approval_request_id"]
            .as_str()
            .is_some_and(|s| s.starts_with("mcpr_")),
        "{allowed}"
    );
    let denied = answer(Policy::allow_all().deny("zip1/*").unwrap(), None);
    assert_eq!(denied["approve"], false);
    assert!(
        denied["reason"].as_str().unwrap().contains("zip1/*"),
        "{denied}"
    );
    let approved = answer(Policy::allow_all().ask("zip1/*").unwrap(), Some(true));
    assert_eq!(approved["approve"], true);
    let refused = answer(Policy::allow_all().ask("zip1/*").unwrap(), Some(false));
    assert_eq!(refused["approve"], false);
    assert!(refused["reason"].as_str().unwrap().contains("not today"));
    check(&[
        Item::new("approved", "openai-responses/hosted_approval", approved),
        Item::new("refused", "openai-responses/hosted_approval", refused),
    ])
    .unwrap_or_else(|e| panic!("{e}"));

    // The hosted calls' servers are in the model's context now.
    let called = read_json(&fixture(
        "openai-responses/vercel__openai-mcp-tool-approval.4.json",
    ));
    let source = Source::hub()
        .server("other", InProcessServer::new())
        .build()
        .unwrap();
    let provider = provider("openai-responses");
    let run = common::runtime().block_on(async {
        let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
        source
            .execute_tool_calls(provider, &called, &listing, &ExecOptions::new())
            .await
            .unwrap()
    });
    assert!(run.ran_servers.contains("zip1"), "{:?}", run.ran_servers);
    assert_eq!(run.hosted.calls.len(), 1);
}

/// One configuration, two places, against the reference server over
/// streamable HTTP: a provider the user describes (Responses-shaped, and
/// reaching `http` URLs so that a local server can stand in) hosts it with
/// the policy's allowed and asked tools, listed here for their names; a
/// provider without approvals runs it here, as does one without hosted MCP,
/// and a stdio server never asks to be hosted.
#[test]
fn a_configuration_is_split_between_the_provider_and_the_library() {
    use mcp_adapters::client::{HostedOptions, split_hosted};
    use mcp_adapters::{HubConfig, Registry, ServerConfig};
    let running = common::servers::everything_http().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("responses-local.yaml"),
        "extends: openai-responses\ntitle: Responses over local http\nhosted_mcp:\n  schemes: [https, http]\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("messages-local.yaml"),
        "extends: anthropic\ntitle: Messages over local http\nhosted_mcp:\n  schemes: [https, http]\n",
    )
    .unwrap();
    let registry = Registry::with_dir(dir.path()).unwrap();
    let hub = HubConfig::new()
        .server("everything", ServerConfig::http(&running.url))
        .host("everything")
        .server("time", ServerConfig::stdio("uvx", ["mcp-server-time"]))
        .host("time")
        .server(
            "keyed",
            ServerConfig::http("https://mcp.example.com/mcp").with("Authorization", "Bearer k"),
        )
        .host("keyed");
    let policy = Policy::new()
        .allow("everything/echo")
        .unwrap()
        .allow("everything/get-sum")
        .unwrap()
        .ask("everything/trigger-long-running-operation")
        .unwrap()
        .allow("keyed/*")
        .unwrap();
    common::runtime().block_on(async {
        let responses = registry.get("responses-local").unwrap();
        let split = split_hosted(&hub, responses, &policy, &HostedOptions::new())
            .await
            .unwrap();
        assert_eq!(split.hosted.tools.len(), 1, "{:?}", split.hosted);
        let tool = &split.hosted.tools[0];
        assert_eq!(tool["server_label"], "everything");
        assert_eq!(
            tool["allowed_tools"],
            json!(["echo", "get-sum", "trigger-long-running-operation"])
        );
        assert_eq!(
            tool["require_approval"],
            json!({"always": {"tool_names": ["trigger-long-running-operation"]},
                   "never": {"tool_names": ["echo", "get-sum"]}})
        );
        let local: Vec<(&str, &str)> = split
            .hosted
            .local
            .iter()
            .map(|l| (l.server_id.as_str(), l.reason.as_str()))
            .collect();
        assert_eq!(local.len(), 2, "{local:?}");
        assert!(
            local[0].0 == "time" && local[0].1.contains("stdio"),
            "{local:?}"
        );
        assert!(
            local[1].0 == "keyed" && local[1].1.contains("credential"),
            "{local:?}"
        );
        let here: Vec<&str> = split
            .local
            .servers()
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(here, ["time", "keyed"]);
        check(&[Item::new(
            "split",
            "openai-responses/hosted_tool",
            tool.clone(),
        )])
        .unwrap_or_else(|e| panic!("{e}"));

        // Passing the credential on is the application's decision.
        let passing = HostedOptions::new().pass_credentials(true);
        let split = split_hosted(&hub, responses, &policy, &passing)
            .await
            .unwrap();
        assert_eq!(split.hosted.tools.len(), 2, "{:?}", split.hosted);
        // A bearer token goes where the provider takes one.
        assert_eq!(split.hosted.tools[1]["authorization"], "k");
        assert!(split.hosted.tools[1].get("headers").is_none());

        // No approval step: a server whose policy asks runs here.
        let messages = registry.get("messages-local").unwrap();
        let split = split_hosted(&hub, messages, &policy, &HostedOptions::new())
            .await
            .unwrap();
        assert!(split.hosted.tools.is_empty(), "{:?}", split.hosted);
        assert!(
            split
                .hosted
                .local
                .iter()
                .any(|l| l.server_id == "everything" && l.reason.contains("no approval step"))
        );
        assert!(split.local.servers().iter().any(|(n, _)| n == "everything"));

        // The provider's own listing names the tools: the server is not listed here.
        let recorded = read(
            "openai-responses",
            "vercel__openai-mcp-tool-approval.1.json",
        );
        let zip = HubConfig::new()
            .server("zip1", ServerConfig::http("https://zip1.io/mcp"))
            .host("zip1");
        let asking = Policy::allow_all().ask("zip1/create_*").unwrap();
        let known = HostedOptions::new().listed_by_provider(&recorded);
        let split = split_hosted(&zip, responses, &asking, &known)
            .await
            .unwrap();
        assert_eq!(
            split.hosted.tools[0]["require_approval"]["always"]["tool_names"],
            json!(["create_short_url"]),
            "{:?}",
            split.hosted
        );

        // The toolset's filters hold for a hosted server too.
        let filtered = HostedOptions::new().deny_tools("everything/get-sum");
        let split = split_hosted(&hub, responses, &policy, &filtered)
            .await
            .unwrap();
        assert_eq!(
            split.hosted.tools[0]["allowed_tools"],
            json!(["echo", "trigger-long-running-operation"])
        );

        // Deferred as a whole where every tool is deferred.
        let deferring = HostedOptions::new().defer("everything/*");
        let split = split_hosted(&hub, responses, &policy, &deferring)
            .await
            .unwrap();
        assert_eq!(split.hosted.tools[0]["defer_loading"], true);

        // A provider cannot fill a bound argument: the server runs here,
        // bound by the application or by its entry.
        let binding =
            mcp_adapters::toolset::Binding::parse("everything/echo:/message=v-4711").unwrap();
        for (hub, options) in [
            (hub.clone(), HostedOptions::new().bind(binding)),
            (
                hub.clone().bind("everything", "echo:/message=v-4711"),
                HostedOptions::new(),
            ),
        ] {
            let split = split_hosted(&hub, responses, &policy, &options)
                .await
                .unwrap();
            assert!(split.hosted.tools.is_empty(), "{:?}", split.hosted);
            let reason = &split
                .hosted
                .local
                .iter()
                .find(|l| l.server_id == "everything")
                .unwrap()
                .reason;
            assert!(
                reason.contains("bind `everything/echo:/message`") && !reason.contains("4711"),
                "{reason}"
            );
            assert!(split.local.servers().iter().any(|(n, _)| n == "everything"));
        }
        // A binding of another server's tools leaves it hosted.
        let elsewhere = HostedOptions::new()
            .bind(mcp_adapters::toolset::Binding::parse("every/echo:/message=v-4711").unwrap())
            .bind(mcp_adapters::toolset::Binding::parse("t*/x:/message=hi").unwrap());
        let split = split_hosted(&hub, responses, &policy, &elsewhere)
            .await
            .unwrap();
        assert_eq!(split.hosted.tools.len(), 1, "{:?}", split.hosted);
    });
}

/// The Interactions API's hosted steps, written from google-genai 3.6.1's
/// types (MCPServerToolCallStep, MCPServerToolResultStep; no recording of
/// one was found): the result is joined to its call.
#[test]
fn interaction_steps_report_hosted_calls() {
    let interaction = json!({"id": "v1_abc", "status": "completed", "steps": [
        {"type": "mcp_server_tool_call", "id": "mcp_1", "name": "ask_question",
         "server_name": "deepwiki", "arguments": {"repoName": "modelcontextprotocol/rust-sdk", "question": "Which transports?"}},
        {"type": "mcp_server_tool_result", "call_id": "mcp_1", "name": "ask_question",
         "server_name": "deepwiki", "result": "stdio and streamable HTTP"},
        {"type": "model_output", "content": [{"type": "text", "text": "Two."}]}
    ]});
    let id = "gemini-interactions";
    let extracted = provider(id)
        .extract_calls(&interaction, &empty_listing(id))
        .unwrap();
    assert!(extracted.calls.is_empty());
    let call = &extracted.hosted.calls[0];
    assert_eq!(
        (call.server_id.as_str(), call.tool.as_str()),
        ("deepwiki", "ask_question")
    );
    assert_eq!(call.output, Some(json!("stdio and streamable HTTP")));
    assert_eq!(call.arguments["question"], "Which transports?");
}

/// Without a policy, the approver decides a hosted call's approval, and
/// without an approver it is denied; a hosted call's output taints the
/// local calls of the same response.
#[test]
fn approvals_without_a_policy_and_taint_within_a_response() {
    let response = read_json(&fixture(
        "openai-responses/vercel__openai-mcp-tool-approval.1.json",
    ));
    let provider = provider("openai-responses");
    let decide = |source: Source| {
        common::runtime().block_on(async {
            let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
            source
                .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
                .await
                .unwrap()
        })
    };
    let bare = Source::client("other", InProcessServer::new())
        .build()
        .unwrap();
    let run = decide(bare);
    assert!(!run.approvals[0].approved);
    assert!(
        run.approvals[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("no approver"),
        "{:?}",
        run.approvals
    );
    let approving = Source::client("other", InProcessServer::new())
        .approver(|_| Box::pin(async { Approval::Allow }))
        .build()
        .unwrap();
    assert!(decide(approving).approvals[0].approved);

    // A response where the provider called `dmcp` and the model then calls a local tool.
    let mut called = read_json(&fixture("openai-responses/vercel__openai-mcp-tool.1.json"));
    called["output"].as_array_mut().unwrap().push(json!({
        "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "send", "arguments": "{}"
    }));
    let mail = InProcessServer::new().tool(
        mcp_adapters::Tool::new("send", "Sends mail", json!({"type": "object"})),
        |_, _| async { Ok(mcp_adapters::CallToolResult::text("sent")) },
    );
    let policy = Policy::allow_all()
        .deny_when_tainted("mail/send", ["dmcp"])
        .unwrap();
    let source = Source::client("mail", mail).policy(policy).build().unwrap();
    let run = common::runtime().block_on(async {
        let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
        source
            .execute_tool_calls(provider, &called, &listing, &ExecOptions::new())
            .await
            .unwrap()
    });
    let error = run.calls[0].error.as_ref().expect("denied once tainted");
    assert_eq!(error.kind(), mcp_adapters::ErrorKind::Denied, "{error}");
}

/// A stream that never closes some of its items (three servers listed at
/// once): they are whole in the final response, and the assembled message
/// and the report hold every server's tools.
#[test]
fn items_a_stream_never_closed_are_settled_by_its_final_response() {
    let items = streamed(
        "openai-responses",
        "pydantic-ai__openai_mcp_three_servers_list_tools_stream.1.response.sse",
    );
    assert_eq!(items.tool_lists.len(), 3, "{items:?}");
    for list in &items.tool_lists {
        assert!(!list.tools.is_empty(), "{list:?}");
    }
}
