//! Shared by the agent-loop examples: the MCP servers from `mcp.json` (or
//! `MCP_CONFIG`), or mcp-server-time when there is none.

use mcp_adapters::Source;
use mcp_adapters::{HubConfig, ServerConfig};

pub async fn source() -> Result<Source, Box<dyn std::error::Error>> {
    let config = match std::env::var("MCP_CONFIG") {
        Ok(path) => HubConfig::from_file(path)?,
        Err(_) => HubConfig::new().server("time", ServerConfig::stdio("uvx", ["mcp-server-time"])),
    };
    // A server that does not start fails `connect`, naming it and why.
    let builder = config
        .connect()
        .await
        .map_err(|e| format!("{e} (set MCP_CONFIG to an mcpServers file to use other servers)"))?;
    Ok(builder.build()?)
}

/// The environment variable `name`, or an error that names it.
#[allow(dead_code)]
pub fn env(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("set {name}: the example calls the real API with it"))
}

pub async fn post(
    url: &str,
    headers: &[(&str, String)],
    body: &serde_json::Value,
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let mut request = reqwest::Client::new().post(url).json(body);
    for (k, v) in headers {
        request = request.header(*k, v);
    }
    let response = request.send().await?;
    let status = response.status();
    let value: serde_json::Value = response.json().await?;
    if !status.is_success() {
        return Err(format!("{url}: {status}: {value}").into());
    }
    Ok(value)
}
