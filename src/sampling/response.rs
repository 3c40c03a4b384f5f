//! Reading a provider's response into a `CreateMessageResult`.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::PreparedSampling;
use crate::calls::read_arguments;
use crate::error::{Error, Result};
use crate::json::{MAX_NESTING, deeper_than, type_name};
use crate::mcp::{
    CreateMessageResult, MediaContent, SamplingContent, StopReason, TextContent, ToolUse,
};
use crate::spec::Provider;
use crate::spec::path::JsonPath;
use crate::spec::sampling::{ItemAction, ItemRule, ResponsePlan};
use crate::strict::strip_nulls;

pub(super) fn read(
    provider: &Provider,
    plan: &ResponsePlan,
    response: &Value,
    request: &PreparedSampling,
) -> Result<CreateMessageResult> {
    if !response.is_object() {
        return Err(Error::input(format!(
            "expected a `{}` response object, got {}",
            provider.id(),
            type_name(response)
        )));
    }
    // An object at an error path is not a message (an answer's own `message`, say).
    let message = plan
        .error
        .iter()
        .find_map(|p| present(p.get(response)).filter(|v| !v.is_object()));
    if let Some(message) = message {
        let message = match message {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        return Err(Error::input(format!(
            "provider `{}` answered with an error: {message}",
            provider.id()
        )));
    }
    let sources: Vec<(&str, &Value)> = plan
        .content
        .iter()
        .filter_map(|(name, path)| present(path.get(response)).map(|v| (name.as_str(), v)))
        .collect();
    let empty = |v: &&Value| plan.stop.empty_means_tool_use && v.as_str() == Some("");
    let stop = plan
        .stop
        .from
        .iter()
        .find_map(|(_, p)| present(p.get(response)).filter(|v| !empty(v)));
    let stopped_empty = stop.is_none()
        && plan
            .stop
            .from
            .iter()
            .any(|(_, p)| present(p.get(response)).is_some_and(|v| empty(&v)));
    if sources.is_empty() && stop.is_none() && !stopped_empty {
        let known: Vec<String> = plan
            .content
            .iter()
            .chain(&plan.stop.from)
            .map(|(name, _)| format!("`{name}`"))
            .collect();
        return Err(Error::input(format!(
            "not a `{}` response: it has none of {}",
            provider.id(),
            known.join(", ")
        )));
    }
    let mut reader = Reader {
        provider,
        plan,
        request,
        content: Vec::new(),
        calls: 0,
        ids: HashSet::new(),
    };
    for (name, value) in sources {
        match value {
            Value::String(text) => reader.text(text),
            Value::Array(items) => reader.items(items, 0)?,
            other => {
                return Err(Error::input(format!(
                    "`{name}` is {}: expected text or a list of items",
                    type_name(other)
                )));
            }
        }
    }
    let stop_reason = stop
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .map(|s| match plan.stop.map.get(&s) {
            Some(StopReason::EndTurn) if plan.stop.calls_mean_tool_use && reader.calls > 0 => {
                StopReason::ToolUse
            }
            Some(reason) => reason.clone(),
            None => StopReason::Other(s),
        })
        .or((stopped_empty && reader.calls > 0).then_some(StopReason::ToolUse));
    let model = plan
        .model
        .as_ref()
        .and_then(|p| p.get(response))
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .unwrap_or(request.model())
        .to_owned();
    let mut result = CreateMessageResult::new(model, reader.content);
    result.stop_reason = stop_reason;
    let mut meta = Map::new();
    for (key, path) in &plan.message_meta {
        let Some(value) = present(path.get(response)) else {
            continue;
        };
        if deeper_than(value, MAX_NESTING) {
            return Err(Error::input(format!(
                "the response's value for `{key}` nests deeper than {MAX_NESTING} levels"
            )));
        }
        meta.insert(key.clone(), value.clone());
    }
    if !meta.is_empty() {
        result.meta = Some(meta);
    }
    Ok(result)
}

/// A value that is there and not `null`.
fn present(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| !v.is_null())
}

struct Reader<'a> {
    provider: &'a Provider,
    plan: &'a ResponsePlan,
    request: &'a PreparedSampling,
    content: Vec<SamplingContent>,
    /// The calls read so far.
    calls: usize,
    ids: HashSet<String>,
}

