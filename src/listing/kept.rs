//! What listings keep with their toolset: each tool's schema as a set of
//! rules makes it, and its cleaned description and title. A toolset never
//! changes, and none of these depend on a listing's options, so listings
//! copy them instead of making them again: schemas from the third listing
//! with the same rules on (the first keeps nothing, so that a toolset listed
//! once pays nothing for it; the second converts and keeps), descriptions
//! from the second.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock, Weak};

use serde_json::Value;

use crate::describe::sanitize_description;
use crate::strict::{self, NullPath, StrictError, StrictRules};
use crate::toolset::{ExposedTool, Kept, ToolSet};

/// One tool's schema as a spec's rules make it.
#[derive(Debug)]
pub(super) struct Converted {
    /// In the provider's subset of JSON Schema (the spec's `schema:`
    /// rules): `Ok(None)` when that is the schema as written (no such rules,
    /// or they changed nothing), an error when the subset cannot express it.
    pub subset: Result<Option<Value>, StrictError>,
    /// The subset schema made strict, when strict rules were asked for and
    /// the subset could express the schema.
    pub strict: Option<Result<Strict, StrictError>>,
}

/// A strict schema and the paths its optional properties were made
/// nullable at, shared by every listing that carries them.
#[derive(Debug)]
pub(super) struct Strict {
    pub schema: Value,
    pub null_paths: Arc<[NullPath]>,
}

impl Converted {
    /// Converts `tool`'s schema by the `subset` rules, then the `strict` ones.
    pub(super) fn new(
        tool: &ExposedTool,
        subset: Option<&StrictRules>,
        strict: Option<&StrictRules>,
    ) -> Converted {
        let original = &tool.tool.input_schema;
        let subset = match subset {
            None => Ok(None),
            Some(rules) => strict::convert(original, rules)
                .map(|c| (c.schema != *original).then_some(c.schema)),
        };
        let strict = match (&subset, strict) {
            (Ok(schema), Some(rules)) => Some(
                strict::convert(schema.as_ref().unwrap_or(original), rules).map(|s| Strict {
                    schema: s.schema,
                    null_paths: s.null_paths.into(),
                }),
            ),
            _ => None,
        };
        Converted { subset, strict }
    }
}

/// Which schema a definition carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Which {
    /// The schema as written.
    Written,
    /// The schema in the provider's subset.
    Subset,
    /// The strict schema.
    Strict,
}

impl Converted {
    /// The schema `which` names (`original`: the schema as written).
    pub(super) fn schema<'a>(&'a self, which: Which, original: &'a Value) -> &'a Value {
        let subset = || self.subset.as_ref().ok().and_then(Option::as_ref);
        let strict = || self.strict.as_ref().and_then(|s| s.as_ref().ok());
        match which {
            Which::Written => original,
            Which::Subset => subset().unwrap_or(original),
            Which::Strict => strict().map_or(original, |s| &s.schema),
        }
    }

    /// The same, copied into blocks allocated one after the other: the
    /// conversion's own allocations are scattered among its scratch, and
    /// every later listing walks the kept copy.
    fn compact(self) -> Converted {
        let strict = self.strict.map(|r| {
            r.map(|s| Strict {
                schema: s.schema.clone(),
                null_paths: s.null_paths,
            })
        });
        // A copy, then the converted value is dropped.
        let copy = |v: &Value| -> Value { v.clone() };
        let subset = self.subset.map(|v| v.as_ref().map(copy));
        Converted { subset, strict }
    }

    /// The schema `which` names, moved out; `None` for the schema as written.
    pub(super) fn into_schema(self, which: Which) -> Option<Value> {
        match which {
            Which::Written => None,
            Which::Subset => self.subset.ok().flatten(),
            Which::Strict => self.strict.and_then(Result::ok).map(|s| s.schema),
        }
    }
}

/// Whether `key` names the same rules as `rules` (both absent, or the very
/// same rules: a kept weak reference keeps their address from being reused).
fn same_rules(key: &Option<Weak<StrictRules>>, rules: Option<&Arc<StrictRules>>) -> bool {
    match (key, rules) {
        (None, None) => true,
        (Some(key), Some(rules)) => std::ptr::eq(key.as_ptr(), Arc::as_ptr(rules)),
        _ => false,
    }
}

