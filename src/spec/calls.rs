//! The `calls:` section: where a response's items are, which of them are
//! tool calls, and how a call's id, name and arguments are read.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::path::{JsonPath, PathDoc};

/// Where a response's (or a message's) items are, which of them are tool
/// calls, and how a call's id, name and arguments are read.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct CallsDoc {
    /// Where the items are in a response or message, tried in order; a list
    /// given as input is the items themselves.
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub locate: Vec<LocateDoc>,
    pub select: SelectDoc,
    /// The call's id.
    pub id: FieldDoc,
    /// The tool name the model called.
    pub name: FieldDoc,
    pub arguments: ArgumentsDoc,
}

/// Where the items are: a path, which applies when the input has its first
/// key, or `{when, list}`.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(transform = super::schema::string_or_object)
)]
#[serde(untagged, deny_unknown_fields)]
pub(super) enum LocateDoc {
    /// The path to the items; it applies when the input has the path's first key.
    Path(PathDoc),
    When {
        /// A key whose presence in the input selects this entry.
        #[cfg_attr(test, schemars(length(min = 1)))]
        when: String,
        /// Where the list of items is; absent or null means no calls.
        list: PathDoc,
    },
}

/// Which items are tool calls: those whose `path` holds `equals`, or
/// (without `equals`) those where the path is present and not null.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct SelectDoc {
    pub path: PathDoc,
    #[serde(default)]
    pub equals: Option<String>,
}

/// A field of a call item: a path, or `{path, optional}`.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(transform = super::schema::string_or_object)
)]
#[serde(untagged, deny_unknown_fields)]
pub(super) enum FieldDoc {
    Path(PathDoc),
    Full {
        path: PathDoc,
        /// Whether a call may lack it.
        #[serde(default)]
        optional: bool,
    },
}

/// Where a call's arguments are, and how they are encoded.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct ArgumentsDoc {
    pub path: PathDoc,
    pub format: ArgFormat,
    #[serde(default)]
    pub missing: MissingArguments,
}

/// How a call's arguments are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum ArgFormat {
    /// A JSON object.
    Object,
    /// A string holding a JSON object.
    JsonText,
    /// Either.
    ObjectOrJsonText,
}

/// What absent or null arguments (also the JSON text `null`) mean.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema, serde::Serialize))]
#[serde(rename_all = "snake_case")]
pub(crate) enum MissingArguments {
    /// The call is rejected.
    #[default]
    Reject,
    /// `{}`.
    EmptyObject,
}

/// Where the items of a response are.
#[derive(Debug, Clone)]
pub(crate) struct Locate {
    pub when: String,
    pub list: JsonPath,
}

/// Which items are tool calls: `path` holds `equals`, or (without it) is present and not `null`.
#[derive(Debug, Clone)]
pub(crate) struct Select {
    pub path: JsonPath,
    pub equals: Option<String>,
}

impl Select {
    /// Whether `item` is one of the selected items.
    pub(crate) fn matches(&self, item: &Value) -> bool {
        let found = self.path.get(item);
        match &self.equals {
            Some(want) => found.and_then(Value::as_str) == Some(want),
            None => found.is_some_and(|v| !v.is_null()),
        }
    }
}

/// A field of a call item.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub path: JsonPath,
    pub optional: bool,
}

impl Field {
    /// The field's value in `item` as a string (a number is written out).
    pub(crate) fn read_string(&self, item: &Value) -> Option<String> {
        self.read_str(item).map(Cow::into_owned)
    }

    /// [`read_string`](Self::read_string), borrowed from `item` where it can be.
    pub(crate) fn read_str<'v>(&self, item: &'v Value) -> Option<Cow<'v, str>> {
        match self.path.get(item)? {
            Value::String(s) => Some(Cow::Borrowed(s)),
            Value::Number(n) => Some(Cow::Owned(n.to_string())),
            _ => None,
        }
    }
}

/// How calls are read.
#[derive(Debug, Clone)]
pub(crate) struct CallsPlan {
    pub locate: Vec<Locate>,
    pub select: Select,
    pub id: Field,
    pub name: Field,
    pub arguments: Field,
    pub arg_format: ArgFormat,
    pub missing_arguments: MissingArguments,
}

/// Compiles the `calls:` section.
pub(super) fn compile(doc: CallsDoc) -> CallsPlan {
    let locate = doc
        .locate
        .into_iter()
        .map(|entry| match entry {
            LocateDoc::Path(path) => Locate {
                when: path
                    .as_str()
                    .split('/')
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
                list: path.compile(),
            },
            LocateDoc::When { when, list } => Locate {
                when,
                list: list.compile(),
            },
        })
        .collect();
    CallsPlan {
        locate,
        select: select(doc.select),
        id: field(doc.id),
        name: field(doc.name),
        arguments: arguments(&doc.arguments),
        arg_format: doc.arguments.format,
        missing_arguments: doc.arguments.missing,
    }
}

/// Which items are calls (also search calls, `search.client.calls`).
pub(super) fn select(doc: SelectDoc) -> Select {
    Select {
        path: doc.path.compile(),
        equals: doc.equals,
    }
}

/// A call's field (also a search call's id).
pub(super) fn field(doc: FieldDoc) -> Field {
    match doc {
        FieldDoc::Path(path) => Field {
            path: path.compile(),
            optional: false,
        },
        FieldDoc::Full { path, optional } => Field {
            path: path.compile(),
            optional,
        },
    }
}

/// Where a call's arguments are (also a search call's).
pub(super) fn arguments(doc: &ArgumentsDoc) -> Field {
    Field {
        path: doc.path.compile(),
        optional: false,
    }
}
