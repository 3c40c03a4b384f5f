//! Result budgets: a tool result's tokens counted as a provider's models
//! count them (the spec's `tokens:` section), and a result over its
//! allowance cut to fit.
//!
//! Text is counted by the provider's public tokenizer where the spec names
//! one (the `tiktoken` encodings, with the `tokenizers` feature), and by the
//! spec's bytes-per-token estimate otherwise. Only what is kept is counted:
//! the text left out is estimated from its length, so budgeting a result of
//! many megabytes costs about what counting its head and tail does.

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD_PAD_INDIFFERENT;
use serde_json::Value;

use crate::mcp::{CallToolResult, Content, EmbeddedResource, ResourceContents, TextContent, Tool};
use crate::media::{Measured, text_form_measured, with_reason};
#[cfg(feature = "tokenizers")]
use crate::spec::tokens::Tokenizer;
use crate::spec::tokens::{ImageRule, TokensPlan};
use crate::toolset::ExposedTool;

/// The token budgets of a turn's answers, set through
/// [`ResultOptions::max_result_tokens`](crate::ResultOptions::max_result_tokens)
/// and [`max_turn_tokens`](crate::ResultOptions::max_turn_tokens).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budget {
    pub(crate) max_result_tokens: Option<u64>,
    pub(crate) max_turn_tokens: Option<u64>,
}

impl Budget {
    /// Whether any budget is set.
    pub fn is_set(&self) -> bool {
        self.max_result_tokens.is_some() || self.max_turn_tokens.is_some()
    }

    /// The most tokens one call's answer may send, if set.
    pub fn max_result_tokens(&self) -> Option<u64> {
        self.max_result_tokens
    }

    /// The most tokens a turn's answers may send together, if set.
    pub fn max_turn_tokens(&self) -> Option<u64> {
        self.max_turn_tokens
    }
}

/// The name of the library's tool that reads on in a cut result.
pub const READ_TOOL_NAME: &str = "read_result";

/// The server id the library's own tools go by, in policies and records
/// (`mcp-adapters/read_result`). No server of a source may take it.
pub const LIBRARY_SERVER: &str = "mcp-adapters";

/// The read tool's definition.
pub(crate) fn read_tool() -> Tool {
    Tool::new(
        READ_TOOL_NAME,
        "Reads on in a tool result that was cut to fit the context. Give the handle and the \
         byte offset that the result's notice names; the answer continues from there, as much \
         as fits, and says where to read on.",
        serde_json::json!({
            "type": "object",
            "properties": {
                "handle": {"type": "string", "description": "The handle the notice names, such as r1."},
                "offset": {"type": "integer", "minimum": 0, "description": "The byte offset to read from, as the notice names it."}
            },
            "required": ["handle", "offset"],
            "additionalProperties": false
        }),
    )
}

/// The read tool as a toolset holds it.
pub(crate) fn read_exposed_tool() -> ExposedTool {
    ExposedTool {
        exposed_name: READ_TOOL_NAME.to_owned(),
        server_id: LIBRARY_SERVER.to_owned(),
        tool: std::sync::Arc::new(read_tool()),
    }
}

/// Counts tokens by a spec's `tokens:` section.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Counter<'p> {
    plan: &'p TokensPlan,
}

impl<'p> Counter<'p> {
    pub(crate) fn new(plan: &'p TokensPlan) -> Self {
        Counter { plan }
    }

    /// Whether text is counted exactly, by a public tokenizer.
    pub(crate) fn exact(&self) -> bool {
        self.bpe().is_some()
    }

