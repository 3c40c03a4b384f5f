//! `results.media`: the media table. For each kind of content (image, audio,
//! resource link, embedded text and blob, unknown), rules tried in order,
//! each making a block, an attachment, a follow-up item or a text. The same
//! rules shape the media of a sampling message and a structured value.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{ContentForm, lower_case};
use crate::error::Problem;
use crate::json::pointer_child;
use crate::spec::template::{
    Piece, Template, TemplateDoc, TemplateVars, TextTemplateDoc, template_vars,
};

template_vars! {
    /// A media rule template. Variables: type, text, mime, mime_subtype,
    /// data (base64), size (decoded bytes), uri, name, title, description,
    /// value (an unknown block as sent), blob_text (a text/* blob decoded as
    /// UTF-8), file_name (a safe file name from the resource's URI, with the
    /// MIME type's extension), document_name (letters, digits, single spaces,
    /// hyphens, parentheses and brackets only, unique per call and block). A
    /// rule whose required variables a block lacks does not apply.
    pub(in crate::spec) Media("media_template") = [
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
}

/// A MIME type a rule or limit takes: `type/subtype`, or `type/*`.
#[cfg(test)]
pub(in crate::spec) const MIME_RANGE: &str = r"^[^/\s]+/[^/\s]+$";

/// How each kind of content block reaches the model; a kind not listed gets
/// its placeholder.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct MediaDoc {
    #[serde(default)]
    pub image: Option<MediaRowDoc>,
    #[serde(default)]
    pub audio: Option<MediaRowDoc>,
    #[serde(default)]
    pub resource_link: Option<MediaRowDoc>,
    #[serde(default)]
    pub resource_text: Option<MediaRowDoc>,
    #[serde(default)]
    pub resource_blob: Option<MediaRowDoc>,
    #[serde(default)]
    pub unknown: Option<MediaRowDoc>,
}

/// A media row: `placeholder`, or rules tried in order.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(transform = crate::spec::schema::string_or_object)
)]
#[serde(untagged)]
pub(in crate::spec) enum MediaRowDoc {
    /// The standard text form, e.g. `[image: image/png, 1024 bytes]`.
    Placeholder(PlaceholderKeyword),
    /// Rules tried in order: the first whose MIME types match and whose
    /// variables the block has applies; otherwise the placeholder.
    Rules(#[cfg_attr(test, schemars(length(min = 1)))] Vec<MediaRuleDoc>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(in crate::spec) enum PlaceholderKeyword {
    Placeholder,
}

/// One media rule: the MIME types it takes and the one thing it produces.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(extend("oneOf" = [{"required": ["block"]}, {"required": ["attach"]}, {"required": ["as_text"]}, {"required": ["follow_up"]}]))
)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct MediaRuleDoc {
    /// MIME types this rule applies to (`type/*` allowed); absent: any.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1), inner(regex(pattern = MIME_RANGE))))]
    pub accept: Option<Vec<String>>,
    /// An item of `${content}` (`content: blocks` or `string_or_blocks`).
    #[serde(default)]
    pub block: Option<TemplateDoc<Media>>,
    /// An item of `${attachments}`, placed by the envelope outside the content.
    #[serde(default)]
    pub attach: Option<TemplateDoc<Media>>,
    /// A text part; variables interpolate.
    #[serde(default)]
    pub as_text: Option<TextTemplateDoc<Media>>,
    /// An item sent after all the turn's answers (`results.follow_up` says
    /// how), introduced by a text naming its call; the answer keeps a short
    /// note in its place.
    #[serde(default)]
    pub follow_up: Option<TemplateDoc<Media>>,
    /// The largest payload the rule takes, in decoded bytes; a larger one is
    /// refused (the next rule is tried, else the placeholder says why).
    #[serde(default)]
    pub max_bytes: Option<u64>,
}

impl MediaRuleDoc {
    fn into_parts(self) -> RuleParts<Media> {
        RuleParts {
            accept: self.accept,
            max_bytes: self.max_bytes,
            block: self.block,
            attach: self.attach,
            as_text: self.as_text,
            follow_up: self.follow_up,
        }
    }
}

/// A rule of any media table (results, structured content, a sampling
/// message's media), its templates of the kind `K` still uncompiled.
pub(in crate::spec) struct RuleParts<K> {
    pub accept: Option<Vec<String>>,
    pub max_bytes: Option<u64>,
    pub block: Option<TemplateDoc<K>>,
    pub attach: Option<TemplateDoc<K>>,
    pub as_text: Option<TextTemplateDoc<K>>,
    pub follow_up: Option<TemplateDoc<K>>,
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
            Some(MediaRowDoc::Placeholder(_)) => Vec::new(),
            Some(MediaRowDoc::Rules(rules)) => rules
                .into_iter()
                .enumerate()
                .map(|(i, rule)| {
                    compile_rule(
                        rule.into_parts(),
                        &pointer_child(&at, &i.to_string()),
                        content,
                    )
                })
                .collect::<Result<_, _>>()?,
        };
        table.insert(kind, rules);
    }
    Ok(table)
}

pub(in crate::spec) fn compile_rule<K: TemplateVars>(
    rule: RuleParts<K>,
    at: &str,
    content: ContentForm,
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
            MediaAction::Block(block.compile_at(&pointer_child(at, "block"))?)
        }
        (None, Some(attach), None, None) => {
            MediaAction::Attach(attach.compile_at(&pointer_child(at, "attach"))?)
        }
        (None, None, Some(text), None) => MediaAction::Text(
            text.pieces()
                .map_err(|m| Problem::at(pointer_child(at, "as_text"), m))?,
        ),
        (None, None, None, Some(item)) => {
            MediaAction::FollowUp(item.compile_at(&pointer_child(at, "follow_up"))?)
        }
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