impl Reader<'_> {
    fn text(&mut self, text: &str) {
        if !text.is_empty() {
            self.content.push(SamplingContent::Text(TextContent {
                text: text.to_owned(),
                annotations: None,
                meta: None,
            }));
        }
    }

    fn items(&mut self, items: &[Value], depth: usize) -> Result<()> {
        if depth > MAX_NESTING {
            return Err(Error::input(format!(
                "the response's items nest deeper than {MAX_NESTING} levels"
            )));
        }
        for item in items {
            if self.provider.is_call(item) {
                let tool_use = self.tool_use(item)?;
                self.content.push(SamplingContent::ToolUse(tool_use));
                continue;
            }
            let Some(rule) = self.plan.items.iter().find(|r| matches(r, item)) else {
                continue;
            };
            match &rule.action {
                ItemAction::Skip => {}
                ItemAction::Text(path) => {
                    if let Some(text) = path.get(item).and_then(Value::as_str) {
                        self.text(text);
                    }
                }
                ItemAction::Media { mime, data } => self.media(item, mime, data)?,
                ItemAction::Each(path) => match path.get(item) {
                    Some(Value::Array(inner)) => self.items(inner, depth + 1)?,
                    None | Some(Value::Null) => {}
                    Some(other) => {
                        return Err(Error::input(format!(
                            "an item's list of parts is {}, not an array",
                            type_name(other)
                        )));
                    }
                },
            }
        }
        Ok(())
    }

    fn media(&mut self, item: &Value, mime: &JsonPath, data: &JsonPath) -> Result<()> {
        let (Some(mime), Some(data)) = (
            mime.get(item).and_then(Value::as_str),
            data.get(item).and_then(Value::as_str),
        ) else {
            return Err(Error::input(
                "a media part of the response lacks its MIME type or data",
            ));
        };
        let media = MediaContent {
            data: data.to_owned(),
            mime_type: mime.to_owned(),
            annotations: None,
            meta: None,
        };
        let block = match mime.split('/').next() {
            Some("image") => SamplingContent::Image(media),
            Some("audio") => SamplingContent::Audio(media),
            _ => {
                return Err(Error::input(format!(
                    "the response holds a {mime} part, which an MCP result cannot carry (images and audio only)"
                )));
            }
        };
        self.content.push(block);
        Ok(())
    }

    /// A call as a `tool_use` block: its id (or `call_<n>`), the name the
    /// server offered, its arguments as an object and the `_meta` the spec keeps.
    fn tool_use(&mut self, item: &Value) -> Result<ToolUse> {
        let calls = &self.provider.calls;
        let n = self.calls;
        self.calls += 1;
        let name = string_at(&calls.name.path, item)
            .ok_or_else(|| Error::input(format!("the response's call {n} names no tool")))?;
        let id = string_at(&calls.id.path, item).unwrap_or_else(|| format!("call_{n}"));
        if !self.ids.insert(id.clone()) {
            return Err(
                Error::input(format!("the response's calls repeat the id `{id}`"))
                    .with_call_id(&id),
            );
        }
        let listed = self
            .request
            .listing()
            .and_then(|l| l.toolset().resolve(&name));
        let mut input = read_arguments(
            calls.arguments.path.get(item),
            calls.arg_format,
            calls.missing_arguments,
        )
        .map_err(|e| {
            let message = format!("the call of `{name}` (id `{id}`): {}", e.message());
            e.with_message(message).with_tool(&name).with_call_id(&id)
        })?;
        if let (Some(listing), Some(tool)) = (self.request.listing(), listed)
            && let Some(paths) = listing.null_paths.get(&tool.exposed_name)
        {
            strip_nulls(&mut input, paths);
        }
        let mut meta = Map::new();
        for (key, path) in &self.plan.tool_use_meta {
            let Some(value) = present(path.get(item)) else {
                continue;
            };
            if deeper_than(value, MAX_NESTING) {
                return Err(Error::input(format!("the call of `{name}` (id `{id}`) has a value for `{key}` nested deeper than {MAX_NESTING} levels"))
                .with_call_id(&id));
            }
            meta.insert(key.clone(), value.clone());
        }
        let name = listed.map_or(name, |tool| tool.tool.name.clone());
        let mut tool_use = ToolUse::new(id, name, input);
        tool_use.meta = (!meta.is_empty()).then_some(meta);
        Ok(tool_use)
    }
}

fn string_at(path: &JsonPath, item: &Value) -> Option<String> {
    match path.get(item)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn matches(rule: &ItemRule, item: &Value) -> bool {
    match &rule.when {
        None => true,
        Some((path, None)) => present(path.get(item)).is_some(),
        Some((path, Some(want))) => path.get(item) == Some(want),
    }
}
