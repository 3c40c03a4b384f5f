//! Bound arguments: arguments of a tool the application fills and the model
//! never writes.
//!
//! A [`Binding`] names tools (a `server/tool` glob; a bare glob names a tool
//! on any server), a place in their arguments (a JSON pointer, each step a
//! property name) and where the value comes from ([`BoundValue`]). The
//! toolset removes the bound property from the schema the model is shown
//! (its `properties`, its parent's `required`, and with them every listing
//! made from it); the pipeline refuses a call in which the property is
//! written, and writes the application's value before the call is checked
//! and sent.

use std::collections::BTreeMap;
use std::sync::Arc;

use globset::GlobMatcher;
use serde::Serialize;
use serde_json::{Map, Value};

use super::{ExposedTool, compile_tool_glob};
use crate::error::{Error, Result};
use crate::json::push_pointer_segment;
use crate::mcp::Tool;

/// Where a bound argument's value comes from.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub enum BoundValue {
    /// This value, the same for every call.
    Value(Value),
    /// The value of this environment variable (a string), read when the
    /// source is built; an unset variable is an error then.
    Env(String),
    /// The value each turn supplies under this name
    /// ([`ExecOptions::bound_value`](crate::ExecOptions::bound_value)):
    /// one per principal (a user's id, a tenant). A call of a turn that
    /// supplies none is refused, and never sent.
    Supplied(String),
}

impl std::fmt::Debug for BoundValue {
    /// Names the variable or the supplied value's name; a literal value is
    /// hidden (it may be what operators should not see).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoundValue::Value(_) => f.write_str("Value([hidden])"),
            BoundValue::Env(name) => f.debug_tuple("Env").field(name).finish(),
            BoundValue::Supplied(name) => f.debug_tuple("Supplied").field(name).finish(),
        }
    }
}

/// A tool's argument bound to a value of the application's: the model is
/// not shown it ([`ToolSetBuilder::bind`](super::ToolSetBuilder::bind)), a
/// call that writes it is refused, and the value is written before the call
/// is checked and sent ([`SourceBuilder::bind`](crate::exec::SourceBuilder::bind)).
///
/// ```
/// use mcp_adapters::toolset::{Binding, BoundValue};
///
/// // Written as on the command line: `server/tool:/pointer=VALUE`.
/// let tenant = Binding::parse("crm/*:/tenant=env:CRM_TENANT")?;
/// assert_eq!(tenant.value(), &BoundValue::Env("CRM_TENANT".into()));
/// // Or built.
/// let user = Binding::new("crm/*", "/owner/id", BoundValue::Supplied("user".into()))?;
/// assert_eq!(user.to_string(), "crm/*:/owner/id");
/// # Ok::<(), mcp_adapters::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    tool: String,
    pointer: String,
    path: Vec<String>,
    value: BoundValue,
}

impl std::fmt::Display for Binding {
    /// `server/tool:/pointer`, without the value.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.tool, self.pointer)
    }
}

impl Binding {
    /// The refusal of a call that writes this argument itself.
    pub(crate) fn written_by_the_call(&self) -> Error {
        Error::new(
            crate::ErrorKind::InvalidArguments,
            format!(
                "the argument `{}` is the application's to write (bind `{self}`), and the call \
                 wrote it: the call is refused and not sent; call the tool without it",
                self.pointer
            ),
        )
    }

