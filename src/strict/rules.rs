//! The data that says what a provider's strict subset is: keyword classes,
//! value constraints, formats, root rules, optional-property handling, limits.
//!
//! Rules files are YAML, validated against `schemas/strict-rules.schema.json`
//! and then by [`StrictRules::check`].

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde_json::Value;

/// JSON Schema of a rules file, embedded so loading never touches the disk.
const RULES_SCHEMA: &str = include_str!("../../schemas/strict-rules.schema.json");

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
#[serde(rename_all = "snake_case")]
pub enum KeywordClass {
    /// Copied (structural keywords are rewritten).
    Keep,
    /// Removed from the output.
    Drop,
    /// The conversion fails with the keyword's name.
    Unsupported,
}

/// The three keyword lists and the class of any keyword not listed.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct KeywordClasses {
    /// Keywords kept in the strict schema.
    pub keep: Vec<String>,
    /// Keywords removed from the strict schema.
    #[serde(default)]
    pub drop: Vec<String>,
    /// Keywords that make the conversion fail.
    #[serde(default)]
    pub unsupported: Vec<String>,
    /// Class of keywords in none of the lists (vendor `x-` keywords, unknown ones).
    #[serde(default = "default_unknown")]
    pub unknown: KeywordClass,
}

fn default_unknown() -> KeywordClass {
    KeywordClass::Drop
}

/// What happens to a kept keyword whose value is not one of the allowed values.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Otherwise {
    /// The keyword is removed (the server still validates it).
    #[default]
    Drop,
    /// The conversion fails with the keyword's name.
    Unsupported,
}

/// Values a kept keyword may have, e.g. `minItems: {allowed: [0, 1]}`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ValueRule {
    /// The values kept as they are.
    pub allowed: Vec<Value>,
    /// What happens to any other value.
    #[serde(default)]
    pub otherwise: Otherwise,
}

/// The `format` values kept, and what happens to the others.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct FormatRule {
    /// Formats kept as they are.
    #[serde(default)]
    pub allowed: Vec<String>,
    /// What happens to any other format.
    #[serde(default)]
    pub otherwise: Otherwise,
}

/// Rules for the root schema, which must always be `type: object`.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct RootRule {
    /// Whether the root may carry `anyOf`.
    #[serde(default)]
    pub any_of: bool,
}

/// How properties that were not `required` are represented.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum OptionalProperties {
    /// Every property is listed in `required`; optional ones become nullable
    /// and their instance paths are returned as null paths.
    #[default]
    Nullable,
    /// `required` is kept as it was (sorted); no null paths.
    Keep,
}

/// Size limits of the strict schema; an absent limit is not checked.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Properties in total (each definition counted once).
    pub max_properties: Option<usize>,
    /// Levels of object nesting; definitions count from their own root.
    pub max_depth: Option<usize>,
    /// Characters of property names, definition names, string enum values and string consts.
    pub max_chars: Option<usize>,
    /// Enum values in total.
    pub max_enum_values: Option<usize>,
    /// Characters of one string enum with more than `enum_chars_threshold` values.
    pub max_enum_chars: Option<usize>,
    /// Number of values above which `max_enum_chars` applies to an enum.
    #[serde(default)]
    pub enum_chars_threshold: usize,
}

/// A provider's strict subset of JSON Schema, loaded from a rules file.
///
/// See the [module documentation](super) for the file format.
#[derive(Deserialize, Debug, Clone)]
#[serde(from = "RawRules")]
pub struct StrictRules {
    /// The keyword lists as written in the file.
    pub keywords: KeywordClasses,
    /// Per-keyword value constraints.
    pub values: BTreeMap<String, ValueRule>,
    /// Allowed formats.
    pub formats: FormatRule,
    /// Root rules.
    pub root: RootRule,
    /// How optional properties are represented.
    pub optional_properties: OptionalProperties,
    /// Size limits.
    pub limits: Limits,
    index: HashMap<String, KeywordClass, BuildFnv>,
}

/// FNV-1a for the keyword index: keywords are short, trusted strings (the
/// rules file's own), looked up for every key of every schema node.
#[derive(Debug, Clone, Copy, Default)]
struct BuildFnv;

impl std::hash::BuildHasher for BuildFnv {
    type Hasher = Fnv;

    fn build_hasher(&self) -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

#[derive(Debug)]
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRules {
    keywords: KeywordClasses,
    #[serde(default)]
    values: BTreeMap<String, ValueRule>,
    #[serde(default)]
    formats: FormatRule,
    #[serde(default)]
    root: RootRule,
    #[serde(default)]
    optional_properties: OptionalProperties,
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
        let mut index = HashMap::with_hasher(BuildFnv);
        for (list, class) in classes {
            for name in list {
                index.insert(name.clone(), class);
            }
        }
        StrictRules {
            keywords: raw.keywords,
            values: raw.values,
            formats: raw.formats,
            root: raw.root,
            optional_properties: raw.optional_properties,
            limits: raw.limits,
            index,
        }
    }
}

