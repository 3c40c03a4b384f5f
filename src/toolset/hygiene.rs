//! Schema hygiene (PI-1 at every depth): what a tool's input schema may
//! carry into a prompt.
//!
//! Every `description`, `title` and `$comment` inside the schema is prose
//! the model reads: each is cleaned as a tool's own description is
//! ([`sanitize_description`]), once, when the toolset is built, so that
//! every listing of every provider sends the cleaned text and pays nothing
//! for it. A string the model must send back exactly (a property name, an
//! `enum` or `const` value) cannot be changed without changing what the
//! tool accepts: one that holds an invisible or control character is
//! reported ([`HiddenCharacters`]), and the tool is left out where the
//! application refuses such tools
//! ([`ToolSetBuilder::refuse_hidden_characters`](super::ToolSetBuilder::refuse_hidden_characters)).
//! So is every other string or key of the schema (a `pattern`, a
//! `default`, a keyword of the server's own).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::describe::{
    MAX_DESCRIPTION_BYTES, escape_visible, hidden_character, sanitize_description,
};

/// What a string holding hidden characters is, in a tool's input schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HiddenIn {
    /// A property's name (a key of `properties`, an entry of `required`).
    PropertyName,
    /// A value of an `enum`.
    EnumValue,
    /// The value of a `const`.
    ConstValue,
    /// Any other string or key (a `default`, an example, a `pattern`, a
    /// keyword of the server's own).
    Other,
}

/// A string in a tool's input schema holding a character a person cannot
/// see or a terminal would act on (an invisible or control character),
/// which the library cannot remove without changing what the tool accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HiddenCharacters {
    /// The tool's server.
    pub server_id: String,
    /// The tool's MCP name.
    pub tool: String,
    /// Where, as a JSON pointer into the input schema (its hidden
    /// characters written out as [`escape_visible`] does).
    pub path: String,
    /// What the string is.
    pub kind: HiddenIn,
    /// The string, its hidden characters written out, cut at 200 bytes.
    pub text: String,
}

/// The longest [`HiddenCharacters::text`], in bytes.
const SHOWN: usize = 200;

/// A string found holding hidden characters, before it is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Found {
    pub(super) path: String,
    pub(super) kind: HiddenIn,
    pub(super) text: String,
}

impl Found {
    pub(super) fn named(self, server_id: &str, tool: &str) -> HiddenCharacters {
        HiddenCharacters {
            server_id: server_id.to_owned(),
            tool: tool.to_owned(),
            path: self.path,
            kind: self.kind,
            text: self.text,
        }
    }
}

/// Cleans the prose of `schema` in place and answers the strings it could
/// not clean, in the order met.
pub(super) fn clean(schema: &mut Value) -> Vec<Found> {
    let mut walk = Walk {
        path: String::new(),
        found: Vec::new(),
    };
    walk.schema(schema);
    walk.found
}

struct Walk {
    path: String,
    found: Vec<Found>,
}

impl Walk {
    /// Notes `text` at the current path (with `key` after it) when it holds
    /// a hidden character.
    fn check(&mut self, text: &str, key: Option<&str>, kind: HiddenIn) {
        if hidden_character(text).is_none() {
            return;
        }
        let mut path = self.path.clone();
        if let Some(key) = key {
            push_segment(&mut path, key);
        }
        let shown = escape_visible(text);
        let mut end = shown.len().min(SHOWN);
        while !shown.is_char_boundary(end) {
            end -= 1;
        }
        self.found.push(Found {
            path,
            kind,
            text: shown[..end].to_owned(),
        });
    }

    /// Runs `f` with `key` pushed onto the path.
    fn at<R>(&mut self, key: &str, f: impl FnOnce(&mut Self) -> R) -> R {
        let len = self.path.len();
        push_segment(&mut self.path, key);
        let out = f(self);
        self.path.truncate(len);
        out
    }

