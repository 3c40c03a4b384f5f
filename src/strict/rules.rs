//! The data that says what a provider's subset of JSON Schema is: the mode
//! (strict, or the schema as written), keyword classes, value constraints,
//! formats, rewrites, root rules, optional-property handling, limits.
//!
//! Rules files are YAML, validated against `schemas/strict-rules.schema.json`
//! and then by [`StrictRules::check`].

use std::collections::{BTreeMap, HashMap};

use fnv::FnvBuildHasher;
use serde::Deserialize;
use serde_json::Value;

use crate::error::Problem;
use crate::json::pointer_child;

/// Keywords the converter itself relies on; a rules file must keep them.
const ESSENTIAL_KEYWORDS: &[&str] = &["type", "properties", "required", "additionalProperties"];

/// Keywords holding subschemas that the converter cannot rewrite; a rules
/// file may drop them or declare them unsupported, never keep them.
pub(crate) const UNCONVERTIBLE_SCHEMA_KEYWORDS: &[&str] = &[
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
    "patternProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "prefixItems",
    "contains",
    "additionalItems",
];

/// What the converter does with a keyword.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(schemars::JsonSchema, serde::Serialize))]
#[serde(rename_all = "snake_case")]
pub(crate) enum KeywordClass {
    /// Copied (structural keywords are rewritten).
    Keep,
    /// Removed from the output.
    Drop,
    /// The conversion fails with the keyword's name.
    Unsupported,
}

/// The three keyword lists and the class of any keyword not listed.
#[derive(Deserialize, Debug, Clone)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct KeywordClasses {
    /// Keywords copied into the schema (structural ones are rewritten).
    #[cfg_attr(test, schemars(inner(length(min = 1)), extend("uniqueItems" = true)))]
    pub keep: Vec<String>,
    /// Keywords removed from the schema.
    #[serde(default)]
    #[cfg_attr(test, schemars(inner(length(min = 1)), extend("uniqueItems" = true)))]
    pub drop: Vec<String>,
    /// Keywords that make the conversion fail.
    #[serde(default)]
    #[cfg_attr(test, schemars(inner(length(min = 1)), extend("uniqueItems" = true)))]
    pub unsupported: Vec<String>,
    /// Class of keywords in none of the lists (vendor `x-` keywords, unknown ones).
    #[serde(default = "default_unknown")]
    pub unknown: KeywordClass,
}

fn default_unknown() -> KeywordClass {
    KeywordClass::Drop
}

/// What a conversion makes of a schema.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(schemars::JsonSchema, serde::Serialize))]
#[serde(rename_all = "snake_case")]
pub(crate) enum Mode {
    /// A provider's strict mode: every object closed, every property
    /// required (optional ones nullable), every node typed, arrays with
    /// `items`, nothing the converter cannot rewrite.
    #[default]
    Strict,
    /// The provider's subset of JSON Schema for every tool (a spec's
    /// `schema:` section): the keyword, value and format rules, the
    /// rewrites and the limits apply, and the schema's structure stays as
    /// written (objects stay open, optional properties optional, untyped
    /// nodes untyped).
    Subset,
}

/// A rewrite of a schema into a form the provider accepts, applied to every
/// node after its keywords are converted.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum Rewrite {
    /// Every local `$ref` is replaced by the definition it points at (with
    /// the referring node's other keywords over it) and no `$defs` remain;
    /// a recursive `$ref` fails.
    InlineRefs,
    /// `const: x` becomes `enum: [x]`, with the type of `x` when the node has none.
    ConstToEnum,
    /// A `type` string beside `anyOf` moves into the branches that have no `type`.
    TypeIntoAnyOf,
    /// The tuple form `items: [a, b]` becomes `prefixItems: [a, b]` (after any
    /// `prefixItems` already there).
    TupleItemsToPrefixItems,
    /// A `type` list becomes one type, with `nullable: true` when the list
    /// holds `null` (OpenAPI 3.0's form), or an `anyOf` of one branch per type.
    TypeListsToNullable,
}

impl Rewrite {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Rewrite::InlineRefs => "inline_refs",
            Rewrite::ConstToEnum => "const_to_enum",
            Rewrite::TypeIntoAnyOf => "type_into_any_of",
            Rewrite::TupleItemsToPrefixItems => "tuple_items_to_prefix_items",
            Rewrite::TypeListsToNullable => "type_lists_to_nullable",
        }
    }
}

