//! The `tool_choice:` section (and `sampling.tool_choice`): what each tool
//! choice mode is in a request: a value for the tool choice field, no tool
//! choice, or no tools at all.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::Provider;
use super::template::{Template, TemplateDoc, template_vars};
use crate::error::{Error, Problem, Result};
use crate::json::pointer_child;

/// What a request says for a tool choice mode: [`Provider::tool_choice`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolChoiceParam {
    /// This value goes in the request's tool choice field.
    Value(Value),
    /// No tool choice is sent: the provider's default (its API has no such field).
    Omit,
    /// Neither the tools nor a tool choice are sent (the API has no `none`).
    OmitTools,
}

/// A `toolChoice` mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum ChoiceMode {
    Auto,
    Required,
    None,
}

impl ChoiceMode {
    pub fn key(self) -> &'static str {
        match self {
            ChoiceMode::Auto => "auto",
            ChoiceMode::Required => "required",
            ChoiceMode::None => "none",
        }
    }
}

template_vars! {
    /// A tool choice's value, literal JSON (no variables).
    pub(super) ChoiceValue("sampling_choice_template") = [];
}

/// What a tool choice mode becomes: `{omit: ...}`, or a value for `${tool_choice}`.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(transform = super::schema::omit_or_value)
)]
#[serde(untagged)]
pub(super) enum ChoiceDoc {
    Omit(OmitDoc),
    Value(TemplateDoc<ChoiceValue>),
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct OmitDoc {
    pub omit: OmitWhat,
}

/// What is left out of the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(super) enum OmitWhat {
    /// No tool choice is sent: the provider's default.
    ToolChoice,
    /// Neither the tools nor a tool choice are sent.
    Tools,
}

/// What a tool choice mode becomes.
#[derive(Debug, Clone)]
pub(crate) enum Choice {
    /// `${tool_choice}` is this.
    Value(Template),
    /// No tool choice is sent: the provider's default.
    Unsent,
    /// Neither the tools nor a tool choice are sent.
    NoTools,
}

/// Compiles a tool choice map found at `at` (`/tool_choice`, `/sampling/tool_choice`).
pub(super) fn compile(
    doc: BTreeMap<ChoiceMode, ChoiceDoc>,
    at: &str,
) -> Result<BTreeMap<ChoiceMode, Choice>, Problem> {
    doc.into_iter()
        .map(|(mode, choice)| {
            let key = mode.key();
            let choice = match choice {
                ChoiceDoc::Omit(OmitDoc {
                    omit: OmitWhat::ToolChoice,
                }) => Choice::Unsent,
                ChoiceDoc::Omit(OmitDoc {
                    omit: OmitWhat::Tools,
                }) => Choice::NoTools,
                ChoiceDoc::Value(value) => {
                    Choice::Value(value.compile_at(&pointer_child(at, key))?)
                }
            };
            Ok((mode, choice))
        })
        .collect()
}

impl Provider {
    /// What a request to this provider says for the tool choice `mode` (the
    /// spec's `tool_choice:` section): a value for the request's tool choice
    /// field, nothing (the provider's default), or no tools at all.
    ///
    /// ```
    /// use mcp_adapters::mcp::ToolChoiceMode;
    /// use mcp_adapters::Registry;
    /// use mcp_adapters::spec::ToolChoiceParam;
    /// use serde_json::json;
    ///
    /// let mistral = Registry::builtin()?.get("mistral")?;
    /// assert_eq!(mistral.tool_choice(&ToolChoiceMode::Required)?, ToolChoiceParam::Value(json!("any")));
    /// # Ok::<(), mcp_adapters::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when the provider has no way to say `mode` (its
    /// API refuses it, or the spec lists no such mode).
    pub fn tool_choice(&self, mode: &crate::mcp::ToolChoiceMode) -> Result<ToolChoiceParam> {
        let key = match mode {
            crate::mcp::ToolChoiceMode::Auto => ChoiceMode::Auto,
            crate::mcp::ToolChoiceMode::Required => ChoiceMode::Required,
            crate::mcp::ToolChoiceMode::None => ChoiceMode::None,
            other => {
                return Err(Error::input(format!(
                    "tool choice `{other}` is not one of auto, required and none"
                )));
            }
        };
        match self.tool_choice.get(&key) {
            Some(Choice::Value(template)) => template
                .render([].as_slice())
                .map(ToolChoiceParam::Value)
                .map_err(|m| Error::spec(format!("the tool choice needs `{}`", m.0))),
            Some(Choice::Unsent) => Ok(ToolChoiceParam::Omit),
            Some(Choice::NoTools) => Ok(ToolChoiceParam::OmitTools),
            None => Err(Error::input(format!(
                "provider `{}` cannot express the tool choice `{mode}`: its spec lists {}",
                self.id,
                self.tool_choice_modes().join(", ")
            ))),
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

    /// The spec's tool choices, as [`Provider::info`] shows them.
    pub(super) fn tool_choice_info(&self) -> Map<String, Value> {
        self.tool_choice
            .iter()
            .map(|(mode, choice)| {
                let value = match choice {
                    Choice::Value(t) => t.render([].as_slice()).unwrap_or(Value::Null),
                    Choice::Unsent => serde_json::json!({"omit": "tool_choice"}),
                    Choice::NoTools => serde_json::json!({"omit": "tools"}),
                };
                (mode.key().to_owned(), value)
            })
            .collect()
    }
}