    /// Binds the argument at `pointer` (a JSON pointer into the arguments,
    /// `/tenant` or `/owner/id`: each step names a property) of the tools
    /// `tool` names (a `server/tool` glob; `*` matches any run of
    /// characters, and a glob without `/` names a tool on any server) to
    /// `value`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) naming the rule when
    /// the glob is invalid, the pointer is malformed (empty, not starting
    /// with `/`, a `~` not followed by `0` or `1`, an empty step) or an
    /// environment variable's name is empty.
    pub fn new(
        tool: impl Into<String>,
        pointer: impl Into<String>,
        value: BoundValue,
    ) -> Result<Self> {
        let (tool, pointer) = (tool.into(), pointer.into());
        let named = |why: String| Error::input(format!("bind `{tool}:{pointer}`: {why}"));
        compile_tool_glob(&tool).map_err(|e| named(e.message().to_owned()))?;
        let path = parse_pointer(&pointer).map_err(named)?;
        match &value {
            BoundValue::Env(name) | BoundValue::Supplied(name) if name.is_empty() => {
                return Err(named("the name of the value is empty".to_owned()));
            }
            _ => {}
        }
        Ok(Binding {
            tool,
            pointer,
            path,
            value,
        })
    }

    /// Reads a binding as the command line and policy files write it:
    /// `server/tool:/pointer=VALUE`. The glob ends at the first `:/`, the
    /// pointer at the first `=` (so a bound property's name has no `=`).
    /// `VALUE` is `env:NAME` (the environment variable `NAME`),
    /// `json:JSON` (a JSON value: `json:42`, `json:{"id": 7}`), `text:TEXT`
    /// (the string `TEXT`, whatever it starts with), or any other text, the
    /// string it is.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) naming the rule when
    /// it has no `:/` or no `=`, `json:` is not followed by JSON, or as
    /// [`new`](Self::new).
    pub fn parse(rule: &str) -> Result<Self> {
        let bad = |why: &str| {
            Error::input(format!(
                "bind `{rule}`: {why} (expected SERVER/TOOL:/POINTER=VALUE, VALUE being text, env:NAME or json:JSON)"
            ))
        };
        let colon = rule
            .find(":/")
            .ok_or_else(|| bad("no `:/` between the tool and the pointer"))?;
        let (tool, rest) = (&rule[..colon], &rule[colon + 1..]);
        let (pointer, value) = rest
            .split_once('=')
            .ok_or_else(|| bad("no `=` before the value"))?;
        if tool.is_empty() {
            return Err(bad("the tool glob is empty"));
        }
        let value = if let Some(name) = value.strip_prefix("env:") {
            BoundValue::Env(name.to_owned())
        } else if let Some(json) = value.strip_prefix("json:") {
            BoundValue::Value(
                serde_json::from_str(json)
                    .map_err(|e| bad(&format!("`json:` is not followed by JSON ({e})")))?,
            )
        } else {
            let text = value.strip_prefix("text:").unwrap_or(value);
            BoundValue::Value(Value::String(text.to_owned()))
        };
        Binding::new(tool, pointer, value)
    }

    /// The `server/tool` glob, as written.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The JSON pointer into the arguments, as written.
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// Where the value comes from.
    pub fn value(&self) -> &BoundValue {
        &self.value
    }
}

impl super::ToolSetBuilder {
    /// Removes the argument `binding` binds from the input schema of each
    /// tool it names, as the model is shown it (its `properties`, its
    /// parent's `required`; an object left with no property goes too), in
    /// every listing made from the toolset. A glob that names no listed
    /// tool is reported in [`ToolSetReport::unmatched_rules`](super::ToolSetReport::unmatched_rules) (as `bind`),
    /// and a pointer a tool's schema does not declare in
    /// [`ToolSetReport::bound_undeclared`](super::ToolSetReport::bound_undeclared). Writing the value is the
    /// pipeline's ([`SourceBuilder::bind`](crate::exec::SourceBuilder::bind)).
    pub fn bind(mut self, binding: Binding) -> Self {
        self.checked
            .push(("bind".to_owned(), binding.tool().to_owned()));
        self.bindings.push(binding);
        self
    }
}