/// What happens to a kept keyword whose value is not one of the allowed values.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(schemars::JsonSchema, serde::Serialize))]
#[serde(rename_all = "snake_case")]
pub(crate) enum Otherwise {
    /// The keyword is removed (the server still validates it).
    #[default]
    Drop,
    /// The conversion fails with the keyword's name.
    Unsupported,
}

/// Values a kept keyword may have, e.g. `minItems: {allowed: [0, 1]}`.
#[derive(Deserialize, Debug, Clone)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct ValueRule {
    /// The values kept as they are.
    pub allowed: Vec<Value>,
    /// What happens to any other value.
    #[serde(default)]
    pub otherwise: Otherwise,
}

/// What happens to a `format` that is not allowed.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(schemars::JsonSchema, serde::Serialize))]
#[serde(rename_all = "snake_case")]
pub(crate) enum FormatOtherwise {
    /// The keyword is removed (the server still validates it).
    #[default]
    Drop,
    /// The conversion fails with the keyword's name.
    Unsupported,
    /// The keyword is removed and the node's description says it:
    /// `"<description> (format: uuid)"`, or `"Format: uuid"` without one.
    Describe,
}

/// The `format` values kept, and what happens to the others.
#[derive(Deserialize, Debug, Clone, Default)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct FormatRule {
    /// Formats kept as they are.
    #[serde(default)]
    #[cfg_attr(test, schemars(inner(length(min = 1)), extend("uniqueItems" = true)))]
    pub allowed: Vec<String>,
    /// What happens to any other format.
    #[serde(default)]
    pub otherwise: FormatOtherwise,
}

/// Rules for the root schema.
#[derive(Deserialize, Debug, Clone)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RootRule {
    /// Whether the root may carry `anyOf`.
    #[serde(default)]
    pub any_of: bool,
    /// Whether the root must be `type: object` (always, in strict mode).
    #[serde(default = "yes")]
    pub object: bool,
}

impl Default for RootRule {
    fn default() -> Self {
        RootRule {
            any_of: false,
            object: true,
        }
    }
}

fn yes() -> bool {
    true
}

/// How properties that were not `required` are represented.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum OptionalProperties {
    /// Every property is listed in `required`; optional ones become nullable
    /// and their instance paths are returned as null paths (strict mode's
    /// default).
    #[default]
    Nullable,
    /// `required` is kept as it was (sorted); no null paths (subset mode's
    /// default and only choice).
    Keep,
}

/// Size limits of the schema; an absent limit is not checked.
#[derive(Deserialize, Debug, Clone, Default)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct Limits {
    /// Properties in total (each definition counted once).
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub max_properties: Option<usize>,
    /// Levels of object nesting; definitions count from their own root.
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub max_depth: Option<usize>,
    /// Characters of property names, definition names, string enum values and string consts.
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub max_chars: Option<usize>,
    /// Enum values in total.
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub max_enum_values: Option<usize>,
    /// Characters of one string enum with more than `enum_chars_threshold` values.
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub max_enum_chars: Option<usize>,
    /// Number of values above which `max_enum_chars` applies to an enum.
    #[serde(default)]
    pub enum_chars_threshold: usize,
}

/// A provider's strict subset of JSON Schema, loaded from a rules file.
///
/// See the [module documentation](super) for the file format. Rules are
/// loaded once ([`StrictRules::from_yaml_str`], or by a
/// [`Registry`](crate::Registry) from `providers/rules/`) and are immutable:
/// the keyword index is built from the lists when they are read.
#[derive(Deserialize, Debug, Clone)]
#[serde(from = "RawRules")]
pub struct StrictRules {
    pub(crate) mode: Mode,
    pub(crate) rewrites: Vec<Rewrite>,
    pub(crate) recursive_refs: bool,
    pub(crate) keywords: KeywordClasses,
    pub(crate) values: BTreeMap<String, ValueRule>,
    /// `None`: every format is kept (a subset that says nothing of formats).
    pub(crate) formats: Option<FormatRule>,
    pub(crate) root: RootRule,
    pub(crate) optional_properties: OptionalProperties,
    pub(crate) limits: Limits,
    index: HashMap<String, KeywordClass, FnvBuildHasher>,
}