    #[cfg(feature = "tokenizers")]
    fn bpe(&self) -> Option<&'static tiktoken_rs::CoreBPE> {
        Some(match self.plan.tokenizer? {
            Tokenizer::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        })
    }

    #[cfg(not(feature = "tokenizers"))]
    fn bpe(&self) -> Option<&'static Never> {
        None
    }

    /// Bytes of text tokenized at first to find `tokens` tokens: half as
    /// many again as the estimate gives them, so that one pass nearly
    /// always suffices (a second doubles it).
    fn tried(&self, tokens: u64) -> usize {
        ((tokens as f64 * self.plan.bytes_per_token * 1.5) as usize).saturating_add(64)
    }

    /// The spec's estimate for `bytes` of text.
    pub(crate) fn estimate(&self, bytes: usize) -> u64 {
        (bytes as f64 / self.plan.bytes_per_token).ceil() as u64
    }

    /// The tokens of `text`.
    pub(crate) fn tokens(&self, text: &str) -> u64 {
        match self.bpe() {
            Some(bpe) => bpe.encode_ordinary(text).len() as u64,
            None => self.estimate(text.len()),
        }
    }

    /// The tokens of `text` when they are at most `limit`; `None` when more,
    /// or when `text` is so long that it is taken to be more (over four
    /// times the bytes the estimate gives `limit` tokens: cutting such a
    /// text finds out, without counting it whole, whether it fits after
    /// all). Tokenizes about `limit` tokens' worth of text, however long
    /// `text` is.
    pub(crate) fn tokens_within(&self, text: &str, limit: u64) -> Option<u64> {
        let Some(bpe) = self.bpe() else {
            let n = self.estimate(text.len());
            return (n <= limit).then_some(n);
        };
        // A token is at least one byte.
        if text.len() as u64 <= limit {
            return Some(bpe.encode_ordinary(text).len() as u64);
        }
        if text.len() > self.tried(limit).saturating_mul(4) {
            return None;
        }
        let mut end = floor_boundary(text, self.tried(limit));
        loop {
            let n = bpe.encode_ordinary(&text[..end]).len() as u64;
            if n > limit {
                return None;
            }
            if end == text.len() {
                return Some(n);
            }
            end = floor_boundary(text, end.saturating_mul(2));
        }
    }

    /// The length of the longest head of `text` of at most `tokens` tokens,
    /// at a character boundary.
    pub(crate) fn head_len(&self, text: &str, tokens: u64) -> usize {
        let Some(bpe) = self.bpe() else {
            return floor_boundary(text, (tokens as f64 * self.plan.bytes_per_token) as usize);
        };
        let mut end = floor_boundary(text, self.tried(tokens));
        loop {
            let ids = bpe.encode_ordinary(&text[..end]);
            if ids.len() as u64 > tokens {
                let kept = &ids[..tokens as usize];
                let len = bpe.decode_bytes(kept).map_or(0, |b| b.len());
                return floor_boundary(text, len);
            }
            if end == text.len() {
                return end;
            }
            end = floor_boundary(text, end.saturating_mul(2));
        }
    }

    /// Where the longest tail of `text` of at most `tokens` tokens starts,
    /// at a character boundary.
    pub(crate) fn tail_start(&self, text: &str, tokens: u64) -> usize {
        let Some(bpe) = self.bpe() else {
            let len = (tokens as f64 * self.plan.bytes_per_token) as usize;
            return ceil_boundary(text, text.len().saturating_sub(len));
        };
        let mut span = self.tried(tokens);
        loop {
            let start = ceil_boundary(text, text.len().saturating_sub(span));
            let ids = bpe.encode_ordinary(&text[start..]);
            if ids.len() as u64 > tokens {
                let dropped = &ids[..ids.len() - tokens as usize];
                let skip = bpe.decode_bytes(dropped).map_or(0, |b| b.len());
                return ceil_boundary(text, start + skip);
            }
            if start == 0 {
                return 0;
            }
            span = span.saturating_mul(2);
        }
    }

    /// The tokens of a medium by the spec's rules, or `None` for a block
    /// that is not one (text, a link, an unknown block).
    pub(crate) fn media_tokens(&self, content: &Content) -> Option<u64> {
        match content {
            Content::Image(m) => Some(self.image_tokens(&m.data)),
            Content::Audio(_) => Some(self.plan.other_media),
            Content::Resource(r) => {
                let blob = r.resource.blob.as_deref()?;
                let image = r
                    .resource
                    .mime_type
                    .as_deref()
                    .is_some_and(|m| m.starts_with("image/"));
                Some(match image {
                    true => self.image_tokens(blob),
                    false => self.plan.other_media,
                })
            }
            _ => None,
        }
    }

    fn image_tokens(&self, base64: &str) -> u64 {
        let Some((w, h)) = image_size(base64) else {
            return self.plan.unsized_image;
        };
        let (mut w, mut h) = (w as f64, h as f64);
        match &self.plan.image {
            ImageRule::Fixed(n) => *n,
            ImageRule::Tiles(t) => {
                if let Some(fit) = t.fit.map(|f| f as f64)
                    && w.max(h) > fit
                {
                    let s = fit / w.max(h);
                    (w, h) = (w * s, h * s);
                }
                if let Some(short) = t.short_side.map(|s| s as f64)
                    && w.min(h) > short
                {
                    let s = short / w.min(h);
                    (w, h) = (w * s, h * s);
                }
                let size = t.size as f64;
                let tiles = (w / size).ceil().max(1.0) * (h / size).ceil().max(1.0);
                t.base
                    .saturating_add((tiles as u64).saturating_mul(t.tokens))
            }
            ImageRule::Patches(p) => {
                if let Some(edge) = p.max_long_edge.map(|e| e as f64)
                    && w.max(h) > edge
                {
                    let s = edge / w.max(h);
                    (w, h) = (w * s, h * s);
                }
                let size = p.size as f64;
                let patches =
                    |w: f64, h: f64| (w / size).ceil().max(1.0) * (h / size).ceil().max(1.0);
                if let Some(max) = p.max_patches.map(|m| m as f64) {
                    // Scaled down until it fits: by the area first, then a
                    // little at a time for the patches cut partly.
                    if patches(w, h) > max {
                        let s = (max / patches(w, h)).sqrt();
                        (w, h) = (w * s, h * s);
                    }
                    while patches(w, h) > max && w.max(h) > size {
                        (w, h) = (w * 0.98, h * 0.98);
                    }
                }
                (patches(w, h) * p.multiplier).ceil() as u64
            }
        }
    }
}

