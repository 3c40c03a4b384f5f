//! Sampling conversion: an MCP `sampling/createMessage` request as a
//! provider's request body, and the provider's response as the MCP
//! `CreateMessageResult` the server is answered with.
//!
//! The library never calls a model. An application that lets servers sample
//! (`sampling` client capability) converts the server's
//! [`CreateMessageParams`] with [`Provider::sampling_request`], sends the
//! body with its own HTTP client, and converts the JSON it gets back with
//! [`Provider::sampling_result`]. Everything provider-specific is the spec's
//! `sampling:` section (see the spec author's guide, docs/spec-authors-guide.md).

// `request.rs` checks the request and renders it (messages in
// `request/messages.rs`, media in `request/media.rs`, tools and the tool
// choice in `request/tools.rs`, MCP's message rules in `request/rules.rs`);
// `response.rs` reads the response back.

mod request;
mod response;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::listing::Listing;
use crate::mcp::{CreateMessageParams, CreateMessageResult};
use crate::results::ResultOptions;
use crate::spec::sampling::SamplingPlan;
use crate::spec::{Provider, StrictMode};

/// The application's choices for one conversion: the model, and how tools
/// and tool results are offered.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SamplingOptions {
    pub(crate) model: String,
    pub(crate) options: BTreeMap<String, String>,
    pub(crate) results: ResultOptions,
    pub(crate) strict: Option<StrictMode>,
    pub(crate) merge: Map<String, Value>,
}

impl SamplingOptions {
    /// Options for a request to `model`, the model the application chose
    /// (the server's `modelPreferences` are only hints).
    pub fn new(model: impl Into<String>) -> Self {
        SamplingOptions {
            model: model.into(),
            options: BTreeMap::new(),
            results: ResultOptions::new(),
            strict: None,
            merge: Map::new(),
        }
    }

    /// The model.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Sets a named option the spec offers, for the tools offered
    /// (`cache_control` = `last`) and the tool results in the history
    /// (`media` = `full`); see [`Provider::options`].
    pub fn option(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.insert(name.into(), value.into());
        self
    }

    /// How the tool results in the history are answered (structured content,
    /// shaping, error prefix; named options set here count too).
    pub fn results(mut self, options: ResultOptions) -> Self {
        self.results = options;
        self
    }

    /// The strict mode of the tools offered. The spec's `sampling.tools.strict`
    /// otherwise: `false` (the schemas as the server wrote them) for every
    /// built-in provider except `anthropic-strict`.
    pub fn strict(mut self, mode: StrictMode) -> Self {
        self.strict = Some(mode);
        self
    }

    /// Deep-merges `extra` into the body last (objects merge key by key,
    /// `null` removes a key, anything else replaces): for what the
    /// application adds (`{"store": false}`, `{"reasoning": {"effort": "low"}}`)
    /// or takes away (`{"temperature": null}` for a model that refuses one).
    pub fn merge(mut self, extra: Map<String, Value>) -> Self {
        self.merge = extra;
        self
    }
}

/// A request body in a provider's format, and what reading its response needs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PreparedSampling {
    /// The body to send (JSON).
    pub body: Value,
    /// What the conversion left out or could not enforce, one sentence each
    /// (`metadata` that has no place, a tool choice the provider cannot send):
    /// log them, or refuse the request.
    pub warnings: Vec<String>,
    model: String,
    provider: String,
    listing: Option<Listing>,
}

impl PreparedSampling {
    /// The model the application chose: for the URL of providers whose
    /// model is not in the body, and the result's model when the response
    /// does not name one.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The id of the provider the body is in the format of.
    pub fn provider_id(&self) -> &str {
        &self.provider
    }

    /// The tools offered, with the report of the names changed for the
    /// provider (`None` when the request offered no tools).
    pub fn listing(&self) -> Option<&Listing> {
        self.listing.as_ref()
    }
}

impl Provider {
    /// Whether the spec says how to convert sampling requests (a `sampling:` section).
    pub fn supports_sampling(&self) -> bool {
        self.sampling.is_some()
    }

    fn sampling_plan(&self) -> Result<&SamplingPlan> {
        self.sampling.as_ref().ok_or_else(|| {
            Error::input(format!(
                    "provider `{}` has no `sampling:` section: its spec does not say how to build a sampling request",
                    self.id()
                ))
        })
    }

