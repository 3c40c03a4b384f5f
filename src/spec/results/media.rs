//! `results.media`: the media table. For each kind of content (image, audio,
//! resource link, embedded text and blob, unknown), rules tried in order,
//! each making a block, an attachment, a follow-up item or a text. The same
//! rules shape the media of a sampling message and a structured value.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::{ContentForm, lower_case};
use crate::error::Problem;
use crate::json::pointer_child;
use crate::spec::template::{Piece, Template, parse_pieces};

/// Variables of a media rule.
const MEDIA_VARS: &[&str] = &[
    "type",
    "text",
    "mime",
    "mime_subtype",
    "data",
    "size",
    "uri",
    "name",
    "title",
    "description",
    "value",
    "blob_text",
    "file_name",
    "document_name",
];

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct MediaDoc {
    #[serde(default)]
    pub image: Option<RowDoc>,
    #[serde(default)]
    pub audio: Option<RowDoc>,
    #[serde(default)]
    pub resource_link: Option<RowDoc>,
    #[serde(default)]
    pub resource_text: Option<RowDoc>,
    #[serde(default)]
    pub resource_blob: Option<RowDoc>,
    #[serde(default)]
    pub unknown: Option<RowDoc>,
}

/// A media row: `placeholder` (the standard text form), or rules tried in order.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(in crate::spec) enum RowDoc {
    Placeholder(PlaceholderKeyword),
    Rules(Vec<RuleDoc>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(in crate::spec) enum PlaceholderKeyword {
    Placeholder,
}

/// One media rule: the MIME types it takes and what it produces.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct RuleDoc {
    #[serde(default)]
    pub accept: Option<Vec<String>>,
    #[serde(default)]
    pub block: Option<Value>,
    #[serde(default)]
    pub attach: Option<Value>,
    #[serde(default)]
    pub as_text: Option<String>,
    #[serde(default)]
    pub follow_up: Option<Value>,
    /// The largest payload (decoded bytes) the rule takes.
    #[serde(default)]
    pub max_bytes: Option<u64>,
}

/// The kinds of content a media table maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum MediaKind {
    Image,
    Audio,
    ResourceLink,
    ResourceText,
    ResourceBlob,
    Unknown,
}

impl MediaKind {
    pub fn key(self) -> &'static str {
        match self {
            MediaKind::Image => "image",
            MediaKind::Audio => "audio",
            MediaKind::ResourceLink => "resource_link",
            MediaKind::ResourceText => "resource_text",
            MediaKind::ResourceBlob => "resource_blob",
            MediaKind::Unknown => "unknown",
        }
    }
}

/// What a media rule produces.
#[derive(Debug, Clone)]
pub(crate) enum MediaAction {
    Block(Template),
    Attach(Template),
    /// An item sent after the turn's answers; the answer keeps a note.
    FollowUp(Template),
    Text(Vec<Piece>),
}

impl MediaAction {
    /// Whether the rule sends the medium itself (not a text about it).
    pub fn places_media(&self) -> bool {
        !matches!(self, MediaAction::Text(_))
    }
}

/// One rule of a media row: the first whose MIME types match (and whose
/// variables are present, and whose limits the medium fits) applies.
#[derive(Debug, Clone)]
pub(crate) struct MediaRule {
    pub accept: Option<Vec<String>>,
    pub action: MediaAction,
    /// The largest payload the rule takes, in decoded bytes.
    pub max_bytes: Option<u64>,
}

pub(super) fn compile_media(
    doc: MediaDoc,
    content: ContentForm,
    results_at: &str,
) -> Result<BTreeMap<MediaKind, Vec<MediaRule>>, Problem> {
    let rows = [
        (MediaKind::Image, doc.image),
        (MediaKind::Audio, doc.audio),
        (MediaKind::ResourceLink, doc.resource_link),
        (MediaKind::ResourceText, doc.resource_text),
        (MediaKind::ResourceBlob, doc.resource_blob),
        (MediaKind::Unknown, doc.unknown),
    ];
    let mut table = BTreeMap::new();
    for (kind, row) in rows {
        let at = pointer_child(&pointer_child(results_at, "media"), kind.key());
        let rules = match row {
            None => continue,
            Some(RowDoc::Placeholder(_)) => Vec::new(),
            Some(RowDoc::Rules(rules)) => rules
                .into_iter()
                .enumerate()
                .map(|(i, rule)| {
                    compile_rule(
                        rule,
                        &pointer_child(&at, &i.to_string()),
                        content,
                        MEDIA_VARS,
                    )
                })
                .collect::<Result<_, _>>()?,
        };
        table.insert(kind, rules);
    }
    Ok(table)
}

pub(in crate::spec) fn compile_rule(
    rule: RuleDoc,
    at: &str,
    content: ContentForm,
    vars: &[&str],
) -> Result<MediaRule, Problem> {
    let accept = lower_case(rule.accept);
    let action = match (rule.block, rule.attach, rule.as_text, rule.follow_up) {
        (Some(block), None, None, None) => {
            if content == ContentForm::String {
                return Err(Problem::at(
                    pointer_child(at, "block"),
                    "`content: string` holds one string, so a rule cannot produce a block; use `as_text`, `attach` or `follow_up`",
                ));
            }
            MediaAction::Block(Template::compile_at(
                &block,
                &pointer_child(at, "block"),
                vars,
            )?)
        }
        (None, Some(attach), None, None) => MediaAction::Attach(Template::compile_at(
            &attach,
            &pointer_child(at, "attach"),
            vars,
        )?),
        (None, None, Some(text), None) => MediaAction::Text(
            parse_pieces(&text, vars).map_err(|m| Problem::at(pointer_child(at, "as_text"), m))?,
        ),
        (None, None, None, Some(item)) => MediaAction::FollowUp(Template::compile_at(
            &item,
            &pointer_child(at, "follow_up"),
            vars,
        )?),
        _ => {
            return Err(Problem::at(
                at,
                "a rule produces exactly one of `block`, `attach`, `follow_up` and `as_text`",
            ));
        }
    };
    Ok(MediaRule {
        accept,
        action,
        max_bytes: rule.max_bytes,
    })
}
