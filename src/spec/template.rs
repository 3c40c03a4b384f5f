//! The spec template language: JSON-shaped values with named substitutions.
//!
//! * A string that is exactly `${name}` is replaced by the variable's value
//!   (any JSON: a string, an object, a list). Rendering fails if it is absent.
//! * `${name?}` is optional: the key (or list element) holding it vanishes
//!   when the variable is absent, `null` or an empty list.
//! * Any other string containing `${name}` is interpolated: each reference is
//!   replaced by the variable's text (strings as they are, numbers and booleans
//!   written out); rendering fails if it is absent, except for `${name?}`,
//!   which is then the empty text. `$${` writes a literal `${`.
//! * Everything else is a literal.
//!
//! Templates are compiled once, when a spec is loaded; the variable names a
//! template may use are checked then.

use std::borrow::Cow;
use std::marker::PhantomData;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::Problem;
use crate::json::pointer_child;

/// A compiled template.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Template {
    Literal(Value),
    /// `last`: no later reference to the variable follows in rendering order,
    /// so an owned value may be moved here instead of copied.
    Var {
        name: String,
        optional: bool,
        last: bool,
    },
    Text(Vec<Piece>),
    /// `shape` holds the same keys in the same order, each literal's value in
    /// place and `null` for the others. Rendering clones it and fills the
    /// other values in: a map's clone keeps its keys' hashes, where inserting
    /// them one by one hashes each anew.
    Object {
        entries: Vec<(String, Template)>,
        shape: Map<String, Value>,
    },
    Array(Vec<Template>),
}

/// A piece of an interpolated string.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece {
    Lit(String),
    /// `${name}`, or `${name?}` (empty text when absent).
    Var {
        name: String,
        optional: bool,
    },
}

/// A variable's value while rendering.
#[derive(Debug, Clone)]
pub(crate) enum Var<'a> {
    Str(&'a str),
    Json(Cow<'a, Value>),
}

impl Var<'_> {
    /// The same value, borrowed: looking a variable up must not copy its payload.
    fn borrowed(&self) -> Var<'_> {
        match self {
            Var::Str(s) => Var::Str(s),
            Var::Json(v) => Var::Json(Cow::Borrowed(v.as_ref())),
        }
    }

    fn to_value(&self) -> Value {
        match self {
            Var::Str(s) => Value::String((*s).to_owned()),
            Var::Json(v) => v.clone().into_owned(),
        }
    }

    fn push_text(&self, out: &mut String) {
        match self {
            Var::Str(s) => out.push_str(s),
            Var::Json(v) => match v.as_ref() {
                Value::String(s) => out.push_str(s),
                Value::Null => {}
                other => out.push_str(&other.to_string()),
            },
        }
    }

    fn text_len(&self) -> usize {
        match self {
            Var::Str(s) => s.len(),
            Var::Json(v) => v.as_str().map_or(16, str::len),
        }
    }
}

/// Where a template finds its variables.
pub(crate) trait Vars {
    fn get(&self, name: &str) -> Option<Var<'_>>;
}

impl Vars for [(&str, Var<'_>)] {
    fn get(&self, name: &str) -> Option<Var<'_>> {
        self.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.borrowed())
    }
}

/// A template referred to a required variable that has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Missing(pub String);

impl Template {
    /// Compiles `value`; `known` lists the variable names it may use.
    /// Errors name the JSON pointer (relative to `value`) of the bad string.
    pub fn compile(value: &Value, known: &[&str]) -> Result<Template, Problem> {
        let mut template = compile_node(value, known, "")?;
        let mut seen = Vec::new();
        template.mark_last_uses(&mut seen);
        Ok(template)
    }

    /// Compiles `value`, found at the JSON pointer `at` of a spec; errors
    /// name the pointer from the spec's root.
    pub fn compile_at(value: &Value, at: &str, known: &[&str]) -> Result<Template, Problem> {
        Template::compile(value, known)
            .map_err(|p| Problem::at(format!("{at}{}", p.path), p.message))
    }

