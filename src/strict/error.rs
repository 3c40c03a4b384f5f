//! The strict converter's error.
//!
//! A failed conversion is data as much as an error: a listing reports it per
//! tool ([`StrictIssue`](crate::listing::StrictIssue)) and `auto` mode falls back on
//! it, so [`convert`](super::convert) returns this small, comparable value
//! (a pointer and a reason) rather than the crate's [`Error`]. Where a
//! conversion failure is an error of the caller's, `?` turns it into an
//! [`Error`] of kind [`ErrorKind::Strict`] with the pointer as its path and
//! this value as its source.

use std::fmt;

use crate::error::{Error, ErrorKind};

/// Why a schema could not be converted, and where.
///
/// [`pointer`](Self::pointer) is a JSON pointer into the *input* schema
/// (`""` is the root); [`kind`](Self::kind) says what was wrong there.
/// `Display` gives `"<reason> at #<pointer>"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason} at #{pointer}")]
pub struct StrictError {
    pointer: String,
    reason: StrictReason,
}

impl StrictError {
    pub(crate) fn new(pointer: &str, reason: StrictReason) -> Self {
        StrictError {
            pointer: pointer.to_owned(),
            reason,
        }
    }

    /// What made the conversion fail.
    pub fn kind(&self) -> &StrictReason {
        &self.reason
    }

    /// The JSON pointer into the input schema (`""` is the root).
    pub fn pointer(&self) -> &str {
        &self.pointer
    }
}

impl From<StrictError> for Error {
    fn from(err: StrictError) -> Self {
        let path = if err.pointer.is_empty() {
            "/".to_owned()
        } else {
            err.pointer.clone()
        };
        Error::new(
            ErrorKind::Strict,
            format!("the schema cannot be made strict: {}", err.reason),
        )
        .with_path(path)
        .with_source(err)
    }
}

/// What made a conversion fail. `Display` gives a short reason string: the
/// keyword's name, the limit's name, or a snake_case name of the problem.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrictReason {
    /// A keyword the rules declare unsupported, or a kept keyword whose value
    /// the rules do not allow.
    Unsupported(String),
    /// A size limit was exceeded.
    Limit(Limit),
    /// The root is not `type: object`.
    RootNotObject,
    /// The root carries `anyOf` and the rules forbid it.
    RootAnyOf,
    /// An object that accepts arbitrary keys: `additionalProperties` other
    /// than `false`, or a nested object with neither `properties` nor
    /// `additionalProperties: false`.
    OpenMap,
    /// A node with no `type`, `enum`, `const`, `$ref` or kept combinator.
    Untyped,
    /// An array without an `items` schema.
    ArrayWithoutItems,
    /// A `$ref` that does not start with `#`.
    NonLocalRef,
    /// A local `$ref` that is not `#`, `#/$defs/x` or `#/definitions/x`, or
    /// whose target does not exist.
    UnresolvableRef,
    /// A recursive `$ref` whose definitions have optional properties (their
    /// null paths would be unbounded).
    RecursiveRef,
    /// A keyword whose value is not what JSON Schema allows (e.g. `type: 3`,
    /// a schema that is not an object); the string names the keyword.
    Invalid(String),
}

/// The size limits of a rules file.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Properties in total.
    MaxProperties,
    /// Levels of object nesting (also the converter's own nesting guard).
    MaxDepth,
    /// Characters of names, enum values and string consts.
    MaxChars,
    /// Enum values in total.
    MaxEnumValues,
    /// Characters of one large string enum.
    MaxEnumChars,
    /// Schema nodes visited in one conversion: the converter's own guard
    /// against inputs that are huge without breaking a rules limit.
    MaxNodes,
}

impl Limit {
    /// The limit's name as written in a rules file.
    pub fn name(self) -> &'static str {
        match self {
            Limit::MaxProperties => "max_properties",
            Limit::MaxDepth => "max_depth",
            Limit::MaxChars => "max_chars",
            Limit::MaxEnumValues => "max_enum_values",
            Limit::MaxEnumChars => "max_enum_chars",
            Limit::MaxNodes => "max_nodes",
        }
    }
}

impl fmt::Display for StrictReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            StrictReason::Unsupported(keyword) => keyword,
            StrictReason::Limit(limit) => limit.name(),
            StrictReason::RootNotObject => "root_not_object",
            StrictReason::RootAnyOf => "root_any_of",
            StrictReason::OpenMap => "open_map",
            StrictReason::Untyped => "untyped",
            StrictReason::ArrayWithoutItems => "array_without_items",
            StrictReason::NonLocalRef => "non_local_ref",
            StrictReason::UnresolvableRef => "unresolvable_ref",
            StrictReason::RecursiveRef => "recursive_ref",
            StrictReason::Invalid(_) => "invalid_value",
        };
        f.write_str(text)
    }
}
