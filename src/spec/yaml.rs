//! YAML reading with line numbers: a document becomes a JSON value, and
//! the line each node starts on is found when an error asks for it, so that
//! schema and semantic errors can name the line.
//!
//! A document is parsed once into its value alone; the lines are read by a
//! second parse, keeping every node's position, only for a document an
//! error is reported in (a spec that loads keeps no positions).

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use serde_saphyr::Spanned;

use crate::json::pointer_child;

/// Deepest nesting of mappings and sequences (block or flow) in a spec or
/// rules file. The bundled specs nest 8 levels; the parser and the
/// conversion below recurse once per level, so the cap keeps them far from
/// the stack's end even on a 2 MiB thread in a debug build.
pub(crate) const MAX_DEPTH: usize = 32;

/// Most nodes in one file, aliases expanded (a "billion laughs" document
/// fails here, after a bounded amount of work). The bundled specs have a few
/// hundred.
pub(crate) const MAX_NODES: usize = 50_000;

/// Most alias (`*name`) uses in one file.
pub(crate) const MAX_ALIASES: usize = 1_000;

/// A parsed YAML document: its value, and the text it was read from, for the
/// lines of its nodes.
#[derive(Debug)]
pub(crate) struct Document<'t> {
    pub value: Value,
    text: &'t str,
    /// Each node's JSON pointer and line, read on the first [`Document::line`].
    lines: OnceLock<HashMap<String, usize>>,
}

/// The parser's options: booleans are only `true`/`false`; `no`, `010` and
/// `1_000` stay strings; and the shared budget.
fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
        budget: serde_saphyr::budget! {
            max_depth: MAX_DEPTH,
            flow_nesting_limit: MAX_DEPTH,
            max_nodes: MAX_NODES,
            max_aliases: MAX_ALIASES,
            max_total_scalar_bytes: super::load::MAX_SPEC_BYTES,
        },
    }
}

impl<'t> Document<'t> {
    /// Parses `text`. Booleans are only `true`/`false`; `no`, `010` and `1_000` stay strings.
    pub fn parse(text: &'t str) -> Result<Document<'t>, ParseError> {
        let YamlValue(value) =
            serde_saphyr::from_str_with_options(text, options()).map_err(ParseError::from)?;
        Ok(Document {
            value,
            text,
            lines: OnceLock::new(),
        })
    }

    /// The line of the node at `pointer`, or of its nearest ancestor that has one.
    pub fn line(&self, pointer: &str) -> Option<usize> {
        let lines = self.lines.get_or_init(|| lines_of(self.text));
        let mut p = pointer;
        loop {
            if let Some(&line) = lines.get(p) {
                return Some(line);
            }
            p = &p[..p.rfind('/')?];
        }
    }
}

/// Every node's line, by JSON pointer: `text` parsed again with positions
/// kept. The text parsed once already, so this parse does too; were it not
/// to, no line is known.
fn lines_of(text: &str) -> HashMap<String, usize> {
    let mut lines = HashMap::new();
    if let Ok(root) = serde_saphyr::from_str_with_options::<Spanned<Node>>(text, options()) {
        collect_lines(root, String::new(), &mut lines);
    }
    lines
}

/// A YAML syntax error, or a document over the parse budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub message: String,
    pub line: Option<usize>,
}

impl From<serde_saphyr::Error> for ParseError {
    fn from(e: serde_saphyr::Error) -> Self {
        let line = e.location().map(|l| l.line() as usize).filter(|&l| l > 0);
        ParseError {
            message: e.to_string(),
            line,
        }
    }
}

/// A node's shape, as far as lines need it: scalars are not kept.
enum Node {
    Scalar,
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(String, Spanned<Node>)>),
}

/// Records the line of `node` and of every node inside it.
fn collect_lines(node: Spanned<Node>, pointer: String, lines: &mut HashMap<String, usize>) {
    // The parser's budget caps nesting at MAX_DEPTH, so recursion is bounded.
    let line = node.referenced.line() as usize;
    if line > 0 {
        lines.insert(pointer.clone(), line);
    }
    match node.value {
        Node::Seq(items) => {
            for (i, item) in items.into_iter().enumerate() {
                collect_lines(item, pointer_child(&pointer, &i.to_string()), lines);
            }
        }
        Node::Map(entries) => {
            for (key, item) in entries {
                let child = pointer_child(&pointer, &key);
                collect_lines(item, child, lines);
            }
        }
        Node::Scalar => {}
    }
}

/// A YAML document read straight into a JSON value.
struct YamlValue(Value);

impl<'de> Deserialize<'de> for YamlValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor).map(YamlValue)
    }
}

impl<'de> DeserializeSeed<'de> for ValueVisitor {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// Reads any YAML value into a JSON value; mapping keys as [`Key`] reads them.
#[derive(Clone, Copy)]
struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number that JSON cannot hold (NaN or infinity)"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Map::new();
        while let Some(Key(key)) = map.next_key::<Key>()? {
            let value = map.next_value_seed(self)?;
            entries.insert(key, value);
        }
        Ok(Value::Object(entries))
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

/// Reads a node's shape and the positions inside it.
struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_str<E>(self, _: &str) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Node>>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Key>()? {
            entries.push((key.0, map.next_value::<Spanned<Node>>()?));
        }
        Ok(Node::Map(entries))
    }
}

/// A mapping key: strings, and scalars written where a string was meant (`200: ok`).
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match deserializer.deserialize_any(ValueVisitor)? {
            Value::String(s) => Ok(Key(s)),
            Value::Number(n) => Ok(Key(n.to_string())),
            Value::Bool(b) => Ok(Key(b.to_string())),
            Value::Null => Ok(Key("null".into())),
            _ => Err(de::Error::custom("a mapping key must be a scalar")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_lines() {
        let doc = Document::parse("a: 1\nb:\n  c: no\n  d: [x, 010]\ne: true\n").unwrap();
        assert_eq!(
            doc.value,
            serde_json::json!({"a": 1, "b": {"c": "no", "d": ["x", "010"]}, "e": true})
        );
        assert_eq!(doc.line("/a"), Some(1));
        assert_eq!(doc.line("/b/c"), Some(3));
        assert_eq!(doc.line("/b/d/1"), Some(4));
        assert_eq!(doc.line("/b/d/1/zzz"), Some(4));
        assert_eq!(doc.line("/e"), Some(5));
    }

    #[test]
    fn syntax_errors_carry_a_line() {
        let err = Document::parse("a: 1\nb: [\n").unwrap_err();
        assert!(!err.message.is_empty());
        assert!(err.line.is_some(), "{}", err.message);
        let err = Document::parse("a: 1\na: 2\n").unwrap_err();
        assert!(err.message.contains("uplicate"), "{}", err.message);
    }
}