    /// A value in a schema's place: an object's keywords, or an array of
    /// schemas (`allOf`, `prefixItems`, an `items` tuple).
    fn schema(&mut self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    self.keyword(key, value);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    self.at(&i.to_string(), |w| w.schema(item));
                }
            }
            _ => {}
        }
    }

    fn keyword(&mut self, key: &str, value: &mut Value) {
        self.check(key, Some(key), HiddenIn::Other);
        match (key, value) {
            ("description" | "title" | "$comment", Value::String(text)) => {
                if let Cow::Owned(clean) = sanitize_description(text) {
                    *text = clean;
                }
            }
            ("enum", value) => self.at(key, |w| w.data(value, HiddenIn::EnumValue)),
            ("const", value) => self.at(key, |w| w.data(value, HiddenIn::ConstValue)),
            ("default" | "examples" | "example", value) => {
                self.at(key, |w| w.data(value, HiddenIn::Other));
            }
            ("required", Value::Array(names)) => self.at(key, |w| {
                for (i, name) in names.iter().enumerate() {
                    if let Value::String(name) = name {
                        w.check(name, Some(&i.to_string()), HiddenIn::PropertyName);
                    }
                }
            }),
            ("properties", Value::Object(properties)) => self.at(key, |w| {
                for (name, schema) in properties.iter_mut() {
                    // The key itself is checked as a name, not as a keyword.
                    w.check(name, Some(name), HiddenIn::PropertyName);
                    w.at(name, |w| w.named_schema(schema));
                }
            }),
            (
                "patternProperties" | "$defs" | "definitions" | "dependentSchemas",
                Value::Object(schemas),
            ) => self.at(key, |w| {
                for (name, schema) in schemas.iter_mut() {
                    w.check(name, Some(name), HiddenIn::Other);
                    w.at(name, |w| w.named_schema(schema));
                }
            }),
            (_, Value::String(text)) => self.check(text, Some(key), HiddenIn::Other),
            (_, value) => self.at(key, |w| w.schema(value)),
        }
    }

    /// A schema under a name (a property's): its keywords, not its name.
    fn named_schema(&mut self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    self.keyword(key, value);
                }
            }
            Value::String(text) => self.check(text, None, HiddenIn::Other),
            other => self.schema(other),
        }
    }

    /// A value the model may send (an `enum`'s, a `const`, a `default`):
    /// every string and key in it, as `kind`.
    fn data(&mut self, value: &Value, kind: HiddenIn) {
        match value {
            Value::String(text) => self.check(text, None, kind),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.at(&i.to_string(), |w| w.data(item, kind));
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    self.check(key, Some(key), kind);
                    self.at(key, |w| w.data(item, kind));
                }
            }
            _ => {}
        }
    }
}

