//! Answering calls: an MCP result, or a failure, in a provider's result shape.

use std::borrow::Cow;
use std::cell::OnceCell;

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::json::{MAX_NESTING, deeper_than};
use crate::mcp::{CallToolResult, Content};
use crate::media::{Measured, fits_model_measured, normalize_mime, text_form_measured};
use crate::spec::Provider;
use crate::spec::plan::{ContentForm, MediaAction, MediaKind, MediaRule, StructuredRender};
use crate::spec::template::{Missing, Template, Var, Vars, render_string};

/// How `structuredContent` is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StructuredMode {
    /// Only when `content` is empty (servers usually repeat it as text).
    #[default]
    Auto,
    /// Instead of `content`.
    Prefer,
    /// After `content`.
    Append,
    /// Never.
    Ignore,
}

impl std::str::FromStr for StructuredMode {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(StructuredMode::Auto),
            "prefer" => Ok(StructuredMode::Prefer),
            "append" => Ok(StructuredMode::Append),
            "ignore" => Ok(StructuredMode::Ignore),
            _ => Err(Error::new(
                ErrorKind::Input,
                format!("structured mode `{s}`: expected auto, prefer, append or ignore"),
            )),
        }
    }
}

/// Whether results are shaped for a model before the provider mapping.
///
/// Models accept few media types. With `shape: llm` (the default) the
/// provider-independent stage below turns everything a model cannot take into
/// a text placeholder, so no provider ever receives a payload it would reject:
///
/// | content | kept when | otherwise |
/// |---|---|---|
/// | `image` | JPEG, PNG, GIF or WebP with valid base64 | `[image: image/svg+xml, 1024 bytes]` |
/// | `audio` | WAV, MP3, Ogg, WebM or FLAC with valid base64 | `[audio: audio/aac, 1024 bytes]` |
/// | embedded blob | an accepted image type with valid base64 | `[resource: file:///a.pdf, application/pdf, 1024 bytes]` |
///
/// Sizes are the decoded sizes, computed from the base64 text without decoding
/// it. Invalid base64 reads `[image: image/png, invalid base64]`. The same text
/// forms are what a provider's media table falls back to for content it does
/// not map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Shape {
    /// Media no model takes become text placeholders first (PI-2).
    #[default]
    Llm,
    /// Content goes to the provider mapping as the server sent it.
    None,
}

/// Options for [`Provider::answer`] (and, through
/// [`ExecOptions::results`](crate::ExecOptions::results), for execution).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ResultOptions {
    pub(crate) structured: Option<StructuredMode>,
    pub(crate) shape: Shape,
    pub(crate) error_prefix: Option<String>,
}

impl ResultOptions {
    /// The spec's structured mode and error prefix; results shaped for a model.
    pub fn new() -> Self {
        Self::default()
    }

    /// How `structuredContent` is used (the spec's default otherwise).
    pub fn structured(mut self, mode: StructuredMode) -> Self {
        self.structured = Some(mode);
        self
    }

    /// Whether results are shaped for a model first ([`Shape::Llm`] by default).
    pub fn shape(mut self, shape: Shape) -> Self {
        self.shape = shape;
        self
    }

    /// Put before the text of an error answer (the spec's prefix otherwise).
    pub fn error_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.error_prefix = Some(prefix.into());
        self
    }
}

/// What a call came to.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    /// The server answered (possibly with `isError: true`).
    Completed(&'a CallToolResult),
    /// The call failed or was never sent; the model is told why.
    Failed(&'a Error),
}

impl<'a> From<&'a CallToolResult> for Outcome<'a> {
    fn from(r: &'a CallToolResult) -> Self {
        Outcome::Completed(r)
    }
}

impl<'a> From<&'a Error> for Outcome<'a> {
    fn from(e: &'a Error) -> Self {
        Outcome::Failed(e)
    }
}

