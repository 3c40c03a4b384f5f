//! Strict schemas and schema subsets: rewriting an MCP tool's `inputSchema`
//! into the subset of JSON Schema a provider accepts, in its strict
//! tool-calling mode (`mode: strict`, the default) or for every tool
//! (`mode: subset`: a spec's `schema:` section).
//!
//! The engine is generic; what differs between providers is data, a
//! [`StrictRules`] loaded from a YAML rules file (the bundled ones live in
//! `providers/rules/`, their JSON Schema in `schemas/strict-rules.schema.json`).
//!
//! ```
//! use mcp_adapters::strict::{StrictRules, convert};
//! use serde_json::json;
//!
//! let rules = StrictRules::from_yaml_str(
//!     "keywords:\n  keep: [type, properties, required, additionalProperties, description]\n",
//! )?;
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}},
//!     "required": ["q"]
//! });
//! let strict = convert(&schema, &rules)?;
//! assert_eq!(strict.schema["properties"]["limit"], json!({"type": ["integer", "null"]}));
//! assert_eq!(strict.schema["required"], json!(["limit", "q"]));
//! assert_eq!(strict.null_paths[0].to_string(), "$.limit");
//! # Ok::<(), mcp_adapters::Error>(())
//! ```
//!
//! # Rules files
//!
//! ```yaml
//! mode: strict                              # or subset (below)
//! keywords:
//!   keep: [type, properties, required, additionalProperties, items, anyOf, ...]
//!   drop: [default, examples, ...]          # removed: they only narrow or annotate
//!   unsupported: [allOf, not, oneOf, ...]   # the conversion fails with the keyword's name
//!   unknown: drop                           # class of keywords in no list (x-..., unknown)
//! values:                                   # optional per-keyword value constraints
//!   minItems: {allowed: [0, 1], otherwise: drop}
//! formats: {allowed: [date-time, uuid], otherwise: drop}
//! root: {any_of: false}                     # whether the root may carry anyOf
//! optional_properties: nullable             # or keep (required stays as it was)
//! limits: {max_properties: 5000, max_depth: 10, max_chars: 120000,
//!          max_enum_values: 1000, max_enum_chars: 15000, enum_chars_threshold: 250}
//! ```
//!
//! In strict mode the converter always, whatever the rules: the root must be
//! `type: object`; every object is closed with `additionalProperties: false`
//! (an open map fails); arrays need `items`; every node needs a type (`type`,
//! `enum`, `const`, `$ref` or a kept combinator); `$ref`s must be local
//! (`#`, `#/$defs/x`, `#/definitions/x`); the input is never modified.
//!
//! # Subsets
//!
//! `mode: subset` keeps the schema's structure (objects stay open, optional
//! properties optional, untyped nodes and arrays without `items` stay) and
//! applies what the rules say: keyword classes, value and format rules
//! (`formats.otherwise: describe` moves a format into the description; a
//! subset without `formats` keeps every format), the limits, whether the root
//! must be `type: object` (`root.object`), whether a `$ref` may be recursive
//! (`recursive_refs`), and the `rewrites`, applied to every node after its
//! keywords are converted: `inline_refs` (no `$ref` or `$defs` left; a
//! recursive `$ref` fails), `const_to_enum`, `type_into_any_of` and
//! `tuple_items_to_prefix_items`. Keywords strict mode cannot rewrite
//! (`if`, `patternProperties`, `prefixItems`, ...) are converted too.
//!
//! ```
//! use mcp_adapters::strict::{StrictRules, convert};
//! use serde_json::json;
//!
//! let rules = StrictRules::from_yaml_str(
//!     "mode: subset\nkeywords: {keep: [], unknown: keep}\nrewrites: [const_to_enum]\n",
//! )?;
//! let schema = json!({"type": "object", "properties": {"kind": {"const": "file"}}});
//! let out = convert(&schema, &rules)?;
//! assert_eq!(out.schema["properties"]["kind"], json!({"type": "string", "enum": ["file"]}));
//! # Ok::<(), mcp_adapters::Error>(())
//! ```
//!
//! # Null paths
//!
//! With `optional_properties: nullable`, every property is listed in
//! `required` and one that was optional becomes nullable; its *instance
//! path* is returned as a [`NullPath`] so that [`strip_nulls`] can remove the
//! `null` the model must now send before the call reaches the server:
//!
//! - a property adds its name: `["filters", "limit"]`;
//! - array `items` add the wildcard segment [`Segment::Items`] (JSON `null`,
//!   shown as `[*]`), meaning every item: `["rows", null, "note"]`;
//! - `anyOf`/`allOf`/`oneOf` branches add nothing: paths are instance paths,
//!   so the optional properties of every branch appear at the same level;
//! - a `$ref` contributes the null paths of its definition (computed once,
//!   relative to the definition) under the path of the place that refers to
//!   it; a recursive `$ref` whose definitions have optional properties fails
//!   ([`StrictReason::RecursiveRef`]), since its paths would be unbounded;
//! - a property whose schema already accepted `null` keeps it and gets no
//!   null path, so a `null` the model sends there reaches the server;
//! - a nullable property's own path comes before the paths inside it.
//!
//! # Limits
//!
//! Whatever the rules say, a conversion fails (never panics or overflows):
//!
//! - `max_depth` for any array or object nested deeper than 256 levels
//!   (the walk measures what it does not convert itself, never more than
//!   256 levels down, so a value a million levels deep is fine to pass);
//! - `max_depth` when the walk itself, across `$ref`s, goes 128 schema nodes deep;
//! - `max_nodes` after 100,000 schema nodes (each `$ref` definition is
//!   converted once, so fan-out bombs stop early);
//! - `max_properties` when null paths exceed the rules' property limit
//!   (100,000 without one);
//! - `recursive_ref` for a `$ref` cycle that has optional properties or
//!   never reaches a value.
//!
//! The rules' own `limits` (properties, depth, characters, enum values) come
//! on top. A schema built in memory deeper than serde_json can drop is the
//! caller's to dismantle: `convert` only reads its input.
//!
//! # Hostile input
//!
//! Nesting is measured, never more than 256 levels down, before anything
//! is copied (any container deeper than 256 levels fails with `max_depth`), the walk's own
//! recursion is capped, each definition is converted once, the null paths
//! and the schema nodes visited are budgeted, and counts are checked before
//! large maps or enums are iterated. Every input ends in an answer or an
//! error in time linear in its size.

