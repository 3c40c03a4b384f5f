//! Local `$ref`s: resolving them, converting each definition once, carrying
//! a definition's null paths to every place that refers to it, and
//! rejecting recursion that would make null paths unbounded.

use serde_json::{Map, Value};

use super::error::{Limit, StrictError, StrictReason};
use super::null_path::NullPath;
use super::rules::{KeywordClass, Rewrite};
use super::walk::MAX_NODES;
use super::walk::{DefKey, DefState, Token, Walker};

/// Containers of definitions at the root, in the order they are attached.
const DEF_CONTAINERS: &[&str] = &["$defs", "definitions"];

impl<'a> Walker<'a> {
    /// Handles a `$ref`: converts its definition if needed and adds the
    /// definition's null paths under the current instance path.
    pub(crate) fn reference(&mut self, value: &'a Value) -> Result<Value, StrictError> {
        let Value::String(reference) = value else {
            return Err(self.err_at("$ref", StrictReason::Invalid("$ref".into())));
        };
        let key = self.resolve(reference)?;
        if self.state(key).is_none() {
            self.convert_def(key)?;
        }
        // The fields apart, so that the paths are read while `nulls` grows.
        let state = match key {
            DefKey::Root => self.root_state.as_ref(),
            _ => self.defs.get(&key),
        };
        match state {
            Some(DefState::Done(paths)) => {
                if self.nulls.len() + paths.len() > self.null_path_budget() {
                    return Err(self.err_at("$ref", StrictReason::Limit(Limit::MaxProperties)));
                }
                let prefix = &self.path;
                self.nulls.extend(paths.iter().map(|p| {
                    NullPath(
                        prefix
                            .iter()
                            .map(|s| s.owned())
                            .chain(p.0.iter().cloned())
                            .collect(),
                    )
                }));
            }
            _ => self.mark_cycle(key)?,
        }
        Ok(value.clone())
    }

    /// Every definition from `key` to the innermost one being converted is
    /// part of a cycle; a cycle that passes through no property or item
    /// (`A: {$ref: B}`, `B: {$ref: A}`) describes no value and fails.
    fn mark_cycle(&mut self, key: DefKey<'a>) -> Result<(), StrictError> {
        let Some(start) = self.in_progress.iter().position(|(k, _)| *k == key) else {
            return Ok(());
        };
        let cycle = &self.in_progress[start..];
        let refused = !self.rules.recursive_refs || self.rules.rewrites(Rewrite::InlineRefs);
        if refused || (self.path.is_empty() && cycle[1..].iter().all(|(_, at_top)| *at_top)) {
            return Err(self.err_at("$ref", StrictReason::RecursiveRef));
        }
        self.recursive.extend(cycle.iter().map(|(k, _)| *k));
        Ok(())
    }

    /// Converts a definition from its own root: fresh pointer, instance
    /// path, null paths and object depth.
    fn convert_def(&mut self, key: DefKey<'a>) -> Result<(), StrictError> {
        let (pointer, target) = self.def_location(key);
        if let DefKey::Def(_, name) = key {
            self.add_chars(name.chars().count(), "$ref")?;
        }
        let at_top = self.path.is_empty();
        let saved_ptr = std::mem::replace(&mut self.ptr, pointer);
        let saved_path = std::mem::take(&mut self.path);
        let saved_nulls = std::mem::take(&mut self.nulls);
        let saved_depth = std::mem::replace(&mut self.depth, 0);
        self.begin(key, at_top);
        let out = self.node(target)?;
        let paths = std::mem::replace(&mut self.nulls, saved_nulls);
        self.finish(key, paths, true)?;
        self.ptr = saved_ptr;
        self.path = saved_path;
        self.depth = saved_depth;
        self.out_defs.insert(key, out);
        Ok(())
    }

    pub(crate) fn begin(&mut self, key: DefKey<'a>, at_top: bool) {
        self.set_state(key, DefState::InProgress);
        self.in_progress.push((key, at_top));
    }

    /// Where the conversion of a definition stands, if it began.
    fn state(&self, key: DefKey<'a>) -> Option<&DefState> {
        match key {
            DefKey::Root => self.root_state.as_ref(),
            _ => self.defs.get(&key),
        }
    }

    fn set_state(&mut self, key: DefKey<'a>, state: DefState) {
        match key {
            DefKey::Root => self.root_state = Some(state),
            _ => {
                self.defs.insert(key, state);
            }
        }
    }

    /// Ends a definition, failing if it is recursive and has null paths
    /// (the current pointer is the definition's); with `record`, its null
    /// paths are kept for the references converted after it.
    pub(crate) fn finish(
        &mut self,
        key: DefKey<'a>,
        paths: Vec<NullPath>,
        record: bool,
    ) -> Result<Vec<NullPath>, StrictError> {
        self.in_progress.pop();
        if self.recursive.contains(&key) && !paths.is_empty() {
            return Err(self.err(StrictReason::RecursiveRef));
        }
        if record {
            self.set_state(key, DefState::Done(paths.clone()));
        }
        Ok(paths)
    }

