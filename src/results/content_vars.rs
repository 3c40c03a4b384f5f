//! The variables a spec's media rules read from one content block.

use std::borrow::Cow;
use std::cell::OnceCell;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD_PAD_INDIFFERENT;
use serde_json::Value;

use crate::json::{MAX_NESTING, deeper_than};
use crate::mcp::Content;
use crate::media::{Measured, document_name, file_name};
use crate::spec::template::{Var, Vars};

/// The variables a media rule sees for one content block.
pub(super) struct ContentVars<'a> {
    pub(super) content: &'a Content,
    pub(super) measured: &'a OnceCell<Measured>,
    /// The MIME type the rules matched: normalized, a PDF blob's sniffed.
    pub(super) mime: Option<&'a str>,
    pub(super) call_id: Option<&'a str>,
    /// The block's position in its result, from 1.
    pub(super) n: usize,
    pub(super) blob_text: OnceCell<Option<String>>,
}

impl<'a> ContentVars<'a> {
    fn data(&self) -> Option<&'a str> {
        match self.content {
            Content::Image(m) | Content::Audio(m) => Some(&m.data),
            Content::Resource(r) => r.resource.blob.as_deref(),
            _ => None,
        }
    }

    fn uri(&self) -> Option<&'a str> {
        match self.content {
            Content::ResourceLink(l) => Some(&l.uri),
            Content::Resource(r) => Some(&r.resource.uri),
            _ => None,
        }
    }

    /// A text blob's bytes as UTF-8 text: decoded once, for blobs of a `text/*` type only.
    fn blob_text(&self) -> Option<&str> {
        self.blob_text
            .get_or_init(|| {
                let Content::Resource(r) = self.content else {
                    return None;
                };
                let blob = r.resource.blob.as_deref()?;
                if !self.mime?.starts_with("text/") {
                    return None;
                }
                let bytes = STANDARD_PAD_INDIFFERENT.decode(blob).ok()?;
                String::from_utf8(bytes).ok()
            })
            .as_deref()
    }
}

impl Vars for ContentVars<'_> {
    fn get(&self, name: &str) -> Option<Var<'_>> {
        let c = self.content;
        let owned = |s: String| Some(Var::Json(Cow::Owned(Value::String(s))));
        match name {
            "type" => Some(Var::Str(c.type_name())),
            "data" => self.data().map(Var::Str),
            "size" => {
                let measured = *self.measured.get_or_init(|| Measured::of(c));
                measured
                    .size()
                    .map(|n| Var::Json(Cow::Owned(Value::from(n))))
            }
            "mime" => self.mime.map(Var::Str),
            "mime_subtype" => self.mime.and_then(|m| m.split('/').nth(1)).map(Var::Str),
            "text" => match c {
                Content::Text(t) => Some(Var::Str(&t.text)),
                Content::Resource(r) => r.resource.text.as_deref().map(Var::Str),
                _ => None,
            },
            "blob_text" => self.blob_text().map(Var::Str),
            "uri" => self.uri().map(Var::Str),
            "file_name" => self.uri().and_then(|uri| owned(file_name(uri, self.mime))),
            "document_name" => self.uri().and_then(|uri| {
                owned(document_name(
                    &file_name(uri, self.mime),
                    self.call_id,
                    self.n,
                ))
            }),
            "name" => match c {
                Content::ResourceLink(l) => Some(Var::Str(&l.name)),
                _ => None,
            },
            "title" => match c {
                Content::ResourceLink(l) => l.title.as_deref().map(Var::Str),
                _ => None,
            },
            "description" => match c {
                Content::ResourceLink(l) => l.description.as_deref().map(Var::Str),
                _ => None,
            },
            "value" => match c {
                Content::Unknown(v) if !deeper_than(v, MAX_NESTING) => {
                    Some(Var::Json(Cow::Borrowed(v)))
                }
                _ => None,
            },
            _ => None,
        }
    }
}