    /// The request body that asks this provider for the completion an MCP
    /// server asked for (`sampling/createMessage`), in the provider's format.
    ///
    /// The system prompt, messages (text, images and audio where the
    /// provider takes them, tool uses and tool results), `maxTokens`,
    /// `temperature`, `stopSequences`, `tools` and `toolChoice` go where the
    /// provider wants them; `modelPreferences` and `includeContext` are the
    /// application's to act on, not part of the body.
    ///
    /// What the conversion decides, for every provider alike:
    ///
    /// - **The model** is the application's choice ([`SamplingOptions::new`];
    ///   [`ModelPreferences::pick`](crate::mcp::ModelPreferences::pick) reads the
    ///   server's hints). Providers whose model goes in the URL (Gemini, Bedrock)
    ///   leave it out of the body: build the URL with [`PreparedSampling::model`].
    /// - **MCP's own rules** are checked first, as the client must (answer a
    ///   violation with JSON-RPC error `-32602`): a user message holding
    ///   `tool_result` blocks holds nothing else; every `tool_use` is answered by
    ///   a `tool_result` in the next message, which answers nothing else; tool
    ///   uses are the assistant's and results the user's.
    /// - **Content a provider cannot take** (audio for most, an image type it
    ///   does not list, an unknown block) is an [`ErrorKind::Input`](crate::ErrorKind::Input) naming the
    ///   message and block, never silently dropped. A request field the provider
    ///   has no place for is either dropped with a [warning](PreparedSampling::warnings),
    ///   where the spec says so (`metadata` everywhere, `stopSequences` on OpenAI
    ///   Responses), or an error.
    /// - **Tool names** get the toolset's names (`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`,
    ///   which every built-in provider accepts): a name such as `weather.get` is
    ///   offered as `weather_get`, the history's tool uses are renamed the same
    ///   way, and the calls in the response are renamed back, so the server only
    ///   ever sees its own names ([`PreparedSampling::listing`] has the report).
    /// - **Tool results** in the history are answered by the same machinery as
    ///   a live call's result ([`Provider::answer_all`]), with
    ///   [`SamplingOptions::results`] (or [`SamplingOptions::option`], such as
    ///   `media` = `full`) choosing how their media go.
    ///
    /// ```
    /// use mcp_adapters::mcp::{CreateMessageParams, StopReason};
    /// use mcp_adapters::Registry;
    /// use mcp_adapters::sampling::SamplingOptions;
    /// use serde_json::json;
    ///
    /// let params = CreateMessageParams::from_value(json!({
    ///     "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
    ///     "systemPrompt": "Answer in one word.",
    ///     "maxTokens": 100
    /// }))?;
    /// let provider = Registry::builtin()?.get("anthropic")?;
    /// let request = provider.sampling_request(&params, &SamplingOptions::new("claude-sonnet-4-5"))?;
    /// assert_eq!(request.body, json!({
    ///     "model": "claude-sonnet-4-5", "max_tokens": 100, "system": "Answer in one word.",
    ///     "messages": [{"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]}]
    /// }));
    ///
    /// // POST request.body to https://api.anthropic.com/v1/messages, then:
    /// let response = json!({"type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
    ///     "content": [{"type": "text", "text": "Paris."}], "stop_reason": "end_turn"});
    /// let result = provider.sampling_result(&response, &request)?;
    /// assert_eq!(result.text_content(), "Paris.");
    /// assert_eq!(result.model, "claude-sonnet-4-5-20250929");
    /// assert_eq!(result.stop_reason, Some(StopReason::EndTurn));
    /// # Ok::<(), mcp_adapters::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) naming the message (`/messages/2`) or field when
    /// the request breaks MCP's rules (answer the server with `-32602`), holds
    /// content the provider does not take (an audio block, an image type it
    /// does not list, invalid base64, an unknown block type), asks for a tool
    /// choice or a field the provider cannot express, offers two tools of the
    /// same name, or names an option the spec does not offer; also when the
    /// spec has no `sampling:` section. [`ErrorKind::Spec`](crate::ErrorKind::Spec) when a template
    /// of the spec needs a value the request lacks.
    pub fn sampling_request(
        &self,
        params: &CreateMessageParams,
        options: &SamplingOptions,
    ) -> Result<PreparedSampling> {
        let plan = self.sampling_plan()?;
        let (body, warnings, listing) = request::build(self, plan, params, options)?;
        Ok(PreparedSampling {
            body,
            warnings,
            model: options.model.clone(),
            provider: self.id().to_owned(),
            listing,
        })
    }

    /// The MCP result for the provider's (non-streamed) `response` to `request`.
    ///
    /// Text becomes text blocks, media the provider returns (Gemini's
    /// `inlineData`) image or audio blocks, and tool calls `tool_use` blocks
    /// with their arguments parsed and their names those the server offered;
    /// reasoning and hosted-tool items are left out. The stop reason is the
    /// provider's mapped to `endTurn`, `stopSequence`, `maxTokens` or
    /// `toolUse`, or kept as [`StopReason::Other`](crate::mcp::StopReason::Other)
    /// (`refusal`, `SAFETY`, ...). The model is the response's, where it
    /// names one, else [`PreparedSampling::model`]. A call the provider gives
    /// no id gets `call_<n>`, its position among the response's calls.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when the response is the provider's error body
    /// (with its message), not a response of this provider, or `request` was
    /// made for another one; [`ErrorKind::InvalidArguments`](crate::ErrorKind::InvalidArguments) naming the call
    /// when its arguments are not a JSON object (or text holding one).
    pub fn sampling_result(
        &self,
        response: &Value,
        request: &PreparedSampling,
    ) -> Result<CreateMessageResult> {
        let plan = self.sampling_plan()?;
        if request.provider != self.id() {
            return Err(Error::input(format!(
                "the request is in the format of provider `{}`, not `{}`: read the response with the provider that built the request",
                request.provider,
                self.id()
            )));
        }
        response::read(self, &plan.response, response, request)
    }
}
