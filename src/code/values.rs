//! Values between the program and the library, converted in place rather
//! than through JSON text: a tool's arguments read from the program's
//! object, a tool's result built as the program's value.
//!
//! Each conversion gives what the JSON text gives (`JSON.stringify` then
//! `serde_json`, and `JSON.parse`): a part of a value that JSON text treats
//! in a way of its own (a `toJSON` method, a boxed primitive or any object
//! whose prototype is not `Object.prototype` or `null`, a proxy, a
//! `BigInt`, a string that is not Unicode, a `__proto__` key, a part nested
//! deeper than [`MAX_DEPTH`], where a cycle is found) goes through the text,
//! and the rest is read or built in place. Each property is read once.

use rquickjs::{Array, Ctx, Exception, Object, Value};
use serde_json::{Map, Number, Value as Json};

/// How deep a value is converted in place before the rest of it goes
/// through the text (which finds cycles).
const MAX_DEPTH: usize = 64;

/// `value` as JSON (`undefined` as `null`). `plain` is `Object.prototype`
/// as it was before the program ran.
pub(super) fn to_json<'js>(
    ctx: &Ctx<'js>,
    value: &Value<'js>,
    plain: &Object<'js>,
) -> rquickjs::Result<Json> {
    let reader = Reader { ctx, plain };
    Ok(reader.read(value, 0)?.unwrap_or(Json::Null))
}

struct Reader<'a, 'js> {
    ctx: &'a Ctx<'js>,
    plain: &'a Object<'js>,
}

impl<'js> Reader<'_, 'js> {
    /// `None` for what JSON leaves out (`undefined`, a function, a symbol).
    fn read(&self, value: &Value<'js>, depth: usize) -> rquickjs::Result<Option<Json>> {
        use rquickjs::Type;
        if depth > MAX_DEPTH {
            return self.text(value);
        }
        match value.type_of() {
            Type::Undefined | Type::Function | Type::Constructor | Type::Symbol => Ok(None),
            Type::Null => Ok(Some(Json::Null)),
            Type::Bool => Ok(value.as_bool().map(Json::Bool)),
            Type::Int => Ok(value.as_int().map(|i| Json::Number(i.into()))),
            Type::Float => Ok(value.as_float().map(number)),
            Type::String => match value.as_string().map(|s| s.to_string()) {
                Some(Ok(text)) => Ok(Some(Json::String(text))),
                _ => self.text(value),
            },
            Type::Array => match value.as_array() {
                Some(array) if !self.has_to_json(array.as_object())? => {
                    self.array(array, depth).map(Some)
                }
                _ => self.text(value),
            },
            Type::Object => match value.as_object() {
                Some(object) if self.is_plain(object)? => self.object(object, depth).map(Some),
                _ => self.text(value),
            },
            _ => self.text(value),
        }
    }

    fn array(&self, array: &Array<'js>, depth: usize) -> rquickjs::Result<Json> {
        let mut items = Vec::with_capacity(array.len());
        for i in 0..array.len() {
            let item: Value = array.get(i)?;
            items.push(self.read(&item, depth + 1)?.unwrap_or(Json::Null));
        }
        Ok(Json::Array(items))
    }

    fn object(&self, object: &Object<'js>, depth: usize) -> rquickjs::Result<Json> {
        let mut map = Map::new();
        for key in object.keys::<String>() {
            let key = key?;
            let member: Value = object.get(key.as_str())?;
            if let Some(member) = self.read(&member, depth + 1)? {
                map.insert(key, member);
            }
        }
        Ok(Json::Object(map))
    }

    /// An object JSON reads by its own keys alone.
    fn is_plain(&self, object: &Object<'js>) -> rquickjs::Result<bool> {
        let prototype_plain = match object.get_prototype() {
            None => true,
            Some(prototype) => prototype.as_value() == self.plain.as_value(),
        };
        Ok(prototype_plain && !self.has_to_json(object)?)
    }

    fn has_to_json(&self, object: &Object<'js>) -> rquickjs::Result<bool> {
        let to_json: Value = object.get("toJSON")?;
        Ok(!to_json.is_undefined())
    }

    /// `value` through JSON text.
    fn text(&self, value: &Value<'js>) -> rquickjs::Result<Option<Json>> {
        let Some(text) = self.ctx.json_stringify(value.clone())? else {
            return Ok(None);
        };
        let text = text.to_string()?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Exception::throw_type(self.ctx, &format!("the value is not JSON: {e}")))
    }
}

/// A JavaScript number as JSON text carries it: an integer when it is one
/// (written in full below 1e21, as JavaScript writes it), `null` when it is
/// not finite.
fn number(f: f64) -> Json {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if !f.is_finite() {
        return Json::Null;
    }
    if f.fract() == 0.0 && f.abs() < EXACT {
        // `-0` is written `0`.
        return Json::Number((f as i64).into());
    }
    if f.fract() == 0.0
        && f.abs() < 1e21
        && let Ok(n) = format!("{f}").parse::<Number>()
    {
        return Json::Number(n);
    }
    Number::from_f64(f).map_or(Json::Null, Json::Number)
}

