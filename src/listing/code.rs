//! Tools open to code in a listing: who may call each (the callers rule),
//! as the spec's `programmatic:` section writes it on the tool, the tool's
//! output schema for the programs that use its results, and the provider's
//! code-execution tool listed once after the tools.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Listing;
use crate::budget::{LIBRARY_SERVER, READ_TOOL_NAME};
use crate::callers::{Callers, CallersRule};
use crate::error::Result;
use crate::spec::Provider;
use crate::spec::programmatic::ProgrammaticPlan;
use crate::toolset::ExposedTool;

/// What a listing declared about code: the rule it was made with, and
/// each tool open to code.
#[derive(Debug, Clone, Default)]
pub(crate) struct CodeAccess {
    pub rule: Option<CallersRule>,
    /// In code mode, the callers rule: a tool it opens to code only is
    /// reached through the code tool alone.
    pub code_mode: Option<CallersRule>,
    /// By exposed name, the tools a listing opened to code.
    pub tools: BTreeMap<String, CodeTool>,
}

/// A tool open to code, as listed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CodeTool {
    pub callers: Callers,
    /// Whether its definition carries its output schema.
    pub output_schema: bool,
}

impl CodeAccess {
    /// Whether `tool` is open to programs only in code mode: then it is
    /// left out of the listing, and kept here so that the model's direct
    /// call to it is refused with why.
    pub(super) fn for_programs_only(&mut self, tool: &ExposedTool) -> bool {
        let Some(rule) = &self.code_mode else {
            return false;
        };
        if tool.server_id.is_empty() || tool.server_id == LIBRARY_SERVER {
            return false;
        }
        let callers = rule.callers(&tool.server_id, &tool.tool);
        if callers != Callers::Code {
            return false;
        }
        self.tools.insert(
            tool.exposed_name.clone(),
            CodeTool {
                callers,
                output_schema: false,
            },
        );
        true
    }
}

impl Listing {
    /// Who may call the tool exposed as `name`, as this listing declared it
    /// ([`ListOptions::callers`](super::ListOptions::callers)): the model
    /// only, unless the callers rule opened it to code.
    pub fn callers(&self, name: &str) -> Callers {
        self.code
            .tools
            .get(name)
            .map_or(Callers::Model, |t| t.callers)
    }

    /// Whether any tool of this listing is open to code (then its tools
    /// include the provider's code-execution tool).
    pub fn opens_code(&self) -> bool {
        !self.code.tools.is_empty()
    }

    /// Whether the tool exposed as `name` was listed with its output
    /// schema, for the programs that use its results.
    pub(crate) fn lists_output_schema(&self, name: &str) -> bool {
        self.code.tools.get(name).is_some_and(|t| t.output_schema)
    }
}

impl Provider {
    /// The callers rule a listing is made with; refused when it opens
    /// tools to code and the provider has no programmatic calling.
    pub(super) fn code_rule(&self, rule: Option<&CallersRule>) -> Result<Option<CallersRule>> {
        match rule {
            Some(rule) if !rule.is_empty() => {
                self.programmatic_plan()?;
                Ok(Some(rule.clone()))
            }
            _ => Ok(None),
        }
    }

    /// `def`, the definition of `tool`, with who may call it and its output
    /// schema when the listing's rule opens it to code.
    pub(super) fn for_code(
        &self,
        tool: &ExposedTool,
        mut def: Value,
        listing: &mut Listing,
    ) -> Value {
        let (Some(rule), Some(plan)) = (&listing.code.rule, &self.programmatic) else {
            return def;
        };
        // The search tool and the read tool serve the model's own context:
        // never open to code.
        let own = tool.server_id.is_empty()
            || (tool.server_id == LIBRARY_SERVER && tool.tool.name == READ_TOOL_NAME);
        let callers = rule.callers(&tool.server_id, &tool.tool);
        if own || callers == Callers::Model {
            return def;
        }
        let mut values = Vec::with_capacity(2);
        if callers.model() {
            values.push(Value::String(plan.model_value.clone()));
        }
        values.push(Value::String(plan.code_value.clone()));
        let mut extra = Map::new();
        extra.insert(plan.callers_key.clone(), Value::Array(values));
        let schema = plan
            .output_schema
            .as_ref()
            .zip(tool.tool.output_schema.as_ref());
        if let Some((key, schema)) = schema {
            extra.insert(key.clone(), schema.clone());
        }
        crate::spec::merge_object_owned(&mut def, extra);
        listing.code.tools.insert(
            tool.exposed_name.clone(),
            CodeTool {
                callers,
                output_schema: schema.is_some(),
            },
        );
        def
    }

    /// Lists the code-execution tool after the tools (marked loaded) and
    /// the headers it needs, when a tool is open to code.
    pub(super) fn declare_code(&self, listing: &mut Listing, loaded: &mut Vec<bool>) {
        let Some(plan) = self.programmatic.as_ref().filter(|_| listing.opens_code()) else {
            if listing.code.rule.is_some() {
                tracing::warn!(
                    provider = self.id(),
                    "the callers rule opens none of the listed tools to code"
                );
            }
            return;
        };
        declare(plan, listing, loaded);
    }
}

fn declare(plan: &ProgrammaticPlan, listing: &mut Listing, loaded: &mut Vec<bool>) {
    listing.tools.push(plan.tool.clone());
    loaded.push(true);
    listing
        .headers
        .extend(plan.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
}
