//! The converter's walk over one schema node and its keywords.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::error::{Limit, StrictError, StrictReason};
use super::null_path::{NullPath, Segment};
use super::rules::{FormatOtherwise, KeywordClass, Mode, Otherwise, Rewrite, StrictRules};
use crate::json::{MAX_NESTING, deeper_than, has_member, is_container, member};

/// Deepest recursion of the walk (schema nodes, across `$ref`s). Together
/// with the nesting pre-pass it keeps the stack bounded on any input.
const MAX_NODE_NESTING: usize = 128;

/// Schema nodes visited in one conversion at most (each definition is
/// visited once, so this bounds the work even for `$ref` fan-out).
pub(crate) const MAX_NODES: usize = 100_000;

/// Null paths returned at most when the rules set no property limit.
const DEFAULT_NULL_PATH_BUDGET: usize = 100_000;

const TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// Keywords whose every schema a kept keyword's conversion walks (or
/// refuses): their nesting is measured node by node.
const WALKED: &[&str] = &["properties", "items", "not", "anyOf", "allOf", "oneOf"];

/// Whether a keyword gives a node a type (a node with none of them is untyped).
fn is_typing(keyword: &str) -> bool {
    matches!(
        keyword,
        "type" | "enum" | "const" | "$ref" | "anyOf" | "allOf" | "oneOf"
    )
}

/// A definition the walk can reach: the root itself (`#`) or a member of the
/// root's `$defs`/`definitions` (container key, member key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum DefKey<'a> {
    Root,
    Def(&'a str, &'a str),
}

pub(crate) enum DefState {
    InProgress,
    Done(Vec<NullPath>),
}

#[derive(Default)]
pub(crate) struct Counts {
    pub(crate) properties: usize,
    pub(crate) chars: usize,
    pub(crate) enum_values: usize,
    pub(crate) nodes: usize,
}

/// State of one conversion.
pub(crate) struct Walker<'a> {
    pub(crate) root: &'a Value,
    pub(crate) rules: &'a StrictRules,
    /// JSON pointer of the node being converted, as its tokens (written out
    /// only for an error).
    pub(crate) ptr: Vec<Token<'a>>,
    /// Instance path of the node being converted, relative to the
    /// definition being converted (copied only into a null path).
    pub(crate) path: Vec<Step<'a>>,
    /// Null paths found so far, relative to the definition being converted.
    pub(crate) nulls: Vec<NullPath>,
    /// The required names of the objects being converted, outermost first,
    /// each object's sorted (one list reused by every object).
    pub(crate) names: Vec<&'a str>,
    /// The root's state (it is always converted, often alone).
    pub(crate) root_state: Option<DefState>,
    /// The state of every other definition reached.
    pub(crate) defs: HashMap<DefKey<'a>, DefState>,
    /// Definitions being converted, innermost last, each with whether it was
    /// entered at the very top of the definition that refers to it (a cycle
    /// made only of such entries never reaches a value).
    pub(crate) in_progress: Vec<(DefKey<'a>, bool)>,
    pub(crate) recursive: HashSet<DefKey<'a>>,
    pub(crate) out_defs: HashMap<DefKey<'a>, Value>,
    pub(crate) counts: Counts,
    /// Object nesting inside the definition being converted.
    pub(crate) depth: usize,
    frames: usize,
    /// Schema nodes copied by `inline_refs` so far.
    pub(crate) inlined: usize,
}

impl<'a> Walker<'a> {
    pub(crate) fn new(root: &'a Value, rules: &'a StrictRules) -> Self {
        Walker {
            root,
            rules,
            // Room for the nesting of most schemas, so that they seldom grow.
            ptr: Vec::with_capacity(32),
            path: Vec::with_capacity(16),
            nulls: Vec::new(),
            names: Vec::with_capacity(32),
            root_state: None,
            defs: HashMap::new(),
            in_progress: Vec::new(),
            recursive: HashSet::new(),
            out_defs: HashMap::new(),
            counts: Counts::default(),
            depth: 0,
            frames: 0,
            inlined: 0,
        }
    }

    fn strict(&self) -> bool {
        self.rules.mode == Mode::Strict
    }

