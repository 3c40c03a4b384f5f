//! Provider specs: the YAML files that describe each provider's wire format,

mod compile;
pub(crate) mod doc;
mod load;
pub(crate) mod plan;
pub(crate) mod sampling;
pub(crate) mod stream;
pub(crate) mod template;
mod yaml;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::strict::StrictRules;

pub(crate) use compile::merge_object;
pub use doc::{Framing, StrictMode, StructuredMode};
pub use load::{SpecFile, SpecKind};
use plan::*;

/// What a request says for a tool choice mode: [`Provider::tool_choice`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// This value goes in the request's tool choice field.
    Value(Value),
    /// No tool choice is sent: the provider's default (its API has no such field).
    Omit,
    /// Neither the tools nor a tool choice are sent (the API has no `none`).
    OmitTools,
}

/// A compiled provider spec. Obtain one from a [`Registry`].
#[derive(Debug, Clone)]
pub struct Provider {
    id: String,
    title: String,
    description: Option<String>,
    source: String,
    sources: Vec<doc::SourceDoc>,
    pub(crate) tools: ToolsPlan,
    pub(crate) schema: Option<SchemaPlan>,
    pub(crate) strict: Option<StrictPlan>,
    pub(crate) tool_choice: BTreeMap<doc::ChoiceMode, sampling::Choice>,
    pub(crate) options: BTreeMap<String, OptionPlan>,
    pub(crate) calls: CallsPlan,
    pub(crate) results: ResultsPlan,
    pub(crate) stream: Option<stream::StreamPlan>,
    pub(crate) sampling: Option<sampling::SamplingPlan>,
    pub(crate) search: Option<SearchPlan>,
}

impl Provider {
    /// The provider's id: its spec file's stem.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// A human-readable name.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// What the spec says of itself.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// Where the spec came from: `built-in providers/<id>.yaml` or a file path.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The id of the strict-mode rules the spec uses, if any.
    pub fn strict_rules(&self) -> Option<&str> {
        self.strict.as_ref().map(|s| s.rules_id.as_str())
    }

    /// The id of the rules (`mode: subset`) every tool's schema is rewritten
    /// by before it is listed (the spec's `schema:` section), if any.
    pub fn schema_rules(&self) -> Option<&str> {
        self.schema.as_ref().map(|s| s.rules_id.as_str())
    }

    /// Where the spec's facts come from: `(url, date checked, what for)`.
    pub fn sources(&self) -> impl Iterator<Item = (&str, &str, Option<&str>)> {
        self.sources
            .iter()
            .map(|s| (s.url.as_str(), s.checked.as_str(), s.about.as_deref()))
    }

    /// What a request to this provider says for the tool choice `mode` (the
    /// spec's `tool_choice:` section): a value for the request's tool choice
    /// field, nothing (the provider's default), or no tools at all.
    ///
    /// ```
    /// use mcp_adapters::mcp::ToolChoiceMode;
    /// use mcp_adapters::{Registry, ToolChoice};
    /// use serde_json::json;
    ///
    /// let mistral = Registry::builtin()?.get("mistral")?;
    /// assert_eq!(mistral.tool_choice(&ToolChoiceMode::Required)?, ToolChoice::Value(json!("any")));
    /// # Ok::<(), mcp_adapters::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when the provider has no way to say `mode` (its
    /// API refuses it, or the spec lists no such mode).
    pub fn tool_choice(&self, mode: &crate::mcp::ToolChoiceMode) -> Result<ToolChoice> {
        let key = match mode {
            crate::mcp::ToolChoiceMode::Auto => doc::ChoiceMode::Auto,
            crate::mcp::ToolChoiceMode::Required => doc::ChoiceMode::Required,
            crate::mcp::ToolChoiceMode::None => doc::ChoiceMode::None,
            other => {
                return Err(Error::new(
                    ErrorKind::Input,
                    format!("tool choice `{other}` is not one of auto, required and none"),
                ));
            }
        };
        match self.tool_choice.get(&key) {
            Some(sampling::Choice::Value(template)) => template
                .render([].as_slice())
                .map(ToolChoice::Value)
                .map_err(|m| Error::spec(format!("the tool choice needs `{}`", m.0))),
            Some(sampling::Choice::Unsent) => Ok(ToolChoice::Omit),
            Some(sampling::Choice::NoTools) => Ok(ToolChoice::OmitTools),
            None => Err(Error::new(
                ErrorKind::Input,
                format!(
                    "provider `{}` cannot express the tool choice `{mode}`: its spec lists {}",
                    self.id,
                    self.tool_choice_modes().join(", ")
                ),
            )),
        }
    }

