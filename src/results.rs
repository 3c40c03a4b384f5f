//! Answering calls: an MCP result, or a failure, in a provider's result shape.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::budget::{self, Counter, Reading, Sent};
pub use crate::budget::{Budget, LIBRARY_SERVER, READ_TOOL_NAME};
use crate::error::{Error, Result};
use crate::json::{MAX_NESTING, deeper_than};
use crate::mcp::{CallToolResult, Content};
use crate::media::{
    Measured, blob_mime, fits_model_measured, normalize_mime, shape_structured, text_form_measured,
    with_reason, without_mirror,
};
use crate::select::SelectLimits;
use crate::spec::Provider;
pub use crate::spec::results::StructuredMode;
use crate::spec::results::{
    ContentForm, MediaAction, MediaKind, MediaRule, ResultsPlan, StructuredRender,
};
use crate::spec::template::{Missing, Template, Var, Vars, render_string};

mod content_vars;
use content_vars::ContentVars;

/// Whether results are shaped for a model before the provider mapping.
///
/// Models accept few media types. With `shape: llm` (the default) the
/// provider-independent stage below turns everything a model cannot take into
/// a text placeholder, so no provider ever receives a payload it would reject:
///
/// | content | kept when | otherwise |
/// |---|---|---|
/// | `image` | JPEG, PNG, GIF, WebP, HEIC or HEIF with valid base64 | `[image: image/svg+xml, 1024 bytes]` |
/// | `audio` | WAV, MP3, Ogg, WebM, FLAC, AAC or AIFF with valid base64 | `[audio: audio/x-ms-wma, 1024 bytes]` |
/// | embedded blob | one of those image or audio types, PDF, plain text or a common video type (MP4, MPEG, MOV, AVI, FLV, WebM, WMV, 3GPP), with valid base64; an unlabelled or `application/octet-stream` blob that starts with `%PDF-` counts as PDF | `[resource: file:///a.docx, application/msword, 1024 bytes]` |
/// | `structuredContent` | always, with each base64 payload in it (a `data:` URI, a `data`/`blob` string beside a MIME type, a long base64 string) replaced | `[image/png, 1024 bytes of base64, omitted]` |
///
/// Sizes are the decoded sizes, computed from the base64 text without decoding
/// it. Invalid base64 reads `[image: image/png, invalid base64]`. The same text
/// forms are what a provider's media table falls back to for content it does
/// not map. Passing this stage only means a model may take the medium: each
/// spec's media table says which ones its provider takes, and where.
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

/// Options for [`Provider::answer`] and [`Provider::answer_all`] (and, through
/// [`ExecOptions::results`](crate::ExecOptions::results), for execution).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ResultOptions {
    pub(crate) structured: Option<StructuredMode>,
    pub(crate) shape: Shape,
    pub(crate) error_prefix: Option<String>,
    pub(crate) options: BTreeMap<String, String>,
    pub(crate) budget: Budget,
    pub(crate) program_bytes: Option<usize>,
    pub(crate) select_limits: SelectLimits,
}

impl ResultOptions {
    /// The spec's structured mode, error prefix and media table; results shaped for a model.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets a named option the spec offers, such as `media` = `full` (the
    /// provider's whole documented media support, follow-ups included). An
    /// option whose value changes only listings has no effect here; see
    /// [`Provider::options`].
    pub fn option(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.insert(name.into(), value.into());
        self
    }