    /// Converts one schema node.
    pub(crate) fn node(&mut self, schema: &'a Value) -> Result<Value, StrictError> {
        let Value::Object(map) = schema else {
            return Err(self.err(StrictReason::Invalid("schema".into())));
        };
        self.frames += 1;
        self.counts.nodes += 1;
        if self.frames > MAX_NODE_NESTING {
            return Err(self.err(StrictReason::Limit(Limit::MaxDepth)));
        }
        if self.counts.nodes > MAX_NODES {
            return Err(self.err(StrictReason::Limit(Limit::MaxNodes)));
        }
        let out = self.node_map(map)?;
        self.frames -= 1;
        Ok(out)
    }

    fn node_map(&mut self, map: &'a Map<String, Value>) -> Result<Value, StrictError> {
        let shape = Shape::of(map);
        let object = shape.is_object();
        if object {
            self.enter_object()?;
        }
        // Room for the keywords kept and, in strict mode, the three an object
        // is given (small maps freed whole are cheapest, so no more).
        let gained = match object && self.strict() {
            true => shape.missing_object_keywords(),
            false => 0,
        };
        let mut out = Map::with_capacity(map.len() + gained);
        let mut described = None;
        let mut typed = false;
        // The node's level in the input; the schemas it holds are measured
        // as they are walked, the rest here, before anything is copied.
        let level = self.ptr.len() + 1;
        let walks = level + 2 <= MAX_NESTING;
        for (key, value) in map {
            let class = self.rules.class(key);
            if is_container(value)
                && !(walks && class == KeywordClass::Keep && WALKED.contains(&key.as_str()))
                && deeper_than(value, MAX_NESTING.saturating_sub(level))
            {
                return Err(self.err_at(key, StrictReason::Limit(Limit::MaxDepth)));
            }
            match class {
                KeywordClass::Unsupported => {
                    return Err(self.err_at(key, StrictReason::Unsupported(key.clone())));
                }
                KeywordClass::Drop => {}
                KeywordClass::Keep if key == "format" => match self.format(value)? {
                    Format::Keep => {
                        out.insert(key.clone(), value.clone());
                    }
                    Format::Drop => {}
                    Format::Describe(format) => described = Some(format),
                },
                KeywordClass::Keep => {
                    typed |= is_typing(key);
                    self.keep(key, value, &mut out)?;
                }
            }
        }
        if self.strict() {
            if !typed {
                return Err(self.err(StrictReason::Untyped));
            }
            if shape.has_type("array") && !shape.items {
                return Err(self.err(StrictReason::ArrayWithoutItems));
            }
        }
        if object {
            if self.strict() {
                self.object(map, &shape, &mut out)?;
            }
            self.depth -= 1;
        }
        if let Some(format) = described {
            describe_format(&mut out, format);
        }
        self.rewrite(&mut out)?;
        Ok(Value::Object(out))
    }

    /// The rules' rewrites of one converted node.
    fn rewrite(&mut self, out: &mut Map<String, Value>) -> Result<(), StrictError> {
        if self.rules.rewrites(Rewrite::InlineRefs) && has_member(out, "$ref") {
            self.inline(out)?;
        }
        if self.rules.rewrites(Rewrite::ConstToEnum)
            && has_member(out, "const")
            && let Some(value) = out.shift_remove("const")
        {
            if !has_member(out, "type")
                && let Some(t) = json_type(&value)
            {
                out.insert("type".into(), Value::from(t));
            }
            out.insert("enum".into(), Value::Array(vec![value]));
        }
        if self.rules.rewrites(Rewrite::TypeListsToNullable)
            && let Some(Value::Array(types)) = member(out, "type")
        {
            let nullable = types.iter().any(|t| t == "null");
            let mut single: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            out.shift_remove("type");
            match single.len() {
                0 => {}
                1 => {
                    out.insert("type".into(), single.remove(0));
                }
                _ if has_member(out, "anyOf") => {
                    return Err(self.err_at("type", StrictReason::Unsupported("type".into())));
                }
                _ => {
                    let branches = single
                        .into_iter()
                        .map(|t| Value::Object(Map::from_iter([("type".to_owned(), t)])))
                        .collect();
                    out.insert("anyOf".into(), Value::Array(branches));
                }
            }
            if nullable {
                out.insert("nullable".into(), Value::Bool(true));
            }
        }
        if self.rules.rewrites(Rewrite::TypeIntoAnyOf)
            && matches!(member(out, "type"), Some(Value::String(_)))
            && matches!(member(out, "anyOf"), Some(Value::Array(_)))
            && let (Some(t), Some(Value::Array(branches))) =
                (out.shift_remove("type"), out.get_mut("anyOf"))
        {
            for branch in branches.iter_mut() {
                if let Value::Object(b) = branch
                    && !has_member(b, "type")
                {
                    b.shift_insert(0, "type".into(), t.clone());
                }
            }
        }
        Ok(())
    }

