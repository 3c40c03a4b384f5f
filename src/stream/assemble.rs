//! The generic assembler: a spec's `stream:` rules applied to each event,
//! building the assistant message item by item and reading each call the
//! moment its item is complete.

use std::borrow::Cow;
use std::collections::HashMap;

use fnv::FnvBuildHasher;

use serde_json::{Map, Value};

use super::event::{self, Event, Num};
use super::{Streamed, StreamedCall};
use crate::calls::{Extracted, SeenIds};
use crate::error::{Error, ErrorKind, Result};
use crate::json::type_name;
use crate::listing::Listing;
use crate::spec::Provider;
use crate::spec::path::JsonPath;
use crate::spec::stream::{
    Append, AppendAs, Condition, EventName, Fragments, MessageMerge, Open, OpenAtEnd, Pieces, Rule,
    StreamPlan,
};

/// One item of the message: a content block, an output item, a part, a call.
#[derive(Debug)]
struct Item<'a> {
    value: Value,
    open: bool,
    /// `as: json` text not yet parsed, per path in the item (the rule's own path).
    json: Vec<(&'a JsonPath, String)>,
    /// The call's position among the response's calls, if the item is a call.
    call: Option<usize>,
}

/// The state of one stream.
pub(crate) struct Assembler<'a> {
    provider: &'a Provider,
    plan: &'a StreamPlan,
    listing: &'a Listing,
    message: Map<String, Value>,
    items: Vec<Item<'a>>,
    keys: Keys,
    by_id: Keys,
    by_index: Keys,
    latest_fragment: Option<usize>,
    piece_item: Option<usize>,
    calls: usize,
    seen_ids: SeenIds,
    done: Vec<StreamedCall>,
    ended: bool,
    events: usize,
}

/// The key of an item: a number or a non-empty string.
#[derive(Clone, Copy)]
enum Key<'a> {
    Num(u64),
    Str(&'a str),
}

fn key_of<'v>(value: &'v Event<'_>) -> Option<Key<'v>> {
    match value {
        Event::Str(s) if !s.is_empty() => Some(Key::Str(s)),
        Event::Number(n) => Some(Key::Num(match *n {
            Num::Pos(u) => u,
            Num::Neg(i) => i as u64,
            Num::Float(f) => f.to_bits(),
        })),
        _ => None,
    }
}

/// Items by key: numbers and strings apart, so looking a key up allocates nothing.
#[derive(Debug, Default)]
struct Keys {
    nums: HashMap<u64, usize, FnvBuildHasher>,
    strs: HashMap<String, usize, FnvBuildHasher>,
}

impl Keys {
    fn get(&self, key: Key<'_>) -> Option<usize> {
        match key {
            Key::Num(n) => self.nums.get(&n).copied(),
            Key::Str(s) => self.strs.get(s).copied(),
        }
    }

    fn insert(&mut self, key: Key<'_>, item: usize) {
        match key {
            Key::Num(n) => {
                self.nums.insert(n, item);
            }
            Key::Str(s) => {
                self.strs.insert(s.to_owned(), item);
            }
        }
    }
}

/// Text to append: strings as they are, other values as their JSON text.
fn fragment_text<'v>(value: &'v Event<'_>) -> Option<Cow<'v, str>> {
    match value {
        Event::Null => None,
        Event::Str(s) => Some(Cow::Borrowed(s)),
        other => Some(Cow::Owned(event::to_value(other).to_string())),
    }
}

fn holds(condition: &Condition, found: Option<&Event<'_>>) -> bool {
    match &condition.equals {
        Some(want) => found.is_some_and(|v| event::equals(v, want)),
        None => found.is_some_and(|v| !v.is_null()),
    }
}

impl<'a> Assembler<'a> {
    pub(crate) fn new(provider: &'a Provider, plan: &'a StreamPlan, listing: &'a Listing) -> Self {
        Assembler {
            provider,
            plan,
            listing,
            message: plan.base.clone(),
            items: Vec::new(),
            keys: Keys::default(),
            by_id: Keys::default(),
            by_index: Keys::default(),
            latest_fragment: None,
            piece_item: None,
            calls: 0,
            seen_ids: SeenIds::default(),
            done: Vec::new(),
            ended: false,
            events: 0,
        }
    }

    /// How many events were read.
    pub(crate) fn events(&self) -> usize {
        self.events
    }

