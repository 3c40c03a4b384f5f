//! Objects: closing them, requiring every property, making optional
//! properties nullable; and the value limits (enums, consts, names).

use serde_json::{Map, Value};

use super::error::{Limit, StrictError, StrictReason};
use super::null_path::NullPath;
use super::rules::OptionalProperties;
use super::walk::{Step, Token, Walker};
use crate::json::{has_member, member, member_mut};

/// Names of required properties, sorted, each once.
#[derive(Default)]
struct Names<'a>(Vec<&'a str>);

impl<'a> Names<'a> {
    fn new(mut names: Vec<&'a str>) -> Self {
        names.sort_unstable();
        names.dedup();
        Names(names)
    }

    fn contains(&self, name: &str) -> bool {
        self.0.binary_search(&name).is_ok()
    }
}

/// How far `allows_null` follows `anyOf` branches and `$ref`s before giving
/// a conservative "no" (which only adds a redundant null path).
const MAX_NULL_PROBE: usize = 64;

/// Annotations moved to the outside when a node is wrapped in `anyOf`.
const ANNOTATIONS: &[&str] = &["title", "description"];

impl<'a> Walker<'a> {
    /// Writes `properties`, `required` and `additionalProperties: false`.
    pub(crate) fn object(
        &mut self,
        map: &'a Map<String, Value>,
        out: &mut Map<String, Value>,
    ) -> Result<(), StrictError> {
        let closed = match member(map, "additionalProperties") {
            None => false,
            Some(Value::Bool(false)) => true,
            Some(_) => return Err(self.err_at("additionalProperties", StrictReason::OpenMap)),
        };
        let properties = match member(map, "properties") {
            Some(Value::Object(properties)) => Some(properties),
            Some(_) => {
                return Err(self.err_at("properties", StrictReason::Invalid("properties".into())));
            }
            None if closed || std::ptr::eq(self.root.as_object().unwrap_or(map), map) => None,
            None => return Err(self.err(StrictReason::OpenMap)),
        };
        let required = self.required(map)?;
        let converted = match properties {
            Some(properties) => self.properties(properties, &required)?,
            None => Map::new(),
        };
        let required = match self.rules.optional_properties {
            OptionalProperties::Nullable => sorted_names(converted.keys().map(String::as_str)),
            OptionalProperties::Keep => sorted_names(required.0),
        };
        out.insert("properties".into(), Value::Object(converted));
        out.insert("required".into(), required);
        out.insert("additionalProperties".into(), Value::Bool(false));
        Ok(())
    }

    /// A subset's `properties`: each converted, nothing made nullable.
    pub(crate) fn property_map(&mut self, value: &'a Value) -> Result<Value, StrictError> {
        let Value::Object(properties) = value else {
            return Err(self.err_at("properties", StrictReason::Invalid("properties".into())));
        };
        Ok(Value::Object(
            self.properties(properties, &Names::default())?,
        ))
    }

    /// A subset's `required`, checked to be a list of names and kept as written.
    pub(crate) fn required_list(&self, value: &Value) -> Result<Value, StrictError> {
        match value {
            Value::Array(list) if list.iter().all(Value::is_string) => Ok(value.clone()),
            _ => Err(self.err_at("required", StrictReason::Invalid("required".into()))),
        }
    }