/// A provider's subset of JSON Schema: in strict mode, what the strict
/// converter keeps, drops or rejects and its limits; in subset mode, how
/// every tool's schema is rewritten for the provider to take it.
// The rules file as written (its JSON Schema is generated from this type).
#[derive(Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRules {
    #[serde(default)]
    mode: Mode,
    /// Rewrites of every node, after its keywords are converted.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("uniqueItems" = true)))]
    rewrites: Vec<Rewrite>,
    /// Whether a `$ref` may refer to a definition it is part of (subset
    /// mode; strict mode decides by the definitions' optional properties).
    #[serde(default = "yes")]
    recursive_refs: bool,
    keywords: KeywordClasses,
    /// Per-keyword value constraints, keyed by keyword.
    #[serde(default)]
    values: BTreeMap<String, ValueRule>,
    /// The formats kept; absent in subset mode: every format (in strict
    /// mode: none).
    #[serde(default)]
    formats: Option<FormatRule>,
    #[serde(default)]
    root: RootRule,
    /// Absent: `nullable` in strict mode, `keep` in subset mode.
    #[serde(default)]
    optional_properties: Option<OptionalProperties>,
    #[serde(default)]
    limits: Limits,
}

impl From<RawRules> for StrictRules {
    fn from(raw: RawRules) -> Self {
        let k = &raw.keywords;
        let classes = [
            (&k.unsupported, KeywordClass::Unsupported),
            (&k.drop, KeywordClass::Drop),
            (&k.keep, KeywordClass::Keep),
        ];
        // Keywords are short, trusted strings (the rules file's own), looked
        // up for every key of every schema node: FNV beats SipHash here.
        let mut index = HashMap::with_hasher(FnvBuildHasher::default());
        for (list, class) in classes {
            for name in list {
                index.insert(name.clone(), class);
            }
        }
        // Strict mode makes optional properties nullable unless told to keep
        // them; a subset keeps the schema's structure, so it keeps them.
        let optional_properties = raw.optional_properties.unwrap_or(match raw.mode {
            Mode::Strict => OptionalProperties::Nullable,
            Mode::Subset => OptionalProperties::Keep,
        });
        StrictRules {
            mode: raw.mode,
            rewrites: raw.rewrites,
            recursive_refs: raw.recursive_refs,
            keywords: raw.keywords,
            values: raw.values,
            // Strict mode keeps only the formats it lists (none without a list).
            formats: match raw.mode {
                Mode::Strict => Some(raw.formats.unwrap_or_default()),
                Mode::Subset => raw.formats,
            },
            root: raw.root,
            optional_properties,
            limits: raw.limits,
            index,
        }
    }
}

impl StrictRules {
    /// Semantic checks beyond the JSON Schema of the file.
    pub(crate) fn check(&self) -> Result<(), Problem> {
        self.check_classes()?;
        self.check_mode()?;
        self.check_rewrites()?;
        let essential = match self.mode {
            Mode::Strict => ESSENTIAL_KEYWORDS,
            Mode::Subset => &[][..],
        };
        for name in essential {
            if self.class(name) != KeywordClass::Keep {
                return Err(Problem::at(
                    "/keywords/keep",
                    format!("keyword {name} must be kept"),
                ));
            }
        }
        if self.class("$ref") == KeywordClass::Keep {
            for name in ["$defs", "definitions"] {
                if self.class(name) != KeywordClass::Keep {
                    return Err(Problem::at(
                        "/keywords/keep",
                        format!("keyword {name} must be kept when $ref is kept"),
                    ));
                }
            }
        }
        for (i, name) in self.keywords.keep.iter().enumerate() {
            if self.mode == Mode::Strict && UNCONVERTIBLE_SCHEMA_KEYWORDS.contains(&name.as_str()) {
                return Err(Problem::at(
                    format!("/keywords/keep/{i}"),
                    format!(
                        "keyword {name} cannot be kept: its subschemas cannot be converted; drop it or mark it unsupported"
                    ),
                ));
            }
        }
        for name in self.values.keys() {
            if self.class(name) != KeywordClass::Keep {
                return Err(Problem::at(
                    pointer_child("/values", name),
                    format!("values.{name} constrains a keyword that is not kept"),
                ));
            }
        }
        self.check_formats()?;
        self.check_limits()
    }

