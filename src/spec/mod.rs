//! Provider specs: the YAML files that describe each provider's wire format,
//! and the [`Registry`] that loads, validates and compiles them into
//! [`Provider`]s. [`SpecFile`] and [`SpecKind`] describe a loaded file;
//! [`ToolChoiceParam`] is what a request says for a tool choice mode.
//!
//! The engine is cut as the spec author's guide (`docs/spec-authors-guide.md`)
//! is: one module per section of a spec, each with the section's document
//! types (serde structs that deny unknown fields), its plan (what the stages
//! execute) and its compiler: `tools`, `strict` (also `schema:`), `choice`
//! (`tool_choice:`), `options`, `calls`, `results` (with `media` and
//! `structured_content`), `stream`, `search`, `sampling`, `tokens`, `hosted` (`hosted_mcp:`)
//! and `programmatic`. This module holds
//! the whole document, the [`Provider`] it compiles to and the [`Registry`];
//! beside the sections is the machinery they share: `load` (files, JSON Schema
//! validation, errors with file and line), `yaml`, `template`, `path` (JSON
//! paths) and `merge`.
//!
//! The words a spec's YAML uses live here too ([`StrictMode`],
//! [`StructuredMode`](crate::results::StructuredMode),
//! [`Framing`], re-exported where they are used), so
//! that the engine imports none of the stages that run its plans.

pub(crate) mod calls;
pub(crate) mod choice;
pub(crate) mod hosted;
mod load;
mod merge;
pub(crate) mod options;
pub(crate) mod path;
pub(crate) mod programmatic;
pub(crate) mod results;
pub(crate) mod sampling;
#[cfg(test)]
mod schema;
pub(crate) mod search;
pub(crate) mod stream;
pub(crate) mod strict;
pub(crate) mod template;
pub(crate) mod tokens;
pub(crate) mod tools;
mod yaml;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorKind, Problem, Result};
use crate::strict::StrictRules;
pub use choice::ToolChoiceParam;
use choice::{Choice, ChoiceDoc, ChoiceMode};
pub use load::{SpecFile, SpecKind};
pub(crate) use merge::{merge_object, merge_object_owned};
pub(crate) use stream::Framing;
pub(crate) use strict::StrictMode;

// A provider spec, after `extends` has been merged. The doc comments of the
// document types are the descriptions of the JSON Schema (`schema.rs`).
/// One LLM provider's tool-calling wire format: tool definitions, where
/// calls are found in a response, and how results are answered. A
/// provider's id is its file's stem. A spec with `extends` holds only what
/// differs from the spec it extends.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
struct SpecDoc {
    /// A human-readable name.
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub title: String,
    /// What the spec says of itself.
    #[serde(default)]
    pub description: Option<String>,
    /// Where the spec's facts come from, each with the date it was checked
    /// against it (`Provider::sources`; the command line's `providers`
    /// lists them).
    #[serde(default)]
    pub sources: Vec<SourceDoc>,
    pub tools: tools::ToolsDoc,
    #[serde(default)]
    pub schema: Option<strict::SchemaDoc>,
    #[serde(default)]
    pub strict: Option<strict::StrictDoc>,
    /// What each tool choice mode is in a request (`Provider::tool_choice`;
    /// sampling requests): a value for the request's tool choice field,
    /// `{omit: tool_choice}` (none is sent: the provider's default; a
    /// warning in sampling unless the mode is auto) or `{omit: tools}`
    /// (neither tools nor tool choice). A mode not listed cannot be said:
    /// asking for it is an error.
    #[serde(default)]
    pub tool_choice: BTreeMap<ChoiceMode, ChoiceDoc>,
    /// Named options, such as `cache_control: last` (listings) or
    /// `media: full` (answers).
    #[serde(default)]
    pub options: BTreeMap<String, options::OptionDoc>,
    pub calls: calls::CallsDoc,
    pub results: results::ResultsDoc,
    #[serde(default)]
    pub stream: Option<stream::StreamDoc>,
    #[serde(default)]
    pub sampling: Option<sampling::SamplingDoc>,
    #[serde(default)]
    pub search: Option<search::SearchDoc>,
    #[serde(default)]
    pub tokens: Option<tokens::TokensDoc>,
    #[serde(default)]
    pub hosted_mcp: Option<hosted::HostedDoc>,
    /// Calls that come from code the model wrote.
    #[serde(default)]
    pub programmatic: Option<programmatic::ProgrammaticDoc>,
}

