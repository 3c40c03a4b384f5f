//! The `strict:` and `schema:` sections: the rules files
//! (`providers/rules/<id>.yaml`) a provider's tool schemas go through:
//! strict-mode conversion (`mode: strict`) with its default [`StrictMode`],
//! and the provider's subset of JSON Schema (`mode: subset`) for every tool.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Problem};
use crate::strict::StrictRules;
use crate::strict::rules::Mode;

/// How strict-mode schemas are used, for specs that have strict rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StrictMode {
    /// Converted tools are strict; a tool that cannot be converted is sent
    /// non-strict with its original schema and reported as a fallback.
    #[default]
    Auto,
    /// Every tool is strict; a tool that cannot be converted is left out and reported as excluded.
    On,
    /// No tool is strict; schemas are sent as the server wrote them.
    Off,
}

impl std::str::FromStr for StrictMode {
    type Err = Error;

    fn from_str(s: &str) -> crate::Result<Self> {
        match s {
            "auto" => Ok(StrictMode::Auto),
            "true" | "on" => Ok(StrictMode::On),
            "false" | "off" => Ok(StrictMode::Off),
            _ => Err(Error::input(format!(
                "strict mode `{s}`: expected auto, true or false"
            ))),
        }
    }
}

/// Strict mode: the rules a tool's schema is converted by, and the mode
/// when the caller names none.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct StrictDoc {
    /// The id of a strict-mode rules file (`rules/<id>.yaml`).
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub rules: String,
    /// The strict mode when the caller names none: `auto` (strict where the
    /// schema converts), `true` or `false` (YAML booleans).
    #[serde(default)]
    pub default: StrictDefault,
}

/// `auto`, `true` or `false`, with YAML booleans for the last two.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct StrictDefault(pub StrictMode);

impl<'de> Deserialize<'de> for StrictDefault {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(true) => Ok(StrictDefault(StrictMode::On)),
            Value::Bool(false) => Ok(StrictDefault(StrictMode::Off)),
            Value::String(s) if s == "auto" => Ok(StrictDefault(StrictMode::Auto)),
            other => Err(serde::de::Error::custom(format!(
                "expected auto, true or false (booleans unquoted), got {other}"
            ))),
        }
    }
}

/// The provider's subset of JSON Schema: every tool's schema is rewritten by
/// these rules before it is listed (and before strict conversion); a tool
/// whose schema the rules cannot express is left out and reported as
/// unsupported.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct SchemaDoc {
    /// The id of a rules file with `mode: subset` (`rules/<id>.yaml`).
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub rules: String,
}

/// The strict-mode section of a spec.
#[derive(Debug, Clone)]
pub(crate) struct StrictPlan {
    pub rules_id: String,
    pub rules: Arc<StrictRules>,
    pub default: StrictMode,
}

/// The `schema:` section of a spec: the rules (`mode: subset`) every tool's schema goes through.
#[derive(Debug, Clone)]
pub(crate) struct SchemaPlan {
    pub rules_id: String,
    pub rules: Arc<StrictRules>,
}

/// The rules file `id`, which must be in `mode` (the section at `at` names it).
fn find_rules(
    id: &str,
    mode: Mode,
    at: &str,
    rules: &BTreeMap<String, Arc<StrictRules>>,
) -> Result<Arc<StrictRules>, Problem> {
    let found = rules.get(id).ok_or_else(|| {
        let known: Vec<_> = rules.keys().map(String::as_str).collect();
        Problem::at(
            at,
            format!(
                "no rules file `{id}` (rules/{id}.yaml); known: {}",
                known.join(", ")
            ),
        )
    })?;
    if found.mode != mode {
        let (section, wanted) = match mode {
            Mode::Strict => ("strict", "strict"),
            Mode::Subset => ("schema", "subset"),
        };
        return Err(Problem::at(
            at,
            format!("rules `{id}` are not `mode: {wanted}`, which the `{section}:` section takes"),
        ));
    }
    Ok(found.clone())
}

/// Compiles the `schema:` section: its rules must be `mode: subset`.
pub(super) fn compile_schema(
    doc: &SchemaDoc,
    rules: &BTreeMap<String, Arc<StrictRules>>,
) -> Result<SchemaPlan, Problem> {
    Ok(SchemaPlan {
        rules_id: doc.rules.clone(),
        rules: find_rules(&doc.rules, Mode::Subset, "/schema/rules", rules)?,
    })
}

/// Compiles the `strict:` section: its rules must be `mode: strict`.
pub(super) fn compile_strict(
    doc: Option<&StrictDoc>,
    rules: &BTreeMap<String, Arc<StrictRules>>,
) -> Result<Option<StrictPlan>, Problem> {
    let Some(doc) = doc else {
        return Ok(None);
    };
    let found = find_rules(&doc.rules, Mode::Strict, "/strict/rules", rules)?;
    Ok(Some(StrictPlan {
        rules_id: doc.rules.clone(),
        rules: found,
        default: doc.default.0,
    }))
}