impl super::ToolSet {
    /// Refuses `arguments` of a call to `tool` when they write an argument
    /// the application binds.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidArguments`](crate::ErrorKind::InvalidArguments)
    /// naming the argument and its rule (never a value).
    pub(crate) fn refuse_bound(
        &self,
        tool: &ExposedTool,
        arguments: &Map<String, Value>,
    ) -> Result<()> {
        match self
            .inner
            .bindings
            .written(&tool.server_id, &tool.tool.name, arguments)
        {
            None => Ok(()),
            Some(binding) => Err(binding.written_by_the_call()),
        }
    }

    /// `tool` (one of [`tools`](Self::tools)) with the input schema its
    /// server listed: the bound properties the model is not shown
    /// ([`ToolSetBuilder::bind`](super::ToolSetBuilder::bind)) are in it.
    pub(crate) fn with_bound<'a>(&'a self, tool: &'a ExposedTool) -> &'a Tool {
        self.index_of(tool)
            .and_then(|i| self.inner.unbound.get(&i))
            .map_or(&*tool.tool, |t| &**t)
    }
}

impl super::Inner {
    /// Removes the arguments `bindings` bind from the schema of the tool at
    /// `at` (when one was offered there), keeping the schema as it was for
    /// the checks of its calls; a pointer its schema does not declare is
    /// reported.
    pub(super) fn unbind(&mut self, at: usize, bindings: &Bindings) {
        let Some(exposed) = self.tools.get_mut(at) else {
            return;
        };
        if !bindings.binds(&exposed.server_id, &exposed.tool.name) {
            return;
        }
        let before = Arc::clone(&exposed.tool);
        let undeclared = bindings.strip(&exposed.server_id, &mut exposed.tool);
        for rule in undeclared {
            tracing::warn!(rule = %rule.rule, server = %rule.server_id, tool = %rule.tool,
                "a bind rule names a property the tool's input schema does not declare");
            self.report.bound_undeclared.push(rule);
        }
        self.unbound.insert(at, before);
    }
}

/// The steps of a JSON pointer (RFC 6901), each a property name.
fn parse_pointer(pointer: &str) -> std::result::Result<Vec<String>, String> {
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(match pointer.is_empty() {
            true => "the pointer is empty: name a property, as `/tenant`".to_owned(),
            false => format!("the pointer `{pointer}` does not start with `/`"),
        });
    };
    rest.split('/')
        .map(|step| {
            if step.is_empty() {
                return Err(format!("the pointer `{pointer}` has an empty step"));
            }
            let mut out = String::with_capacity(step.len());
            let mut chars = step.chars();
            while let Some(c) = chars.next() {
                match (c, c == '~') {
                    (_, false) => out.push(c),
                    (_, true) => match chars.next() {
                        Some('0') => out.push('~'),
                        Some('1') => out.push('/'),
                        _ => {
                            return Err(format!(
                                "the pointer `{pointer}` has a `~` not followed by `0` or `1`"
                            ));
                        }
                    },
                }
            }
            Ok(out)
        })
        .collect()
}

/// A binding whose pointer names a property the schema of a tool it binds
/// does not declare: most likely written on another name, so the property
/// the application meant may still be the model's to write. The value is
/// written all the same.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct BoundUndeclared {
    /// The binding, as `server/tool:/pointer` (without its value).
    pub rule: String,
    /// The tool's server.
    pub server_id: String,
    /// The tool's MCP name.
    pub tool: String,
}

impl std::fmt::Display for BoundUndeclared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the bind rule `{}` names a property the input schema of `{}/{}` does not declare",
            self.rule, self.server_id, self.tool
        )
    }
}

/// A binding with its glob compiled and its value as far as it is known
/// before a turn: an environment variable is read when it is compiled.
#[derive(Debug)]
struct Compiled {
    binding: Binding,
    glob: GlobMatcher,
    value: Resolved,
}

/// A binding's value once the environment is read.
enum Resolved {
    Fixed(Value),
    Supplied(String),
    /// Not read (a toolset's bindings only strip schemas).
    Unread,
}

impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Resolved::Fixed(_) => f.write_str("Fixed([hidden])"),
            Resolved::Supplied(name) => f.debug_tuple("Supplied").field(name).finish(),
            Resolved::Unread => f.write_str("Unread"),
        }
    }
}

/// A set of bindings, compiled; shared by a source's toolsets and its calls.
#[derive(Debug, Default)]
pub(crate) struct Bindings {
    rules: Vec<Compiled>,
}

/// The bound values of one call, in the order of the rules that bind them.
pub(crate) type Bound<'b> = Vec<(&'b Binding, &'b Value)>;

impl Bindings {
    /// `bindings` compiled; with `read_env`, their environment variables
    /// are read now.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) naming the rule when
    /// an environment variable is unset or not Unicode.
    pub(crate) fn compile(bindings: &[Binding], read_env: bool) -> Result<Arc<Self>> {
        let rules = bindings
            .iter()
            .map(|binding| {
                let value = match (&binding.value, read_env) {
                    (BoundValue::Value(v), _) => Resolved::Fixed(v.clone()),
                    (BoundValue::Supplied(name), _) => Resolved::Supplied(name.clone()),
                    (BoundValue::Env(_), false) => Resolved::Unread,
                    (BoundValue::Env(name), true) => match std::env::var(name) {
                        Ok(text) => Resolved::Fixed(Value::String(text)),
                        Err(e) => {
                            return Err(Error::input(format!(
                                "bind `{binding}`: the environment variable `{name}` is {}",
                                match e {
                                    std::env::VarError::NotPresent => "not set",
                                    std::env::VarError::NotUnicode(_) => "not Unicode",
                                }
                            )));
                        }
                    },
                };
                Ok(Compiled {
                    glob: compile_tool_glob(&binding.tool)?,
                    binding: binding.clone(),
                    value,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Arc::new(Bindings { rules }))
    }

    /// Whether there is no binding.
    pub(crate) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rules that bind `server_id/tool`: for each pointer, the first
    /// given.
    fn of(&self, server_id: &str, tool: &str) -> Vec<&Compiled> {
        if self.rules.is_empty() {
            return Vec::new();
        }
        let name = format!("{server_id}/{tool}");
        let mut found: Vec<&Compiled> = Vec::new();
        for rule in self.rules.iter().filter(|r| r.glob.is_match(&name)) {
            if !found.iter().any(|f| f.binding.path == rule.binding.path) {
                found.push(rule);
            }
        }
        found
    }

    /// Whether any rule binds an argument of `server_id/tool`.
    pub(crate) fn binds(&self, server_id: &str, tool: &str) -> bool {
        !self.of(server_id, tool).is_empty()
    }

    /// `tool` with its bound properties removed from its input schema (a
    /// copy only when something is bound), and the rules whose property
    /// the schema does not declare.
    pub(crate) fn strip(&self, server_id: &str, tool: &mut Arc<Tool>) -> Vec<BoundUndeclared> {
        let mut undeclared = Vec::new();
        for rule in self.of(server_id, &tool.name) {
            let schema = &mut Arc::make_mut(tool).input_schema;
            let snapshot = schema.clone();
            if !remove(&snapshot, schema, &rule.binding.path) {
                undeclared.push(BoundUndeclared {
                    rule: rule.binding.to_string(),
                    server_id: server_id.to_owned(),
                    tool: tool.name.clone(),
                });
            }
        }
        undeclared
    }

    /// The first binding of `server_id/tool` whose argument `arguments`
    /// already hold (written by the model, or by a document that says
    /// so).
    pub(crate) fn written(
        &self,
        server_id: &str,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Option<&Binding> {
        self.of(server_id, tool)
            .into_iter()
            .map(|r| &r.binding)
            .find(|b| holds(arguments, &b.path))
    }

    /// The values bound for a call to `server_id/tool`, the supplied ones
    /// taken from `supplied`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) naming the rule when
    /// the turn supplies no value it needs.
    pub(crate) fn values<'b>(
        &'b self,
        server_id: &str,
        tool: &str,
        supplied: &'b BTreeMap<String, Value>,
    ) -> Result<Bound<'b>> {
        self.of(server_id, tool)
            .into_iter()
            .map(|rule| {
                let value = match &rule.value {
                    Resolved::Fixed(v) => v,
                    Resolved::Supplied(name) => supplied.get(name).ok_or_else(|| {
                        Error::input(format!(
                            "the argument `{}` of `{server_id}/{tool}` is bound (bind `{}`) to the value `{name}`, \
                             and this turn supplies none (ExecOptions::bound_value): the call is not sent",
                            rule.binding.pointer, rule.binding
                        ))
                    })?,
                    Resolved::Unread => {
                        return Err(Error::input(format!(
                            "bind `{}`: its environment variable was not read",
                            rule.binding
                        )));
                    }
                };
                Ok((&rule.binding, value))
            })
            .collect()
    }
}

/// `arguments` with the `bound` values written, each over whatever was
/// there; objects on the way are made.
///
/// # Errors
///
/// [`ErrorKind::Input`](crate::ErrorKind::Input) naming the pointer (never
/// the value) when a step on the way holds something other than an object.
pub(crate) fn write_bound(arguments: &mut Map<String, Value>, bound: &Bound<'_>) -> Result<()> {
    for (binding, value) in bound {
        let (last, parents) = binding
            .path
            .split_last()
            .expect("a parsed pointer has a step");
        let mut at = &mut *arguments;
        let mut walked = String::new();
        for step in parents {
            push_pointer_segment(&mut walked, step);
            let next = at
                .entry(step.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            let kind = crate::json::type_name(next);
            at = next.as_object_mut().ok_or_else(|| {
                Error::input(format!(
                    "the bound argument `{}` cannot be written: `{walked}` holds {kind}, not an object",
                    binding.pointer
                ))
            })?;
        }
        at.insert(last.clone(), Value::clone(value));
    }
    Ok(())
}

/// Whether `arguments` hold something at `path`.
fn holds(arguments: &Map<String, Value>, path: &[String]) -> bool {
    let mut at = arguments;
    let (last, parents) = match path.split_last() {
        Some(split) => split,
        None => return false,
    };
    for step in parents {
        match at.get(step) {
            Some(Value::Object(next)) => at = next,
            _ => return false,
        }
    }
    at.contains_key(last)
}

/// The most `$ref`s followed at one step.
const MAX_REFS: usize = 8;

/// Removes the property at `path` from `schema` (under `properties`, in
/// each branch of `allOf`, `anyOf` and `oneOf`, through local `$ref`s,
/// which are copied in place first so that other references keep theirs),
/// and its name from the `required` beside it; an object left with no
/// property goes too. `root` is the whole schema as it was, for the
/// references. Whether the property was found.
fn remove(root: &Value, schema: &mut Value, path: &[String]) -> bool {
    let Some((first, rest)) = path.split_first() else {
        return false;
    };
    inline_refs(root, schema);
    let Some(object) = schema.as_object_mut() else {
        return false;
    };
    let mut found = false;
    let mut gone = false;
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        match (rest.is_empty(), properties.get_mut(first)) {
            (true, Some(_)) => {
                properties.shift_remove(first);
                found = true;
                gone = true;
            }
            (false, Some(child)) => {
                if remove(root, child, rest) {
                    found = true;
                    if is_emptied(child) {
                        properties.shift_remove(first);
                        gone = true;
                    }
                }
            }
            (_, None) => {}
        }
    }
    if gone && let Some(Value::Array(required)) = object.get_mut("required") {
        required.retain(|name| name.as_str() != Some(first));
        if required.is_empty() {
            object.shift_remove("required");
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = object.get_mut(key) {
            for branch in branches {
                found |= remove(root, branch, path);
            }
        }
    }
    found
}

/// A local `$ref` at the top of `schema` replaced by a copy of what it
/// points to (its siblings kept), up to [`MAX_REFS`] deep.
fn inline_refs(root: &Value, schema: &mut Value) {
    for _ in 0..MAX_REFS {
        let Some(object) = schema.as_object_mut() else {
            return;
        };
        let Some(target) = object
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| root.pointer(p))
            .and_then(Value::as_object)
        else {
            return;
        };
        let mut inlined = target.clone();
        object.shift_remove("$ref");
        for (key, value) in std::mem::take(object) {
            inlined.insert(key, value);
        }
        *object = inlined;
    }
}

/// Whether an object schema was left with no property by a removal.
fn is_emptied(schema: &Value) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
        && !schema
            .get("additionalProperties")
            .is_some_and(|a| a != &Value::Bool(false))
        && schema.get("patternProperties").is_none()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn strip(pointer: &str, schema: Value) -> (Value, bool) {
        let binding = Binding::new("s/t", pointer, BoundValue::Value(json!(1))).unwrap();
        let bindings = Bindings::compile(&[binding], false).unwrap();
        let mut tool = Arc::new(Tool::new("t", "", schema));
        let undeclared = bindings.strip("s", &mut tool);
        (tool.input_schema.clone(), undeclared.is_empty())
    }

    #[test]
    fn a_bound_property_leaves_properties_and_required() {
        let schema = json!({"type": "object",
            "properties": {"tenant": {"type": "string"}, "q": {"type": "string"}},
            "required": ["tenant", "q"]});
        let (out, declared) = strip("/tenant", schema);
        assert!(declared);
        assert_eq!(
            out,
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})
        );
    }

    #[test]
    fn a_nested_property_goes_and_an_emptied_parent_with_it() {
        let schema = json!({"type": "object", "properties": {
            "ctx": {"type": "object", "properties": {"tenant": {"type": "string"}}, "required": ["tenant"]},
            "q": {"type": "string"}}, "required": ["ctx", "q"]});
        let (out, _) = strip("/ctx/tenant", schema);
        assert_eq!(
            out,
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})
        );
    }

    #[test]
    fn a_referenced_definition_is_copied_before_it_changes() {
        let schema = json!({"type": "object", "$defs": {"Ctx": {"type": "object",
                "properties": {"tenant": {"type": "string"}, "page": {"type": "integer"}}}},
            "properties": {"ctx": {"$ref": "#/$defs/Ctx"}, "other": {"$ref": "#/$defs/Ctx"}}});
        let (out, declared) = strip("/ctx/tenant", schema);
        assert!(declared);
        assert_eq!(
            out["properties"]["ctx"],
            json!({"type": "object", "properties": {"page": {"type": "integer"}}})
        );
        assert_eq!(out["properties"]["other"], json!({"$ref": "#/$defs/Ctx"}));
        assert!(out["$defs"]["Ctx"]["properties"]["tenant"].is_object());
    }

    #[test]
    fn branches_lose_the_property_too() {
        let schema = json!({"anyOf": [
            {"type": "object", "properties": {"tenant": {}, "a": {}}, "required": ["tenant"]},
            {"type": "object", "properties": {"b": {}}}]});
        let (out, declared) = strip("/tenant", schema);
        assert!(declared);
        assert_eq!(
            out["anyOf"][0],
            json!({"type": "object", "properties": {"a": {}}})
        );
    }

    #[test]
    fn an_undeclared_property_is_reported() {
        let (out, declared) = strip(
            "/tennant",
            json!({"type": "object", "properties": {"tenant": {}}}),
        );
        assert!(!declared);
        assert_eq!(out, json!({"type": "object", "properties": {"tenant": {}}}));
    }

    #[test]
    fn rules_read_as_written() {
        let b = Binding::parse("crm/create_*:/owner/id=env:OWNER").unwrap();
        assert_eq!((b.tool(), b.pointer()), ("crm/create_*", "/owner/id"));
        assert_eq!(b.value(), &BoundValue::Env("OWNER".into()));
        let b = Binding::parse("t:/a~1b=json:{\"x\": [1]}").unwrap();
        assert_eq!(b.path, vec!["a/b".to_owned()]);
        assert_eq!(b.value(), &BoundValue::Value(json!({"x": [1]})));
        let b = Binding::parse("t:/a=text:env:X").unwrap();
        assert_eq!(b.value(), &BoundValue::Value(json!("env:X")));
        let b = Binding::parse("t:/a=a=b").unwrap();
        assert_eq!(b.value(), &BoundValue::Value(json!("a=b")));
        for (rule, says) in [
            ("t/a=1", "no `:/`"),
            ("t:/a", "no `=`"),
            (":/a=1", "glob is empty"),
            ("t:/a//b=1", "empty step"),
            ("t:/a~2=1", "`~` not followed"),
            ("t:/a=json:{", "not followed by JSON"),
            ("t:/a=env:", "name of the value is empty"),
            ("t[:/a=1", "invalid glob"),
        ] {
            let err = Binding::parse(rule).unwrap_err().to_string();
            assert!(
                err.contains(says) && err.contains("bind `"),
                "{rule}: {err}"
            );
        }
        assert!(Binding::new("t", "", BoundValue::Value(json!(1))).is_err());
        assert!(Binding::new("t", "a", BoundValue::Value(json!(1))).is_err());
    }

    #[test]
    fn values_are_written_and_written_ones_found() {
        let rules = [
            Binding::parse("s/*:/tenant=acme").unwrap(),
            Binding::new("s/t", "/who/id", BoundValue::Supplied("user".into())).unwrap(),
            Binding::parse("s/*:/tenant=other").unwrap(),
        ];
        let bindings = Bindings::compile(&rules, true).unwrap();
        let supplied = BTreeMap::from([("user".to_owned(), json!(7))]);
        let bound = bindings.values("s", "t", &supplied).unwrap();
        assert_eq!(bound.len(), 2, "the first rule for a pointer wins");
        let mut args = json!({"q": 1}).as_object().unwrap().clone();
        assert!(bindings.written("s", "t", &args).is_none());
        write_bound(&mut args, &bound).unwrap();
        assert_eq!(
            Value::Object(args.clone()),
            json!({"q": 1, "tenant": "acme", "who": {"id": 7}})
        );
        assert_eq!(
            bindings.written("s", "t", &args).unwrap().pointer(),
            "/tenant"
        );
        let err = bindings.values("s", "t", &BTreeMap::new()).unwrap_err();
        assert!(err.to_string().contains("supplies none"), "{err}");
        let mut args = json!({"who": "x"}).as_object().unwrap().clone();
        let err = write_bound(&mut args, &bound).unwrap_err().to_string();
        assert!(
            err.contains("`/who` holds a string") && !err.contains('7'),
            "{err}"
        );
        assert!(bindings.values("x", "t", &supplied).unwrap().is_empty());
    }

    #[test]
    fn an_unset_variable_is_an_error_naming_the_rule() {
        let rule = Binding::parse("s/t:/k=env:MCP_ADAPTERS_TEST_SURELY_UNSET").unwrap();
        let err = Bindings::compile(&[rule], true).unwrap_err().to_string();
        assert!(err.contains("s/t:/k") && err.contains("not set"), "{err}");
    }

    #[test]
    fn debug_hides_values() {
        let rule = Binding::parse("s/t:/k=sekrit").unwrap();
        let bindings = Bindings::compile(std::slice::from_ref(&rule), true).unwrap();
        let text = format!("{rule:?} {bindings:?}");
        assert!(!text.contains("sekrit"), "{text}");
    }
}