    /// Whether the template refers to the variable `name` anywhere.
    pub fn uses(&self, name: &str) -> bool {
        match self {
            Template::Var { name: n, .. } => n == name,
            Template::Text(pieces) => pieces
                .iter()
                .any(|p| matches!(p, Piece::Var { name: n, .. } if n == name)),
            Template::Object { entries, .. } => entries.iter().any(|(_, t)| t.uses(name)),
            Template::Array(items) => items.iter().any(|t| t.uses(name)),
            Template::Literal(_) => false,
        }
    }

    /// Marks each whole-value reference that no later reference to the same
    /// variable follows, walking in reverse rendering order.
    fn mark_last_uses(&mut self, seen: &mut Vec<String>) {
        match self {
            Template::Var { name, last, .. } => {
                *last = !seen.contains(name);
                seen.push(name.clone());
            }
            Template::Text(pieces) => {
                for piece in pieces.iter().rev() {
                    if let Piece::Var { name, .. } = piece {
                        seen.push(name.clone());
                    }
                }
            }
            Template::Object { entries, .. } => entries
                .iter_mut()
                .rev()
                .for_each(|(_, t)| t.mark_last_uses(seen)),
            Template::Array(items) => items.iter_mut().rev().for_each(|t| t.mark_last_uses(seen)),
            Template::Literal(_) => {}
        }
    }

    /// Renders with `vars`. An optional variable that is absent leaves nothing;
    /// at the top level that renders as `null`.
    pub fn render(&self, vars: &(impl Vars + ?Sized)) -> Result<Value, Missing> {
        Ok(self.render_opt(vars, &mut [])?.unwrap_or(Value::Null))
    }

    /// Renders with `vars` and the `owned` values, which are moved into the
    /// output at their last reference instead of copied (large payloads).
    pub fn render_moving(
        &self,
        vars: &(impl Vars + ?Sized),
        owned: &mut [(&str, Option<Value>)],
    ) -> Result<Value, Missing> {
        Ok(self.render_opt(vars, owned)?.unwrap_or(Value::Null))
    }

    fn render_opt(
        &self,
        vars: &(impl Vars + ?Sized),
        owned: &mut [(&str, Option<Value>)],
    ) -> Result<Option<Value>, Missing> {
        Ok(Some(match self {
            Template::Literal(v) => v.clone(),
            Template::Var {
                name,
                optional,
                last,
            } => {
                let value = match owned.iter_mut().find(|(n, _)| n == name) {
                    Some((_, slot)) if *last => slot.take(),
                    Some((_, slot)) => slot.clone(),
                    None => vars.get(name).map(|v| v.to_value()),
                };
                match value {
                    Some(v) if !(*optional && is_empty(&v)) => v,
                    _ if *optional => return Ok(None),
                    _ => return Err(Missing(name.clone())),
                }
            }
            Template::Text(pieces) => Value::String(render_text(
                pieces,
                &WithOwned {
                    vars,
                    owned: &*owned,
                },
            )?),
            Template::Object { entries, shape } => {
                let mut map = shape.clone();
                let mut vanished = Vanished::default();
                for (i, (slot, (_, t))) in map.values_mut().zip(entries).enumerate() {
                    if matches!(t, Template::Literal(_)) {
                        continue;
                    }
                    match t.render_opt(vars, owned)? {
                        Some(v) => *slot = v,
                        None => vanished.add(i),
                    }
                }
                if vanished.any() {
                    let mut i = 0;
                    map.retain(|_, _| {
                        i += 1;
                        !vanished.has(i - 1)
                    });
                }
                Value::Object(map)
            }
            Template::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for t in items {
                    out.extend(t.render_opt(vars, owned)?);
                }
                Value::Array(out)
            }
        }))
    }
}

/// The positions of an object's entries that rendered to nothing.
#[derive(Default)]
struct Vanished {
    first: u64,
    rest: Vec<usize>,
}

impl Vanished {
    fn add(&mut self, i: usize) {
        if i < 64 {
            self.first |= 1 << i;
        } else {
            self.rest.push(i);
        }
    }

    fn any(&self) -> bool {
        self.first != 0 || !self.rest.is_empty()
    }

    fn has(&self, i: usize) -> bool {
        if i < 64 {
            self.first & (1 << i) != 0
        } else {
            self.rest.contains(&i)
        }
    }
}

