//! The `options:` section: named options a listing or an answer may set;
//! each value merges into tool definitions (`merge_last`, `merge_each`) or
//! replaces the `results:` section while it is set.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::Provider;
use super::results::{self, ResultsDoc, ResultsPlan};
use crate::error::{Error, Problem, Result};
use crate::json::pointer_child;

/// A named option and the values it takes.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct OptionDoc {
    #[serde(default)]
    pub description: Option<String>,
    /// The values, by name, and what each changes.
    #[cfg_attr(test, schemars(extend("minProperties" = 1)))]
    pub values: BTreeMap<String, OptionValueDoc>,
}

/// What one value of an option changes: the tool definitions, the results
/// section, or both.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(extend("anyOf" = [{"required": ["merge_last"]}, {"required": ["merge_each"]}, {"required": ["results"]}]))
)]
#[serde(deny_unknown_fields)]
pub(super) struct OptionValueDoc {
    #[serde(default)]
    pub description: Option<String>,
    /// Deep-merged into the last tool definition (null removes a key).
    #[serde(default)]
    pub merge_last: Option<Map<String, Value>>,
    /// Deep-merged into every tool definition (null removes a key).
    #[serde(default)]
    pub merge_each: Option<Map<String, Value>>,
    /// Deep-merged over the results section when the option has this value
    /// (objects merge, lists and other values replace, null removes a key).
    // The loader merges it before the document is typed: here it is a whole
    // results section, and in the spec a partial one.
    #[serde(default)]
    #[cfg_attr(test, schemars(schema_with = "super::schema::results_override"))]
    pub results: Option<ResultsDoc>,
}

/// One value of an option: what it changes in listings and in answers.
#[derive(Debug, Clone, Default)]
pub(crate) struct OptionEffect {
    pub description: Option<String>,
    pub merge_last: Option<Map<String, Value>>,
    pub merge_each: Option<Map<String, Value>>,
    /// The results section with the value's override merged in.
    pub results: Option<Arc<ResultsPlan>>,
}

impl OptionEffect {
    /// The stages the value changes: `tools`, `results`.
    pub fn changes(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.merge_last.is_some() || self.merge_each.is_some() {
            out.push("tools");
        }
        if self.results.is_some() {
            out.push("results");
        }
        out
    }
}

/// An option and its values.
#[derive(Debug, Clone, Default)]
pub(crate) struct OptionPlan {
    pub description: Option<String>,
    pub values: BTreeMap<String, OptionEffect>,
}

/// Compiles the `options:` section. A value's `results` is a whole section
/// (the loader merged it over the spec's), compiled and checked as one.
pub(super) fn compile(
    options: BTreeMap<String, OptionDoc>,
) -> Result<BTreeMap<String, OptionPlan>, Problem> {
    let mut out = BTreeMap::new();
    for (name, option) in options {
        let mut plan = OptionPlan {
            description: option.description,
            ..Default::default()
        };
        for (value, effect) in option.values {
            let at = pointer_child(
                &pointer_child(&pointer_child("/options", &name), "values"),
                &value,
            );
            if effect.merge_last.is_none()
                && effect.merge_each.is_none()
                && effect.results.is_none()
            {
                return Err(Problem::at(
                    at,
                    "an option value needs merge_last, merge_each or results",
                ));
            }
            let results = match effect.results {
                Some(doc) => Some(Arc::new(results::compile(
                    doc,
                    &pointer_child(&at, "results"),
                )?)),
                None => None,
            };
            plan.values.insert(
                value,
                OptionEffect {
                    description: effect.description,
                    merge_last: effect.merge_last,
                    merge_each: effect.merge_each,
                    results,
                },
            );
        }
        out.insert(name, plan);
    }
    Ok(out)
}

impl Provider {
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
            Error::input(format!(
                "provider `{}` has no option `{name}`; it has: {}",
                self.id(),
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ))
        })?;
        plan.values.get(value).ok_or_else(|| {
            let known: Vec<_> = plan.values.keys().map(String::as_str).collect();
            Error::input(format!(
                "option `{name}` has no value `{value}`; accepted: {}",
                known.join(", ")
            ))
        })
    }

    /// The options with their descriptions and values, each value with the
    /// stages it changes, as [`Provider::info`] shows them.
    pub(super) fn options_info(&self) -> Map<String, Value> {
        self.options
            .iter()
            .map(|(name, plan)| {
                let values: Map<String, Value> = plan
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
            .collect()
    }
}
