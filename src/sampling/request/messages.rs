//! Rendering the conversation: each turn by its role's templates, tool uses
//! as the spec writes them, tool results by the results section.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use super::{media, render};
use crate::error::{Error, Result};
use crate::json::{MAX_NESTING, deeper_than};
use crate::listing::Listing;
use crate::mcp::{CallToolResult, Object, Role, SamplingContent, SamplingMessage, ToolUse};
use crate::results::{Outcome, ResultOptions};
use crate::spec::Provider;
use crate::spec::results::ContentForm;
use crate::spec::sampling::{
    CallIds, FollowUpPlacement, IdAlphabet, ResultsPlacement, RolePlan, SamplingPlan, ToolUseInto,
};
use crate::spec::template::Var;

/// Messages as rendered: consecutive messages of one role merged where the
/// spec says so; each block keeps its message and block index for errors.
pub(super) struct Turn<'a> {
    role: Role,
    blocks: Vec<Block<'a>>,
}

pub(super) struct Block<'a> {
    message: usize,
    index: usize,
    content: &'a SamplingContent,
    /// The `_meta` of the block's message.
    meta: Option<&'a Object>,
}

impl Block<'_> {
    pub(super) fn error(&self, message: impl Into<String>) -> Error {
        Error::input(message)
            .with_path(format!("/messages/{}/content/{}", self.message, self.index))
    }
}

pub(super) fn turns(messages: &[SamplingMessage], merge: bool) -> Vec<Turn<'_>> {
    let mut out: Vec<Turn<'_>> = Vec::with_capacity(messages.len());
    for (message, m) in messages.iter().enumerate() {
        let blocks = m.content.iter().enumerate().map(|(index, content)| Block {
            message,
            index,
            content,
            meta: m.meta.as_ref(),
        });
        match out.last_mut() {
            Some(last) if merge && last.role == m.role => last.blocks.extend(blocks),
            _ => out.push(Turn {
                role: m.role,
                blocks: blocks.collect(),
            }),
        }
    }
    out
}

/// What a message's blocks become before its envelope wraps them.
pub(super) enum Part {
    Text(String),
    Block(Value),
    Attach(Value),
}

pub(super) struct Writer<'a> {
    provider: &'a Provider,
    plan: &'a SamplingPlan,
    results: &'a ResultOptions,
    /// Tool use id to the name the provider knows the tool by.
    names: HashMap<String, String>,
    listing: Option<&'a Listing>,
    out: Vec<Value>,
    /// Call ids of the history and the form the provider takes them in
    /// (`call_ids`), and back, to refuse two ids that would become one.
    ids: HashMap<String, String>,
    made: HashMap<String, String>,
}

impl<'a> Writer<'a> {
    pub(super) fn new(
        provider: &'a Provider,
        plan: &'a SamplingPlan,
        results: &'a ResultOptions,
        listing: Option<&'a Listing>,
    ) -> Self {
        Writer {
            provider,
            plan,
            results,
            names: HashMap::new(),
            listing,
            out: Vec::new(),
            ids: HashMap::new(),
            made: HashMap::new(),
        }
    }

    /// A call id in the form the provider takes: as it is when it fits the
    /// spec's `call_ids`, else one made from it (the same for its tool use
    /// and for the result that answers it).
    fn call_id(&mut self, id: &str, block: &Block<'_>) -> Result<String> {
        let Some(form) = self.plan.call_ids else {
            return Ok(id.to_owned());
        };
        if let Some(known) = self.ids.get(id) {
            return Ok(known.clone());
        }
        let out = if fits(&form, id) {
            id.to_owned()
        } else {
            made_id(&form, id)
        };
        if let Some(other) = self.made.get(&out).filter(|o| *o != id) {
            return Err(block.error(format!(
                "call ids `{other}` and `{id}` would both be `{out}` for provider `{}`, whose ids must be {}",
                self.provider.id(),
                describe(&form)
            )));
        }
        self.made.insert(out.clone(), id.to_owned());
        self.ids.insert(id.to_owned(), out.clone());
        Ok(out)
    }

    /// Adds a message before the conversation's (a system message).
    pub(super) fn push(&mut self, message: Value) {
        self.out.push(message);
    }