fn is_empty(v: &Value) -> bool {
    v.is_null() || v.as_array().is_some_and(Vec::is_empty)
}

/// `vars` with the not-yet-moved owned values visible for interpolation.
struct WithOwned<'a, V: ?Sized> {
    vars: &'a V,
    owned: &'a [(&'a str, Option<Value>)],
}

impl<V: Vars + ?Sized> Vars for WithOwned<'_, V> {
    fn get(&self, name: &str) -> Option<Var<'_>> {
        match self.owned.iter().find(|(n, _)| *n == name) {
            Some((_, slot)) => slot.as_ref().map(|v| Var::Json(Cow::Borrowed(v))),
            None => self.vars.get(name),
        }
    }
}

fn render_text(pieces: &[Piece], vars: &(impl Vars + ?Sized)) -> Result<String, Missing> {
    let found: Vec<Option<Var<'_>>> = pieces
        .iter()
        .map(|p| match p {
            Piece::Lit(_) => Ok(None),
            Piece::Var { name, optional } => match vars.get(name) {
                Some(v) => Ok(Some(v)),
                None if *optional => Ok(None),
                None => Err(Missing(name.clone())),
            },
        })
        .collect::<Result<_, _>>()?;
    let len = pieces
        .iter()
        .zip(&found)
        .map(|(p, v)| match (p, v) {
            (Piece::Lit(s), _) => s.len(),
            (_, Some(v)) => v.text_len(),
            _ => 0,
        })
        .sum();
    let mut out = String::with_capacity(len);
    for (p, v) in pieces.iter().zip(&found) {
        match (p, v) {
            (Piece::Lit(s), _) => out.push_str(s),
            (_, Some(v)) => v.push_text(&mut out),
            _ => {}
        }
    }
    Ok(out)
}

/// Renders an interpolated string from its source, for text forms written in specs.
pub(crate) fn render_string(
    pieces: &[Piece],
    vars: &(impl Vars + ?Sized),
) -> Result<String, Missing> {
    render_text(pieces, vars)
}

fn compile_node(value: &Value, known: &[&str], at: &str) -> Result<Template, Problem> {
    Ok(match value {
        Value::String(s) => compile_string(s, known).map_err(|e| Problem::at(at, e))?,
        Value::Object(map) => {
            let entries: Vec<(String, Template)> = map
                .iter()
                .map(|(k, v)| {
                    let child = pointer_child(at, k);
                    Ok::<_, Problem>((k.clone(), compile_node(v, known, &child)?))
                })
                .collect::<Result<_, _>>()?;
            let shape = entries
                .iter()
                .map(|(k, t)| match t {
                    Template::Literal(v) => (k.clone(), v.clone()),
                    _ => (k.clone(), Value::Null),
                })
                .collect();
            Template::Object { entries, shape }
        }
        Value::Array(items) => Template::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| compile_node(v, known, &pointer_child(at, &i.to_string())))
                .collect::<Result<_, _>>()?,
        ),
        other => Template::Literal(other.clone()),
    })
}

fn compile_string(s: &str, known: &[&str]) -> Result<Template, String> {
    let pieces = parse_pieces(s, known)?;
    Ok(match pieces.as_slice() {
        [] => Template::Literal(Value::String(String::new())),
        [Piece::Lit(lit)] => Template::Literal(Value::String(lit.clone())),
        [Piece::Var { name, optional }] if s.starts_with("${") && s.ends_with('}') => {
            Template::Var {
                name: name.clone(),
                optional: *optional,
                last: false,
            }
        }
        _ => Template::Text(pieces),
    })
}