enum Part<'a> {
    Text(Cow<'a, str>),
    Block(Value),
    Attach(Value),
    Value(&'a Value),
}

impl Provider {
    /// The answer to one call, in this provider's result shape.
    ///
    /// `call_id` is the id the model gave the call (some providers may omit it);
    /// `exposed_name` the tool name the model called.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when the spec's envelope needs a call id and none is given.
    ///
    /// Two stages. First the result is shaped for a model ([`Shape::Llm`], the
    /// default; see [`Shape`]): content no model takes becomes a text
    /// placeholder. Then the provider's media table maps each content block to a
    /// text part, a block in the content list, or an attachment beside it, and the
    /// spec's envelope wraps the lot, keyed by the call's id.
    ///
    /// A failed call (denied, timed out, unknown tool, ...) and a result with
    /// `isError: true` are both answered as errors, marked the way the spec says:
    /// a flag, a separate envelope, or a text prefix such as `Error: `.
    ///
    /// # Limits
    ///
    /// Every result that deserializes is answered; nothing in it is fetched,
    /// decoded or executed:
    ///
    /// - base64 is validated and measured without being decoded; invalid base64
    ///   becomes a placeholder (`[image: image/png, invalid base64]`);
    /// - a content block of unknown (or malformed known) type becomes
    ///   `[unsupported content: <type>]`;
    /// - `structuredContent` may be any JSON value (an object, a string, a list);
    ///   nested deeper than 256
    ///   levels it is answered with a placeholder instead of being copied;
    /// - `resource_link` URIs are passed to the model as text, never fetched.
    pub fn answer(
        &self,
        call_id: Option<&str>,
        exposed_name: &str,
        outcome: Outcome<'_>,
        options: &ResultOptions,
    ) -> Result<Value> {
        let (parts, is_error) = match outcome {
            Outcome::Completed(result) => (self.result_parts(result, options), result.is_error),
            Outcome::Failed(err) => (
                vec![Part::Text(Cow::Owned(err.message_with_causes()))],
                true,
            ),
        };
        self.envelope(call_id, exposed_name, parts, is_error, options)
    }

    fn result_parts<'a>(
        &self,
        result: &'a CallToolResult,
        options: &ResultOptions,
    ) -> Vec<Part<'a>> {
        let mode = options.structured.unwrap_or(self.results.structured.mode);
        let structured = result.structured_content.as_ref().filter(|_| match mode {
            StructuredMode::Auto => result.content.is_empty(),
            StructuredMode::Prefer | StructuredMode::Append => true,
            StructuredMode::Ignore => false,
        });
        let mut parts = Vec::with_capacity(result.content.len() + 1);
        if !(mode == StructuredMode::Prefer && structured.is_some()) {
            for content in &result.content {
                parts.push(self.content_part(content, options.shape));
            }
        }
        if let Some(value) = structured {
            parts.push(self.structured_part(value, parts.is_empty()));
        }
        if result.is_error && parts.is_empty() {
            parts.push(Part::Text(Cow::Borrowed(
                "the tool reported an error without details",
            )));
        }
        parts
    }

    fn content_part<'a>(&self, content: &'a Content, shape: Shape) -> Part<'a> {
        // A payload may be tens of megabytes: it is validated and measured once, when first needed.
        let measured = OnceCell::new();
        let measure = || *measured.get_or_init(|| Measured::of(content));
        if shape == Shape::Llm && !fits_model_measured(content, measure()) {
            return Part::Text(text_form_measured(content, measure()));
        }
        let (kind, mime) = match content {
            Content::Text(t) => return Part::Text(Cow::Borrowed(&t.text)),
            Content::Image(m) => (MediaKind::Image, Some(m.mime_type.as_str())),
            Content::Audio(m) => (MediaKind::Audio, Some(m.mime_type.as_str())),
            Content::ResourceLink(l) => (MediaKind::ResourceLink, l.mime_type.as_deref()),
            Content::Resource(r) if r.resource.blob.is_some() => {
                (MediaKind::ResourceBlob, r.resource.mime_type.as_deref())
            }
            Content::Resource(r) => (MediaKind::ResourceText, r.resource.mime_type.as_deref()),
            Content::Unknown(_) => (MediaKind::Unknown, None),
        };
        let vars = ContentVars {
            content,
            measured: &measured,
        };
        self.apply_media_rules(kind, mime, &vars)
            .unwrap_or_else(|| Part::Text(text_form_measured(content, measure())))
    }

    fn structured_part<'a>(&self, value: &'a Value, alone: bool) -> Part<'a> {
        if deeper_than(value, MAX_NESTING) {
            return Part::Text(Cow::Owned(too_deep_placeholder("structured content")));
        }
        let json = || Part::Text(Cow::Owned(value.to_string()));
        match &self.results.structured.render {
            StructuredRender::JsonText => json(),
            StructuredRender::Value if alone => Part::Value(value),
            StructuredRender::Value => json(),
            StructuredRender::Rules(rules) => {
                let vars = [("value", Var::Json(Cow::Borrowed(value)))];
                apply_rules(rules, None, vars.as_slice()).unwrap_or_else(json)
            }
        }
    }

    /// The first rule of `kind`'s row whose MIME types match and whose variables are all present.
    fn apply_media_rules<'a>(
        &self,
        kind: MediaKind,
        mime: Option<&str>,
        vars: &(impl Vars + ?Sized),
    ) -> Option<Part<'a>> {
        let rules = self.results.media.get(&kind)?;
        apply_rules(rules, mime, vars)
    }

    fn envelope(
        &self,
        call_id: Option<&str>,
        name: &str,
        mut parts: Vec<Part<'_>>,
        is_error: bool,
        options: &ResultOptions,
    ) -> Result<Value> {
        let plan = &self.results;
        let prefix = options
            .error_prefix
            .as_deref()
            .or(plan.error_prefix.as_deref())
            .filter(|_| is_error);
        if let Some(prefix) = prefix {
            match parts.iter_mut().find(|p| !matches!(p, Part::Attach(_))) {
                Some(Part::Text(text)) => *text = Cow::Owned(format!("{prefix}{text}")),
                _ => parts.insert(0, Part::Text(Cow::Owned(prefix.trim_end().to_owned()))),
            }
        }
        let mut attachments = Vec::new();
        let mut body = Vec::with_capacity(parts.len());
        for part in parts {
            match part {
                Part::Attach(v) => attachments.push(v),
                other => body.push(other),
            }
        }
        // Content and attachments may carry large payloads: moved into the answer, not copied.
        let mut owned = [
            ("content", Some(self.content_value(body)?)),
            ("attachments", Some(Value::Array(attachments))),
        ];
        let mut vars: Vec<(&str, Var<'_>)> = vec![("name", Var::Str(name))];
        if let Some(id) = call_id {
            vars.push(("call_id", Var::Str(id)));
        }
        let template = if is_error {
            plan.error_envelope.as_ref().unwrap_or(&plan.envelope)
        } else {
            &plan.envelope
        };
        template
            .render_moving(vars.as_slice(), &mut owned)
            .map_err(|missing| {
                Error::new(
                    ErrorKind::Input,
                    format!(
                        "provider `{}` answers need `{}`, which the call lacks",
                        self.id(),
                        missing.0
                    ),
                )
                .with_tool(name)
            })
    }

    fn content_value(&self, body: Vec<Part<'_>>) -> Result<Value> {
        let plan = &self.results;
        let has_block = body.iter().any(|p| matches!(p, Part::Block(_)));
        if let [Part::Value(v)] = body.as_slice() {
            return Ok((*v).clone());
        }
        if plan.content == ContentForm::String
            || (plan.content == ContentForm::StringOrBlocks && !has_block)
        {
            let texts: Vec<Cow<'_, str>> = body
                .into_iter()
                .map(|p| match p {
                    Part::Text(t) => t,
                    Part::Value(v) => Cow::Owned(v.to_string()),
                    Part::Block(v) | Part::Attach(v) => Cow::Owned(v.to_string()),
                })
                .collect();
            return Ok(Value::String(texts.join("\n")));
        }
        let text_block = plan
            .text_block
            .as_ref()
            .ok_or_else(|| Error::spec("no text block template").with_file(self.source()))?;
        body.into_iter()
            .map(|p| match p {
                Part::Block(v) => Ok(v),
                Part::Text(t) => render_text_block(text_block, &t),
                Part::Value(v) => render_text_block(text_block, &v.to_string()),
                Part::Attach(v) => Ok(v),
            })
            .collect::<Result<Vec<_>>>()
            .map(Value::Array)
    }
}

