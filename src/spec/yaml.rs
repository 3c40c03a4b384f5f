//! YAML reading with line numbers: a document becomes a JSON value plus a map
//! from each node's JSON pointer to the line it starts on, so that schema and
//! semantic errors can name the line.

use std::collections::HashMap;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
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

/// A parsed YAML document: its value and the line of every node.
#[derive(Debug, Clone, Default)]
pub(crate) struct Document {
    pub value: Value,
    lines: HashMap<String, usize>,
}

impl Document {
    /// Parses `text`. Booleans are only `true`/`false`; `no`, `010` and `1_000` stay strings.
    pub fn parse(text: &str) -> Result<Document, ParseError> {
        let options = serde_saphyr::options! {
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
        };
        let root: Spanned<Node> =
            serde_saphyr::from_str_with_options(text, options).map_err(|e| {
                let line = e.location().map(|l| l.line() as usize).filter(|&l| l > 0);
                ParseError {
                    message: e.to_string(),
                    line,
                }
            })?;
        let mut lines = HashMap::new();
        let value = root_into_value(root, &mut lines);
        Ok(Document { value, lines })
    }

    /// The line of the node at `pointer`, or of its nearest ancestor that has one.
    pub fn line(&self, pointer: &str) -> Option<usize> {
        let mut p = pointer;
        loop {
            if let Some(&line) = self.lines.get(p) {
                return Some(line);
            }
            p = &p[..p.rfind('/')?];
        }
    }
}

/// A YAML syntax error, or a document over the parse budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub message: String,
    pub line: Option<usize>,
}

enum Node {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(String, Spanned<Node>)>),
}

fn root_into_value(root: Spanned<Node>, lines: &mut HashMap<String, usize>) -> Value {
    // Iterative over the tree's depth is unnecessary: the parser's budget caps nesting at MAX_DEPTH.
    into_value(root, String::new(), lines)
}

fn into_value(node: Spanned<Node>, pointer: String, lines: &mut HashMap<String, usize>) -> Value {
    let line = node.referenced.line() as usize;
    if line > 0 {
        lines.insert(pointer.clone(), line);
    }
    match node.value {
        Node::Null => Value::Null,
        Node::Bool(b) => Value::Bool(b),
        Node::Number(n) => Value::Number(n),
        Node::String(s) => Value::String(s),
        Node::Seq(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| into_value(item, pointer_child(&pointer, &i.to_string()), lines))
                .collect(),
        ),
        Node::Map(entries) => {
            let mut map = Map::new();
            for (key, item) in entries {
                let child = pointer_child(&pointer, &key);
                map.insert(key, into_value(item, child, lines));
            }
            Value::Object(map)
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Number::from_f64(v)
            .map(Node::Number)
            .ok_or_else(|| E::custom("a number that JSON cannot hold (NaN or infinity)"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::String(v))
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
        match Node::deserialize(deserializer)? {
            Node::String(s) => Ok(Key(s)),
            Node::Number(n) => Ok(Key(n.to_string())),
            Node::Bool(b) => Ok(Key(b.to_string())),
            Node::Null => Ok(Key("null".into())),
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
