//! The `tools:` section: the shape of one tool definition, and what
//! `${description}` is for a tool without a description.

use serde::Deserialize;
use serde_json::Value;

use super::template::Template;
use crate::error::Problem;

/// Variables of a tool definition.
const TOOL_VARS: &[&str] = &["name", "description", "schema", "title"];
/// Variables of a tool definition when the spec has a strict section.
const TOOL_VARS_STRICT: &[&str] = &["name", "description", "schema", "title", "strict"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolsDoc {
    pub definition: Value,
    #[serde(default)]
    pub missing_description: MissingDescription,
}

/// What `${description}` is for a tool without a description.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MissingDescription {
    /// Absent (so `${description?}` vanishes).
    #[default]
    Omit,
    /// The empty string.
    EmptyString,
    /// Absent, and a description that is empty or blank once cleaned counts as absent too.
    OmitBlank,
}

/// How tools are listed.
#[derive(Debug, Clone)]
pub(crate) struct ToolsPlan {
    pub definition: Template,
    pub missing_description: MissingDescription,
}

/// Compiles the `tools:` section; with `strict` (the spec has a `strict:`
/// section) the definition may place `${strict}`.
pub(super) fn compile(doc: &ToolsDoc, strict: bool) -> Result<ToolsPlan, Problem> {
    let vars = if strict { TOOL_VARS_STRICT } else { TOOL_VARS };
    Ok(ToolsPlan {
        definition: Template::compile_at(&doc.definition, "/tools/definition", vars)?,
        missing_description: doc.missing_description,
    })
}