    fn required(&self, map: &'a Map<String, Value>) -> Result<Names<'a>, StrictError> {
        let invalid = || self.err_at("required", StrictReason::Invalid("required".into()));
        match member(map, "required") {
            None => Ok(Names::default()),
            Some(Value::Array(list)) => list
                .iter()
                .map(|v| v.as_str().ok_or_else(invalid))
                .collect::<Result<_, _>>()
                .map(Names::new),
            Some(_) => Err(invalid()),
        }
    }

    fn properties(
        &mut self,
        properties: &'a Map<String, Value>,
        required: &Names<'_>,
    ) -> Result<Map<String, Value>, StrictError> {
        self.counts.properties += properties.len();
        self.check_limit(
            self.counts.properties,
            self.rules.limits.max_properties,
            Limit::MaxProperties,
            "properties",
        )?;
        self.add_chars(
            properties.keys().map(|k| k.chars().count()).sum(),
            "properties",
        )?;
        let outer = self.enter(Token::Key("properties"));
        let mut out = Map::with_capacity(properties.len());
        for (name, schema) in properties {
            let len = self.enter(Token::Key(name));
            self.path.push(Step::Property(name));
            let first_null = self.nulls.len();
            let mut converted = self.node(schema)?;
            let optional = !required.contains(name.as_str());
            if optional && self.rules.optional_properties == OptionalProperties::Nullable {
                converted = self.nullable(schema, converted, first_null)?;
            }
            self.path.pop();
            self.ptr.truncate(len);
            out.insert(name.clone(), converted);
        }
        self.ptr.truncate(outer);
        Ok(out)
    }

    /// Makes an optional property nullable unless it already allowed `null`,
    /// recording its path before the paths found inside it.
    fn nullable(
        &mut self,
        original: &'a Value,
        converted: Value,
        at: usize,
    ) -> Result<Value, StrictError> {
        if self.allows_null(original, 0) {
            return Ok(converted);
        }
        if self.nulls.len() >= self.null_path_budget() {
            return Err(self.err(StrictReason::Limit(Limit::MaxProperties)));
        }
        let path = self.path.iter().map(|s| s.owned()).collect();
        self.nulls.insert(at, NullPath(path));
        Ok(make_nullable(converted))
    }

    /// Whether the original schema already accepts `null` (every typing
    /// keyword present accepts it).
    fn allows_null(&self, schema: &'a Value, probe: usize) -> bool {
        let Value::Object(map) = schema else {
            return false;
        };
        if probe > MAX_NULL_PROBE {
            return false;
        }
        let mut constrained = false;
        let mut ok = true;
        if has_member(map, "type") {
            constrained = true;
            ok &= super::walk::has_type(map, "null");
        }
        if let Some(Value::Array(values)) = member(map, "enum") {
            constrained = true;
            ok &= values.contains(&Value::Null);
        }
        if let Some(value) = member(map, "const") {
            constrained = true;
            ok &= value.is_null();
        }
        if let Some(Value::Array(branches)) = member(map, "anyOf") {
            constrained = true;
            ok = ok && branches.iter().any(|b| self.allows_null(b, probe + 1));
        }
        if let Some(reference) = member(map, "$ref").and_then(Value::as_str) {
            constrained = true;
            ok = ok
                && self
                    .target(reference)
                    .is_some_and(|target| self.allows_null(target, probe + 1));
        }
        constrained && ok
    }

    pub(crate) fn enumeration(&mut self, value: &Value) -> Result<Value, StrictError> {
        let Value::Array(values) = value else {
            return Err(self.err_at("enum", StrictReason::Invalid("enum".into())));
        };
        let limits = &self.rules.limits;
        self.counts.enum_values += values.len();
        self.check_limit(
            self.counts.enum_values,
            limits.max_enum_values,
            Limit::MaxEnumValues,
            "enum",
        )?;
        let chars: usize = values
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.chars().count())
            .sum();
        if values.len() > limits.enum_chars_threshold {
            self.check_limit(chars, limits.max_enum_chars, Limit::MaxEnumChars, "enum")?;
        }
        self.add_chars(chars, "enum")?;
        Ok(value.clone())
    }

    pub(crate) fn constant(&mut self, value: &Value) -> Result<Value, StrictError> {
        if let Value::String(text) = value {
            self.add_chars(text.chars().count(), "const")?;
        }
        Ok(value.clone())
    }

    pub(crate) fn add_chars(&mut self, chars: usize, token: &str) -> Result<(), StrictError> {
        self.counts.chars += chars;
        self.check_limit(
            self.counts.chars,
            self.rules.limits.max_chars,
            Limit::MaxChars,
            token,
        )
    }

    fn check_limit(
        &self,
        used: usize,
        max: Option<usize>,
        limit: Limit,
        token: &str,
    ) -> Result<(), StrictError> {
        match max {
            Some(max) if used > max => Err(self.err_at(token, StrictReason::Limit(limit))),
            _ => Ok(()),
        }
    }
}

/// The names sorted, each once.
fn sorted_names<'n>(names: impl IntoIterator<Item = &'n str>) -> Value {
    let mut names: Vec<Value> = names
        .into_iter()
        .map(|n| Value::String(n.to_owned()))
        .collect();
    names.sort_unstable_by(|a, b| a.as_str().cmp(&b.as_str()));
    names.dedup();
    Value::Array(names)
}

/// Adds `null` to a converted schema: in its `type` (and `enum`), in its
/// `enum` alone, or by wrapping it in `anyOf` with `{"type": "null"}` when
/// it is a `$ref`, a combinator or a `const`.
fn make_nullable(converted: Value) -> Value {
    let Value::Object(mut map) = converted else {
        return converted;
    };
    let wrap = ["$ref", "anyOf", "allOf", "oneOf", "not", "const"]
        .iter()
        .any(|k| has_member(&map, k));
    if wrap || !(has_member(&map, "type") || has_member(&map, "enum")) {
        return wrap_any_of(map);
    }
    if let Some(slot) = member_mut(&mut map, "type") {
        match slot {
            Value::String(t) => {
                let t = std::mem::take(t);
                *slot = Value::Array(vec![t.into(), "null".into()]);
            }
            Value::Array(list) => push_null(list, "null".into()),
            _ => {}
        }
    }
    if let Some(Value::Array(values)) = member_mut(&mut map, "enum") {
        push_null(values, Value::Null);
    }
    Value::Object(map)
}

fn push_null(list: &mut Vec<Value>, null: Value) {
    if !list.contains(&null) {
        list.push(null);
    }
}

fn wrap_any_of(mut inner: Map<String, Value>) -> Value {
    let mut outer = Map::new();
    for key in ANNOTATIONS {
        if has_member(&inner, key)
            && let Some(value) = inner.shift_remove(*key)
        {
            outer.insert((*key).to_owned(), value);
        }
    }
    let null = Value::Object(Map::from_iter([("type".to_owned(), Value::from("null"))]));
    outer.insert(
        "anyOf".into(),
        Value::Array(vec![Value::Object(inner), null]),
    );
    Value::Object(outer)
}
