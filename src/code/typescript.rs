//! TypeScript declarations of the tools a program may call, generated from
//! their MCP definitions: input schemas as parameter types, output schemas
//! as return types where declared, descriptions as doc comments.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::mcp::Tool;

/// How deep a schema is followed before its type is left `unknown`.
const MAX_DEPTH: usize = 8;

/// `declare const tools: { ... };` for `tools`, each under its name.
pub(crate) fn declarations<'a>(tools: impl IntoIterator<Item = (&'a str, &'a Tool)>) -> String {
    let mut out = String::from("declare const tools: {\n");
    for (name, tool) in tools {
        if let Some(description) = tool.description.as_deref().filter(|d| !d.trim().is_empty()) {
            doc_comment(&mut out, description, 1);
        }
        let input = type_of(&tool.input_schema, 1, 0);
        let output = tool
            .output_schema
            .as_ref()
            .map_or_else(|| "unknown".to_owned(), |schema| type_of(schema, 1, 0));
        let _ = writeln!(
            out,
            "  {}(args: {input}): Promise<{output}>;",
            property_name(name)
        );
    }
    out.push_str("};\n");
    out
}

/// Whether `name` can follow a dot (`tools.name`): an ASCII identifier that
/// is no reserved word the declaration would trip on.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_' || first == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// A property's name as TypeScript writes it: as it is, or quoted.
fn property_name(name: &str) -> String {
    if is_identifier(name) {
        name.to_owned()
    } else {
        Value::String(name.to_owned()).to_string()
    }
}

/// `text` as a doc comment at `indent`, with nothing in it that ends the
/// comment early.
fn doc_comment(out: &mut String, text: &str, indent: usize) {
    let pad = "  ".repeat(indent);
    let text = text.replace("*/", "*\u{200b}/");
    let lines: Vec<&str> = text.trim().lines().collect();
    if lines.len() == 1 {
        let _ = writeln!(out, "{pad}/** {} */", lines[0].trim_end());
        return;
    }
    let _ = writeln!(out, "{pad}/**");
    for line in lines {
        let _ = writeln!(out, "{pad} * {}", line.trim_end());
    }
    let _ = writeln!(out, "{pad} */");
}

/// The TypeScript type of `schema`, written at `indent`.
fn type_of(schema: &Value, indent: usize, depth: usize) -> String {
    if depth > MAX_DEPTH {
        return "unknown".to_owned();
    }
    let Some(schema) = schema.as_object() else {
        // `true` (anything) or `false` (nothing).
        return match schema {
            Value::Bool(false) => "never".to_owned(),
            _ => "unknown".to_owned(),
        };
    };
    if let Some(value) = schema.get("const") {
        return literal(value);
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        return union(values.iter().map(literal).collect());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = schema.get(key) {
            return union(
                options
                    .iter()
                    .map(|s| type_of(s, indent, depth + 1))
                    .collect(),
            );
        }
    }
    if let Some(Value::Array(all)) = schema.get("allOf") {
        let parts: Vec<String> = all.iter().map(|s| type_of(s, indent, depth + 1)).collect();
        return match parts.len() {
            0 => "unknown".to_owned(),
            _ => parts
                .iter()
                .map(|p| format!("({p})"))
                .collect::<Vec<_>>()
                .join(" & "),
        };
    }
    match schema.get("type") {
        Some(Value::String(kind)) => of_kind(kind, schema, indent, depth),
        Some(Value::Array(kinds)) => union(
            kinds
                .iter()
                .filter_map(Value::as_str)
                .map(|kind| of_kind(kind, schema, indent, depth))
                .collect(),
        ),
        _ if schema.contains_key("properties") => object(schema, indent, depth),
        _ => "unknown".to_owned(),
    }
}

fn of_kind(kind: &str, schema: &Map<String, Value>, indent: usize, depth: usize) -> String {
    match kind {
        "string" => "string".to_owned(),
        "number" | "integer" => "number".to_owned(),
        "boolean" => "boolean".to_owned(),
        "null" => "null".to_owned(),
        "array" => match schema.get("items") {
            Some(items) => {
                let item = type_of(items, indent, depth + 1);
                if item.contains(' ') || item.contains('\n') {
                    format!("Array<{item}>")
                } else {
                    format!("{item}[]")
                }
            }
            None => "unknown[]".to_owned(),
        },
        "object" => object(schema, indent, depth),
        _ => "unknown".to_owned(),
    }
}

/// An object type: its properties (optional unless required), each with
/// its description, and the type of the others.
fn object(schema: &Map<String, Value>, indent: usize, depth: usize) -> String {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let others = match schema.get("additionalProperties") {
        Some(Value::Bool(false)) => None,
        Some(Value::Object(other)) => Some(type_of(
            &Value::Object(other.clone()),
            indent + 1,
            depth + 1,
        )),
        _ if properties.is_none_or(Map::is_empty) => Some("unknown".to_owned()),
        _ => None,
    };
    let Some(properties) = properties.filter(|p| !p.is_empty()) else {
        return match others {
            Some(other) => format!("{{ [key: string]: {other} }}"),
            None => "{}".to_owned(),
        };
    };
    let pad = "  ".repeat(indent + 1);
    let mut out = String::from("{\n");
    for (name, property) in properties {
        if let Some(description) = property
            .get("description")
            .and_then(Value::as_str)
            .filter(|d| !d.trim().is_empty())
        {
            doc_comment(&mut out, description, indent + 1);
        }
        let optional = if required.contains(&name.as_str()) {
            ""
        } else {
            "?"
        };
        let _ = writeln!(
            out,
            "{pad}{}{optional}: {};",
            property_name(name),
            type_of(property, indent + 1, depth + 1)
        );
    }
    if let Some(other) = others {
        let _ = writeln!(out, "{pad}[key: string]: {other};");
    }
    let _ = write!(out, "{}}}", "  ".repeat(indent));
    out
}

fn literal(value: &Value) -> String {
    match value {
        Value::Object(_) | Value::Array(_) => "unknown".to_owned(),
        other => other.to_string(),
    }
}

fn union(mut parts: Vec<String>) -> String {
    parts.dedup();
    match parts.len() {
        0 => "never".to_owned(),
        1 => parts.remove(0),
        _ => parts.join(" | "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, input: Value, output: Option<Value>) -> Tool {
        let mut tool = Tool::new(name, "Reads a file.\nWhole.", input);
        tool.output_schema = output;
        tool
    }

    #[test]
    fn input_and_output_schemas_become_types() {
        let read = tool(
            "read_file",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "Where."},
                "tail": {"type": "integer"},
                "mode": {"enum": ["text", "base64"]}
            }, "required": ["path"]}),
            Some(
                json!({"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]}),
            ),
        );
        let weird = tool("fs.list-dir", json!({"type": "object"}), None);
        let text = declarations([("read_file", &read), ("fs.list-dir", &weird)]);
        assert_eq!(
            text,
            "declare const tools: {\n  /**\n   * Reads a file.\n   * Whole.\n   */\n  read_file(args: {\n    /** Where. */\n    path: string;\n    tail?: number;\n    mode?: \"text\" | \"base64\";\n  }): Promise<{\n    content: string;\n  }>;\n  /**\n   * Reads a file.\n   * Whole.\n   */\n  \"fs.list-dir\"(args: { [key: string]: unknown }): Promise<unknown>;\n};\n"
        );
    }

    #[test]
    fn a_description_cannot_close_its_comment() {
        let sly = Tool::new("x", "ends */ here", json!({"type": "object"}));
        let text = declarations([("x", &sly)]);
        assert!(!text.contains("ends */"), "{text}");
    }
}