    /// The rendered messages and items, in order.
    pub(super) fn into_messages(self) -> Vec<Value> {
        self.out
    }

    pub(super) fn turn(&mut self, turn: &Turn<'_>) -> Result<()> {
        match turn.role {
            Role::Assistant => self.assistant(&turn.blocks),
            Role::User => {
                let (results, rest): (Vec<&Block<'_>>, Vec<&Block<'_>>) = turn
                    .blocks
                    .iter()
                    .partition(|b| matches!(b.content, SamplingContent::ToolResult(_)));
                if results.is_empty() {
                    let parts = self.parts(&self.plan.user, "user", &rest)?;
                    let message = self.envelope(
                        &self.plan.user,
                        "user",
                        turn.blocks.first(),
                        parts,
                        Vec::new(),
                    )?;
                    self.out.push(message);
                    Ok(())
                } else {
                    self.results(&results, &rest)
                }
            }
        }
    }

    /// The name the provider knows a tool by: its exposed name when the
    /// request offers it, else the name as the history gives it.
    fn exposed<'n>(&'n self, name: &'n str) -> &'n str {
        self.listing
            .and_then(|l| l.toolset().exposed_name("sampling", name))
            .unwrap_or(name)
    }

    fn assistant(&mut self, blocks: &[Block<'_>]) -> Result<()> {
        let plan = self.plan;
        let into = plan.tool_use.into;
        let mut parts = Vec::new();
        let mut calls = Vec::new();
        for block in blocks {
            match block.content {
                SamplingContent::ToolUse(tool_use) => {
                    let item = self.tool_use(block, tool_use)?;
                    match into {
                        ToolUseInto::Content => parts.push(Part::Block(item)),
                        ToolUseInto::ToolCalls | ToolUseInto::Messages => calls.push(item),
                    }
                }
                _ => parts.extend(self.parts(&plan.assistant, "assistant", &[block])?),
            }
        }
        if into == ToolUseInto::Messages {
            if !parts.is_empty() {
                let message = self.envelope(
                    &plan.assistant,
                    "assistant",
                    blocks.first(),
                    parts,
                    Vec::new(),
                )?;
                self.out.push(message);
            }
            self.out.extend(calls);
            return Ok(());
        }
        let message = self.envelope(&plan.assistant, "assistant", blocks.first(), parts, calls)?;
        self.out.push(message);
        Ok(())
    }

    fn tool_use(&mut self, block: &Block<'_>, tool_use: &ToolUse) -> Result<Value> {
        if tool_use
            .input
            .values()
            .any(|v| deeper_than(v, MAX_NESTING - 1))
        {
            return Err(block.error(format!(
                "the input of tool use `{}` nests deeper than {MAX_NESTING} levels",
                tool_use.id
            )));
        }
        let name = self.exposed(&tool_use.name).to_owned();
        self.names.insert(tool_use.id.clone(), name.clone());
        let id = self.call_id(&tool_use.id, block)?;
        let input = Value::Object(tool_use.input.clone());
        let arguments = input.to_string();
        let mut vars: Vec<(&str, Var<'_>)> = vec![
            ("id", Var::Str(&id)),
            ("name", Var::Str(&name)),
            ("input", Var::Json(Cow::Borrowed(&input))),
            ("arguments", Var::Str(&arguments)),
        ];
        let meta = tool_use.meta.as_ref();
        for (var, key) in &self.plan.tool_use.meta {
            let Some(value) = meta.and_then(|m| m.get(key)) else {
                continue;
            };
            if deeper_than(value, MAX_NESTING) {
                return Err(block.error(format!(
                    "the `_meta` entry `{key}` of tool use `{}` nests deeper than {MAX_NESTING} levels",
                    tool_use.id
                )));
            }
            vars.push((var, Var::Json(Cow::Borrowed(value))));
        }
        self.plan
            .tool_use
            .item
            .render(vars.as_slice())
            .map_err(|m| {
                block.error(format!(
                    "tool use `{}` lacks `{}`, which provider `{}` needs",
                    tool_use.id,
                    m.0,
                    self.provider.id()
                ))
            })
    }

    /// A user message of tool results: the answers, as the spec's results
    /// section shapes them, then any blocks merged in after them.
    fn results(&mut self, results: &[&Block<'_>], rest: &[&Block<'_>]) -> Result<()> {
        let mut answered: Vec<(String, String, CallToolResult)> = Vec::new();
        for block in results {
            let SamplingContent::ToolResult(r) = block.content else {
                continue;
            };
            let name = self.names.get(&r.tool_use_id).cloned().unwrap_or_default();
            let result = CallToolResult {
                content: r.content.clone(),
                structured_content: r.structured_content.clone(),
                is_error: r.is_error.unwrap_or(false),
                ..Default::default()
            };
            answered.push((self.call_id(&r.tool_use_id, block)?, name, result));
        }
        let turn = self.provider.answer_all(
            answered.iter().map(|(id, name, result)| {
                (Some(id.as_str()), name.as_str(), Outcome::Completed(result))
            }),
            self.results,
        )?;
        let plan = self.plan;
        let first = results.first().copied();
        match plan.tool_results {
            ResultsPlacement::Content => {
                let mut parts: Vec<Part> = turn.results.into_iter().map(Part::Block).collect();
                let mut follow_ups = turn.follow_ups;
                if plan.follow_ups == FollowUpPlacement::Content {
                    parts.extend(follow_ups.drain(..).map(Part::Block));
                }
                parts.extend(self.parts(&plan.user, "user", rest)?);
                let message = self.envelope(&plan.user, "user", first, parts, Vec::new())?;
                self.out.push(message);
                self.out.extend(follow_ups);
            }
            ResultsPlacement::Messages => {
                self.out.extend(turn.results);
                self.out.extend(turn.follow_ups);
                if !rest.is_empty() {
                    let parts = self.parts(&plan.user, "user", rest)?;
                    let message = self.envelope(
                        &plan.user,
                        "user",
                        rest.first().copied(),
                        parts,
                        Vec::new(),
                    )?;
                    self.out.push(message);
                }
            }
        }
        Ok(())
    }

    /// Text, image and audio blocks as the role's parts.
    fn parts(&self, role: &RolePlan, who: &str, blocks: &[&Block<'_>]) -> Result<Vec<Part>> {
        blocks
            .iter()
            .map(|block| match block.content {
                SamplingContent::Text(t) => Ok(Part::Text(t.text.clone())),
                SamplingContent::Image(m) => media::media(self.provider.id(), role.image.as_deref(), "image", who, block, m),
                SamplingContent::Audio(m) => media::media(self.provider.id(), role.audio.as_deref(), "audio", who, block, m),
                SamplingContent::Unknown(_) => Err(block.error(format!(
                    "a `{}` block is not sampling content this library can send (text, image, audio, tool_use, tool_result)",
                    block.content.type_name()
                ))),
                // The MCP rules checked before keep tool blocks out of here.
                SamplingContent::ToolUse(_) | SamplingContent::ToolResult(_) => Err(block.error(format!(
                    "a `{}` block cannot be in a {who} message here",
                    block.content.type_name()
                ))),
            })
            .collect()
    }

    /// A message: its parts as the role's content, wrapped by its envelope.
    fn envelope(
        &self,
        role: &RolePlan,
        who: &str,
        first: Option<&Block<'_>>,
        parts: Vec<Part>,
        calls: Vec<Value>,
    ) -> Result<Value> {
        let mut attachments = Vec::new();
        let mut body = Vec::with_capacity(parts.len());
        for part in parts {
            match part {
                Part::Attach(v) => attachments.push(v),
                other => body.push(other),
            }
        }
        let content = content_value(role, body)?;
        let mut owned = [
            ("content", content),
            ("attachments", Some(Value::Array(attachments))),
            ("tool_calls", Some(Value::Array(calls))),
        ];
        let meta = first.and_then(|b| b.meta);
        let mut vars: Vec<(&str, Var<'_>)> = Vec::new();
        for entry in &role.meta {
            let value = meta
                .and_then(|m| m.get(&entry.key))
                .filter(|v| !v.is_null())
                .or(entry.default.as_ref());
            if let Some(value) = value {
                if deeper_than(value, MAX_NESTING) {
                    let message = first.map_or(0, |b| b.message);
                    return Err(Error::input(format!(
                            "the `_meta` entry `{}` of message {message} nests deeper than {MAX_NESTING} levels",
                            entry.key
                        ))
                    .with_path(format!("/messages/{message}/_meta")));
                }
                vars.push((entry.var.as_str(), Var::Json(Cow::Borrowed(value))));
            }
        }
        role.envelope
            .render_moving(vars.as_slice(), &mut owned)
            .map_err(|m| {
                let message = first.map_or(0, |b| b.message);
                Error::input(format!(
                    "message {message} has no `{}`, which provider `{}` needs in {who} messages",
                    m.0,
                    self.provider.id()
                ))
                .with_path(format!("/messages/{message}"))
            })
    }
}

/// `${content}`: absent without parts; texts joined into one string where
/// the form says so; else blocks, texts through the text block.
fn content_value(role: &RolePlan, body: Vec<Part>) -> Result<Option<Value>> {
    if body.is_empty() {
        return Ok(None);
    }
    let has_block = body.iter().any(|p| matches!(p, Part::Block(_)));
    if role.content == ContentForm::String
        || (role.content == ContentForm::StringOrBlocks && !has_block)
    {
        let texts: Vec<String> = body
            .into_iter()
            .map(|p| match p {
                Part::Text(t) => t,
                Part::Block(v) | Part::Attach(v) => v.to_string(),
            })
            .collect();
        return Ok(Some(Value::String(texts.join("\n"))));
    }
    let text_block = role
        .text_block
        .as_ref()
        .ok_or_else(|| Error::spec("a message's blocks need a text_block template"))?;
    body.into_iter()
        .map(|p| match p {
            Part::Block(v) | Part::Attach(v) => Ok(v),
            Part::Text(t) => render(text_block, &[("text", Var::Str(&t))], "the text block"),
        })
        .collect::<Result<Vec<_>>>()
        .map(|blocks| Some(Value::Array(blocks)))
}

/// Whether `id` has the form `call_ids` asks for.
fn fits(form: &CallIds, id: &str) -> bool {
    let chars_ok = match form.alphabet {
        IdAlphabet::Alphanumeric => id.bytes().all(|b| b.is_ascii_alphanumeric()),
        IdAlphabet::AlphanumericDashUnderscore => id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        IdAlphabet::Any => true,
    };
    let len = id.chars().count();
    chars_ok
        && !id.is_empty()
        && form.length.is_none_or(|n| len == n)
        && form.max_length.is_none_or(|n| len <= n)
}

/// An id of the asked form made from `id`: letters and digits from FNV-1a
/// hashes of it, so the same id always becomes the same one (in every
/// release: a made-up id may be in a conversation that goes on).
fn made_id(form: &CallIds, id: &str) -> String {
    use std::hash::Hasher;
    const DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let length = form
        .length
        .or(form.max_length.map(|n| n.min(24)))
        .unwrap_or(24);
    let mut out = String::with_capacity(length);
    let mut round: u64 = 0;
    while out.len() < length {
        let mut hasher = fnv::FnvHasher::default();
        hasher.write_u64(round);
        hasher.write(id.as_bytes());
        // FNV-1a's high bits barely change with the last bytes: a finalizer
        // (MurmurHash3's fmix64) spreads every input bit over every digit.
        let mut h = hasher.finish();
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^= h >> 33;
        // Ten base-62 digits per hash (62^10 < 2^64), so that none is skewed much.
        for _ in 0..10 {
            if out.len() == length {
                break;
            }
            out.push(char::from(DIGITS[(h % 62) as usize]));
            h /= 62;
        }
        round += 1;
    }
    out
}

fn describe(form: &CallIds) -> String {
    let chars = match form.alphabet {
        IdAlphabet::Alphanumeric => "letters and digits",
        IdAlphabet::AlphanumericDashUnderscore => "letters, digits, `-` and `_`",
        IdAlphabet::Any => "any characters",
    };
    match (form.length, form.max_length) {
        (Some(n), _) => format!("{n} {chars}"),
        (None, Some(n)) => format!("at most {n} {chars}"),
        (None, None) => chars.to_owned(),
    }
}