    /// Whether an end event was seen.
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    /// A data payload that is not JSON: the `done` marker, or an error.
    pub(crate) fn text(&mut self, text: &str, out: &mut Vec<StreamedCall>) -> Result<()> {
        self.events += 1;
        if self.plan.done.as_deref() == Some(text) {
            return self.end(out);
        }
        let shown: String = text.chars().take(200).collect();
        Err(Error::new(
            ErrorKind::Stream,
            format!("event {} is not JSON: {shown:?}", self.events),
        ))
    }

    /// Applies every rule that matches `event`.
    pub(crate) fn event(&mut self, event: &Event<'_>, out: &mut Vec<StreamedCall>) -> Result<()> {
        self.events += 1;
        self.rules(event, out)
    }

    /// The event's name and the body rules read.
    fn name_and_body<'v>(&self, event: &'v Event<'v>) -> (Option<&'v str>, &'v Event<'v>) {
        match &self.plan.name {
            EventName::None => (None, event),
            EventName::Path(path) => (event::get(path, event).and_then(Event::as_str), event),
            // One key (a key repeated counts once, its last value kept, as
            // serde_json reads the object).
            EventName::Wrapper => match event.as_object() {
                Some(members @ [(name, _), .., (_, body)])
                    if members.iter().all(|(k, _)| k == name) =>
                {
                    (Some(*name), body)
                }
                Some([(name, body)]) => (Some(*name), body),
                _ => (None, event),
            },
        }
    }

    /// Applies the rules that match.
    fn rules(&mut self, event: &Event<'_>, out: &mut Vec<StreamedCall>) -> Result<()> {
        let plan = self.plan;
        let (name, body) = self.name_and_body(event);
        let candidates = name
            .and_then(|n| plan.by_name.get(n))
            .unwrap_or(&plan.unnamed);
        // Rules often test the same path in a row: it is looked up once.
        let mut last: Option<(usize, Option<&Event<'_>>)> = None;
        for &i in candidates {
            let rule = &plan.rules[i];
            if let Some(condition) = &rule.when {
                let found = match last {
                    Some((slot, found)) if slot == condition.slot => found,
                    _ => event::get(&condition.path, body),
                };
                last = Some((condition.slot, found));
                if !holds(condition, found) {
                    continue;
                }
            }
            self.apply(rule, body, out)?;
        }
        Ok(())
    }

    fn apply(
        &mut self,
        rule: &'a Rule,
        event: &Event<'_>,
        out: &mut Vec<StreamedCall>,
    ) -> Result<()> {
        if !rule.error.is_empty() {
            return Err(self.reported_error(&rule.error, event));
        }
        if let Some(merge) = &rule.message {
            self.merge_message(merge, event, out)?;
        }
        if let Some(open) = &rule.open
            && let Some(key) = event::get(&open.key, event).and_then(key_of)
        {
            let value = open
                .item
                .as_ref()
                .and_then(|p| event::get(p, event))
                .map_or(Value::Object(Map::new()), event::to_value);
            let index = self.push_item(value, true);
            self.keys.insert(key, index);
        }
        if let Some(replace) = &rule.replace {
            self.replace(replace, event);
        }
        if let Some(fragments) = &rule.fragments {
            self.fragments(fragments, event);
        }
        if let Some(whole) = &rule.whole
            && let Some(found) = event::get(&whole.list, event)
        {
            let elements = match found {
                Event::Array(items) => items,
                other => std::slice::from_ref(other),
            };
            for element in elements {
                match &whole.pieces {
                    Some(pieces) if self.piece(pieces, element, out)? => {}
                    _ => {
                        let index = self.push_item(event::to_value(element), true);
                        self.close(index, out)?;
                    }
                }
            }
        }
        if let Some(append) = &rule.append {
            self.append(append, event);
        }
        if let Some(set) = &rule.set
            && let Some(value) = event::get(&set.from, event)
        {
            match &set.key {
                Some(key) => {
                    if let Some(i) = self.keyed(key, event)
                        && let Some(slot) = set.to.get_or_insert(&mut self.items[i].value)
                    {
                        *slot = event::to_value(value);
                    }
                }
                None => {
                    let mut message = Value::Object(std::mem::take(&mut self.message));
                    if let Some(slot) = set.to.get_or_insert(&mut message) {
                        *slot = event::to_value(value);
                    }
                    self.message = into_map(message);
                }
            }
        }
        if let Some(key) = &rule.close
            && let Some(index) = self.keyed(key, event)
        {
            self.close(index, out)?;
        }
        if let Some(list) = &rule.settle {
            self.settle(list, event);
        }
        if rule.end {
            self.end(out)?;
        }
        Ok(())
    }

    /// Replaces the item `replace` names with the whole one the event
    /// carries; an item the stream never opened is whole here, and kept,
    /// open until the rule (or a later one) closes it.
    fn replace(&mut self, replace: &Open, event: &Event<'_>) {
        let Some(value) = replace.item.as_ref().and_then(|p| event::get(p, event)) else {
            return;
        };
        match self.keyed(&replace.key, event) {
            Some(index) if self.items[index].open => {
                let value = event::to_value(value);
                // An item begun without its start event (a fragment came
                // first) turns out to be a call here.
                if self.items[index].call.is_none() {
                    self.items[index].call = self.call_position(&value);
                }
                let item = &mut self.items[index];
                item.value = value;
                item.json.clear();
            }
            Some(_) => {}
            None => {
                if let Some(key) = event::get(&replace.key, event).and_then(key_of) {
                    let index = self.push_item(event::to_value(value), true);
                    self.keys.insert(key, index);
                }
            }
        }
    }

    /// Items still open that are not calls take the whole items `list`
    /// holds at their key's position, and are complete.
    fn settle(&mut self, list: &JsonPath, event: &Event<'_>) {
        let Some(Event::Array(whole)) = event::get(list, event) else {
            return;
        };
        for (position, value) in whole.iter().enumerate() {
            let Some(index) = self.keys.get(Key::Num(position as u64)) else {
                continue;
            };
            let item = &mut self.items[index];
            if item.open && item.call.is_none() {
                item.value = event::to_value(value);
                item.json.clear();
                item.open = false;
            }
        }
    }

    /// The provider's error event, as an error naming its message.
    fn reported_error(&self, paths: &[JsonPath], event: &Event<'_>) -> Error {
        let message = paths.iter().find_map(|p| match event::get(p, event)? {
            Event::Str(s) => Some((*s).to_owned()),
            Event::Null => None,
            other => Some(event::to_value(other).to_string()),
        });
        let message = message.unwrap_or_else(|| {
            let text = event::to_value(event).to_string();
            text.chars().take(500).collect()
        });
        Error::new(
            ErrorKind::Stream,
            format!(
                "the stream reported an error at event {}: {message}",
                self.events
            ),
        )
    }

    fn keyed(&self, key: &JsonPath, event: &Event<'_>) -> Option<usize> {
        event::get(key, event)
            .and_then(key_of)
            .and_then(|k| self.keys.get(k))
    }

    /// The next position among the calls, when `value` is a call.
    fn call_position(&mut self, value: &Value) -> Option<usize> {
        let is_call =
            self.provider.is_call(value) || self.provider.is_search_item(value, self.listing);
        is_call.then(|| {
            self.calls += 1;
            self.calls - 1
        })
    }

    /// Adds an item; an open item that is a call gets its position among the calls now.
    fn push_item(&mut self, value: Value, open: bool) -> usize {
        let call = self.call_position(&value);
        self.items.push(Item {
            value,
            open,
            json: Vec::new(),
            call,
        });
        self.items.len() - 1
    }

    fn merge_message(
        &mut self,
        merge: &MessageMerge,
        event: &Event<'_>,
        out: &mut Vec<StreamedCall>,
    ) -> Result<()> {
        match merge {
            MessageMerge::Object(path) => {
                let Some(Event::Object(fields)) = event::get(path, event) else {
                    return Ok(());
                };
                let items_key = self.plan.items.as_ref().and_then(|p| match p.0.as_slice() {
                    [crate::spec::path::Step::Key(k)] => Some(k.as_str()),
                    _ => None,
                });
                for (key, value) in fields.iter() {
                    match (Some(*key) == items_key, value) {
                        // Items the message already holds are whole items.
                        (true, Event::Array(items)) => {
                            for item in items.iter() {
                                let index = self.push_item(event::to_value(item), true);
                                self.close(index, out)?;
                            }
                        }
                        (true, _) => {}
                        (false, value) => {
                            self.message
                                .insert((*key).to_owned(), event::to_value(value));
                        }
                    }
                }
            }
            MessageMerge::Fields(fields) => {
                let mut message = Value::Object(std::mem::take(&mut self.message));
                for (to, from) in fields {
                    if let (Some(value), Some(slot)) =
                        (event::get(from, event), to.get_or_insert(&mut message))
                    {
                        *slot = event::to_value(value);
                    }
                }
                self.message = into_map(message);
            }
        }
        Ok(())
    }

    fn append(&mut self, append: &'a Append, event: &Event<'_>) {
        let Some(value) = event::get(&append.from, event) else {
            return;
        };
        let index = match &append.key {
            None => None,
            Some(key) => {
                let Some(k) = event::get(key, event).and_then(key_of) else {
                    return;
                };
                Some(match self.keys.get(k) {
                    Some(i) => i,
                    // A block that streams without a start event starts here.
                    None => {
                        let i = self.push_item(Value::Object(Map::new()), true);
                        self.keys.insert(k, i);
                        i
                    }
                })
            }
        };
        if let Some(i) = index {
            if !self.items[i].open {
                return;
            }
            if append.as_ == AppendAs::Json {
                let Some(text) = fragment_text(value) else {
                    return;
                };
                let item = &mut self.items[i];
                match item.json.iter_mut().find(|(p, _)| **p == append.to) {
                    Some((_, buffer)) => buffer.push_str(&text),
                    None => item.json.push((&append.to, text.into_owned())),
                }
                return;
            }
            append_value(&mut self.items[i].value, &append.to, value, append.as_);
        } else {
            let mut message = Value::Object(std::mem::take(&mut self.message));
            append_value(&mut message, &append.to, value, append.as_);
            self.message = into_map(message);
        }
    }

    /// Merges each fragment into the call it belongs to: a new id starts a
    /// call (even at an index already used), a known id continues its call,
    /// then an index continues the call last given it, then a fragment with
    /// neither continues the latest call.
    fn fragments(&mut self, plan: &Fragments, event: &Event<'_>) {
        let Some(Event::Array(entries)) = event::get(&plan.list, event) else {
            return;
        };
        for entry in entries.iter() {
            let id = plan
                .id
                .as_ref()
                .and_then(|p| event::get(p, entry))
                .and_then(key_of);
            let index = plan
                .index
                .as_ref()
                .and_then(|p| event::get(p, entry))
                .and_then(key_of);
            let known = match (id, index) {
                (Some(id), _) => self.by_id.get(id),
                (None, Some(index)) => self.by_index.get(index),
                (None, None) => self.latest_fragment,
            };
            let mut fragment = event::to_value(entry);
            for path in &plan.drop {
                path.remove(&mut fragment);
            }
            let appended: Vec<(&JsonPath, Option<Value>)> = plan
                .append
                .iter()
                .map(|p| (p, p.remove(&mut fragment)))
                .collect();
            let target = match known.filter(|&i| self.items[i].open) {
                Some(i) => {
                    merge_present(&mut self.items[i].value, fragment);
                    i
                }
                None => {
                    let i = self.push_item(fragment, true);
                    self.latest_fragment = Some(i);
                    i
                }
            };
            if let Some(id) = id {
                self.by_id.insert(id, target);
            }
            if let Some(index) = index {
                self.by_index.insert(index, target);
            }
            self.latest_fragment = Some(target);
            for (path, value) in appended {
                let value = value.unwrap_or(Value::Null);
                append_owned(&mut self.items[target].value, path, &value);
            }
            // An item opened by a fragment is a call once it looks like one.
            let value = &self.items[target].value;
            if self.items[target].call.is_none()
                && (self.provider.is_call(value)
                    || self.provider.is_search_item(value, self.listing))
            {
                self.items[target].call = Some(self.calls);
                self.calls += 1;
            }
        }
    }

    /// An element of a pieces list: opens, extends, keeps alive or closes the
    /// item whose arguments arrive in pieces. `false` when it is a whole item.
    fn piece(
        &mut self,
        plan: &Pieces,
        element: &Event<'_>,
        out: &mut Vec<StreamedCall>,
    ) -> Result<bool> {
        let Some(Event::Object(at)) = event::get(&plan.at, element) else {
            return Ok(false);
        };
        let list_key = plan.list_key.as_deref();
        let more = matches!(event::member(at, &plan.more), Some(Event::Bool(true)));
        let pieces = event::get_in(&plan.list, at).and_then(Event::as_array);
        let other_keys = at
            .iter()
            .any(|(k, _)| Some(*k) != list_key && *k != plan.more);
        if at.is_empty() {
            // The terminal element: the item is complete.
            if let Some(i) = self.piece_item.take() {
                self.close(i, out)?;
            }
            return Ok(true);
        }
        if pieces.is_none() && !more {
            return Ok(false);
        }
        if other_keys {
            // An opening element: the item, without the protocol's keys.
            if let Some(i) = self.piece_item.take() {
                self.close(i, out)?;
            }
            let mut value = event::to_value(element);
            if let Some(Value::Object(obj)) = plan.at.get_or_insert(&mut value) {
                if let Some(k) = list_key {
                    obj.shift_remove(k);
                }
                obj.shift_remove(&plan.more);
            }
            if let Some(slot) = plan.args.get_or_insert(&mut value)
                && slot.is_null()
            {
                *slot = Value::Object(Map::new());
            }
            self.piece_item = Some(self.push_item(value, true));
        }
        let mut piece_more = false;
        if let (Some(pieces), Some(i)) = (pieces, self.piece_item) {
            for piece in pieces {
                piece_more |= matches!(event::field(piece, &plan.more), Some(Event::Bool(true)));
                let Some(path) = event::field(piece, &plan.path).and_then(Event::as_str) else {
                    continue;
                };
                let value = piece.as_object().and_then(|p| {
                    p.iter()
                        .find(|(k, _)| *k != plan.path && *k != plan.more)
                        .map(|(k, v)| match &plan.null {
                            Some(null) if *k == null => Value::Null,
                            _ => event::to_value(v),
                        })
                });
                if let (Some(value), Some(args)) =
                    (value, plan.args.get_or_insert(&mut self.items[i].value))
                {
                    set_json_path(args, path, value);
                }
            }
        }
        if !more
            && !piece_more
            && let Some(i) = self.piece_item.take()
        {
            self.close(i, out)?;
        }
        Ok(true)
    }

    /// Completes an item; a call is read and handed out.
    fn close(&mut self, index: usize, out: &mut Vec<StreamedCall>) -> Result<()> {
        let item = &mut self.items[index];
        if !item.open {
            return Ok(());
        }
        item.open = false;
        let arguments_error = finish_json(item);
        let Some(position) = item.call else {
            return Ok(());
        };
        let item = &self.items[index];
        if let Some(search) = self
            .provider
            .search_item(&item.value, position, self.listing)
        {
            let call = StreamedCall::Search(search);
            self.done.push(call.clone());
            out.push(call);
            return Ok(());
        }
        let call = match self.provider.extract_item(
            &item.value,
            position,
            self.listing,
            &mut self.seen_ids,
            arguments_error,
        )? {
            Ok(call) => StreamedCall::Ready(call),
            Err(rejected) => StreamedCall::Rejected(rejected),
        };
        self.done.push(call.clone());
        out.push(call);
        Ok(())
    }

    fn end(&mut self, out: &mut Vec<StreamedCall>) -> Result<()> {
        self.ended = true;
        if self.plan.open_at_end == OpenAtEnd::Close {
            for index in 0..self.items.len() {
                self.close(index, out)?;
            }
        }
        Ok(())
    }

    /// The message and the calls: complete items in order; a call still open
    /// is incomplete and left out.
    pub(crate) fn finish(mut self) -> Streamed {
        let mut items = Vec::with_capacity(self.items.len());
        for mut item in std::mem::take(&mut self.items) {
            if item.open {
                if item.call.is_some() {
                    continue;
                }
                finish_json(&mut item);
            }
            if !self.plan.drop.contains(&item.value) {
                items.push(item.value);
            }
        }
        let hosted = self.provider.read_hosted(&items);
        let message = match &self.plan.items {
            None => Value::Array(items),
            Some(path) => {
                let mut message = Value::Object(std::mem::take(&mut self.message));
                if !(items.is_empty() && self.plan.omit_empty)
                    && let Some(slot) = path.get_or_insert(&mut message)
                {
                    *slot = Value::Array(items);
                }
                message
            }
        };
        // The programs and their container, read as from a whole response.
        let listed = match &self.plan.items {
            None => message.as_array(),
            Some(path) => path.get(&message).and_then(Value::as_array),
        };
        let programs = self.provider.read_programs(
            message.is_object().then_some(&message),
            listed.map_or(&[][..], Vec::as_slice),
        );
        let mut extracted = Extracted {
            hosted,
            programs,
            ..Default::default()
        };
        let mut done = self.done;
        done.sort_by_key(StreamedCall::index);
        for (position, call) in done.into_iter().enumerate() {
            match call {
                StreamedCall::Ready(mut call) => {
                    call.index = position;
                    extracted.calls.push(call);
                }
                StreamedCall::Rejected(mut rejected) => {
                    rejected.index = position;
                    extracted.rejected.push(rejected);
                }
                StreamedCall::Search(mut search) => {
                    search.index = position;
                    extracted.searches.push(search);
                }
            }
        }
        Streamed { extracted, message }
    }
}