/// Splits an interpolated string into literal and variable pieces, checking
/// variable names against `known`.
pub(crate) fn parse_pieces(s: &str, known: &[&str]) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut lit = String::new();
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        lit.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix("$${") {
            lit.push_str("${");
            rest = after;
        } else if let Some(after) = rest.strip_prefix("${") {
            let end = after
                .find('}')
                .ok_or_else(|| format!("unclosed `${{` in {s:?}"))?;
            let name = &after[..end];
            let (bare, optional) = match name.strip_suffix('?') {
                Some(bare) => (bare, true),
                None => (name, false),
            };
            if !known.contains(&bare) {
                return Err(format!(
                    "unknown variable `{bare}`; known here: {}",
                    known.join(", ")
                ));
            }
            if !lit.is_empty() {
                pieces.push(Piece::Lit(std::mem::take(&mut lit)));
            }
            pieces.push(Piece::Var {
                name: bare.to_owned(),
                optional,
            });
            rest = &after[end + 1..];
        } else {
            lit.push('$');
            rest = &rest[1..];
        }
    }
    lit.push_str(rest);
    if !lit.is_empty() {
        pieces.push(Piece::Lit(lit));
    }
    Ok(pieces)
}

/// The variables one kind of template may use: a marker type per kind,
/// declared with [`template_vars!`], which a [`TemplateDoc`] names. The
/// compiler checks a template against [`NAMES`](Self::NAMES), and the spec's
/// JSON Schema (`schemas/provider-spec.schema.json`) is generated from the
/// same list.
pub(crate) trait TemplateVars {
    /// The names a template of this kind may use.
    const NAMES: &'static [&'static str];
    /// Whether the kind also takes variables the spec itself names (`meta`
    /// maps), so that the JSON Schema lets any lower-case name through.
    #[cfg(test)]
    const OPEN: bool = false;
    /// The template's definition in the JSON Schema (`<kind>_template`).
    #[cfg(test)]
    const DEF: &'static str;
    /// What the kind is and what its variables hold: the definition's
    /// description, from the doc comment given to [`template_vars!`].
    #[cfg(test)]
    const ABOUT: &'static str;
}

/// Declares a kind of template: a marker type, its JSON Schema definition's
/// name (`, open` when the spec may name more variables) and its variables.
/// The doc comment is the definition's description, for spec authors.
macro_rules! template_vars {
    (@open) => {
        true
    };
    ($(#[doc = $doc:literal])* $vis:vis $name:ident($def:literal $(, $open:ident)?) = [$($var:literal),* $(,)?];) => {
        $(#[doc = $doc])*
        #[derive(Debug)]
        $vis enum $name {}

        impl $crate::spec::template::TemplateVars for $name {
            const NAMES: &'static [&'static str] = &[$($var),*];
            $(
                #[cfg(test)]
                const OPEN: bool = template_vars!(@$open);
            )?
            #[cfg(test)]
            const DEF: &'static str = $def;
            #[cfg(test)]
            const ABOUT: &'static str = concat!($($doc),*);
        }
    };
}
pub(crate) use template_vars;

/// A template of the kind `K` as a spec writes it; compiled, and its
/// variables checked, when the spec is loaded.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct TemplateDoc<K> {
    value: Value,
    #[serde(skip)]
    kind: PhantomData<K>,
}

impl<K: TemplateVars> TemplateDoc<K> {
    /// Compiles the template, found at the JSON pointer `at` of a spec.
    pub fn compile_at(&self, at: &str) -> Result<Template, Problem> {
        Template::compile_at(&self.value, at, K::NAMES)
    }

    /// Compiles the template with the variables the spec names (`extra`)
    /// besides the kind's own.
    pub fn compile_with(&self, at: &str, extra: &[&str]) -> Result<Template, Problem> {
        let names: Vec<&str> = K::NAMES.iter().chain(extra).copied().collect();
        Template::compile_at(&self.value, at, &names)
    }

    /// Compiles the template with only the kind's variables that `keep` accepts.
    pub fn compile_without(
        &self,
        at: &str,
        keep: impl Fn(&str) -> bool,
    ) -> Result<Template, Problem> {
        let names: Vec<&str> = K::NAMES.iter().copied().filter(|n| keep(n)).collect();
        Template::compile_at(&self.value, at, &names)
    }
}

/// An interpolated string of the kind `K` as a spec writes it (`as_text`):
/// text with `${var}` references, never a whole value.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct TextTemplateDoc<K> {
    text: String,
    #[serde(skip)]
    kind: PhantomData<K>,
}

