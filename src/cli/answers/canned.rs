//! A canned sampling answer: the `result` of a `sampling:` rule, checked
//! when the file is read to be a model's message as MCP sends it.

use base64::Engine as _;
use mcp_adapters::mcp::CreateMessageResult;
use serde_json::Value;

/// The fields of a `CreateMessageResult`.
const RESULT_FIELDS: [&str; 5] = ["role", "content", "model", "stopReason", "_meta"];

/// Checks a canned `CreateMessageResult`: the model's message as MCP sends
/// it, with text, image or audio blocks. `Err` is the path below `result`
/// and what is wrong there.
pub(super) fn model_message(
    value: &Value,
) -> std::result::Result<CreateMessageResult, (String, String)> {
    let at = |path: &str, message: String| (path.to_owned(), message);
    let Value::Object(map) = value else {
        return Err(at(
            "",
            format!(
                "`result` must be a CreateMessageResult object ({{role, content, model, stopReason}}), not {}",
                type_name(value)
            ),
        ));
    };
    if let Some(unknown) = map.keys().find(|k| !RESULT_FIELDS.contains(&k.as_str())) {
        return Err(at(
            &format!("/{unknown}"),
            format!(
                "unknown field `{unknown}` (a CreateMessageResult has {})",
                RESULT_FIELDS.join(", ")
            ),
        ));
    }
    match map.get("role") {
        Some(Value::String(role)) if role == "assistant" => {}
        Some(other) => {
            return Err(at(
                "/role",
                format!(
                    "`role` must be `assistant` (the answer is the model's message), not {other}"
                ),
            ));
        }
        None => return Err(at("", "`role: assistant` is missing".into())),
    }
    match map.get("model") {
        Some(Value::String(model)) if !model.trim().is_empty() => {}
        Some(_) => {
            return Err(at(
                "/model",
                "`model` must name the model that wrote the answer".into(),
            ));
        }
        None => {
            return Err(at(
                "",
                "`model` is missing: name the model that wrote the answer".into(),
            ));
        }
    }
    if let Some(reason) = map.get("stopReason")
        && !reason.is_string()
    {
        return Err(at(
            "/stopReason",
            format!(
                "`stopReason` must be a string (endTurn, stopSequence, maxTokens), not {}",
                type_name(reason)
            ),
        ));
    }
    if let Some(meta) = map.get("_meta")
        && !meta.is_object()
    {
        return Err(at("/_meta", "`_meta` must be an object".into()));
    }
    match map.get("content") {
        Some(Value::Array(blocks)) if blocks.is_empty() => {
            return Err(at("/content", "`content` has no block".into()));
        }
        Some(Value::Array(blocks)) => {
            for (i, block) in blocks.iter().enumerate() {
                content_block(block).map_err(|why| at(&format!("/content/{i}"), why))?;
            }
        }
        Some(block) => content_block(block).map_err(|why| at("/content", why))?,
        None => {
            return Err(at(
                "",
                "`content` is missing: a content block such as {type: text, text: ...}".into(),
            ));
        }
    }
    serde_json::from_value(value.clone())
        .map_err(|e| at("", format!("not a CreateMessageResult: {e}")))
}

/// Checks one block of a model's message: text, or image or audio with base64 data.
fn content_block(block: &Value) -> std::result::Result<(), String> {
    let kind = block.get("type").and_then(Value::as_str);
    let string = |field: &str| block.get(field).and_then(Value::as_str);
    match kind {
        Some("text") if string("text").is_some() => Ok(()),
        Some("text") => Err("a `text` block needs `text`, a string".into()),
        Some(kind @ ("image" | "audio")) => {
            let (Some(data), Some(_)) = (string("data"), string("mimeType")) else {
                return Err(format!(
                    "an `{kind}` block needs `data` (base64) and `mimeType`, both strings"
                ));
            };
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .map(|_| ())
                .map_err(|e| format!("the `{kind}` block's `data` is not base64: {e}"))
        }
        Some(other) => Err(format!(
            "a block of type `{other}`: a canned answer holds text, image or audio blocks"
        )),
        None => Err("a content block needs a `type` (text, image or audio)".into()),
    }
}

pub(super) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