fn into_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Parses an item's `as: json` text into place. Blank text leaves what the
/// item had there (or `{}`); text that is not a JSON object leaves `{}` and
/// is the call's arguments error.
fn finish_json(item: &mut Item<'_>) -> Option<Error> {
    let mut error = None;
    for (path, text) in std::mem::take(&mut item.json) {
        let Some(slot) = path.get_or_insert(&mut item.value) else {
            continue;
        };
        if text.trim().is_empty() {
            if slot.is_null() {
                *slot = Value::Object(Map::new());
            }
            continue;
        }
        match serde_json::from_str::<Value>(&text) {
            Ok(value @ Value::Object(_)) => *slot = value,
            Ok(other) => {
                error.get_or_insert_with(|| {
                    Error::new(
                        ErrorKind::InvalidArguments,
                        format!(
                            "the arguments must be a JSON object, got {}",
                            type_name(&other)
                        ),
                    )
                });
                *slot = Value::Object(Map::new());
            }
            Err(e) => {
                error.get_or_insert_with(|| {
                    Error::new(
                        ErrorKind::InvalidArguments,
                        "the arguments are not valid JSON",
                    )
                    .with_source(e)
                });
                *slot = Value::Object(Map::new());
            }
        }
    }
    error
}

/// Appends `value` at `path` in `target`: to a string, or to a list.
fn append_value(target: &mut Value, path: &JsonPath, value: &Event<'_>, as_: AppendAs) {
    let Some(slot) = path.get_or_insert(target) else {
        return;
    };
    match as_ {
        AppendAs::List => match slot {
            Value::Array(items) => items.push(event::to_value(value)),
            Value::Null => *slot = Value::Array(vec![event::to_value(value)]),
            _ => {}
        },
        AppendAs::Text | AppendAs::Json => append_text(slot, fragment_text(value)),
    }
}