    fn tool_choice_modes(&self) -> Vec<&'static str> {
        let modes: Vec<&str> = self.tool_choice.keys().map(|m| m.key()).collect();
        if modes.is_empty() {
            vec!["none"]
        } else {
            modes
        }
    }

    /// The options the spec offers (for listings, [`ListOptions::option`](crate::ListOptions::option),
    /// and answers, [`ResultOptions::option`](crate::ResultOptions::option)), each with its accepted values.
    pub fn options(&self) -> impl Iterator<Item = (&str, Vec<&str>)> {
        self.options.iter().map(|(name, plan)| {
            (
                name.as_str(),
                plan.values.keys().map(String::as_str).collect(),
            )
        })
    }

    /// What `value` of the option `name` does.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] naming the options (or values) the spec offers.
    pub(crate) fn option_effect(&self, name: &str, value: &str) -> Result<&OptionEffect> {
        let plan = self.options.get(name).ok_or_else(|| {
            let known: Vec<_> = self.options.keys().map(String::as_str).collect();
            Error::new(
                ErrorKind::Input,
                format!(
                    "provider `{}` has no option `{name}`; it has: {}",
                    self.id(),
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            )
        })?;
        plan.values.get(value).ok_or_else(|| {
            let known: Vec<_> = plan.values.keys().map(String::as_str).collect();
            Error::new(
                ErrorKind::Input,
                format!(
                    "option `{name}` has no value `{value}`; accepted: {}",
                    known.join(", ")
                ),
            )
        })
    }

    /// A JSON summary: id, title, description, source, strict rules and the
    /// options with their descriptions and values, each value with the stages
    /// it changes (`tools`, `results`).
    pub fn info(&self) -> Value {
        let options: serde_json::Map<String, Value> = self
            .options
            .iter()
            .map(|(name, plan)| {
                let values: serde_json::Map<String, Value> = plan
                    .values
                    .iter()
                    .map(|(v, e)| {
                        let info = serde_json::json!({"description": e.description, "changes": e.changes()});
                        (v.clone(), info)
                    })
                    .collect();
                let info = serde_json::json!({"description": plan.description, "values": values});
                (name.clone(), info)
            })
            .collect();
        let choices: serde_json::Map<String, Value> = self
            .tool_choice
            .iter()
            .map(|(mode, choice)| {
                let value = match choice {
                    sampling::Choice::Value(t) => t.render([].as_slice()).unwrap_or(Value::Null),
                    sampling::Choice::Unsent => serde_json::json!({"omit": "tool_choice"}),
                    sampling::Choice::NoTools => serde_json::json!({"omit": "tools"}),
                };
                (mode.key().to_owned(), value)
            })
            .collect();
        let mut info = serde_json::json!({
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "source": self.source,
            "strict_rules": self.strict_rules(),
            "options": options,
        });
        if let Value::Object(map) = &mut info {
            if let Some(rules) = self.schema_rules() {
                map.insert("schema_rules".into(), rules.into());
            }
            if !choices.is_empty() {
                map.insert("tool_choice".into(), Value::Object(choices));
            }
            if !self.sources.is_empty() {
                map.insert(
                    "sources".into(),
                    serde_json::to_value(&self.sources).unwrap_or_default(),
                );
            }
        }
        info
    }
}