    fn def_location(&self, key: DefKey<'a>) -> (Vec<Token<'a>>, &'a Value) {
        match key {
            DefKey::Root => (Vec::new(), self.root),
            DefKey::Def(container, name) => (
                vec![Token::Key(container), Token::Key(name)],
                &self.root[container][name],
            ),
        }
    }

    /// Resolves `#`, `#/$defs/x` or `#/definitions/x` (JSON-pointer escaped).
    fn resolve(&self, reference: &str) -> Result<DefKey<'a>, StrictError> {
        let Some(fragment) = reference.strip_prefix('#') else {
            return Err(self.err_at("$ref", StrictReason::NonLocalRef));
        };
        if fragment.is_empty() {
            return Ok(DefKey::Root);
        }
        self.lookup(fragment)
            .ok_or_else(|| self.err_at("$ref", StrictReason::UnresolvableRef))
    }

    fn lookup(&self, fragment: &str) -> Option<DefKey<'a>> {
        let (container, name) = fragment.strip_prefix('/')?.split_once('/')?;
        if name.contains('/') || !DEF_CONTAINERS.contains(&container) {
            return None;
        }
        let name = name.replace("~1", "/").replace("~0", "~");
        let root = self.root.as_object()?;
        let (container, defs) = root.get_key_value(container)?;
        let (name, _) = defs.as_object()?.get_key_value(&name)?;
        Some(DefKey::Def(container, name))
    }

    /// The schema a reference points at, if it resolves.
    pub(crate) fn target(&self, reference: &str) -> Option<&'a Value> {
        match reference.strip_prefix('#')? {
            "" => Some(self.root),
            fragment => self.lookup(fragment).map(|key| self.def_location(key).1),
        }
    }

    /// Converts the root's definitions no `$ref` reached (a subset keeps
    /// them, as written), after the ones that were.
    pub(crate) fn convert_unreferenced_defs(&mut self) -> Result<(), StrictError> {
        let Some(root) = self.root.as_object() else {
            return Ok(());
        };
        for container in DEF_CONTAINERS {
            if self.rules.class(container) != KeywordClass::Keep {
                continue;
            }
            let Some((container, Value::Object(defs))) = root.get_key_value(*container) else {
                continue;
            };
            for name in defs.keys() {
                let key = DefKey::Def(container, name);
                if self.state(key).is_none() {
                    self.convert_def(key)?;
                }
            }
        }
        Ok(())
    }

    /// Replaces a converted node's `$ref` by the converted definition, the
    /// node's other keywords over it (`inline_refs`). Copies are counted
    /// against the node budget, so that references fanning out cannot make
    /// the output huge.
    pub(crate) fn inline(&mut self, out: &mut Map<String, Value>) -> Result<(), StrictError> {
        let Some(Value::String(reference)) = out.shift_remove("$ref") else {
            return Ok(());
        };
        let key = self.resolve(&reference)?;
        let Some(Value::Object(def)) = self.out_defs.get(&key) else {
            // Still being converted: the reference is recursive.
            return Err(self.err_at("$ref", StrictReason::RecursiveRef));
        };
        self.inlined += count_nodes(def);
        if self.inlined > MAX_NODES {
            return Err(self.err_at("$ref", StrictReason::Limit(Limit::MaxNodes)));
        }
        let mut merged = def.clone();
        for (key, value) in std::mem::take(out) {
            merged.insert(key, value);
        }
        *out = merged;
        Ok(())
    }

    /// Adds the converted definitions to the converted root, in input order,
    /// under the container they came from (none when they were inlined).
    pub(crate) fn attach_defs(&mut self, out: &mut Value) {
        if self.out_defs.is_empty() {
            return;
        }
        let (Some(root), Value::Object(out)) = (self.root.as_object(), out) else {
            return;
        };
        if self.rules.rewrites(Rewrite::InlineRefs) {
            return;
        }
        for container in DEF_CONTAINERS {
            let Some(Value::Object(defs)) = root.get(*container) else {
                continue;
            };
            if self.rules.class(container) != KeywordClass::Keep {
                continue;
            }
            let mut converted = Map::new();
            for name in defs.keys() {
                if let Some(def) = self.out_defs.remove(&DefKey::Def(container, name)) {
                    converted.insert(name.clone(), def);
                }
            }
            if !converted.is_empty() {
                out.insert((*container).to_owned(), Value::Object(converted));
            }
        }
    }
}

/// The schema nodes (objects) in a converted value, counted without recursion.
fn count_nodes(map: &Map<String, Value>) -> usize {
    let mut count = 1;
    let mut stack: Vec<&Value> = map.values().collect();
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(m) => {
                count += 1;
                stack.extend(m.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    count
}
