//! Strict-mode schema conversion (interim interface).
use serde::Deserialize;
use serde_json::Value;

/// Strict-mode rules.
#[derive(Debug, Clone, Deserialize)]
pub struct StrictRules {}

impl StrictRules {
    /// Semantic checks.
    pub fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// A path.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NullPath(pub Vec<Value>);

/// A converted schema.
pub struct StrictSchema {
    /// The schema.
    pub schema: Value,
    /// The null paths.
    pub null_paths: Vec<NullPath>,
}

/// An error.
#[derive(Debug, Clone)]
pub struct StrictError {
    /// Pointer.
    pub pointer: String,
    /// Reason.
    pub reason: String,
}

/// Converts.
pub fn convert(_schema: &Value, _rules: &StrictRules) -> Result<StrictSchema, StrictError> {
    Err(StrictError {
        pointer: String::new(),
        reason: "unavailable".into(),
    })
}

/// Strips.
pub fn strip_nulls(_arguments: &mut serde_json::Map<String, Value>, _null_paths: &[NullPath]) {}