    /// The limits the model's result selection filters run under
    /// ([`ListOptions::select`](crate::ListOptions::select); the defaults
    /// of [`SelectLimits`] otherwise).
    pub fn select_limits(mut self, limits: SelectLimits) -> Self {
        self.select_limits = limits;
        self
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

    /// The most tokens one call's answer may send the model (no limit
    /// otherwise). A result over it is cut: each text keeps its head and its
    /// tail with a notice between them saying how much was left out and how
    /// to read it, and media that do not fit are replaced whole by their
    /// placeholders. Tokens are counted as the spec's `tokens:` section says
    /// (see [Result budgets](crate::guide::agent_loop#result-budgets)); notices are not
    /// counted. The server's whole result stays with the application.
    pub fn max_result_tokens(mut self, tokens: u64) -> Self {
        self.budget.max_result_tokens = Some(tokens);
        self
    }

    /// The most tokens the answers of one turn may send the model together
    /// (no limit otherwise), shared fairly: results that fit in an equal
    /// share keep what they need, and the large ones share the rest equally,
    /// so one large result never starves the others. Applies to
    /// [`Provider::answer_all`] and to execution; each call's own limit
    /// ([`max_result_tokens`](Self::max_result_tokens)) still holds.
    pub fn max_turn_tokens(mut self, tokens: u64) -> Self {
        self.budget.max_turn_tokens = Some(tokens);
        self
    }

    /// The budgets set (none by default); give them to
    /// [`ListOptions::read_on`](crate::ListOptions::read_on).
    pub fn budget(&self) -> &Budget {
        &self.budget
    }
}

/// What a call came to.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    /// The server answered (possibly with `isError: true`).
    Completed(&'a CallToolResult),
    /// The call failed or was never sent; the model is told why: the
    /// error's message and causes, or, for a failure of the server itself
    /// ([`Unavailable`](crate::ErrorKind::Unavailable),
    /// [`Interrupted`](crate::ErrorKind::Interrupted),
    /// [`Unauthorized`](crate::ErrorKind::Unauthorized)), only that, with
    /// the server's name when the library made the error: its message may
    /// quote the server's stderr, command line or URL, which the model is
    /// never told.
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

/// A turn's answers and what goes after them.
///
/// Put [`follow_ups`](Self::follow_ups) right after [`results`](Self::results),
/// as the spec shapes them: OpenAI Chat and Mistral append both to the
/// messages (the follow-ups are one user message after the tool messages);
/// Bedrock puts both in one user message's content (blocks after the
/// `toolResult` blocks); Gemini puts the results in a user `Content`'s parts
/// and appends the follow-ups, one user `Content` of `inlineData` parts, to the
/// contents after it. Anthropic and OpenAI Responses need none.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Turn {
    /// One answer per call, in the order given.
    pub results: Vec<Value>,
    /// The media the answers could not carry, each introduced by a text naming
    /// its call, in the calls' order (empty unless a spec's `follow_up` rules apply).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<Value>,
}

enum Part<'a> {
    Text(Cow<'a, str>),
    Block(Value),
    Attach(Value),
    /// A medium sent after the turn's answers: the item, what it is (`image/png,
    /// 1024 bytes`) and its block's position in the result.
    FollowUp {
        item: Value,
        what: String,
        n: usize,
    },
    Value(Cow<'a, Value>),
}

/// The outcome of a media row's rules for one block.
enum Applied<'a> {
    Part(Part<'a>),
    /// A rule would have taken the medium but for a limit: why.
    Refused(String),
    Nothing,
}

/// What the request limits have counted so far in a turn.
#[derive(Debug, Clone, Copy, Default)]
struct Used {
    items: u64,
    bytes: u64,
}

impl Provider {
    /// The tokens of `text` as this provider's models count them: exactly,
    /// by the public tokenizer the spec's `tokens:` section names (with the
    /// `tokenizers` feature), or by the spec's bytes-per-token estimate
    /// ([`counts_tokens_exactly`](Self::counts_tokens_exactly) says which).
    /// Result budgets count so.
    pub fn count_tokens(&self, text: &str) -> u64 {
        Counter::new(&self.tokens).tokens(text)
    }

    /// Whether [`count_tokens`](Self::count_tokens) is exact: the spec names
    /// a public tokenizer and the `tokenizers` feature is on.
    pub fn counts_tokens_exactly(&self) -> bool {
        Counter::new(&self.tokens).exact()
    }

    /// The answer to one call, in this provider's result shape.
    ///
    /// `call_id` is the id the model gave the call (some providers may omit it);
    /// `exposed_name` the tool name the model called.
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
    /// Media a spec sends after the turn's answers (its `follow_up` rules, for
    /// instance OpenAI Chat with the `media: full` option) need the whole turn:
    /// use [`answer_all`](Self::answer_all). Here those rules do not apply, and
    /// such media get the next rule that takes them, or their placeholder.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when the spec's envelope needs a call id and none is
    /// given, or `options` name an option (or value) the spec does not offer.
    ///
    /// # Limits
    ///
    /// Every result that deserializes is answered; nothing in it is fetched
    /// or executed, and only a text blob a rule asks for as text (`${blob_text}`)
    /// is decoded:
    ///
    /// - base64 is validated and measured without being decoded; invalid base64
    ///   becomes a placeholder (`[image: image/png, invalid base64]`);
    /// - a medium over a limit the spec states (per item, or per request over
    ///   the turn's media) becomes its placeholder, which says which limit;
    /// - a content block of unknown (or malformed known) type becomes
    ///   `[unsupported content: <type>]`;
    /// - `structuredContent` may be any JSON value (an object, a string, a list);
    ///   nested deeper than 256
    ///   levels it is answered with a placeholder instead of being copied;
    ///   structured content that only repeats the content blocks is left out;
    /// - `resource_link` URIs are passed to the model as text, never fetched;
    /// - a content block for the user only (its `audience` leaves out
    ///   `assistant`: [`Content::for_model`](crate::Content::for_model)) is
    ///   left out, and a result left empty that way is answered with a notice
    ///   saying how many blocks are for the user.
    pub fn answer(
        &self,
        call_id: Option<&str>,
        exposed_name: &str,
        outcome: Outcome<'_>,
        options: &ResultOptions,
    ) -> Result<Value> {
        let mut turn = self.turn(options, FollowUps::Skip)?;
        let allowance = turn.allowances(&[outcome])[0];
        turn.answer_within(call_id, exposed_name, outcome, allowance, &mut Reading::Off)
            .map(|(answer, _)| answer)
    }

    /// The answers to a turn's calls, given in the model's order as
    /// `(call id, exposed name, outcome)`, and the follow-up items that go
    /// after them (see [`Turn`]).
    ///
    /// Each answer is what [`answer`](Self::answer) gives, except that media a
    /// spec's `follow_up` rules take leave a short note in the answer
    /// (`[image/png, 1024 bytes: item 2 of this result, sent after the tool
    /// results]`) and go to [`Turn::follow_ups`], each after a text naming its
    /// call and item; and that the spec's request limits count the media of
    /// the whole turn.
    ///
    /// ```
    /// use mcp_adapters::{CallToolResult, Content, Outcome, Registry, ResultOptions};
    /// use serde_json::json;
    ///
    /// let provider = Registry::builtin()?.get("openai-chat")?;
    /// let mut result = CallToolResult::text("The chart:");
    /// result.content.push(Content::from_value(json!({"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="})));
    /// let options = ResultOptions::new().option("media", "full");
    /// let turn = provider.answer_all([(Some("call_1"), "chart", Outcome::Completed(&result))], &options)?;
    /// // messages.extend(turn.results); messages.extend(turn.follow_ups);
    /// assert_eq!(turn.results[0]["role"], "tool");
    /// assert_eq!(turn.follow_ups[0]["role"], "user");
    /// assert_eq!(turn.follow_ups[0]["content"][1]["type"], "image_url");
    /// # Ok::<(), mcp_adapters::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`answer`](Self::answer).
    pub fn answer_all<'c>(
        &self,
        calls: impl IntoIterator<Item = (Option<&'c str>, &'c str, Outcome<'c>)>,
        options: &ResultOptions,
    ) -> Result<Turn> {
        let mut turn = self.turn(options, FollowUps::Collect)?;
        let calls: Vec<_> = calls.into_iter().collect();
        let outcomes: Vec<Outcome<'_>> = calls.iter().map(|(_, _, o)| *o).collect();
        let allowances = turn.allowances(&outcomes);
        let results = calls
            .into_iter()
            .zip(allowances)
            .map(|((call_id, name, outcome), allowance)| {
                turn.answer_within(call_id, name, outcome, allowance, &mut Reading::Off)
                    .map(|(answer, _)| answer)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Turn {
            results,
            follow_ups: turn.finish()?,
        })
    }

    /// A turn to answer calls in, with the results section `options` select.
    pub(crate) fn turn<'p>(
        &'p self,
        options: &'p ResultOptions,
        follow_ups: FollowUps,
    ) -> Result<TurnAnswers<'p>> {
        let plan = self.results_plan(options)?;
        Ok(TurnAnswers {
            provider: self,
            plan,
            options,
            used: vec![Used::default(); plan.request_limits.len()],
            follow_ups: match follow_ups {
                FollowUps::Collect => Some(Vec::new()),
                FollowUps::Skip => None,
            },
        })
    }

    /// The results section: the spec's, or the one an option's value replaces it with.
    fn results_plan(&self, options: &ResultOptions) -> Result<&ResultsPlan> {
        let mut chosen: Option<(&str, &ResultsPlan)> = None;
        for (name, value) in &options.options {
            let Some(plan) = self.option_effect(name, value)?.results.as_deref() else {
                continue;
            };
            if let Some((other, _)) = chosen {
                return Err(Error::input(format!(
                    "options `{other}` and `{name}` of provider `{}` both change its results; set one",
                    self.id()
                )));
            }
            chosen = Some((name, plan));
        }
        Ok(chosen.map_or(&self.results, |(_, plan)| plan))
    }
}

/// Whether a turn collects follow-up items, or leaves `follow_up` rules out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FollowUps {
    Collect,
    Skip,
}

