//! The `calls:` section: where a response's items are, which of them are
//! tool calls, and how a call's id, name and arguments are read.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::path::JsonPath;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CallsDoc {
    pub locate: Vec<LocateDoc>,
    pub select: SelectDoc,
    pub id: FieldDoc,
    pub name: FieldDoc,
    pub arguments: ArgumentsDoc,
}

/// Where the items are: a path (applies when the input has its first key), or
/// `{when, list}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum LocateDoc {
    Path(String),
    When { when: String, list: String },
}

/// Which items are calls: those whose `path` holds `equals`, or (without
/// `equals`) those where `path` is present and not `null`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SelectDoc {
    pub path: String,
    #[serde(default)]
    pub equals: Option<String>,
}

/// A field of a call item: a path, or `{path, optional}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum FieldDoc {
    Path(String),
    Full {
        path: String,
        #[serde(default)]
        optional: bool,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ArgumentsDoc {
    pub path: String,
    pub format: ArgFormat,
    #[serde(default)]
    pub missing: MissingArguments,
}

/// How a call's arguments are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ArgFormat {
    /// A JSON object.
    Object,
    /// A string holding a JSON object.
    JsonText,
    /// Either.
    ObjectOrJsonText,
}

/// What absent (or `null`) arguments mean.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MissingArguments {
    /// The call is rejected.
    #[default]
    Reject,
    /// `{}`, also for arguments sent as the JSON text `null`.
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
                when: path.split('/').next().unwrap_or_default().to_owned(),
                list: JsonPath::parse(&path),
            },
            LocateDoc::When { when, list } => Locate {
                when,
                list: JsonPath::parse(&list),
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
        path: JsonPath::parse(&doc.path),
        equals: doc.equals,
    }
}

/// A call's field (also a search call's id).
pub(super) fn field(doc: FieldDoc) -> Field {
    match doc {
        FieldDoc::Path(path) => Field {
            path: JsonPath::parse(&path),
            optional: false,
        },
        FieldDoc::Full { path, optional } => Field {
            path: JsonPath::parse(&path),
            optional,
        },
    }
}

/// Where a call's arguments are (also a search call's).
pub(super) fn arguments(doc: &ArgumentsDoc) -> Field {
    Field {
        path: JsonPath::parse(&doc.path),
        optional: false,
    }
}
