//! MCP's own rules for a sampling conversation (`client/sampling.mdx`,
//! 2025-11-25 and 2026-07-28), which the client checks before any provider
//! sees the request, and answers with JSON-RPC error `-32602` when broken:
//!
//! - tool uses are the assistant's and tool results the user's;
//! - a user message with `tool_result` blocks holds nothing else;
//! - every assistant message with `tool_use` blocks is followed by a user
//!   message that answers each of them, and only them;
//! - the ids of one message's tool uses (and results) are distinct.

use std::collections::BTreeSet;

use crate::error::{Error, Result};
use crate::mcp::{Role, SamplingContent, SamplingMessage};

fn error(message: usize, text: String) -> Error {
    Error::input(text).with_path(format!("/messages/{message}"))
}

/// Checks `messages` against MCP's rules; the error names the message.
pub(super) fn check(messages: &[SamplingMessage]) -> Result<()> {
    if messages.is_empty() {
        return Err(Error::input("the sampling request has no messages").with_path("/messages"));
    }
    let mut pending: Option<(usize, BTreeSet<&str>)> = None;
    for (i, message) in messages.iter().enumerate() {
        check_roles(i, message)?;
        let uses = ids(i, message, |b| match b {
            SamplingContent::ToolUse(u) => Some(u.id.as_str()),
            _ => None,
        })?;
        let results = ids(i, message, |b| match b {
            SamplingContent::ToolResult(r) => Some(r.tool_use_id.as_str()),
            _ => None,
        })?;
        if !results.is_empty() && results.len() < message.content.len() {
            return Err(error(
                i,
                format!(
                    "message {i} mixes tool_result blocks with other content: a user message with tool results holds only tool results"
                ),
            ));
        }
        match pending.take() {
            Some((asked, wanted)) => answers(i, asked, &wanted, &results)?,
            None if !results.is_empty() => {
                let id = results.iter().next().copied().unwrap_or_default();
                return Err(error(
                    i,
                    format!(
                        "message {i} answers tool use `{id}`, but the message before it calls no tools"
                    ),
                ));
            }
            None => {}
        }
        if !uses.is_empty() {
            pending = Some((i, uses));
        }
    }
    if let Some((asked, wanted)) = pending {
        let id = wanted.iter().next().copied().unwrap_or_default();
        return Err(error(
            asked,
            format!(
                "message {asked} calls tools (`{id}`), but no message answers them: the next message must be a user message with their tool_result blocks"
            ),
        ));
    }
    Ok(())
}

fn check_roles(i: usize, message: &SamplingMessage) -> Result<()> {
    for (j, block) in message.content.iter().enumerate() {
        let misplaced = match (message.role, block) {
            (Role::User, SamplingContent::ToolUse(_)) => "a tool_use block is the assistant's",
            (Role::Assistant, SamplingContent::ToolResult(_)) => {
                "a tool_result block is the user's"
            }
            _ => continue,
        };
        return Err(Error::input(format!(
            "message {i}, block {j}: {misplaced}; it cannot be in a {} message",
            message.role.as_str()
        ))
        .with_path(format!("/messages/{i}/content/{j}")));
    }
    Ok(())
}

/// The ids `pick` finds in a message's blocks, which must be distinct.
fn ids<'m>(
    i: usize,
    message: &'m SamplingMessage,
    pick: impl Fn(&'m SamplingContent) -> Option<&'m str>,
) -> Result<BTreeSet<&'m str>> {
    let mut out = BTreeSet::new();
    for id in message.content.iter().filter_map(pick) {
        if !out.insert(id) {
            return Err(error(i, format!("message {i} uses the id `{id}` twice")));
        }
    }
    Ok(out)
}

/// Message `i` answers exactly the tool uses of message `asked`.
fn answers(i: usize, asked: usize, wanted: &BTreeSet<&str>, given: &BTreeSet<&str>) -> Result<()> {
    if let Some(missing) = wanted.difference(given).next() {
        return Err(error(
            i,
            format!(
                "message {i} does not answer tool use `{missing}` of message {asked}: a tool use is answered by a tool_result in the next message"
            ),
        ));
    }
    if let Some(extra) = given.difference(wanted).next() {
        return Err(error(
            i,
            format!("message {i} answers tool use `{extra}`, which message {asked} does not call"),
        ));
    }
    Ok(())
}
