//! Result shaping.
use serde::Serialize;

/// How `structuredContent` is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StructuredMode {
    /// JSON text only when `content` is empty.
    #[default]
    Auto,
    /// Instead of `content`.
    Prefer,
    /// After `content`.
    Append,
    /// Never.
    Ignore,
}
