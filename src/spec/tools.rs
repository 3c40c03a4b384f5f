//! The `tools:` section: the shape of one tool definition, and what
//! `${description}` is for a tool without a description.

use serde::Deserialize;

use super::template::{Template, TemplateDoc, template_vars};
use crate::error::Problem;

template_vars! {
    /// A tool definition template. Variables: name (the exposed name),
    /// description (cleaned, at most 4 KiB; see missing_description), schema
    /// (the input schema, strict where converted), title (cleaned), strict
    /// (whether the schema is strict; only with a strict section).
    pub(super) ToolDefinition("tool_template") = ["name", "description", "schema", "title", "strict"];
}

/// How each tool is listed.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct ToolsDoc {
    /// One tool definition.
    #[cfg_attr(test, schemars(transform = super::schema::object_template))]
    pub definition: TemplateDoc<ToolDefinition>,
    #[serde(default)]
    pub missing_description: MissingDescription,
}

/// What `${description}` is for a tool without one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema, serde::Serialize))]
#[serde(rename_all = "snake_case")]
pub(crate) enum MissingDescription {
    /// Absent (so `${description?}` vanishes).
    #[default]
    Omit,
    /// The empty string.
    EmptyString,
    /// Absent, and a description that is empty or blank once cleaned counts
    /// as absent too (for APIs that reject an empty string).
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
    Ok(ToolsPlan {
        definition: doc
            .definition
            .compile_without("/tools/definition", |var| strict || var != "strict")?,
        missing_description: doc.missing_description,
    })
}