/// Where one of the spec's facts comes from.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
struct SourceDoc {
    /// A URL, or `owner/repo@commit:path` for a file of a repository.
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub url: String,
    /// The date the spec was checked against it (`YYYY-MM-DD`).
    #[cfg_attr(test, schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")))]
    pub checked: String,
    /// What it is the source of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<String>,
}

/// Compiles a merged, schema-valid, typed spec document, section by section.
/// The order is fixed, so that a spec with several problems always reports
/// the same one first.
fn compile(
    id: &str,
    source: String,
    doc: SpecDoc,
    rules: &BTreeMap<String, Arc<StrictRules>>,
) -> Result<Provider, Problem> {
    let strict = strict::compile_strict(doc.strict.as_ref(), rules)?;
    let schema = match &doc.schema {
        Some(section) => Some(strict::compile_schema(section, rules)?),
        None => None,
    };
    let tool_choice = choice::compile(doc.tool_choice, "/tool_choice")?;
    let options = options::compile(doc.options)?;
    let results = results::compile(doc.results, "/results")?;
    let sampling = match doc.sampling {
        Some(section) => {
            let mut plans = vec![&results];
            plans.extend(
                options
                    .values()
                    .flat_map(|o| o.values.values())
                    .filter_map(|e| e.results.as_deref()),
            );
            Some(sampling::compile(section, &plans, &tool_choice)?)
        }
        None => None,
    };
    Ok(Provider {
        id: id.to_owned(),
        title: doc.title,
        description: doc.description,
        source,
        sources: doc.sources,
        tools: tools::compile(&doc.tools, strict.is_some())?,
        schema,
        strict,
        tool_choice,
        options,
        calls: calls::compile(doc.calls),
        results,
        stream: doc.stream.map(stream::compile).transpose()?,
        sampling,
        search: doc.search.map(search::compile).transpose()?,
        tokens: doc
            .tokens
            .map(tokens::compile)
            .transpose()?
            .unwrap_or_default(),
        hosted: doc.hosted_mcp.map(hosted::compile).transpose()?,
        programmatic: doc.programmatic.map(programmatic::compile).transpose()?,
    })
}

/// A compiled provider spec. Obtain one from a [`Registry`].
#[derive(Debug, Clone)]
pub struct Provider {
    id: String,
    title: String,
    description: Option<String>,
    source: String,
    sources: Vec<SourceDoc>,
    pub(crate) tools: tools::ToolsPlan,
    pub(crate) schema: Option<strict::SchemaPlan>,
    pub(crate) strict: Option<strict::StrictPlan>,
    pub(crate) tool_choice: BTreeMap<ChoiceMode, Choice>,
    pub(crate) options: BTreeMap<String, options::OptionPlan>,
    pub(crate) calls: calls::CallsPlan,
    pub(crate) results: results::ResultsPlan,
    pub(crate) stream: Option<stream::StreamPlan>,
    pub(crate) sampling: Option<sampling::SamplingPlan>,
    pub(crate) search: Option<search::SearchPlan>,
    pub(crate) tokens: tokens::TokensPlan,
    pub(crate) hosted: Option<hosted::HostedPlan>,
    pub(crate) programmatic: Option<programmatic::ProgrammaticPlan>,
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

    /// A JSON summary: id, title, description, source, strict rules and the
    /// options with their descriptions and values, each value with the stages
    /// it changes (`tools`, `results`).
    pub fn info(&self) -> Value {
        let options = self.options_info();
        let choices = self.tool_choice_info();
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
            if let Some(plan) = &self.programmatic {
                map.insert("programmatic".into(), plan.tool.clone());
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