impl StrictRules {
    /// Loads rules from YAML text: parses it, validates it against the
    /// embedded JSON Schema, deserializes it and runs [`StrictRules::check`].
    ///
    /// # Errors
    ///
    /// A message naming the YAML position (parse errors), the path inside the
    /// rules (schema violations) or the semantic problem.
    pub fn from_yaml_str(text: &str) -> Result<StrictRules, String> {
        let options = serde_saphyr::options! {
            strict_booleans: true,
            legacy_octal_numbers: false,
        };
        let value: Value = serde_saphyr::from_str_with_options(text, options)
            .map_err(|e| format!("strict rules: {e}"))?;
        validate_shape(&value)?;
        let rules: StrictRules =
            serde_json::from_value(value).map_err(|e| format!("strict rules: {e}"))?;
        rules.check()?;
        Ok(rules)
    }

    /// Semantic checks beyond the JSON Schema of the file.
    ///
    /// # Errors
    ///
    /// A message naming the first problem: a keyword in two classes, a
    /// keyword the converter needs that is not kept, a kept keyword whose
    /// subschemas the converter cannot rewrite, a value rule for a keyword
    /// that is not kept, a duplicate format, or a zero limit.
    pub fn check(&self) -> Result<(), String> {
        self.check_classes()?;
        for name in ESSENTIAL_KEYWORDS {
            if self.class(name) != KeywordClass::Keep {
                return Err(format!("strict rules: keyword {name} must be kept"));
            }
        }
        if self.class("$ref") == KeywordClass::Keep {
            for name in ["$defs", "definitions"] {
                if self.class(name) != KeywordClass::Keep {
                    return Err(format!(
                        "strict rules: keyword {name} must be kept when $ref is kept"
                    ));
                }
            }
        }
        for name in &self.keywords.keep {
            if UNCONVERTIBLE_SCHEMA_KEYWORDS.contains(&name.as_str()) {
                return Err(format!(
                    "strict rules: keyword {name} cannot be kept: its subschemas cannot be converted; drop it or mark it unsupported"
                ));
            }
        }
        for name in self.values.keys() {
            if self.class(name) != KeywordClass::Keep {
                return Err(format!(
                    "strict rules: values.{name} constrains a keyword that is not kept"
                ));
            }
        }
        self.check_formats()?;
        self.check_limits()
    }

    fn check_classes(&self) -> Result<(), String> {
        let k = &self.keywords;
        let mut seen: HashMap<&str, &str> = HashMap::new();
        let lists = [
            ("keep", &k.keep),
            ("drop", &k.drop),
            ("unsupported", &k.unsupported),
        ];
        for (list_name, list) in lists {
            for name in list {
                if let Some(first) = seen.insert(name, list_name) {
                    return Err(format!(
                        "strict rules: keyword {name} is listed in both keywords.{first} and keywords.{list_name}"
                    ));
                }
            }
        }
        Ok(())
    }

    fn check_formats(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for format in &self.formats.allowed {
            if !seen.insert(format) {
                return Err(format!("strict rules: format {format} is listed twice"));
            }
        }
        Ok(())
    }

    fn check_limits(&self) -> Result<(), String> {
        let l = &self.limits;
        let limits = [
            ("max_properties", l.max_properties),
            ("max_depth", l.max_depth),
            ("max_chars", l.max_chars),
            ("max_enum_values", l.max_enum_values),
            ("max_enum_chars", l.max_enum_chars),
        ];
        match limits.iter().find(|(_, v)| *v == Some(0)) {
            Some((name, _)) => Err(format!("strict rules: limits.{name} must be at least 1")),
            None => Ok(()),
        }
    }

    /// The class of a keyword under these rules.
    pub fn class(&self, keyword: &str) -> KeywordClass {
        self.index
            .get(keyword)
            .copied()
            .unwrap_or(self.keywords.unknown)
    }
}

fn validate_shape(value: &Value) -> Result<(), String> {
    let schema: Value = serde_json::from_str(RULES_SCHEMA)
        .map_err(|e| format!("strict rules schema is not JSON: {e}"))?;
    let validator = jsonschema::validator_for(&schema)
        .map_err(|e| format!("strict rules schema is invalid: {e}"))?;
    match validator.iter_errors(value).next() {
        Some(error) => Err(format!(
            "strict rules: at {}: {}",
            display_pointer(&error.instance_path().to_string()),
            error
        )),
        None => Ok(()),
    }
}

fn display_pointer(pointer: &str) -> String {
    if pointer.is_empty() {
        "the top level".to_owned()
    } else {
        pointer.to_owned()
    }
}