mod error;
mod null_path;
mod objects;
mod refs;
pub(crate) mod rules;
mod walk;

use serde_json::Value;

pub use error::{Limit, StrictError, StrictReason};
pub use null_path::{NullPath, Segment, strip_nulls};
pub use rules::StrictRules;

use walk::{DefKey, Walker};

/// A converted schema and the instance paths of the properties it made nullable.
#[derive(Debug, Clone, PartialEq)]
pub struct StrictSchema {
    /// The strict schema.
    pub schema: Value,
    /// Paths where a `null` sent by the model means "absent"; see the
    /// [module documentation](self#null-paths).
    pub null_paths: Vec<NullPath>,
}

/// Rewrites `schema` into the strict subset described by `rules`.
///
/// The input is only read; the output is built fresh.
///
/// # Errors
///
/// A [`StrictError`] with the JSON pointer of the offending place in the
/// input and the reason: an unsupported keyword, an exceeded limit, a root
/// that is not an object (or is `anyOf` when the rules forbid it), an open
/// map, an untyped node, an array without `items`, a non-local, unresolvable
/// or recursive `$ref`, or an invalid keyword value.
pub fn convert(schema: &Value, rules: &StrictRules) -> Result<StrictSchema, StrictError> {
    // The walk measures the nesting of what it does not convert itself, and
    // stops at the first container too deep; whatever stopped it, a schema
    // too deep anywhere is refused for that, at its first such place in
    // document order, as if it had been measured first.
    let converted = convert_walked(schema, rules);
    if converted.is_err()
        && let Some(pointer) = crate::json::first_too_deep(schema, crate::json::MAX_NESTING)
    {
        return Err(StrictError::new(
            &pointer,
            StrictReason::Limit(Limit::MaxDepth),
        ));
    }
    converted
}