    fn check_classes(&self) -> Result<(), Problem> {
        let k = &self.keywords;
        let mut seen: HashMap<&str, &str> = HashMap::new();
        let lists = [
            ("keep", &k.keep),
            ("drop", &k.drop),
            ("unsupported", &k.unsupported),
        ];
        for (list_name, list) in lists {
            for (i, name) in list.iter().enumerate() {
                if let Some(first) = seen.insert(name, list_name) {
                    return Err(Problem::at(
                        format!("/keywords/{list_name}/{i}"),
                        format!(
                            "keyword {name} is listed in both keywords.{first} and keywords.{list_name}"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// What strict mode always does cannot be turned off, and a subset keeps
    /// the schema's structure.
    fn check_mode(&self) -> Result<(), Problem> {
        match self.mode {
            Mode::Strict if !self.root.object => Err(Problem::at(
                "/root/object",
                "strict mode always requires a `type: object` root; `root.object: false` needs `mode: subset`",
            )),
            Mode::Strict if !self.recursive_refs => Err(Problem::at(
                "/recursive_refs",
                "`recursive_refs: false` applies to `mode: subset`; strict mode fails a recursive $ref whose definitions have optional properties",
            )),
            Mode::Subset if self.optional_properties == OptionalProperties::Nullable => {
                Err(Problem::at(
                    "/optional_properties",
                    "`mode: subset` keeps the schema's structure, so optional properties stay optional: use `keep` (or `mode: strict`)",
                ))
            }
            _ => Ok(()),
        }
    }

    fn check_rewrites(&self) -> Result<(), Problem> {
        for (i, rewrite) in self.rewrites.iter().enumerate() {
            let at = format!("/rewrites/{i}");
            if self.rewrites[..i].contains(rewrite) {
                return Err(Problem::at(
                    at,
                    format!("rewrite {} is listed twice", rewrite.name()),
                ));
            }
            let needs = match rewrite {
                Rewrite::InlineRefs => "$ref",
                Rewrite::ConstToEnum => "const",
                Rewrite::TypeIntoAnyOf => "anyOf",
                Rewrite::TupleItemsToPrefixItems => "items",
                Rewrite::TypeListsToNullable => "type",
            };
            if self.class(needs) != KeywordClass::Keep {
                return Err(Problem::at(
                    at,
                    format!(
                        "rewrite {} works on {needs}, which these rules do not keep",
                        rewrite.name()
                    ),
                ));
            }
            let produces = match rewrite {
                Rewrite::ConstToEnum => Some("enum"),
                Rewrite::TupleItemsToPrefixItems => Some("prefixItems"),
                Rewrite::TypeListsToNullable => Some("nullable"),
                _ => None,
            };
            if let Some(produced) = produces
                && (self.class(produced) != KeywordClass::Keep
                    || (self.mode == Mode::Strict
                        && UNCONVERTIBLE_SCHEMA_KEYWORDS.contains(&produced)))
            {
                return Err(Problem::at(
                    at,
                    format!(
                        "rewrite {} produces {produced}, which these rules cannot keep",
                        rewrite.name()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Whether the rules ask for `rewrite`.
    pub(crate) fn rewrites(&self, rewrite: Rewrite) -> bool {
        self.rewrites.contains(&rewrite)
    }

    fn check_formats(&self) -> Result<(), Problem> {
        let mut seen = std::collections::HashSet::new();
        let allowed = self.formats.iter().flat_map(|f| &f.allowed);
        for (i, format) in allowed.enumerate() {
            if !seen.insert(format) {
                return Err(Problem::at(
                    format!("/formats/allowed/{i}"),
                    format!("format {format} is listed twice"),
                ));
            }
        }
        Ok(())
    }

    fn check_limits(&self) -> Result<(), Problem> {
        let l = &self.limits;
        let limits = [
            ("max_properties", l.max_properties),
            ("max_depth", l.max_depth),
            ("max_chars", l.max_chars),
            ("max_enum_values", l.max_enum_values),
            ("max_enum_chars", l.max_enum_chars),
        ];
        match limits.iter().find(|(_, v)| *v == Some(0)) {
            Some((name, _)) => Err(Problem::at(
                format!("/limits/{name}"),
                format!("limits.{name} must be at least 1"),
            )),
            None => Ok(()),
        }
    }

    /// The class of a keyword under these rules.
    pub(crate) fn class(&self, keyword: &str) -> KeywordClass {
        self.index
            .get(keyword)
            .copied()
            .unwrap_or(self.keywords.unknown)
    }
}
