//! An iterative pre-pass that bounds the nesting of the input before any
//! recursive code (the converter, `Clone` of kept values) touches it.

use serde_json::Value;

use super::error::{Limit, StrictError, StrictReason};
use super::walk::push_token;

/// Deepest nesting of JSON arrays and objects accepted anywhere in an input
/// schema. Far above what any real schema needs, far below what would strain
/// the stack of the converter's bounded recursion.
pub(crate) const MAX_JSON_NESTING: usize = 256;

enum Frame<'a> {
    Object(serde_json::map::Iter<'a>),
    Array(std::iter::Enumerate<std::slice::Iter<'a, Value>>),
}

impl<'a> Frame<'a> {
    fn of(value: &'a Value) -> Option<Self> {
        match value {
            Value::Object(map) => Some(Frame::Object(map.iter())),
            Value::Array(items) => Some(Frame::Array(items.iter().enumerate())),
            _ => None,
        }
    }

    /// The next child and its name (names are only turned into strings for
    /// containers, which keeps wide inputs cheap).
    fn next_child(&mut self) -> Option<(Token<'a>, &'a Value)> {
        match self {
            Frame::Object(iter) => iter.next().map(|(k, v)| (Token::Key(k), v)),
            Frame::Array(iter) => iter.next().map(|(i, v)| (Token::Index(i), v)),
        }
    }
}

enum Token<'a> {
    Key(&'a str),
    Index(usize),
}

impl Token<'_> {
    fn text(&self) -> String {
        match self {
            Token::Key(key) => (*key).to_owned(),
            Token::Index(index) => index.to_string(),
        }
    }
}

/// Fails with `max_depth` at the first container nested deeper than `cap`.
///
/// Runs in time linear in the size of the input with an explicit stack, so
/// even a value nested a million levels deep is measured without recursion.
pub(crate) fn check_nesting(root: &Value, cap: usize) -> Result<(), StrictError> {
    let mut frames: Vec<Frame<'_>> = Frame::of(root).into_iter().collect();
    let mut tokens: Vec<Token<'_>> = Vec::new();
    while let Some(frame) = frames.last_mut() {
        let Some((token, child)) = frame.next_child() else {
            frames.pop();
            tokens.pop();
            continue;
        };
        let Some(child_frame) = Frame::of(child) else {
            continue;
        };
        tokens.push(token);
        if frames.len() >= cap {
            return Err(too_deep(&tokens));
        }
        frames.push(child_frame);
    }
    Ok(())
}

fn too_deep(tokens: &[Token<'_>]) -> StrictError {
    let mut pointer = String::new();
    for token in tokens {
        push_token(&mut pointer, &token.text());
    }
    StrictError::new(&pointer, StrictReason::Limit(Limit::MaxDepth))
}
