//! Conversions between the official SDK's model types and this crate's.
//!
//! Both follow MCP's wire JSON, so each conversion goes through
//! `serde_json::Value`: what one side serializes, the other reads. A value the
//! other side cannot represent (a content block of a type the SDK does not
//! know, say) is an [`ErrorKind::Input`] error naming the type.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{CallToolResponse, CallToolResult, Content, Object, Tool};

/// Re-reads `value` as a `U` through its JSON form.
fn via_json<T: Serialize, U: DeserializeOwned>(value: &T, what: &str) -> Result<U> {
    let json = serde_json::to_value(value)
        .map_err(|e| Error::input(format!("cannot serialize the {what}")).with_source(e))?;
    serde_json::from_value(json)
        .map_err(|e| Error::input(format!("cannot convert the {what}")).with_source(e))
}

/// Field by field: the schemas, the name and the description are moved
/// across, not copied (a server may list thousands of tools); the small
/// typed parts (annotations, icons) go through JSON.
impl TryFrom<rmcp::model::Tool> for Tool {
    type Error = Error;
    fn try_from(tool: rmcp::model::Tool) -> Result<Self> {
        let rmcp::model::Tool {
            name,
            title,
            description,
            input_schema,
            output_schema,
            annotations,
            icons,
            meta,
            ..
        } = tool;
        let name = name.into_owned();
        let schema = |schema: std::sync::Arc<Object>| {
            serde_json::Value::Object(std::sync::Arc::unwrap_or_clone(schema))
        };
        let named = |e: Error| e.with_tool(name.clone());
        let annotations = match annotations {
            Some(annotations) => Some(via_json(&annotations, "tool's annotations").map_err(named)?),
            None => None,
        };
        let icons = match icons {
            Some(icons) => Some(via_json(&icons, "tool's icons").map_err(named)?),
            None => None,
        };
        Ok(Tool {
            title,
            description: description.map(std::borrow::Cow::into_owned),
            input_schema: schema(input_schema),
            output_schema: output_schema.map(schema),
            annotations,
            icons,
            meta: meta.map(|meta| meta.0),
            extra: Object::new(),
            name,
        })
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

/// Field by field rather than through JSON: each content block is moved
/// across, a text block without annotations or `_meta` as it is, any other
/// through [`Content::from`].
impl TryFrom<rmcp::model::CallToolResult> for CallToolResult {
    type Error = Error;
    fn try_from(result: rmcp::model::CallToolResult) -> Result<Self> {
        let rmcp::model::CallToolResult {
            result_type,
            content,
            structured_content,
            is_error,
            meta,
            ..
        } = result;
        let mut extra = Object::new();
        if let Some(result_type) = result_type {
            extra.insert(
                "resultType".into(),
                serde_json::Value::String(result_type.as_str().to_owned()),
            );
        }
        CallToolResult::check_complete(&extra)
            .map_err(|e| Error::input(format!("cannot convert the tool result: {e}")))?;
        let meta = match meta {
            Some(meta) => Some(via_json(&meta, "tool result's _meta")?),
            None => None,
        };
        Ok(CallToolResult {
            content: content.into_iter().map(Content::from).collect(),
            // An explicit `null` reads as no structured content.
            structured_content: structured_content.filter(|v| !v.is_null()),
            is_error: is_error.unwrap_or(false),
            meta,
            extra,
        })
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
        match block {
            rmcp::model::ContentBlock::Text(text)
                if text.meta.is_none() && text.annotations.is_none() =>
            {
                Content::text(text.text)
            }
            block => match serde_json::to_value(&block) {
                Ok(value) => Content::from_value(value),
                Err(e) => Content::Unknown(serde_json::json!({
                    "type": "unknown",
                    "error": format!("cannot serialize the content block: {e}"),
                })),
            },
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

/// A `tools/call` answer as the SDK read it, as this crate's
/// [`CallToolResponse`]. What the SDK has no type for (an input request of a
/// kind it does not know, a `resultType` it does not know) reaches it as raw
/// JSON and is read here.
///
/// # Errors
///
/// [`ErrorKind::Server`] for an answer that is no `tools/call` result, and
/// [`ErrorKind::Input`] for one that cannot be read.
pub(crate) fn call_tool_response(answer: rmcp::model::ServerResult) -> Result<CallToolResponse> {
    use rmcp::model::ServerResult;
    match answer {
        ServerResult::CallToolResult(result) => {
            CallToolResult::try_from(result).map(CallToolResponse::Complete)
        }
        // A result without content: `{}` (before 2026-07-28) or `{"resultType": "complete"}`.
        ServerResult::EmptyResult(_) | ServerResult::TaskAckResult(_) => {
            Ok(CallToolResponse::Complete(CallToolResult::default()))
        }
        ServerResult::InputRequiredResult(result) => {
            via_json(&result, "input_required result").map(CallToolResponse::InputRequired)
        }
        ServerResult::CreateTaskResult(result) => {
            via_json(&result, "task result").map(CallToolResponse::Task)
        }
        ServerResult::CustomResult(rmcp::model::CustomResult(value)) => {
            CallToolResponse::from_value(value)
        }
        _ => Err(Error::new(
            ErrorKind::Server,
            "the answer is not a tools/call result",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The field-by-field conversion reads a result as its JSON would be read.
    #[test]
    fn a_result_converts_as_its_json_reads() {
        let results = [
            json!({"content": [{"type": "text", "text": "plain"}]}),
            json!({"content": [], "isError": true}),
            json!({"content": [{"type": "text", "text": "t", "annotations": {"audience": ["user"], "priority": 0.5}}],
                   "structuredContent": {"n": 1}, "_meta": {"k": "v"}, "resultType": "complete"}),
            json!({"content": [{"type": "text", "text": "t", "_meta": {"a": 1}},
                               {"type": "image", "data": "aGk=", "mimeType": "image/png"},
                               {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
                               {"type": "resource_link", "uri": "file:///a", "name": "a"},
                               {"type": "resource", "resource": {"uri": "file:///b", "text": "b"}}],
                   "structuredContent": null}),
            json!({"content": [{"type": "text", "text": "x"}], "structuredContent": [1, 2]}),
        ];
        for value in results {
            let sdk: rmcp::model::CallToolResult = serde_json::from_value(value.clone()).unwrap();
            let expected: CallToolResult = via_json(&sdk, "tool result").unwrap();
            let converted = CallToolResult::try_from(sdk).unwrap();
            assert_eq!(converted, expected, "{value}");
        }
    }

    /// A result whose `resultType` is not `complete` is refused, as when read from JSON.
    #[test]
    fn an_incomplete_result_type_is_refused() {
        let mut sdk: rmcp::model::CallToolResult =
            serde_json::from_value(json!({"content": []})).unwrap();
        sdk.result_type = Some(rmcp::model::ResultType::INPUT_REQUIRED);
        let via: Result<CallToolResult> = via_json(&sdk, "tool result");
        let err = CallToolResult::try_from(sdk).unwrap_err();
        assert!(via.is_err());
        assert_eq!(err.kind(), ErrorKind::Input);
        assert!(
            err.message().contains("input_required"),
            "{}",
            err.message()
        );
    }
}
