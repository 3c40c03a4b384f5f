//! `sampling.messages.call_ids`: the form call ids must have for the
//! provider; ids of the history that do not are replaced.

use serde::Deserialize;

use super::at;
use crate::error::Problem;
use crate::json::pointer_child;

/// The form call ids must have: an id of the history that does not fit is
/// replaced by one made from it (the same in its tool use and in the result
/// that answers it; two ids that would become one are an error).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct CallIdsDoc {
    pub alphabet: IdAlphabet,
    /// The exact length of an id.
    #[serde(default)]
    #[cfg_attr(test, schemars(range(min = 8, max = MAX_CALL_ID_LENGTH)))]
    pub length: Option<usize>,
    /// The largest length of an id.
    #[serde(default)]
    #[cfg_attr(test, schemars(range(min = 8, max = MAX_CALL_ID_LENGTH)))]
    pub max_length: Option<usize>,
}

/// The characters a call id may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum IdAlphabet {
    /// `A-Z`, `a-z`, `0-9`.
    Alphanumeric,
    /// `A-Z`, `a-z`, `0-9`, `_`, `-`.
    AlphanumericDashUnderscore,
    /// Any character.
    Any,
}

/// The form of call ids the provider takes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallIds {
    pub alphabet: IdAlphabet,
    pub length: Option<usize>,
    pub max_length: Option<usize>,
}

/// The longest id `call_ids` may ask for (a made-up id is this many hash characters at most).
const MAX_CALL_ID_LENGTH: usize = 64;

pub(super) fn compile_call_ids(doc: Option<CallIdsDoc>) -> Result<Option<CallIds>, Problem> {
    let Some(doc) = doc else {
        return Ok(None);
    };
    let at = at(&["messages", "call_ids"]);
    for (name, value) in [("length", doc.length), ("max_length", doc.max_length)] {
        if let Some(n) = value
            && !(8..=MAX_CALL_ID_LENGTH).contains(&n)
        {
            return Err(Problem::at(
                pointer_child(&at, name),
                format!(
                    "{name} must be from 8 to {MAX_CALL_ID_LENGTH}, so that made-up ids stay unique"
                ),
            ));
        }
    }
    match (doc.length, doc.max_length) {
        (Some(_), Some(_)) => Err(Problem::at(at, "give `length` or `max_length`, not both")),
        (None, None) if doc.alphabet == IdAlphabet::Any => Err(Problem::at(
            at,
            "any id of any length is what the history has: give an alphabet, a length or a max_length",
        )),
        _ => Ok(Some(CallIds {
            alphabet: doc.alphabet,
            length: doc.length,
            max_length: doc.max_length,
        })),
    }
}