/// Appends a fragment's text to the string in `slot` (an absent fragment
/// leaves at least an empty string).
fn append_text(slot: &mut Value, text: Option<Cow<'_, str>>) {
    let Some(text) = text else {
        if slot.is_null() {
            *slot = Value::String(String::new());
        }
        return;
    };
    match slot {
        Value::String(s) => s.push_str(&text),
        Value::Null => *slot = Value::String(text.into_owned()),
        _ => {}
    }
}

/// Appends a value taken out of a call fragment at `path` in `target`, as text.
fn append_owned(target: &mut Value, path: &JsonPath, value: &Value) {
    let Some(slot) = path.get_or_insert(target) else {
        return;
    };
    let text = match value {
        Value::Null => None,
        Value::String(s) => Some(Cow::Borrowed(s.as_str())),
        other => Some(Cow::Owned(other.to_string())),
    };
    append_text(slot, text);
}

/// Merges `over` into `base`: objects key by key; an empty string or `null`
/// never replaces what is there.
fn merge_present(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(existing) => merge_present(existing, v),
                    None => {
                        if !v.is_null() {
                            b.insert(k, v);
                        }
                    }
                }
            }
        }
        (_, Value::Null) => {}
        (_, Value::String(s)) if s.is_empty() => {}
        (b, o) => *b = o,
    }
}

