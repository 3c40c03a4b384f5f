//! A message's image and audio blocks, by the role's media rules.

use std::borrow::Cow;

use serde_json::Value;

use super::messages::{Block, Part};
use crate::error::Result;
use crate::mcp::MediaContent;
use crate::media::{base64_decoded_len, normalize_mime};
use crate::spec::results::{MediaAction, MediaRule};
use crate::spec::template::{Var, Vars, render_string};

/// An image or audio block by the role's rules: the first whose MIME
/// types match and whose limit the payload fits.
pub(super) fn media(
    id: &str,
    rules: Option<&[MediaRule]>,
    kind: &str,
    who: &str,
    block: &Block<'_>,
    media: &MediaContent,
) -> Result<Part> {
    let Some(rules) = rules else {
        return Err(block.error(format!("provider `{id}` takes no {kind} in {who} messages")));
    };
    let mime = normalize_mime(&media.mime_type);
    let Some(size) = base64_decoded_len(&media.data) else {
        return Err(block.error(format!("the {kind}'s data ({mime}) is not valid base64")));
    };
    let vars = MediaVars {
        kind,
        mime: &mime,
        data: &media.data,
        size,
    };
    let mut over = None;
    for rule in rules.iter().filter(|r| accepts(r.accept.as_deref(), &mime)) {
        if let Some(max) = rule.max_bytes.filter(|max| size as u64 > *max) {
            over.get_or_insert(max);
            continue;
        }
        let part = match &rule.action {
            MediaAction::Block(t) => t.render(&vars).map(Part::Block),
            MediaAction::Attach(t) => t.render(&vars).map(Part::Attach),
            MediaAction::Text(pieces) => render_string(pieces, &vars).map(Part::Text),
            MediaAction::FollowUp(_) => continue,
        };
        if let Ok(part) = part {
            return Ok(part);
        }
    }
    if let Some(max) = over {
        return Err(block.error(format!(
            "the {kind} ({mime}, {size} bytes) is over provider `{id}`'s limit of {max} bytes"
        )));
    }
    let taken: Vec<&str> = rules
        .iter()
        .flat_map(|r| r.accept.iter().flatten())
        .map(String::as_str)
        .collect();
    Err(block.error(format!(
        "provider `{id}` does not take {kind} of type {mime} in {who} messages; it takes {}",
        if taken.is_empty() {
            "none".to_owned()
        } else {
            taken.join(", ")
        }
    )))
}

/// Whether `mime` (normalized) is one of `accept` (`type/*` allowed); no list accepts anything.
fn accepts(accept: Option<&[String]>, mime: &str) -> bool {
    let Some(accept) = accept else { return true };
    accept.iter().any(|a| match a.strip_suffix("/*") {
        Some(major) => mime.split('/').next() == Some(major),
        None => a == mime,
    })
}

/// The variables a message's media rule sees.
struct MediaVars<'a> {
    kind: &'a str,
    mime: &'a str,
    data: &'a str,
    size: usize,
}

impl Vars for MediaVars<'_> {
    fn get(&self, name: &str) -> Option<Var<'_>> {
        match name {
            "type" => Some(Var::Str(self.kind)),
            "mime" => Some(Var::Str(self.mime)),
            "mime_subtype" => self.mime.split('/').nth(1).map(Var::Str),
            "data" => Some(Var::Str(self.data)),
            "size" => Some(Var::Json(Cow::Owned(Value::from(self.size)))),
            _ => None,
        }
    }
}