/// `json` as the program's value, as `JSON.parse` builds it.
pub(super) fn from_json<'js>(ctx: &Ctx<'js>, json: &Json) -> rquickjs::Result<Value<'js>> {
    build(ctx, json, 0)
}

fn build<'js>(ctx: &Ctx<'js>, json: &Json, depth: usize) -> rquickjs::Result<Value<'js>> {
    if depth > MAX_DEPTH {
        return ctx.json_parse(json.to_string());
    }
    Ok(match json {
        Json::Null => Value::new_null(ctx.clone()),
        Json::Bool(b) => Value::new_bool(ctx.clone(), *b),
        Json::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
            Some(i) => Value::new_int(ctx.clone(), i),
            None => Value::new_float(ctx.clone(), n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(text) => rquickjs::String::from_str(ctx.clone(), text)?.into_value(),
        Json::Array(items) => {
            let array = Array::new(ctx.clone())?;
            for (i, item) in items.iter().enumerate() {
                array.set(i, build(ctx, item, depth + 1)?)?;
            }
            array.into_value()
        }
        // Set, `__proto__` would change the object's prototype: the text
        // makes it an own property.
        Json::Object(map) if map.contains_key("__proto__") => ctx.json_parse(json.to_string())?,
        Json::Object(map) => {
            let object = Object::new(ctx.clone())?;
            for (key, member) in map {
                object.set(key.as_str(), build(ctx, member, depth + 1)?)?;
            }
            object.into_value()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Runs `f` in a fresh context, with `Object.prototype`.
    fn with_context(f: impl for<'js> FnOnce(&Ctx<'js>, &Object<'js>)) {
        let runtime = rquickjs::Runtime::new().unwrap();
        let context = rquickjs::Context::full(&runtime).unwrap();
        context.with(|ctx| {
            let plain: Object = ctx.eval("Object.prototype").unwrap();
            f(&ctx, &plain);
        });
    }

    /// What the text gives, for comparison.
    fn through_text<'js>(ctx: &Ctx<'js>, value: Value<'js>) -> Json {
        match ctx.json_stringify(value).unwrap() {
            Some(text) => serde_json::from_str(&text.to_string().unwrap()).unwrap(),
            None => Json::Null,
        }
    }

    #[test]
    fn values_read_in_place_are_those_the_text_gives() {
        with_context(|ctx, plain| {
            for code in [
                "({a: 1, b: 'two', c: [1, 2.5, null, undefined, () => 1], d: undefined, e: -0, f: NaN, g: 1e300, h: {i: true}})",
                "[1, 2, 3]",
                "({[Symbol('s')]: 1, 2: 'x', 1: 'y', z: 'z'})",
                "'text \\u00e9'",
                "Object.assign(Object.create(null), {a: 1})",
                "[,1]",
                "[4294967296, 2 ** 60, -(2 ** 60), 1e17 + 8, 123456789012345680000, 1e21, 0.1 + 0.2]",
                "({d: new Date(0), n: new Number(3), s: new String('x'), t: {toJSON() { return [1]; }}})",
                "({u: {toJSON() { return undefined; }}, p: new Proxy({a: 1}, {})})",
                "Array.from({length: 100}).reduce(v => [v], 1)",
                "undefined",
            ] {
                let value: Value = ctx.eval(code).unwrap();
                let read = to_json(ctx, &value, plain).unwrap();
                assert_eq!(read, through_text(ctx, value), "{code}");
            }
        });
    }

    #[test]
    fn what_the_text_refuses_is_refused() {
        with_context(|ctx, plain| {
            for code in [
                "(() => { const a = {}; a.a = a; return a; })()",
                "({b: 1n})",
            ] {
                let value: Value = ctx.eval(code).unwrap();
                assert!(to_json(ctx, &value, plain).is_err(), "{code}");
            }
        });
    }

    #[test]
    fn values_built_in_place_are_those_the_text_builds() {
        with_context(|ctx, _| {
            let check: rquickjs::Function = ctx
                .eval("(v, text) => JSON.stringify(v) === JSON.stringify(JSON.parse(text)) && Object.getPrototypeOf(v) === Object.getPrototypeOf(JSON.parse(text))")
                .unwrap();
            for json in [
                json!({"a": [1, -2, 3.5, 1e20, null, true], "b": {"c": "d"}, "e": 4294967296u64}),
                json!({"__proto__": {"x": 1}, "y": 2}),
                json!([{"__proto__": null}]),
                json!("text"),
            ] {
                let built = from_json(ctx, &json).unwrap();
                let same: bool = check.call((built, json.to_string())).unwrap();
                assert!(same, "{json}");
            }
            let proto = from_json(ctx, &json!({"__proto__": {"x": 1}})).unwrap();
            let own: bool = ctx
                .eval::<rquickjs::Function, _>(
                    "v => Object.hasOwn(v, '__proto__') && v.x === undefined",
                )
                .unwrap()
                .call((proto,))
                .unwrap();
            assert!(own);
        });
    }
}