/// Adds `key` to a JSON pointer, escaped as RFC 6901 says and with its
/// hidden characters written out.
fn push_segment(path: &mut String, key: &str) {
    path.push('/');
    let shown = escape_visible(key);
    for c in shown.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// Whether [`clean`] would change and find nothing in `schema`: no key or
/// string in it holds a hidden character or passes the description cap.
/// Such a schema is left as it is, shared, never copied to be cleaned.
pub(super) fn untouched(schema: &Value) -> bool {
    match schema {
        Value::String(text) => {
            text.len() <= MAX_DESCRIPTION_BYTES && hidden_character(text).is_none()
        }
        Value::Array(items) => items.iter().all(untouched),
        Value::Object(map) => map
            .iter()
            .all(|(key, value)| hidden_character(key).is_none() && untouched(value)),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prose_is_cleaned_at_every_depth_and_names_and_values_reported() {
        let hidden = "hidden\u{202e}\u{200b}\u{E0041} instructions \u{1b}[31m";
        let mut schema = json!({
            "type": "object",
            "description": "top",
            "properties": {
                "path": {"type": "string", "description": hidden, "title": hidden},
                "mode": {"enum": ["a", "b\u{200b}"], "$comment": hidden},
                "na\u{202e}me": {"const": "x\u{7}"},
                "nested": {"type": "array", "items": {"anyOf": [{"description": hidden}]}},
                "description": {"type": "string", "description": hidden},
            },
            "required": ["na\u{202e}me"],
            "$defs": {"d": {"properties": {"e": {"title": hidden}}}},
        });
        let found = clean(&mut schema);
        // Only the reported names and values keep their hidden characters.
        let mut rest = schema.clone();
        rest["properties"]["mode"]["enum"] = json!([]);
        let name = rest["properties"]
            .as_object_mut()
            .unwrap()
            .remove("na\u{202e}me");
        assert!(name.is_some());
        rest["required"] = json!([]);
        let hidden_chars = ['\u{202e}', '\u{200b}', '\u{E0041}', '\u{1b}'];
        assert!(!rest.to_string().contains(&hidden_chars[..]), "{rest}");
        assert_eq!(
            schema["properties"]["path"]["description"],
            "hidden instructions [31m"
        );
        assert_eq!(
            schema["properties"]["nested"]["items"]["anyOf"][0]["description"],
            "hidden instructions [31m"
        );
        assert_eq!(
            schema["properties"]["description"]["description"],
            "hidden instructions [31m"
        );
        assert_eq!(
            schema["$defs"]["d"]["properties"]["e"]["title"],
            "hidden instructions [31m"
        );
        let seen: Vec<(&str, HiddenIn)> = found.iter().map(|f| (f.path.as_str(), f.kind)).collect();
        assert_eq!(
            seen,
            vec![
                ("/properties/mode/enum/1", HiddenIn::EnumValue),
                ("/properties/na\\u{202e}me", HiddenIn::PropertyName),
                ("/properties/na\\u{202e}me/const", HiddenIn::ConstValue),
                ("/required/0", HiddenIn::PropertyName),
            ]
        );
        assert_eq!(found[2].text, "x\\x07");
    }

    #[test]
    fn a_clean_schema_is_left_as_it_is() {
        let schema = json!({"type": "object", "properties": {"a/b~": {"type": "string",
            "description": "line\nnext\ttab", "pattern": "^[a-z]+$"}}});
        let mut cleaned = schema.clone();
        assert!(clean(&mut cleaned).is_empty());
        assert_eq!(cleaned, schema);
        let mut tricky = json!({"properties": {"a/b~": {"default": "x\u{200b}"}}});
        let found = clean(&mut tricky);
        assert_eq!(found[0].path, "/properties/a~1b~0/default");
        assert_eq!(found[0].kind, HiddenIn::Other);
    }
    #[test]
    fn an_untouched_schema_is_one_clean_leaves_as_it_is() {
        let long = "x".repeat(MAX_DESCRIPTION_BYTES + 1);
        let schemas = [
            json!({"type": "object", "properties": {"a": {"type": "string", "description": "plain\nlines"}}}),
            json!({"type": "object", "properties": {"a": {"description": "hid\u{200b}den"}}}),
            json!({"type": "object", "properties": {"a\u{202e}b": {"type": "string"}}}),
            json!({"enum": ["ok", "b\u{1b}ad"]}),
            json!({"description": long}),
            json!({"allOf": [{"title": "fine"}, {"$comment": "also fine"}]}),
        ];
        for schema in schemas {
            let mut cleaned = schema.clone();
            let found = clean(&mut cleaned);
            let as_is = found.is_empty() && cleaned == schema;
            if untouched(&schema) {
                assert!(
                    as_is,
                    "untouched, but cleaning changed or found something: {schema}"
                );
            }
            if !as_is {
                assert!(
                    !untouched(&schema),
                    "cleaning changed {schema}, which was judged untouched"
                );
            }
        }
        assert!(untouched(
            &json!({"type": "object", "properties": {"a": {"type": "string"}}})
        ));
    }
}