/// What replaces a value nested too deep to copy or render safely.
fn too_deep_placeholder(what: &str) -> String {
    format!("[{what} nested deeper than {MAX_NESTING} levels, omitted]")
}

/// The first of `rules` whose MIME types match and whose variables are all present.
fn apply_rules<'a>(
    rules: &[MediaRule],
    mime: Option<&str>,
    vars: &(impl Vars + ?Sized),
) -> Option<Part<'a>> {
    let mime = mime.map(normalize_mime);
    rules
        .iter()
        .filter(|r| matches_mime(r, mime.as_deref()))
        .find_map(|rule| {
            let rendered: Result<Part<'a>, Missing> = match &rule.action {
                MediaAction::Block(t) => t.render(vars).map(Part::Block),
                MediaAction::Attach(t) => t.render(vars).map(Part::Attach),
                MediaAction::Text(pieces) => {
                    render_string(pieces, vars).map(|s| Part::Text(Cow::Owned(s)))
                }
            };
            rendered.ok()
        })
}

fn render_text_block(template: &Template, text: &str) -> Result<Value> {
    template
        .render([("text", Var::Str(text))].as_slice())
        .map_err(|m| Error::spec(format!("the text block needs `{}`", m.0)))
}

fn matches_mime(rule: &MediaRule, mime: Option<&str>) -> bool {
    let Some(accept) = &rule.accept else {
        return true;
    };
    let Some(mime) = mime else { return false };
    accept.iter().any(|a| match a.strip_suffix("/*") {
        Some(major) => mime.split('/').next() == Some(major),
        None => a == mime,
    })
}