    fn enter_object(&mut self) -> Result<(), StrictError> {
        self.depth += 1;
        match self.rules.limits.max_depth {
            Some(max) if self.depth > max => Err(self.err(StrictReason::Limit(Limit::MaxDepth))),
            _ => Ok(()),
        }
    }

    /// Converts or copies one kept keyword into `out`.
    fn keep(
        &mut self,
        key: &'a str,
        value: &'a Value,
        out: &mut Map<String, Value>,
    ) -> Result<(), StrictError> {
        let converted = match key {
            // Attached at the root by `attach_defs`.
            "$defs" | "definitions" => return Ok(()),
            // Rewritten by `object` in strict mode.
            "properties" | "additionalProperties" | "required" if self.strict() => return Ok(()),
            // A subset keeps them where they are, converted.
            "properties" => self.property_map(value)?,
            "additionalProperties" => self.subschema(key, value)?,
            "required" => self.required_list(value)?,
            "type" => self.type_keyword(value)?,
            "items" if value.is_array() && !self.strict() => {
                let items = self.branches(key, value)?;
                if self.rules.rewrites(Rewrite::TupleItemsToPrefixItems) {
                    let Value::Array(mut tuple) = items else {
                        return Ok(());
                    };
                    match out.get_mut("prefixItems") {
                        Some(Value::Array(prefix)) => prefix.append(&mut tuple),
                        _ => {
                            out.insert("prefixItems".into(), Value::Array(tuple));
                        }
                    }
                    return Ok(());
                }
                items
            }
            "prefixItems" if !self.strict() => {
                let mut items = self.branches(key, value)?;
                // Tuple items moved here first keep their place after these.
                if let (Value::Array(prefix), Some(Value::Array(moved))) =
                    (&mut items, out.shift_remove("prefixItems"))
                {
                    prefix.extend(moved);
                }
                items
            }
            "items" => self.child(Token::Key(key), Some(Step::Items), value)?,
            "not" => self.child(Token::Key(key), None, value)?,
            "anyOf" | "allOf" | "oneOf" => self.branches(key, value)?,
            "$ref" => self.reference(value)?,
            "enum" => self.enumeration(value)?,
            "const" => self.constant(value)?,
            _ if !self.strict() && SUBSCHEMA_KEYWORDS.contains(&key) => {
                self.subschema(key, value)?
            }
            _ if !self.strict() && SUBSCHEMA_MAP_KEYWORDS.contains(&key) => {
                self.subschema_map(key, value)?
            }
            _ => match self.plain(key, value)? {
                Some(value) => value,
                None => return Ok(()),
            },
        };
        out.insert(key.to_owned(), converted);
        Ok(())
    }

    /// A keyword holding one subschema (or a boolean schema), as a subset keeps it.
    pub(crate) fn subschema(
        &mut self,
        key: &'a str,
        value: &'a Value,
    ) -> Result<Value, StrictError> {
        match value {
            Value::Bool(_) => Ok(value.clone()),
            Value::Object(_) => self.child(Token::Key(key), None, value),
            _ => Err(self.err_at(key, StrictReason::Invalid(key.into()))),
        }
    }