impl<K: TemplateVars> TextTemplateDoc<K> {
    /// The text's pieces, its variables checked against the kind's.
    pub fn pieces(&self) -> Result<Vec<Piece>, String> {
        parse_pieces(&self.text, K::NAMES)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn render(t: &Value, vars: &[(&str, Var<'_>)]) -> Result<Value, Missing> {
        Template::compile(t, &["a", "b", "list"])
            .unwrap()
            .render(vars)
    }

    #[test]
    fn substitutes_whole_values_and_interpolates_strings() {
        let obj = json!({"x": 1});
        let vars = [("a", Var::Str("A")), ("b", Var::Json(Cow::Borrowed(&obj)))];
        let t = json!({"k": "${a}", "o": "${b}", "s": "data:${a};n=${b}", "lit": [true, "$${a}"]});
        assert_eq!(
            render(&t, &vars).unwrap(),
            json!({"k": "A", "o": {"x": 1}, "s": "data:A;n={\"x\":1}", "lit": [true, "${a}"]})
        );
    }

    #[test]
    fn optional_values_vanish() {
        let empty = json!([]);
        let vars = [("list", Var::Json(Cow::Borrowed(&empty)))];
        let t = json!({"a": "${a?}", "l": "${list?}", "arr": ["${a?}", 1], "keep": "x"});
        assert_eq!(render(&t, &vars).unwrap(), json!({"arr": [1], "keep": "x"}));
    }

    #[test]
    fn objects_keep_their_order_when_entries_vanish() {
        let null = Value::Null;
        let vars = [("b", Var::Json(Cow::Borrowed(&null)))];
        // 70 entries: the first, the 65th and the last vanish; a required
        // `null` stays.
        let mut t = Map::new();
        for i in 0..70 {
            let v = match i {
                0 | 64 | 69 => json!("${a?}"),
                1 => json!("${b}"),
                _ => json!(i),
            };
            t.insert(format!("k{i}"), v);
        }
        let out = render(&Value::Object(t), &vars).unwrap();
        let keys: Vec<&str> = out
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let expected: Vec<String> = (1..69)
            .filter(|i| *i != 64)
            .map(|i| format!("k{i}"))
            .collect();
        assert_eq!(keys, expected);
        assert_eq!(out["k1"], Value::Null);
        assert_eq!(out["k68"], json!(68));
        // The rendered map is a working map: lookups find every key.
        assert!(expected.iter().all(|k| out.get(k).is_some()));
    }

    #[test]
    fn owned_values_move_at_their_last_reference() {
        let t = Template::compile(
            &json!({"first": "${a}", "text": "n=${a}", "last": "${a}", "b": "${b}"}),
            &["a", "b"],
        )
        .unwrap();
        let mut owned = [("a", Some(json!([1, 2]))), ("b", Some(json!("B")))];
        let out = t.render_moving([].as_slice(), &mut owned).unwrap();
        assert_eq!(
            out,
            json!({"first": [1, 2], "text": "n=[1,2]", "last": [1, 2], "b": "B"})
        );
        assert!(
            owned.iter().all(|(_, v)| v.is_none()),
            "moved out: {owned:?}"
        );
    }

    #[test]
    fn optional_references_in_text_are_empty_when_absent() {
        let vars = [("a", Var::Str("A"))];
        let t = json!({"s": "[${a}${b?}]", "t": "${a?} and ${b?}"});
        assert_eq!(
            render(&t, &vars).unwrap(),
            json!({"s": "[A]", "t": "A and "})
        );
    }

    #[test]
    fn required_values_must_be_present() {
        assert_eq!(render(&json!({"a": "${a}"}), &[]), Err(Missing("a".into())));
        assert_eq!(render(&json!("x ${b}"), &[]), Err(Missing("b".into())));
    }

    #[test]
    fn compile_errors_name_the_path() {
        let err = Template::compile(&json!({"o": [{"k": "${nope}"}]}), &["a"]).unwrap_err();
        assert_eq!(err.path, "/o/0/k");
        assert!(
            err.message.contains("unknown variable `nope`"),
            "{}",
            err.message
        );
        let err = Template::compile(&json!("x ${a"), &["a"]).unwrap_err();
        assert!(err.message.contains("unclosed"), "{}", err.message);
    }
}