/// The variables a media rule sees for one content block.
struct ContentVars<'a> {
    content: &'a Content,
    measured: &'a OnceCell<Measured>,
}

impl<'a> ContentVars<'a> {
    fn data(&self) -> Option<&'a str> {
        match self.content {
            Content::Image(m) | Content::Audio(m) => Some(&m.data),
            Content::Resource(r) => r.resource.blob.as_deref(),
            _ => None,
        }
    }

    fn mime(&self) -> Option<Cow<'a, str>> {
        match self.content {
            Content::Image(m) | Content::Audio(m) => Some(normalize_mime(&m.mime_type)),
            Content::ResourceLink(l) => l.mime_type.as_deref().map(normalize_mime),
            Content::Resource(r) => r.resource.mime_type.as_deref().map(normalize_mime),
            _ => None,
        }
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
            "mime" => self.mime().and_then(|m| owned(m.into_owned())),
            "mime_subtype" => self
                .mime()
                .and_then(|m| owned(m.split('/').nth(1)?.to_owned())),
            "text" => match c {
                Content::Text(t) => Some(Var::Str(&t.text)),
                Content::Resource(r) => r.resource.text.as_deref().map(Var::Str),
                _ => None,
            },
            "uri" => match c {
                Content::ResourceLink(l) => Some(Var::Str(&l.uri)),
                Content::Resource(r) => Some(Var::Str(&r.resource.uri)),
                _ => None,
            },
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