    /// A keyword holding a map of subschemas (`patternProperties`,
    /// `dependentSchemas`; `dependencies` also takes lists of names).
    fn subschema_map(&mut self, key: &'a str, value: &'a Value) -> Result<Value, StrictError> {
        let Value::Object(map) = value else {
            return Err(self.err_at(key, StrictReason::Invalid(key.into())));
        };
        let outer = self.enter(Token::Key(key));
        let mut out = Map::new();
        for (name, schema) in map {
            let converted = match schema {
                Value::Array(_) if key == "dependencies" => schema.clone(),
                _ => self.subschema(name, schema)?,
            };
            out.insert(name.clone(), converted);
        }
        self.ptr.truncate(outer);
        Ok(Value::Object(out))
    }

    fn type_keyword(&self, value: &Value) -> Result<Value, StrictError> {
        let known = |v: &Value| v.as_str().is_some_and(|t| TYPES.contains(&t));
        let valid = match value {
            Value::Array(list) => !list.is_empty() && list.iter().all(known),
            other => known(other),
        };
        if valid {
            Ok(value.clone())
        } else {
            Err(self.err_at("type", StrictReason::Invalid("type".into())))
        }
    }

    /// Converts a subschema one keyword down; `segment` extends the instance path.
    fn child(
        &mut self,
        token: Token<'a>,
        segment: Option<Step<'a>>,
        value: &'a Value,
    ) -> Result<Value, StrictError> {
        let len = self.enter(token);
        let pushed = segment.map(|s| self.path.push(s)).is_some();
        let out = self.node(value)?;
        if pushed {
            self.path.pop();
        }
        self.ptr.truncate(len);
        Ok(out)
    }

    /// Converts the branches of a combinator; branches add no path segment.
    fn branches(&mut self, key: &'a str, value: &'a Value) -> Result<Value, StrictError> {
        let Value::Array(list) = value else {
            return Err(self.err_at(key, StrictReason::Invalid(key.into())));
        };
        let len = self.enter(Token::Key(key));
        let mut out = Vec::with_capacity(list.len());
        for (index, branch) in list.iter().enumerate() {
            out.push(self.child(Token::Index(index), None, branch)?);
        }
        self.ptr.truncate(len);
        Ok(Value::Array(out))
    }

    fn format(&self, value: &'a Value) -> Result<Format<'a>, StrictError> {
        let Some(rule) = &self.rules.formats else {
            return Ok(Format::Keep);
        };
        let allowed = value
            .as_str()
            .is_some_and(|f| rule.allowed.iter().any(|a| a == f));
        match (allowed, rule.otherwise, value) {
            (true, _, _) => Ok(Format::Keep),
            (false, FormatOtherwise::Drop, _) => Ok(Format::Drop),
            (false, FormatOtherwise::Describe, Value::String(format)) => {
                Ok(Format::Describe(format))
            }
            (false, FormatOtherwise::Describe, _) => {
                Err(self.err_at("format", StrictReason::Invalid("format".into())))
            }
            (false, FormatOtherwise::Unsupported, _) => {
                Err(self.err_at("format", StrictReason::Unsupported("format".into())))
            }
        }
    }

    /// A keyword copied as it is, unless a value rule says otherwise.
    fn plain(&self, key: &str, value: &Value) -> Result<Option<Value>, StrictError> {
        if super::rules::UNCONVERTIBLE_SCHEMA_KEYWORDS.contains(&key) {
            return Err(self.err_at(key, StrictReason::Unsupported(key.into())));
        }
        let Some(rule) = self.rules.values.get(key) else {
            return Ok(Some(value.clone()));
        };
        match (rule.allowed.contains(value), rule.otherwise) {
            (true, _) => Ok(Some(value.clone())),
            (false, Otherwise::Drop) => Ok(None),
            (false, Otherwise::Unsupported) => {
                Err(self.err_at(key, StrictReason::Unsupported(key.into())))
            }
        }
    }

    /// Appends `/token` to the current pointer; returns the length to restore.
    pub(crate) fn enter(&mut self, token: Token<'a>) -> usize {
        let len = self.ptr.len();
        self.ptr.push(token);
        len
    }

    /// The current pointer, written out.
    fn pointer(&self) -> String {
        let mut pointer = String::new();
        for token in &self.ptr {
            match token {
                Token::Key(key) => push_token(&mut pointer, key),
                Token::Index(i) => push_token(&mut pointer, &i.to_string()),
            }
        }
        pointer
    }

    pub(crate) fn err(&self, reason: StrictReason) -> StrictError {
        StrictError::new(&self.pointer(), reason)
    }

    pub(crate) fn err_at(&self, token: &str, reason: StrictReason) -> StrictError {
        let mut pointer = self.pointer();
        push_token(&mut pointer, token);
        StrictError::new(&pointer, reason)
    }

    /// The null path budget: the property limit, or a default guard.
    pub(crate) fn null_path_budget(&self) -> usize {
        self.rules
            .limits
            .max_properties
            .unwrap_or(DEFAULT_NULL_PATH_BUDGET)
    }
}

/// One token of a JSON pointer into the input.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Token<'a> {
    Key(&'a str),
    Index(usize),
}

/// One step of an instance path, borrowed from the input.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'a> {
    Property(&'a str),
    Items,
}

impl Step<'_> {
    pub(crate) fn owned(self) -> Segment {
        match self {
            Step::Property(name) => Segment::Property(name.to_owned()),
            Step::Items => Segment::Items,
        }
    }
}