/// Sets `value` at an RFC 9535 normalized path such as `$.a.b[0]['c d']`
/// under `target`; a string arriving where a string is appends to it. A path
/// that is not one changes nothing.
fn set_json_path(target: &mut Value, path: &str, value: Value) {
    // Checked whole first, so that a bad step late in the path leaves the
    // value as it was. A piece arrives per event: the steps borrow from the
    // path, and a key is copied only when it is new.
    if !is_json_path(path) {
        return;
    }
    let Some(steps) = json_path_steps(path) else {
        return;
    };
    let mut cur = target;
    for step in steps.flatten() {
        cur = match step {
            PathStep::Key(k) => {
                if !cur.is_object() {
                    *cur = Value::Object(Map::new());
                }
                let Value::Object(map) = cur else { return };
                if !map.contains_key(k.as_ref()) {
                    map.insert(k.as_ref().to_owned(), Value::Null);
                }
                let Some(slot) = map.get_mut(k.as_ref()) else {
                    return;
                };
                slot
            }
            PathStep::Index(i) => {
                if !cur.is_array() {
                    *cur = Value::Array(Vec::new());
                }
                let Value::Array(items) = cur else { return };
                // Elements arrive in order: a piece may add the next one, never
                // skip ahead (so an index cannot make a list huge).
                if i > items.len() {
                    return;
                }
                if i == items.len() {
                    items.push(Value::Null);
                }
                &mut items[i]
            }
        };
    }
    match (cur, value) {
        (Value::String(existing), Value::String(more)) => existing.push_str(&more),
        (slot, value) => *slot = value,
    }
}