/// A set of compiled provider specs and strict-mode rules, by id.
///
/// and the [`Registry`] that loads, validates and compiles them.
///
/// A spec is loaded once: parsed (with line numbers), deep-merged over the spec
/// it `extends`, validated against `schemas/provider-spec.schema.json`, checked
/// semantically (template variables, strategies, rules references) and compiled
/// into a [`Provider`], which the engine then executes many times. The built-in
/// specs under `providers/` are embedded in the library and loaded through the
/// same path as a user's folder; a user spec with a built-in's id replaces it.
///
/// # Limits
///
/// Spec and rules files are untrusted text. Each ends in a [`Registry`] or an
/// [`ErrorKind::Spec`] error naming the file (and the line, where there is
/// one), in time and memory bounded by these limits:
///
/// - a file larger than 1 MiB is refused before it is parsed;
/// - a file read by [`Registry::with_dir`] that is not UTF-8 is refused,
///   with the offset of the first invalid byte;
/// - mappings and sequences (block or flow) nest at most 32 levels deep;
/// - at most 50,000 nodes, aliases expanded (a "billion laughs" document
///   stops there), and at most 1,000 alias uses;
/// - duplicate keys, `extends` cycles and unknown `extends` targets are errors.
///
/// ```
/// use mcp_adapters::Registry;
///
/// let registry = Registry::builtin()?;
/// let ids: Vec<&str> = registry.providers().map(|p| p.id()).collect();
/// assert!(ids.len() >= 4);
/// # Ok::<(), mcp_adapters::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Registry {
    providers: BTreeMap<String, Arc<Provider>>,
    rules: BTreeMap<String, Arc<StrictRules>>,
}

impl Registry {
    /// The built-in specs, loaded and validated once per process.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Spec`] if a built-in spec is invalid (the crate's tests make sure none is).
    pub fn builtin() -> Result<&'static Registry> {
        static BUILTIN: OnceLock<Result<Registry>> = OnceLock::new();
        BUILTIN
            .get_or_init(|| Registry::from_files(load::builtin_files()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The built-in specs plus the specs in `dir` (`*.yaml`) and its `rules/`
    /// folder. A file with a built-in's id replaces the built-in.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`] if the folder cannot be read; [`ErrorKind::Spec`] naming
    /// the file, the line and the path inside the spec if a spec is invalid.
    pub fn with_dir(dir: impl AsRef<Path>) -> Result<Registry> {
        let mut files = load::builtin_files();
        files.extend(load::dir_files(dir.as_ref())?);
        Registry::from_files(files)
    }

    /// Loads specs and rules from `files`; a later file with an id already
    /// given replaces the earlier one. Add the built-ins
    /// ([`SpecFile`]s of your own only) with [`Registry::with_dir`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Spec`] naming the file, the line and the path inside the spec.
    pub fn from_files(files: Vec<SpecFile>) -> Result<Registry> {
        load::load(files)
    }

    /// The provider with `id`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownProvider`] listing the known ids.
    pub fn get(&self, id: &str) -> Result<&Arc<Provider>> {
        self.providers.get(id).ok_or_else(|| {
            let known: Vec<_> = self.providers.keys().map(String::as_str).collect();
            Error::new(
                ErrorKind::UnknownProvider,
                format!("no provider `{id}`; known: {}", known.join(", ")),
            )
        })
    }

    /// The providers, by id.
    pub fn providers(&self) -> impl Iterator<Item = &Provider> {
        self.providers.values().map(AsRef::as_ref)
    }

    /// The strict-mode rules with `id`.
    pub fn rules(&self, id: &str) -> Option<&Arc<StrictRules>> {
        self.rules.get(id)
    }

    /// The ids of the loaded strict-mode rules.
    pub fn rules_ids(&self) -> impl Iterator<Item = &str> {
        self.rules.keys().map(String::as_str)
    }

    /// The rules most providers use (ties go to the smaller id): the default
    /// for tools that convert a schema without naming a provider.
    pub fn default_rules(&self) -> Option<&str> {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for provider in self.providers() {
            if let Some(id) = provider.strict_rules() {
                *counts.entry(id).or_default() += 1;
            }
        }
        counts
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
            .map(|(id, _)| id)
    }
}
