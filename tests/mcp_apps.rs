//! MCP Apps (`io.modelcontextprotocol/ui`): a tool for the app's own
//! interface (`_meta.ui.visibility` without `"model"`) is never offered to a
//! model, and the application calls it through the same governed pipeline;
//! a tool's UI resource comes with its call's record, and the application
//! reads it from its server. Held to the official
//! PDF server (`@modelcontextprotocol/server-pdf`, pinned, from npm) and to
//! an in-process server.

mod common;

use common::*;
use mcp_adapters::exec::CallOutcome;
use mcp_adapters::toolset::DropReason;
use mcp_adapters::*;
use serde_json::{Map, Value, json};

fn app_tool(name: &str, visibility: Value) -> Tool {
    let mut tool = Tool::new(name, "A tool", json!({"type": "object", "properties": {}}));
    tool.meta = Some(
        json!({"ui": {"visibility": visibility, "resourceUri": "ui://viewer/app.html"}})
            .as_object()
            .unwrap()
            .clone(),
    );
    tool
}

fn viewer() -> InProcessServer {
    let ok = |_args: Map<String, Value>, _ctx| async { Ok(CallToolResult::text("saved")) };
    InProcessServer::new()
        .tool(app_tool("show", json!(["model", "app"])), ok)
        .tool(app_tool("save", json!(["app"])), ok)
        .tool(
            Tool::new("plain", "A plain tool", json!({"type": "object"})),
            ok,
        )
        .resource(mcp::ResourceContents {
            uri: "ui://viewer/app.html".into(),
            mime_type: Some("text/html;profile=mcp-app".into()),
            text: Some("<!doctype html><title>Viewer</title>".into()),
            blob: None,
            meta: None,
        })
}

#[test]
fn a_tool_for_the_app_is_not_offered_to_the_model_and_the_app_calls_it() {
    let source = Source::hub()
        .server("pdf", viewer())
        .policy(Policy::allow_all().deny("pdf/plain").unwrap())
        .build()
        .unwrap();
    let provider = provider("anthropic");
    current_thread_runtime().block_on(async {
        let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
        // `plain`, which the policy denies, is not offered either.
        assert_eq!(tool_names(&listing), ["pdf__show"]);
        let dropped = &listing.report.toolset.dropped;
        assert_eq!(dropped.len(), 2);
        assert_eq!((dropped[0].tool.as_str(), &dropped[0].reason), ("save", &DropReason::AppOnly));
        let by_policy = DropReason::DeniedByPolicy { rule: Some("pdf/plain".into()) };
        assert_eq!((dropped[1].tool.as_str(), &dropped[1].reason), ("plain", &by_policy));
        assert!(listing.toolset().resolve("pdf__save").is_none());
        assert!(listing.toolset().app_tool("pdf", "save").is_some());

        // The model cannot call it, even by guessing its name.
        let response = json!({"content": [{"type": "tool_use", "id": "toolu_1", "name": "pdf__save", "input": {}}]});
        let run = source
            .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(run.calls[0].error.as_ref().unwrap().kind(), ErrorKind::UnknownTool);

        // The application can, through the pipeline: the policy still applies.
        let record = source
            .call_app_tool("pdf", "save", Map::new(), &ExecOptions::new())
            .await
            .unwrap();
        assert!(record.ran && record.error.is_none(), "{record:?}");
        assert_eq!(record.result.unwrap().content.len(), 1);
        assert_eq!(record.ui_resource.as_deref(), Some("ui://viewer/app.html"));
        // The host reads the interface to render it.
        let ui = record.ui_resource.as_deref().unwrap();
        let page = source.read_resource("pdf", ui).await.unwrap();
        assert_eq!(page.contents[0].mime_type.as_deref(), Some("text/html;profile=mcp-app"));
        assert!(page.contents[0].text.as_deref().unwrap().starts_with("<!doctype html>"));
        let missing = source.read_resource("pdf", "ui://viewer/none.html").await.unwrap_err();
        assert!(missing.to_string().contains("no resource `ui://viewer/none.html`"), "{missing}");
        let stranger = source.read_resource("nope", ui).await.unwrap_err();
        assert_eq!(stranger.kind(), ErrorKind::Input);
        // The application may call a tool the policy held back; the policy denies it.
        let denied = source
            .call_app_tool("pdf", "plain", Map::new(), &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(denied.outcome, CallOutcome::Denied);
        assert_eq!(denied.error.unwrap().kind(), ErrorKind::Denied);
        let unknown = source
            .call_app_tool("pdf", "nope", Map::new(), &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(unknown.error.unwrap().kind(), ErrorKind::UnknownTool);

        // A model's call to a tool with a UI carries it in its record.
        let response = json!({"content": [{"type": "tool_use", "id": "toolu_2", "name": "pdf__show", "input": {}}]});
        let run = source
            .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(run.calls[0].ui_resource.as_deref(), Some("ui://viewer/app.html"));
    });
}

/// The official PDF server lists nine tools; the six for its viewer only
/// are not offered to any provider, and its viewer's resource is known.
#[test]
fn the_official_pdf_server_offers_the_model_only_its_model_tools() {
    let (command, args) = servers::pdf().unwrap_or_else(|e| panic!("{e}"));
    let config = ServerConfig::Stdio {
        command,
        args,
        env: Default::default(),
    };
    current_thread_runtime().block_on(async {
        // Declared as a host that renders the views: the model still sees three.
        let options = ClientOptions::new().mcp_apps(true);
        let client = McpClient::connect("pdf", &config, &options).await.unwrap();
        let source = Source::client("pdf", client).build().unwrap();
        for id in CORE_PROVIDERS {
            let listing = source
                .tools(provider(id), &ListOptions::new())
                .await
                .unwrap();
            let offered: Vec<&str> = listing
                .toolset()
                .tools()
                .iter()
                .map(|t| t.exposed_name.as_str())
                .collect();
            assert_eq!(offered, ["list_pdfs", "display_pdf", "interact"], "{id}");
            assert_eq!(listing.tools.len(), 3, "{id}");
            let app_only: Vec<&str> = listing
                .report
                .toolset
                .dropped
                .iter()
                .filter(|d| d.reason == DropReason::AppOnly)
                .map(|d| d.tool.as_str())
                .collect();
            assert_eq!(
                app_only,
                [
                    "read_pdf_bytes",
                    "submit_page_data",
                    "submit_save_data",
                    "submit_viewer_state",
                    "poll_pdf_commands",
                    "save_pdf"
                ],
                "{id}"
            );
        }
        let toolset = source.toolset().await.unwrap();
        let display = toolset.app_tool("pdf", "display_pdf").unwrap();
        assert_eq!(
            display.tool.ui_resource_uri(),
            Some("ui://pdf-viewer/mcp-app.html")
        );
        assert!(toolset.app_tool("pdf", "save_pdf").is_some());
        // Its interface, read as a host reads it to render the view.
        let page = source
            .read_resource("pdf", "ui://pdf-viewer/mcp-app.html")
            .await
            .unwrap();
        let view = &page.contents[0];
        assert_eq!(view.uri, "ui://pdf-viewer/mcp-app.html");
        assert_eq!(view.mime_type.as_deref(), Some("text/html;profile=mcp-app"));
        let html = view.text.as_deref().unwrap();
        assert!(
            html.len() > 1_000 && html.contains("<html"),
            "{:.200}",
            html
        );
    });
}
