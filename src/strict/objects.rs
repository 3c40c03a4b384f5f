//! Objects: closing them, requiring every property, making optional
//! properties nullable; and the value limits (enums, consts, names).

use serde_json::{Map, Value};

use super::error::{Limit, StrictError, StrictReason};
use super::null_path::NullPath;
use super::rules::OptionalProperties;
use super::walk::{Shape, Step, Token, Walker, type_is};
use crate::json::has_member;

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
        shape: &Shape<'a>,
        out: &mut Map<String, Value>,
    ) -> Result<(), StrictError> {
        let closed = match shape.additional {
            None => false,
            Some(Value::Bool(false)) => true,
            Some(_) => return Err(self.err_at("additionalProperties", StrictReason::OpenMap)),
        };
        let properties = match shape.properties {
            Some(Value::Object(properties)) => Some(properties),
            Some(_) => {
                return Err(self.err_at("properties", StrictReason::Invalid("properties".into())));
            }
            None if closed || std::ptr::eq(self.root.as_object().unwrap_or(map), map) => None,
            None => return Err(self.err(StrictReason::OpenMap)),
        };
        // The required names, sorted, on the walker's stack of names above
        // those of the objects this one is inside.
        let start = self.names.len();
        self.required(shape.required)?;
        let end = self.names.len();
        self.names[start..].sort_unstable();
        let converted = match properties {
            Some(properties) => self.properties(properties, start..end)?,
            None => Map::new(),
        };
        if self.rules.optional_properties == OptionalProperties::Nullable {
            self.names.truncate(start);
            self.names.extend(
                properties
                    .into_iter()
                    .flat_map(|p| p.keys().map(String::as_str)),
            );
            self.names[start..].sort_unstable();
        }
        let required = sorted_names(&self.names[start..]);
        self.names.truncate(start);
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
        Ok(Value::Object(self.properties(properties, 0..0)?))
    }

    /// A subset's `required`, checked to be a list of names and kept as written.
    pub(crate) fn required_list(&self, value: &Value) -> Result<Value, StrictError> {
        match value {
            Value::Array(list) if list.iter().all(Value::is_string) => Ok(value.clone()),
            _ => Err(self.err_at("required", StrictReason::Invalid("required".into()))),
        }
    }

    /// Pushes an object's `required` names on the walker's stack of names.
    fn required(&mut self, required: Option<&'a Value>) -> Result<(), StrictError> {
        match required {
            None => Ok(()),
            Some(Value::Array(list)) => {
                self.names.reserve(list.len());
                for name in list {
                    match name.as_str() {
                        Some(name) => self.names.push(name),
                        None => return Err(self.invalid_required()),
                    }
                }
                Ok(())
            }
            Some(_) => Err(self.invalid_required()),
        }
    }

    fn invalid_required(&self) -> StrictError {
        self.err_at("required", StrictReason::Invalid("required".into()))
    }

    fn properties(
        &mut self,
        properties: &'a Map<String, Value>,
        required: std::ops::Range<usize>,
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
            let optional = self.names[required.clone()]
                .binary_search(&name.as_str())
                .is_err();
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
        let (mut any_of, mut reference) = (None, None);
        for (key, value) in map {
            match (key.as_str(), value) {
                ("type", _) => {
                    constrained = true;
                    ok &= type_is(Some(value), "null");
                }
                ("enum", Value::Array(values)) => {
                    constrained = true;
                    ok &= values.contains(&Value::Null);
                }
                ("const", _) => {
                    constrained = true;
                    ok &= value.is_null();
                }
                ("anyOf", Value::Array(branches)) => any_of = Some(branches),
                ("$ref", Value::String(r)) => reference = Some(r),
                _ => {}
            }
        }
        if let Some(branches) = any_of {
            constrained = true;
            ok = ok && branches.iter().any(|b| self.allows_null(b, probe + 1));
        }
        if let Some(reference) = reference {
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

/// Sorted names as a JSON list, each once.
fn sorted_names(names: &[&str]) -> Value {
    let mut list = Vec::with_capacity(names.len());
    let mut last = None;
    for name in names {
        if last != Some(name) {
            list.push(Value::String((*name).to_owned()));
            last = Some(name);
        }
    }
    Value::Array(list)
}

/// Adds `null` to a converted schema: in its `type` (and `enum`), in its
/// `enum` alone, or by wrapping it in `anyOf` with `{"type": "null"}` when
/// it is a `$ref`, a combinator or a `const`.
fn make_nullable(converted: Value) -> Value {
    let Value::Object(mut map) = converted else {
        return converted;
    };
    let (mut wrap, mut typed) = (false, false);
    for key in map.keys() {
        match key.as_str() {
            "$ref" | "anyOf" | "allOf" | "oneOf" | "not" | "const" => wrap = true,
            "type" | "enum" => typed = true,
            _ => {}
        }
    }
    if wrap || !typed {
        return wrap_any_of(map);
    }
    for (key, slot) in map.iter_mut() {
        match key.as_str() {
            "type" => match slot {
                Value::String(t) => {
                    let t = std::mem::take(t);
                    *slot = Value::Array(vec![t.into(), "null".into()]);
                }
                Value::Array(list) => push_null(list, "null".into()),
                _ => {}
            },
            "enum" => {
                if let Value::Array(values) = slot {
                    push_null(values, Value::Null);
                }
            }
            _ => {}
        }
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
