//! Tools open to code in a listing: who may call each (the callers rule),
//! as the spec's `programmatic:` section writes it on the tool, the tool's
//! output schema for the programs that use its results, and the provider's
//! code-execution tool listed once after the tools.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::Listing;
use crate::budget::{LIBRARY_SERVER, READ_TOOL_NAME};
use crate::callers::{Callers, CallersRule};
use crate::error::Result;
use crate::spec::Provider;
use crate::spec::programmatic::ProgrammaticPlan;
use crate::toolset::{ExposedTool, Kept, ToolSet};

/// What a listing declared about code: the rule it was made with (as it
/// decides the listing's toolset), and each tool open to code.
#[derive(Debug, Clone, Default)]
pub(crate) struct CodeAccess {
    pub rule: Option<Arc<Decisions>>,
    /// In code mode, the callers rule: a tool it opens to code only is
    /// reached through the code tool alone.
    pub code_mode: Option<CallersRule>,
    /// The tools a listing opened to code: the toolset's by position.
    pub(super) tools: Vec<Option<CodeTool>>,
    /// Any other (a tool offered with the selection argument is still the
    /// toolset's), by exposed name.
    pub(super) others: BTreeMap<String, CodeTool>,
}

/// Who may call each tool of a toolset, as one callers rule decides: kept
/// with the toolset (it never changes), so that a listing made again with
/// the same rule does not match every tool's `server/tool` against the
/// rule's globs again.
#[derive(Debug)]
pub(crate) struct Decisions {
    rule: CallersRule,
    callers: Box<[Callers]>,
}

impl Kept for Decisions {}

impl Decisions {
    /// The decisions kept with `toolset` for `rule`, made now if none are.
    fn of(toolset: &ToolSet, rule: &CallersRule) -> Arc<Decisions> {
        toolset.memo().get_or_insert(
            |kept: &Decisions| kept.rule == *rule,
            || Decisions {
                rule: rule.clone(),
                callers: toolset
                    .tools()
                    .iter()
                    .map(|t| rule.callers(&t.server_id, &t.tool))
                    .collect(),
            },
        )
    }

    /// Who may call `tool`, the toolset's tool number `index` if any.
    fn callers(&self, index: Option<usize>, tool: &ExposedTool) -> Callers {
        match index.and_then(|i| self.callers.get(i)) {
            Some(callers) => *callers,
            None => self.rule.callers(&tool.server_id, &tool.tool),
        }
    }
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
    pub(super) fn for_programs_only(&mut self, tool: &ExposedTool, index: Option<usize>) -> bool {
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
        self.insert(
            index,
            tool,
            CodeTool {
                callers,
                output_schema: false,
            },
        );
        true
    }

    /// Notes `tool`, the toolset's tool number `index` if any, as open to code.
    fn insert(&mut self, index: Option<usize>, tool: &ExposedTool, code: CodeTool) {
        match index {
            Some(i) => {
                if self.tools.len() <= i {
                    self.tools.resize(i + 1, None);
                }
                self.tools[i] = Some(code);
            }
            None => {
                self.others.insert(tool.exposed_name.clone(), code);
            }
        }
    }

    /// The tool exposed as `name`, if the listing opened it to code.
    fn get(&self, name: &str, toolset: &ToolSet) -> Option<CodeTool> {
        toolset
            .position(name)
            .and_then(|i| self.tools.get(i).copied().flatten())
            .or_else(|| self.others.get(name).copied())
    }
}

impl Listing {
    /// Who may call the tool exposed as `name`, as this listing declared it
    /// ([`ListOptions::callers`](super::ListOptions::callers)): the model
    /// only, unless the callers rule opened it to code.
    pub fn callers(&self, name: &str) -> Callers {
        self.code
            .get(name, &self.toolset)
            .map_or(Callers::Model, |t| t.callers)
    }

    /// Whether any tool of this listing is open to code (then its tools
    /// include the provider's code-execution tool).
    pub fn opens_code(&self) -> bool {
        self.code.tools.iter().any(Option::is_some) || !self.code.others.is_empty()
    }

    /// Whether the tool exposed as `name` was listed with its output
    /// schema, for the programs that use its results.
    pub(crate) fn lists_output_schema(&self, name: &str) -> bool {
        self.code
            .get(name, &self.toolset)
            .is_some_and(|t| t.output_schema)
    }
}

impl Provider {
    /// The callers rule a listing of `toolset` is made with, as it decides
    /// the toolset's tools; refused when it opens tools to code and the
    /// provider has no programmatic calling.
    pub(super) fn code_rule(
        &self,
        toolset: &ToolSet,
        rule: Option<&CallersRule>,
    ) -> Result<Option<Arc<Decisions>>> {
        match rule {
            Some(rule) if !rule.is_empty() => {
                self.programmatic_plan()?;
                Ok(Some(Decisions::of(toolset, rule)))
            }
            _ => Ok(None),
        }
    }

    /// `def`, the definition of `tool` (the toolset's tool number `index`
    /// if any), with who may call it and its output schema when the
    /// listing's rule opens it to code.
    pub(super) fn for_code(
        &self,
        tool: &ExposedTool,
        index: Option<usize>,
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
        let callers = rule.callers(index, tool);
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
        listing.code.insert(
            index,
            tool,
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