#[cfg(not(feature = "tokenizers"))]
enum Never {}

#[cfg(not(feature = "tokenizers"))]
impl Never {
    fn encode_ordinary(&self, _: &str) -> Vec<u32> {
        match *self {}
    }
    fn decode_bytes(&self, _: &[u32]) -> Result<Vec<u8>, ()> {
        match *self {}
    }
}

/// The largest character boundary of `text` at or before `i`.
fn floor_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest character boundary of `text` at or after `i`.
fn ceil_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// An image's width and height from its header, decoding as little of the
/// base64 as it takes.
fn image_size(base64: &str) -> Option<(usize, usize)> {
    let mut chars = 4096usize;
    loop {
        let take = (chars.min(base64.len()) / 4) * 4;
        // Bytes, not a str slice: a server's data need not be ASCII.
        let bytes = STANDARD_PAD_INDIFFERENT
            .decode(&base64.as_bytes()[..take])
            .ok()?;
        match imagesize::blob_size(&bytes) {
            Ok(size) if size.width > 0 && size.height > 0 => {
                return Some((size.width, size.height));
            }
            _ if take + 4 > base64.len() || chars >= 1 << 24 => return None,
            _ => chars *= 8,
        }
    }
}

/// Max-min fair shares of `total` among `demands`: each gets what it asks
/// when all fit; otherwise the small ones get theirs and the large ones
/// share the rest equally. One large demand never starves the others.
pub(crate) fn fair_shares(demands: &[u64], total: u64) -> Vec<u64> {
    let sum = demands.iter().fold(0u64, |a, d| a.saturating_add(*d));
    if sum <= total {
        return demands.to_vec();
    }
    let mut order: Vec<usize> = (0..demands.len()).collect();
    order.sort_by_key(|&i| demands[i]);
    let mut shares = vec![0; demands.len()];
    let mut left = total;
    let mut n = demands.len() as u64;
    for i in order {
        let give = demands[i].min(left / n);
        shares[i] = give;
        left -= give;
        n -= 1;
    }
    shares
}

/// How a cut text may be read on.
pub(crate) enum Reading<'k> {
    /// No tool reads on: the notice says the application has the whole result.
    Off,
    /// The library's read tool, `tool`, reads on: `keep` keeps a cut text
    /// and gives its handle.
    Keep {
        tool: &'k str,
        keep: &'k mut dyn FnMut(&str) -> String,
    },
    /// An answer of the read tool: the text of `handle` from `offset` on.
    /// Only its head is kept, and the notice says where to read on.
    Continue {
        tool: &'k str,
        handle: &'k str,
        offset: usize,
    },
}

/// What a result sends the model, as a budget sees it.
pub(crate) struct Sent<'a> {
    /// Whether the content blocks are sent.
    pub content: bool,
    /// The structured content, when it is sent.
    pub structured: Option<&'a Value>,
}

enum Unit<'a> {
    Text {
        block: Option<usize>,
        text: Cow<'a, str>,
    },
    Media {
        block: usize,
        tokens: u64,
    },
    Fixed(u64),
}

impl Unit<'_> {
    /// The unit's tokens; a text of more than `limit` counts `limit + 1`.
    fn tokens(&self, counter: Counter<'_>, limit: u64) -> u64 {
        match self {
            Unit::Text { text, .. } => counter
                .tokens_within(text, limit)
                .unwrap_or(limit.saturating_add(1)),
            Unit::Media { tokens, .. } => *tokens,
            Unit::Fixed(n) => *n,
        }
    }
}

