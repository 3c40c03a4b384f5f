//! Result selection in a listing: the optional filter argument each listed
//! tool gains, and taking it out of a call before anything else reads it.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::json::type_name;
use crate::select::SELECT_DESCRIPTION;
use crate::toolset::ExposedTool;

/// The selection argument a listing offers: every tool of an object schema
/// without a property of its name is listed with it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Selection {
    /// The argument's name.
    pub argument: String,
}

impl Selection {
    pub(crate) fn new(argument: &str) -> Self {
        Selection {
            argument: argument.to_owned(),
        }
    }

    /// Whether `tool` is listed with the selection argument.
    fn offered(&self, tool: &ExposedTool) -> bool {
        tool.tool
            .input_schema
            .as_object()
            .is_some_and(|schema| match schema.get("properties") {
                None => true,
                Some(Value::Object(properties)) => !properties.contains_key(&self.argument),
                Some(_) => false,
            })
    }

    /// `tool` with the selection argument among its properties, or `None`
    /// when its schema has a property of that name already (or is not an
    /// object schema).
    pub(crate) fn offer(&self, tool: &ExposedTool) -> Option<ExposedTool> {
        if !self.offered(tool) {
            return None;
        }
        let mut schema = tool.tool.input_schema.as_object()?.clone();
        let properties = schema
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(properties) = properties else {
            return None;
        };
        properties.insert(
            self.argument.clone(),
            json!({"type": "string", "description": SELECT_DESCRIPTION}),
        );
        let mut with = (*tool.tool).clone();
        with.input_schema = Value::Object(schema);
        Some(ExposedTool {
            exposed_name: tool.exposed_name.clone(),
            server_id: tool.server_id.clone(),
            tool: Arc::new(with),
        })
    }

    /// Takes the filter out of the arguments of a call to `tool`: a string is the filter (a blank one selects nothing);
    /// `null` is no filter.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when the argument is
    /// neither a string nor `null`.
    pub(crate) fn take(
        &self,
        tool: &ExposedTool,
        arguments: &mut Map<String, Value>,
    ) -> Result<Option<String>> {
        if !self.offered(tool) {
            return Ok(None);
        }
        match arguments.remove(&self.argument) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(filter)) if filter.trim().is_empty() => Ok(None),
            Some(Value::String(filter)) => Ok(Some(filter)),
            Some(other) => Err(Error::input(format!(
                "`{}` must be a jq filter in a string, not {}",
                self.argument,
                type_name(&other)
            ))),
        }
    }
}