/// What becomes of a kept `format`.
enum Format<'a> {
    Keep,
    Drop,
    /// Moved into the description.
    Describe(&'a str),
}

/// Keywords holding one subschema, converted in `mode: subset` (strict mode
/// cannot rewrite them: see `UNCONVERTIBLE_SCHEMA_KEYWORDS`).
const SUBSCHEMA_KEYWORDS: &[&str] = &[
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "additionalItems",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// Keywords holding a map of subschemas, converted in `mode: subset`.
const SUBSCHEMA_MAP_KEYWORDS: &[&str] = &["patternProperties", "dependentSchemas", "dependencies"];

/// Says a format the rules do not keep in the node's description.
fn describe_format(out: &mut Map<String, Value>, format: &str) {
    let text = match member(out, "description").and_then(Value::as_str) {
        Some(description) => format!("{description} (format: {format})"),
        None => format!("Format: {format}"),
    };
    out.insert("description".into(), Value::String(text));
}

/// The JSON Schema type of a value, for `const_to_enum` (none for objects and arrays).
fn json_type(value: &Value) -> Option<&'static str> {
    match value {
        Value::String(_) => Some("string"),
        Value::Bool(_) => Some("boolean"),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some("integer"),
        Value::Number(_) => Some("number"),
        Value::Null => Some("null"),
        _ => None,
    }
}

/// Appends `/token` to a JSON pointer, escaping `~` and `/`.
pub(crate) use crate::json::push_pointer_segment as push_token;

/// Whether a `type` value is (or lists) `name`.
pub(crate) fn type_is(value: Option<&Value>, name: &str) -> bool {
    match value {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(list)) => list.iter().any(|t| t.as_str() == Some(name)),
        _ => false,
    }
}

/// What a node's keywords say of it, read in one pass over its members.
#[derive(Default)]
pub(crate) struct Shape<'v> {
    pub(crate) ty: Option<&'v Value>,
    pub(crate) properties: Option<&'v Value>,
    pub(crate) required: Option<&'v Value>,
    pub(crate) additional: Option<&'v Value>,
    pub(crate) items: bool,
}

impl<'v> Shape<'v> {
    pub(crate) fn of(map: &'v Map<String, Value>) -> Self {
        let mut shape = Shape::default();
        for (key, value) in map {
            match key.as_str() {
                "type" => shape.ty = Some(value),
                "properties" => shape.properties = Some(value),
                "required" => shape.required = Some(value),
                "additionalProperties" => shape.additional = Some(value),
                "items" => shape.items = true,
                _ => {}
            }
        }
        shape
    }

    /// Whether the node's `type` is (or lists) `name`.
    pub(crate) fn has_type(&self, name: &str) -> bool {
        type_is(self.ty, name)
    }

    /// Whether the node describes an object (and so must be closed).
    fn is_object(&self) -> bool {
        self.has_type("object") || self.properties.is_some() || self.additional.is_some()
    }

    /// How many of the three keywords strict mode gives an object it lacks.
    fn missing_object_keywords(&self) -> usize {
        [self.properties, self.required, self.additional]
            .iter()
            .filter(|k| k.is_none())
            .count()
    }
}