/// The tokens `result` would send the model, at most `cap` (a larger
/// result counts as `cap + 1`).
pub(crate) fn demand(
    result: &CallToolResult,
    sent: &Sent<'_>,
    counter: Counter<'_>,
    cap: u64,
) -> u64 {
    let mut total = 0u64;
    for unit in units(result, sent, counter) {
        let left = cap.saturating_sub(total);
        total = total.saturating_add(unit.tokens(counter, left));
        if total > cap {
            return cap.saturating_add(1);
        }
    }
    total
}

fn units<'a>(result: &'a CallToolResult, sent: &Sent<'a>, counter: Counter<'_>) -> Vec<Unit<'a>> {
    let mut units = Vec::new();
    if sent.content {
        for (i, content) in result.content.iter().enumerate() {
            if !content.for_model() {
                continue;
            }
            match content {
                Content::Text(t) => units.push(Unit::Text {
                    block: Some(i),
                    text: Cow::Borrowed(&t.text),
                }),
                Content::Resource(r) if r.resource.text.is_some() => units.push(Unit::Text {
                    block: Some(i),
                    text: Cow::Borrowed(r.resource.text.as_deref().unwrap_or_default()),
                }),
                Content::ResourceLink(l) => units.push(Unit::Fixed(counter.estimate(
                    l.uri.len()
                        + l.name.len()
                        + l.description.as_deref().map_or(0, str::len)
                        + l.title.as_deref().map_or(0, str::len),
                ))),
                Content::Unknown(_) => units.push(Unit::Fixed(counter.estimate(64))),
                other => {
                    if let Some(tokens) = counter.media_tokens(other) {
                        units.push(Unit::Media { block: i, tokens });
                    }
                }
            }
        }
    }
    if let Some(value) = sent.structured {
        units.push(Unit::Text {
            block: None,
            text: Cow::Owned(value.to_string()),
        });
    }
    units
}