/// Every tool's [`Converted`] schema for one pair of rules, each made the
/// first time a listing asks for it.
#[derive(Debug)]
pub(super) struct Schemas {
    subset: Option<Weak<StrictRules>>,
    strict: Option<Weak<StrictRules>>,
    tools: Box<[OnceLock<Converted>]>,
}

impl Kept for Schemas {
    fn stale(&self) -> bool {
        [&self.subset, &self.strict]
            .into_iter()
            .flatten()
            .any(|rules| rules.strong_count() == 0)
    }
}

impl Schemas {
    /// The schemas kept with `toolset` for these rules, and whether the
    /// entry was made now (empty, the first time the rules are asked for).
    pub(super) fn of(
        toolset: &ToolSet,
        subset: Option<&Arc<StrictRules>>,
        strict: Option<&Arc<StrictRules>>,
    ) -> (Arc<Schemas>, bool) {
        let mut made = false;
        let kept = toolset.memo().get_or_insert(
            |kept: &Schemas| kept.is_for(subset, strict),
            || {
                made = true;
                Schemas {
                    subset: subset.map(Arc::downgrade),
                    strict: strict.map(Arc::downgrade),
                    tools: (0..toolset.len()).map(|_| OnceLock::new()).collect(),
                }
            },
        );
        (kept, made)
    }

    /// Whether these are the schemas for the rules `subset` and `strict`.
    pub(super) fn is_for(
        &self,
        subset: Option<&Arc<StrictRules>>,
        strict: Option<&Arc<StrictRules>>,
    ) -> bool {
        same_rules(&self.subset, subset) && same_rules(&self.strict, strict)
    }

    /// The toolset's tool number `index`, `tool`, converted by the rules
    /// these schemas are for (`subset` and `strict`, which the caller holds).
    pub(super) fn get(
        &self,
        index: usize,
        tool: &ExposedTool,
        subset: Option<&StrictRules>,
        strict: Option<&StrictRules>,
    ) -> &Converted {
        self.tools[index].get_or_init(|| Converted::new(tool, subset, strict).compact())
    }
}

/// A text from a server as a listing sends it: cleaned of invisible
/// characters and capped ([`sanitize_description`]).
#[derive(Debug)]
enum Cleaned {
    /// The text as the server wrote it.
    Written,
    /// The text's first bytes (cut at the cap).
    Prefix(usize),
    /// A cleaned copy.
    Copy(Box<str>),
}

impl Cleaned {
    fn new(text: Option<&str>) -> Cleaned {
        let Some(text) = text else {
            return Cleaned::Written;
        };
        match sanitize_description(text) {
            Cow::Borrowed(kept) if kept.len() == text.len() => Cleaned::Written,
            Cow::Borrowed(kept) if text.as_ptr() == kept.as_ptr() => Cleaned::Prefix(kept.len()),
            other => Cleaned::Copy(other.into_owned().into_boxed_str()),
        }
    }

    fn of<'t>(&'t self, text: Option<&'t str>) -> Option<&'t str> {
        match self {
            Cleaned::Written => text,
            Cleaned::Prefix(len) => text.map(|t| &t[..*len]),
            Cleaned::Copy(copy) => Some(copy),
        }
    }
}

/// Every tool's cleaned description and title, each made the first time a
/// listing asks for it.
#[derive(Debug)]
pub(super) struct Descriptions {
    tools: Box<[OnceLock<(Cleaned, Cleaned)>]>,
}

impl Kept for Descriptions {}

impl Descriptions {
    /// The descriptions kept with `toolset`.
    pub(super) fn of(toolset: &ToolSet) -> Arc<Descriptions> {
        toolset.memo().get_or_insert(
            |_: &Descriptions| true,
            || Descriptions {
                tools: (0..toolset.len()).map(|_| OnceLock::new()).collect(),
            },
        )
    }

    /// The cleaned description and title of the toolset's tool number
    /// `index`, `tool`.
    pub(super) fn get<'t>(
        &'t self,
        index: usize,
        tool: &'t ExposedTool,
    ) -> (Option<&'t str>, Option<&'t str>) {
        let (description, title) = (tool.tool.description.as_deref(), tool.tool.title.as_deref());
        let (d, t) =
            self.tools[index].get_or_init(|| (Cleaned::new(description), Cleaned::new(title)));
        (d.of(description), t.of(title))
    }
}

/// The toolset made for listings that offer the library's own read tool:
/// the same tools and that one, made once.
pub(super) struct WithTool(pub ToolSet);

impl Kept for WithTool {}
