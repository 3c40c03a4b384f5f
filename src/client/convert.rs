//! Conversions between the official SDK's model types and this crate's.
//!
//! Both follow MCP's wire JSON, so each conversion goes through
//! `serde_json::Value`: what one side serializes, the other reads. A value the
//! other side cannot represent (a content block of a type the SDK does not
//! know, say) is an [`ErrorKind::Input`] error naming the type.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{CallToolResult, Content, Tool};

/// Re-reads `value` as a `U` through its JSON form.
fn via_json<T: Serialize, U: DeserializeOwned>(value: &T, what: &str) -> Result<U> {
    let json = serde_json::to_value(value).map_err(|e| {
        Error::new(ErrorKind::Input, format!("cannot serialize the {what}")).with_source(e)
    })?;
    serde_json::from_value(json).map_err(|e| {
        Error::new(ErrorKind::Input, format!("cannot convert the {what}")).with_source(e)
    })
}

impl TryFrom<rmcp::model::Tool> for Tool {
    type Error = Error;
    fn try_from(tool: rmcp::model::Tool) -> Result<Self> {
        via_json(&tool, "tool").map_err(|e| e.with_tool(tool.name.to_string()))
    }
}

impl TryFrom<&Tool> for rmcp::model::Tool {
    type Error = Error;
    fn try_from(tool: &Tool) -> Result<Self> {
        via_json(tool, "tool").map_err(|e| e.with_tool(tool.name.clone()))
    }
}

impl TryFrom<Tool> for rmcp::model::Tool {
    type Error = Error;
    fn try_from(tool: Tool) -> Result<Self> {
        Self::try_from(&tool)
    }
}

impl TryFrom<rmcp::model::CallToolResult> for CallToolResult {
    type Error = Error;
    fn try_from(result: rmcp::model::CallToolResult) -> Result<Self> {
        via_json(&result, "tool result")
    }
}

impl TryFrom<&CallToolResult> for rmcp::model::CallToolResult {
    type Error = Error;
    fn try_from(result: &CallToolResult) -> Result<Self> {
        via_json(result, "tool result")
    }
}

impl TryFrom<CallToolResult> for rmcp::model::CallToolResult {
    type Error = Error;
    fn try_from(result: CallToolResult) -> Result<Self> {
        Self::try_from(&result)
    }
}

/// Every SDK content block is one of ours (an unexpected shape is kept as
/// [`Content::Unknown`]), so this direction cannot fail.
impl From<rmcp::model::ContentBlock> for Content {
    fn from(block: rmcp::model::ContentBlock) -> Self {
        match serde_json::to_value(&block) {
            Ok(value) => Content::from_value(value),
            Err(e) => Content::Unknown(serde_json::json!({
                "type": "unknown",
                "error": format!("cannot serialize the content block: {e}"),
            })),
        }
    }
}

impl TryFrom<&Content> for rmcp::model::ContentBlock {
    type Error = Error;
    fn try_from(content: &Content) -> Result<Self> {
        via_json(content, &format!("`{}` content block", content.type_name()))
    }
}

impl TryFrom<Content> for rmcp::model::ContentBlock {
    type Error = Error;
    fn try_from(content: Content) -> Result<Self> {
        Self::try_from(&content)
    }
}