/// `result` cut to `allowance` tokens, or `None` when it fits as it is.
///
/// Over the allowance, the text keeps at least half of it (all it needs, if
/// less); media are kept in order while they fit in the rest, and each one
/// that does not is replaced whole by its placeholder. The texts then share
/// what is left fairly, each keeping its head and its tail with a notice
/// between them. Structured content the model is sent is cut as its JSON
/// text, which then takes its place as a text block. Notices are not
/// counted against the allowance.
pub(crate) fn fit(
    result: &CallToolResult,
    sent: &Sent<'_>,
    counter: Counter<'_>,
    allowance: u64,
    reading: &mut Reading<'_>,
) -> Option<CallToolResult> {
    let continuing = matches!(reading, Reading::Continue { .. });
    let units = units(result, sent, counter);
    let mut demands = Vec::with_capacity(units.len());
    let mut total = 0u64;
    for unit in &units {
        let d = unit.tokens(counter, allowance);
        total = total.saturating_add(d);
        demands.push(d);
    }
    if total <= allowance && !continuing {
        return None;
    }
    let text_need: u64 = units
        .iter()
        .zip(&demands)
        .filter(|(u, _)| !matches!(u, Unit::Media { .. }))
        .fold(0u64, |a, (_, d)| a.saturating_add(*d));
    let media_room = allowance - text_need.min(allowance / 2);
    let mut media_used = 0u64;
    let mut dropped = Vec::new();
    for (unit, d) in units.iter().zip(&demands) {
        if let Unit::Media { block, .. } = unit {
            if media_used.saturating_add(*d) <= media_room {
                media_used += d;
            } else {
                dropped.push(*block);
            }
        }
    }
    let mut text_room = allowance - media_used;
    for (unit, d) in units.iter().zip(&demands) {
        if let Unit::Fixed(_) = unit {
            text_room = text_room.saturating_sub(*d);
        }
    }
    let texts: Vec<(&Unit<'_>, u64)> = units
        .iter()
        .zip(&demands)
        .filter(|(u, _)| matches!(u, Unit::Text { .. }))
        .map(|(u, d)| (u, *d))
        .collect();
    let shares = fair_shares(
        &texts.iter().map(|(_, d)| *d).collect::<Vec<_>>(),
        text_room,
    );
    let mut cut_blocks: Vec<(usize, String)> = Vec::new();
    let mut structured_text = None;
    for ((unit, need), share) in texts.into_iter().zip(shares) {
        let Unit::Text { block, text } = unit else {
            continue;
        };
        if share >= need && !continuing {
            if block.is_none() {
                structured_text = Some(None);
            }
            continue;
        }
        let cut = cut_text(text, share, counter, reading);
        match block {
            Some(i) => cut_blocks.push((*i, cut)),
            None => structured_text = Some(Some(cut)),
        }
    }
    let mut out = CallToolResult {
        content: Vec::with_capacity(result.content.len() + 1),
        structured_content: None,
        is_error: result.is_error,
        meta: result.meta.clone(),
        extra: result.extra.clone(),
    };
    // Blocks not sent (the structured content is sent instead) stay out.
    let blocks = if sent.content {
        &result.content[..]
    } else {
        &[]
    };
    for (i, content) in blocks.iter().enumerate() {
        if let Some((_, text)) = cut_blocks.iter_mut().find(|(b, _)| *b == i) {
            out.content.push(with_text(content, std::mem::take(text)));
        } else if dropped.contains(&i) {
            let placeholder = with_reason(
                &text_form_measured(content, Measured::of(content)),
                &format!("left out: over the result's budget of {allowance} tokens"),
            );
            out.content.push(Content::text(placeholder));
        } else {
            out.content.push(content.clone());
        }
    }
    match structured_text {
        // Cut, its JSON text takes its place.
        Some(Some(cut)) => out.content.push(Content::text(cut)),
        // Sent and kept whole. Structured content that is not sent (one
        // that only mirrors the blocks) is left out: beside blocks that
        // were cut it would no longer read as their mirror.
        Some(None) => out.structured_content = result.structured_content.clone(),
        None => {}
    }
    Some(out)
}

/// `content` (a text block or a text resource) with its text replaced.
fn with_text(content: &Content, text: String) -> Content {
    match content {
        Content::Resource(r) => Content::Resource(EmbeddedResource {
            resource: ResourceContents {
                text: Some(text),
                ..r.resource.clone()
            },
            annotations: r.annotations.clone(),
            meta: r.meta.clone(),
        }),
        Content::Text(t) => Content::Text(TextContent {
            text,
            annotations: t.annotations.clone(),
            meta: t.meta.clone(),
        }),
        _ => Content::text(text),
    }
}

/// `text` cut to `tokens`: its head and tail with a notice between them
/// (its head only, and a notice after it, for an answer that reads on).
fn cut_text(text: &str, tokens: u64, counter: Counter<'_>, reading: &mut Reading<'_>) -> String {
    if let Reading::Continue {
        tool,
        handle,
        offset,
    } = reading
    {
        let mut head = snap_head(text, counter.head_len(text, tokens));
        if head == 0 && !text.is_empty() {
            // Every read moves on, by a character at least.
            head = ceil_boundary(text, 1);
        }
        if head == text.len() {
            return format!(
                "{text}\n[… the end of the result: nothing more to read with `{tool}` for handle \"{handle}\"]"
            );
        }
        let rest = text.len() - head;
        let next = *offset + head;
        return format!(
            "{}\n[… {rest} more bytes (about {} tokens) of this result. To read on, call `{tool}` with {{\"handle\": \"{handle}\", \"offset\": {next}}}]",
            &text[..head],
            counter.estimate(rest)
        );
    }
    let tail_tokens = tokens / 3;
    let head = counter.head_len(text, tokens - tail_tokens);
    if head == text.len() {
        // It fits after all (a long text of few tokens).
        return text.to_owned();
    }
    let head = snap_head(text, head);
    let tail = snap_tail(text, counter.tail_start(text, tail_tokens).max(head));
    if tail <= head {
        // Nothing is left out after all.
        return text.to_owned();
    }
    let left_out = tail - head;
    let how = match reading {
        Reading::Keep { tool, keep } => format!(
            "To read them, call `{tool}` with {{\"handle\": \"{}\", \"offset\": {head}}}",
            keep(text)
        ),
        _ => "The application has the whole result".to_owned(),
    };
    format!(
        "{}\n[… {left_out} bytes (about {} tokens) left out here: bytes {head} to {tail} of {}. {how}]\n{}",
        &text[..head],
        counter.estimate(left_out),
        text.len(),
        &text[tail..]
    )
}

/// A head's end moved back to a line's end when one is near (in its last half).
fn snap_head(text: &str, head: usize) -> usize {
    if head == text.len() {
        return head;
    }
    match memchr::memrchr(b'\n', &text.as_bytes()[..head]) {
        Some(nl) if nl + 1 >= head - head / 2 => nl + 1,
        _ => head,
    }
}

/// A tail's start moved on to a line's start when one is near (in its first half).
fn snap_tail(text: &str, start: usize) -> usize {
    let len = text.len() - start;
    match memchr::memchr(b'\n', &text.as_bytes()[start..]) {
        Some(nl) if nl < len / 2 => start + nl + 1,
        _ => start,
    }
}