fn convert_walked(schema: &Value, rules: &StrictRules) -> Result<StrictSchema, StrictError> {
    check_root(schema, rules)?;
    let mut walker = Walker::new(schema, rules);
    walker.begin(DefKey::Root, true);
    let mut out = walker.node(schema)?;
    let paths = std::mem::take(&mut walker.nulls);
    // Only definitions converted after the root can still refer to it.
    let more_defs =
        rules.mode == rules::Mode::Subset && !rules.rewrites(rules::Rewrite::InlineRefs);
    let null_paths = walker.finish(DefKey::Root, paths, more_defs)?;
    if more_defs {
        walker.convert_unreferenced_defs()?;
    }
    walker.attach_defs(&mut out);
    Ok(StrictSchema {
        schema: out,
        null_paths,
    })
}

fn check_root(schema: &Value, rules: &StrictRules) -> Result<(), StrictError> {
    let root_error = |reason| Err(StrictError::new("", reason));
    let Value::Object(map) = schema else {
        return root_error(StrictReason::RootNotObject);
    };
    if crate::json::has_member(map, "anyOf") && !rules.root.any_of {
        return Err(StrictError::new("/anyOf", StrictReason::RootAnyOf));
    }
    if !rules.root.object {
        return Ok(());
    }
    let object = match crate::json::member(map, "type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(list)) => list.len() == 1 && list[0] == "object",
        _ => false,
    };
    if object {
        Ok(())
    } else {
        root_error(StrictReason::RootNotObject)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nest(levels: usize, leaf: Value) -> Value {
        (0..levels).fold(leaf, |inner, _| Value::Array(vec![inner]))
    }

    /// A schema too deep anywhere fails at the place the pre-walk would
    /// name, whatever the walk meets first; one within the bound converts.
    #[test]
    fn nesting_is_refused_where_a_pre_walk_would_refuse_it() {
        let rules = StrictRules::from_yaml_str(
            "keywords:\n  keep: [type, properties, required, additionalProperties, items, anyOf, enum, $ref, $defs, definitions, description]\n  drop: [default]\n  unsupported: [not]\n",
        )
        .unwrap();
        let mut props = json!({"type": "string"});
        for _ in 0..120 {
            props = json!({"type": "object", "properties": {"p": props}, "required": ["p"]});
        }
        let cases = [
            json!({"type": "object", "properties": {"a": {"type": "string", "default": nest(300, json!(1))}}}),
            json!({"type": "object", "properties": {"a": {"enum": [nest(255, json!(1))]}}}),
            json!({"type": "object", "properties": {"a": {"enum": [nest(252, json!(1))]}}}),
            json!({"type": "object", "$defs": {"unused": nest(300, json!(1))}}),
            json!({"type": "object", "properties": {"a": {"not": {}}, "b": {"default": nest(300, json!(1))}}}),
            json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "default": nest(260, json!(1))}}}}),
            json!({"type": "string", "default": nest(300, json!(1))}),
            json!({"type": "object", "properties": {"deep": props.clone()}}),
            json!({"type": "object", "properties": {"deep": {"type": "object", "properties": {"x": props}, "description": nest(10, json!(1))}}}),
        ];
        for schema in &cases {
            let expected = crate::json::first_too_deep(schema, crate::json::MAX_NESTING);
            let got = convert(schema, &rules);
            match expected {
                Some(pointer) => {
                    let err = got.expect_err("too deep");
                    assert_eq!(err.kind().to_string(), "max_depth");
                    assert_eq!(err.pointer(), pointer);
                }
                None => assert!(
                    !matches!(&got, Err(e) if e.kind().to_string() == "max_depth" && e.pointer().len() > 500),
                    "{got:?}"
                ),
            }
        }
    }
}