enum PathStep<'a> {
    Key(Cow<'a, str>),
    Index(usize),
}

/// The steps of a normalized path, each `None` where the text is not a step
/// (the steps end there); `None` when the path does not start with `$`.
fn json_path_steps(path: &str) -> Option<impl Iterator<Item = Option<PathStep<'_>>>> {
    let mut rest = path.strip_prefix('$')?;
    let mut broken = false;
    Some(std::iter::from_fn(move || {
        if broken || rest.is_empty() {
            return None;
        }
        let step = if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            rest = &after[end..];
            Some(PathStep::Key(Cow::Borrowed(&after[..end])))
        } else if let Some(after) = rest.strip_prefix("['") {
            after.find("']").map(|end| {
                let key = &after[..end];
                rest = &after[end + 2..];
                PathStep::Key(if key.contains("\\'") {
                    Cow::Owned(key.replace("\\'", "'"))
                } else {
                    Cow::Borrowed(key)
                })
            })
        } else if let Some(after) = rest.strip_prefix('[') {
            after.find(']').and_then(|end| {
                let index = after[..end].parse().ok()?;
                rest = &after[end + 1..];
                Some(PathStep::Index(index))
            })
        } else {
            None
        };
        broken = step.is_none();
        Some(step)
    }))
}

fn is_json_path(path: &str) -> bool {
    json_path_steps(path).is_some_and(|mut steps| steps.all(|s| s.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_paths_set_and_append() {
        let mut v = json!({});
        set_json_path(&mut v, "$.a.b[0]", json!(1));
        set_json_path(&mut v, "$.a.b[1].c", json!("x"));
        set_json_path(&mut v, "$.a.b[1].c", json!("y"));
        set_json_path(&mut v, "$['k l']", json!(3));
        // An index past the next element is ignored: lists grow one by one.
        set_json_path(&mut v, "$.a.b[99999]", json!(2));
        assert_eq!(v, json!({"a": {"b": [1, {"c": "xy"}]}, "k l": 3}));
        assert!(!is_json_path("a.b"));
        assert!(!is_json_path("$[x]"));
        assert!(is_json_path("$['it\\'s'][0].a"));
        // A path that breaks late changes nothing.
        let before = v.clone();
        set_json_path(&mut v, "$.a.b[0].new[x]", json!(4));
        assert_eq!(v, before);
        set_json_path(&mut v, "$['it\\'s']", json!(5));
        assert_eq!(v["it's"], json!(5));
    }

    #[test]
    fn merging_keeps_what_an_empty_fragment_would_blank() {
        let mut v = json!({"id": "a", "function": {"name": "f"}});
        merge_present(
            &mut v,
            json!({"id": "", "type": "function", "function": {"name": ""}}),
        );
        assert_eq!(
            v,
            json!({"id": "a", "function": {"name": "f"}, "type": "function"})
        );
    }
}