/// A turn being answered: the results section in force, what the request
/// limits have counted so far and the follow-up items collected, in the order
/// the calls were answered.
pub(crate) struct TurnAnswers<'p> {
    provider: &'p Provider,
    plan: &'p ResultsPlan,
    options: &'p ResultOptions,
    used: Vec<Used>,
    follow_ups: Option<Vec<Value>>,
}

impl TurnAnswers<'_> {
    /// Each outcome's allowance in tokens, in the order given: the call's
    /// limit, and the outcome's fair share of the turn's. `None`: no limit.
    /// A failure's answer is the library's own short text: never cut, it
    /// counts against the turn's limit all the same.
    pub(crate) fn allowances(&self, outcomes: &[Outcome<'_>]) -> Vec<Option<u64>> {
        let per_call = self.options.budget.max_result_tokens;
        let Some(turn) = self.options.budget.max_turn_tokens else {
            return vec![per_call; outcomes.len()];
        };
        let counter = self.counter();
        let cap = per_call.map_or(turn, |c| c.min(turn));
        let demands: Vec<u64> = outcomes
            .iter()
            .map(|outcome| match outcome {
                Outcome::Completed(result) => {
                    let (content, structured) = self.sent(result);
                    let sent = Sent {
                        content,
                        structured: structured.as_deref(),
                    };
                    budget::demand(result, &sent, counter, cap)
                }
                Outcome::Failed(err) => counter.estimate(err.message().len()),
            })
            .collect();
        budget::fair_shares(&demands, turn)
            .into_iter()
            .zip(outcomes)
            .map(|(share, outcome)| match outcome {
                Outcome::Completed(_) => Some(per_call.map_or(share, |c| c.min(share))),
                Outcome::Failed(_) => None,
            })
            .collect()
    }

    /// Counts tokens as the provider's models do.
    pub(crate) fn counter(&self) -> Counter<'_> {
        Counter::new(&self.provider.tokens)
    }

    /// Whether `result`'s content blocks are sent, and its structured
    /// content when it is (the structured mode in force; content that only
    /// mirrors the blocks is not).
    fn sent<'a>(&self, result: &'a CallToolResult) -> (bool, Option<Cow<'a, Value>>) {
        let mode = self.options.structured.unwrap_or(self.plan.structured.mode);
        let structured = result
            .structured_content
            .as_ref()
            .filter(|_| match mode {
                StructuredMode::Auto => result.content.is_empty(),
                StructuredMode::Prefer | StructuredMode::Append => true,
                StructuredMode::Ignore => false,
            })
            .and_then(|value| without_mirror(value, &result.content));
        let content = !(mode == StructuredMode::Prefer && structured.is_some());
        (content, structured)
    }

    /// The answer to one call, cut to `allowance` tokens when one is given,
    /// and whether it was cut; its follow-up items wait for
    /// [`finish`](Self::finish). `reading` says how the notice of a cut text
    /// tells the model to read on.
    pub(crate) fn answer_within(
        &mut self,
        call_id: Option<&str>,
        name: &str,
        outcome: Outcome<'_>,
        allowance: Option<u64>,
        reading: &mut Reading<'_>,
    ) -> Result<(Value, bool)> {
        let fitted;
        let mut cut = false;
        let outcome = match (outcome, allowance) {
            (Outcome::Completed(result), Some(allowance)) => {
                let (content, structured) = self.sent(result);
                let sent = Sent {
                    content,
                    structured: structured.as_deref(),
                };
                match budget::fit(result, &sent, self.counter(), allowance, reading) {
                    Some(fit) => {
                        fitted = fit;
                        cut = true;
                        Outcome::Completed(&fitted)
                    }
                    None => outcome,
                }
            }
            _ => outcome,
        };
        Ok((self.answer(call_id, name, outcome)?, cut))
    }

    /// The answer to one call; its follow-up items wait for [`finish`](Self::finish).
    fn answer(&mut self, call_id: Option<&str>, name: &str, outcome: Outcome<'_>) -> Result<Value> {
        let (parts, is_error) = match outcome {
            Outcome::Completed(result) => (self.result_parts(result, call_id), result.is_error),
            Outcome::Failed(err) => (vec![Part::Text(Cow::Owned(err.told_to_model()))], true),
        };
        let mut items = Vec::new();
        let parts = parts
            .into_iter()
            .map(|part| match part {
                Part::FollowUp { item, what, n } => {
                    let call = match call_id {
                        Some(id) => format!("{name} (call {id})"),
                        None => name.to_owned(),
                    };
                    items.push((format!("Item {n} ({what}) of the result of {call}:"), item));
                    Part::Text(Cow::Owned(format!(
                        "[{what}: item {n} of this result, sent after the tool results]"
                    )))
                }
                other => other,
            })
            .collect();
        let answer = self.envelope(call_id, name, parts, is_error)?;
        if let (Some(out), Some(plan)) = (&mut self.follow_ups, &self.plan.follow_up) {
            for (intro, item) in items {
                let text = plan
                    .text
                    .render([("text", Var::Str(&intro))].as_slice())
                    .map_err(|m| {
                        Error::spec(format!("the follow-up text item needs `{}`", m.0))
                            .with_file(self.provider.source())
                    })?;
                out.push(text);
                out.push(item);
            }
        }
        Ok(answer)
    }

    /// The turn's follow-up items, wrapped as the spec's follow-up envelope says.
    pub(crate) fn finish(self) -> Result<Vec<Value>> {
        let items = self.follow_ups.unwrap_or_default();
        let envelope = self
            .plan
            .follow_up
            .as_ref()
            .and_then(|f| f.envelope.as_ref());
        match envelope {
            Some(envelope) if !items.is_empty() => {
                let mut owned = [("items", Some(Value::Array(items)))];
                let wrapped = envelope
                    .render_moving([].as_slice(), &mut owned)
                    .map_err(|m| {
                        Error::spec(format!("the follow-up envelope needs `{}`", m.0))
                            .with_file(self.provider.source())
                    })?;
                Ok(vec![wrapped])
            }
            _ => Ok(items),
        }
    }

    fn result_parts<'a>(
        &mut self,
        result: &'a CallToolResult,
        call_id: Option<&str>,
    ) -> Vec<Part<'a>> {
        let (content_sent, structured) = self.sent(result);
        let mut parts = Vec::with_capacity(result.content.len() + 1);
        // Blocks whose audience leaves the model out are for the person only.
        let mut for_user = 0usize;
        if content_sent {
            for (i, content) in result.content.iter().enumerate() {
                if content.for_model() {
                    parts.push(self.content_part(content, i + 1, call_id));
                } else {
                    for_user += 1;
                }
            }
        }
        if let Some(value) = structured {
            let alone = parts.is_empty();
            parts.push(self.structured_part(value, alone));
        }
        if parts.is_empty() && for_user > 0 {
            parts.push(Part::Text(Cow::Owned(format!(
                "[the result's {for_user} content block(s) are for the user only (audience: user) and are not shown here]"
            ))));
        }
        if result.is_error && parts.is_empty() {
            parts.push(Part::Text(Cow::Borrowed(
                "the tool reported an error without details",
            )));
        }
        parts
    }

    /// One content block, the `n`-th of its result.
    fn content_part<'a>(
        &mut self,
        content: &'a Content,
        n: usize,
        call_id: Option<&str>,
    ) -> Part<'a> {
        // A payload may be tens of megabytes: it is validated and measured once, when first needed.
        let measured = OnceCell::new();
        let measure = || *measured.get_or_init(|| Measured::of(content));
        if self.options.shape == Shape::Llm && !fits_model_measured(content, measure()) {
            return Part::Text(text_form_measured(content, measure()));
        }
        let (kind, mime) = match content {
            Content::Text(t) => return Part::Text(Cow::Borrowed(&t.text)),
            Content::Image(m) => (MediaKind::Image, Some(normalize_mime(&m.mime_type))),
            Content::Audio(m) => (MediaKind::Audio, Some(normalize_mime(&m.mime_type))),
            Content::ResourceLink(l) => (
                MediaKind::ResourceLink,
                l.mime_type.as_deref().map(normalize_mime),
            ),
            Content::Resource(r) => match &r.resource.blob {
                Some(blob) => (
                    MediaKind::ResourceBlob,
                    blob_mime(r.resource.mime_type.as_deref(), blob),
                ),
                None => (
                    MediaKind::ResourceText,
                    r.resource.mime_type.as_deref().map(normalize_mime),
                ),
            },
            Content::Unknown(_) => (MediaKind::Unknown, None),
        };
        let plan = self.plan;
        let Some(rules) = plan.media.get(&kind) else {
            return Part::Text(text_form_measured(content, measure()));
        };
        let payload = matches!(
            content,
            Content::Image(_) | Content::Audio(_) | Content::Resource(_)
        ) && !matches!(kind, MediaKind::ResourceText);
        let size = if payload { measure().size() } else { None };
        let vars = ContentVars {
            content,
            measured: &measured,
            mime: mime.as_deref(),
            call_id,
            n,
            blob_text: OnceCell::new(),
        };
        match self.apply(rules, mime.as_deref(), size, n, &vars) {
            Applied::Part(part) => part,
            Applied::Refused(reason) => Part::Text(Cow::Owned(with_reason(
                &text_form_measured(content, measure()),
                &reason,
            ))),
            Applied::Nothing => Part::Text(text_form_measured(content, measure())),
        }
    }

    fn structured_part<'a>(&mut self, value: Cow<'a, Value>, alone: bool) -> Part<'a> {
        if deeper_than(&value, MAX_NESTING) {
            return Part::Text(Cow::Owned(too_deep_placeholder("structured content")));
        }
        // PI-2 for structured values: no base64 payload reaches a model as text.
        let value = match self.options.shape {
            Shape::Llm => match shape_structured(&value) {
                Cow::Owned(shaped) => Cow::Owned(shaped),
                Cow::Borrowed(_) => value,
            },
            Shape::None => value,
        };
        let json = |v: &Value| Part::Text(Cow::Owned(v.to_string()));
        let plan = self.plan;
        match &plan.structured.render {
            StructuredRender::JsonText => json(&value),
            StructuredRender::Value if alone => Part::Value(value),
            StructuredRender::Value => json(&value),
            StructuredRender::Rules(rules) => {
                let vars = [("value", Var::Json(Cow::Borrowed(value.as_ref())))];
                match self.apply(rules, None, None, 0, vars.as_slice()) {
                    Applied::Part(part) => part,
                    Applied::Refused(_) | Applied::Nothing => json(&value),
                }
            }
        }
    }

    /// The first of `rules` whose MIME types match, whose limits the medium
    /// (of decoded `size`, when it has a payload) fits and whose variables are
    /// all present; the request limits count what it places.
    fn apply<'a>(
        &mut self,
        rules: &[MediaRule],
        mime: Option<&str>,
        size: Option<usize>,
        n: usize,
        vars: &(impl Vars + ?Sized),
    ) -> Applied<'a> {
        let mut refused = None;
        for rule in rules
            .iter()
            .filter(|r| matches_mime(r.accept.as_deref(), mime))
        {
            if matches!(rule.action, MediaAction::FollowUp(_)) && self.follow_ups.is_none() {
                continue;
            }
            let bytes = size.map_or(0, |n| n as u64);
            if let (Some(max), Some(_)) = (rule.max_bytes, size)
                && bytes > max
            {
                refused.get_or_insert_with(|| {
                    format!("over the provider's limit of {max} bytes for one item")
                });
                continue;
            }
            let charged = rule.action.places_media() && size.is_some();
            if charged && let Some(reason) = self.over_request_limit(mime, bytes) {
                refused.get_or_insert(reason);
                continue;
            }
            let rendered: Result<Part<'a>, Missing> = match &rule.action {
                MediaAction::Block(t) => t.render(vars).map(Part::Block),
                MediaAction::Attach(t) => t.render(vars).map(Part::Attach),
                MediaAction::FollowUp(t) => t.render(vars).map(|item| Part::FollowUp {
                    item,
                    what: describe(mime, size),
                    n,
                }),
                MediaAction::Text(pieces) => {
                    render_string(pieces, vars).map(|s| Part::Text(Cow::Owned(s)))
                }
            };
            if let Ok(part) = rendered {
                if charged {
                    self.charge(mime, bytes);
                }
                return Applied::Part(part);
            }
        }
        refused.map_or(Applied::Nothing, Applied::Refused)
    }

    /// Why placing a medium of `bytes` would pass a request limit, if it would.
    fn over_request_limit(&self, mime: Option<&str>, bytes: u64) -> Option<String> {
        self.plan
            .request_limits
            .iter()
            .zip(&self.used)
            .filter(|(limit, _)| matches_mime(limit.accept.as_deref(), mime))
            .find_map(|(limit, used)| {
                let of = match &limit.accept {
                    Some(types) => format!(" of type {}", types.join(", ")),
                    None => String::new(),
                };
                if let Some(max) = limit.max_items
                    && used.items >= max
                {
                    return Some(format!(
                        "over the provider's limit of {max} media items{of} per request"
                    ));
                }
                match limit.max_bytes {
                    Some(max) if used.bytes + bytes > max => Some(format!(
                        "with the turn's other media, over the provider's limit of {max} bytes of media{of} per request"
                    )),
                    _ => None,
                }
            })
    }

    fn charge(&mut self, mime: Option<&str>, bytes: u64) {
        for (limit, used) in self.plan.request_limits.iter().zip(&mut self.used) {
            if matches_mime(limit.accept.as_deref(), mime) {
                used.items += 1;
                used.bytes += bytes;
            }
        }
    }

    fn envelope(
        &self,
        call_id: Option<&str>,
        name: &str,
        mut parts: Vec<Part<'_>>,
        is_error: bool,
    ) -> Result<Value> {
        let plan = self.plan;
        let prefix = self
            .options
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
        let attachments = parts
            .extract_if(.., |p| matches!(p, Part::Attach(_)))
            .filter_map(|p| match p {
                Part::Attach(v) => Some(v),
                _ => None,
            })
            .collect();
        // Content and attachments may carry large payloads: moved into the answer, not copied.
        let mut owned = [
            ("content", Some(self.content_value(parts)?)),
            ("attachments", Some(Value::Array(attachments))),
        ];
        let both = [
            ("name", Var::Str(name)),
            ("call_id", Var::Str(call_id.unwrap_or_default())),
        ];
        let vars = &both[..if call_id.is_some() { 2 } else { 1 }];
        let template = if is_error {
            plan.error_envelope.as_ref().unwrap_or(&plan.envelope)
        } else {
            &plan.envelope
        };
        template.render_moving(vars, &mut owned).map_err(|missing| {
            Error::input(format!(
                "provider `{}` answers need `{}`, which the call lacks",
                self.provider.id(),
                missing.0
            ))
            .with_tool(name)
        })
    }

    fn content_value(&self, mut body: Vec<Part<'_>>) -> Result<Value> {
        let plan = self.plan;
        if body.len() == 1
            && let Some(Part::Value(v)) = body.pop_if(|p| matches!(p, Part::Value(_)))
        {
            return Ok(v.into_owned());
        }
        let has_block = body.iter().any(|p| matches!(p, Part::Block(_)));
        if plan.content == ContentForm::String
            || (plan.content == ContentForm::StringOrBlocks && !has_block)
        {
            let texts: Vec<Cow<'_, str>> = body
                .into_iter()
                .map(|p| match p {
                    Part::Text(t) => t,
                    Part::Value(v) => Cow::Owned(v.to_string()),
                    Part::Block(v) | Part::Attach(v) | Part::FollowUp { item: v, .. } => {
                        Cow::Owned(v.to_string())
                    }
                })
                .collect();
            return Ok(Value::String(texts.join("\n")));
        }
        let text_block = plan.text_block.as_ref().ok_or_else(|| {
            Error::spec("no text block template").with_file(self.provider.source())
        })?;
        body.into_iter()
            .map(|p| match p {
                Part::Block(v) => Ok(v),
                Part::Text(t) => render_text_block(text_block, &t),
                Part::Value(v) => render_text_block(text_block, &v.to_string()),
                Part::Attach(v) | Part::FollowUp { item: v, .. } => Ok(v),
            })
            .collect::<Result<Vec<_>>>()
            .map(Value::Array)
    }
}

/// `image/png, 1024 bytes`: what a follow-up medium is.
fn describe(mime: Option<&str>, size: Option<usize>) -> String {
    let mime = mime.unwrap_or("application/octet-stream");
    match size {
        Some(n) => format!("{mime}, {n} bytes"),
        None => mime.to_owned(),
    }
}

/// What replaces a value nested too deep to copy or render safely.
fn too_deep_placeholder(what: &str) -> String {
    format!("[{what} nested deeper than {MAX_NESTING} levels, omitted]")
}

fn render_text_block(template: &Template, text: &str) -> Result<Value> {
    template
        .render([("text", Var::Str(text))].as_slice())
        .map_err(|m| Error::spec(format!("the text block needs `{}`", m.0)))
}

/// Whether `mime` (normalized) is one of `accept` (`type/*` allowed); no list accepts anything.
fn matches_mime(accept: Option<&[String]>, mime: Option<&str>) -> bool {
    let Some(accept) = accept else {
        return true;
    };
    let Some(mime) = mime else { return false };
    accept.iter().any(|a| match a.strip_suffix("/*") {
        Some(major) => mime.split('/').next() == Some(major),
        None => a == mime,
    })
}
