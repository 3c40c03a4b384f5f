//! Reading spec and rules files: built-in, from a folder, or given directly.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use serde_json::Value;

use super::Registry;
use super::compile::{compile, deep_merge};
use super::yaml::Document;
use crate::error::{Error, ErrorKind, Result};
use crate::strict::StrictRules;

include!(concat!(env!("OUT_DIR"), "/builtin.rs"));

const SPEC_SCHEMA: &str = include_str!("../../schemas/provider-spec.schema.json");
const RULES_SCHEMA: &str = include_str!("../../schemas/strict-rules.schema.json");

/// The largest spec or rules file read, in bytes (the bundled ones are under 8 KiB).
pub(crate) const MAX_SPEC_BYTES: usize = 1024 * 1024;

/// What a [`Source`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// A provider spec.
    Spec,
    /// Strict-mode rules.
    Rules,
}

/// One spec or rules file's text, with its id and where it came from.
#[derive(Debug, Clone)]
pub struct Source {
    /// What the file holds.
    pub kind: SourceKind,
    /// The id (the file's stem).
    pub id: String,
    /// Where the text came from, for error messages.
    pub file: PathBuf,
    /// The YAML text.
    pub text: String,
}

impl Source {
    /// A provider spec with `id`, read from `file`.
    pub fn spec(id: impl Into<String>, file: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        Source {
            kind: SourceKind::Spec,
            id: id.into(),
            file: file.into(),
            text: text.into(),
        }
    }

    /// Strict-mode rules with `id`, read from `file`.
    pub fn rules(id: impl Into<String>, file: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        Source {
            kind: SourceKind::Rules,
            id: id.into(),
            file: file.into(),
            text: text.into(),
        }
    }
}

pub(crate) fn builtin_sources() -> Vec<Source> {
    BUILTIN
        .iter()
        .map(|&(kind, id, file, text)| Source {
            kind: if kind == "rules" {
                SourceKind::Rules
            } else {
                SourceKind::Spec
            },
            id: id.to_owned(),
            file: PathBuf::from(format!("built-in {file}")),
            text: text.to_owned(),
        })
        .collect()
}

pub(crate) fn dir_sources(dir: &Path) -> Result<Vec<Source>> {
    let mut out = read_yaml_files(dir, SourceKind::Spec)?;
    let rules = dir.join("rules");
    if rules.is_dir() {
        out.extend(read_yaml_files(&rules, SourceKind::Rules)?);
    }
    Ok(out)
}

fn read_yaml_files(dir: &Path, kind: SourceKind) -> Result<Vec<Source>> {
    let io = |e: std::io::Error, p: &Path| Error::new(ErrorKind::Io, e.to_string()).with_file(p);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| io(e, dir))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).map_err(|e| io(e, &path))?;
            let text = String::from_utf8(bytes).map_err(|e| {
                Error::new(
                    ErrorKind::Spec,
                    format!(
                        "not UTF-8 (invalid byte at offset {})",
                        e.utf8_error().valid_up_to()
                    ),
                )
                .with_file(&path)
            })?;
            let id = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_owned();
            Ok(Source {
                kind,
                id,
                file: path,
                text,
            })
        })
        .collect()
}

struct Parsed {
    file: PathBuf,
    doc: Document,
}

fn spec_error(file: &Path, doc: Option<&Document>, at: &str, message: impl Into<String>) -> Error {
    let mut err = Error::new(ErrorKind::Spec, message).with_file(file);
    if let Some(line) = doc.and_then(|d| d.line(at)) {
        err = err.with_line(line);
    }
    let path = if at.is_empty() {
        "/".to_owned()
    } else {
        at.to_owned()
    };
    err.with_path(path)
}

fn validator(schema: &'static str) -> &'static jsonschema::Validator {
    static SPEC: LazyLock<jsonschema::Validator> = LazyLock::new(|| compile_schema(SPEC_SCHEMA));
    static RULES: LazyLock<jsonschema::Validator> = LazyLock::new(|| compile_schema(RULES_SCHEMA));
    if std::ptr::eq(schema, SPEC_SCHEMA) {
        &SPEC
    } else {
        &RULES
    }
}

fn compile_schema(text: &str) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(text).expect("the bundled schemas are valid JSON");
    jsonschema::validator_for(&schema).expect("the bundled schemas are valid JSON Schema")
}

fn validate(schema: &'static str, file: &Path, docs: &[&Document], value: &Value) -> Result<()> {
    let Some(err) = validator(schema)
        .iter_errors(value)
        .max_by_key(|e| e.instance_path().as_str().len())
    else {
        return Ok(());
    };
    let at = err.instance_path().as_str().to_owned();
    let doc = docs
        .iter()
        .copied()
        .find(|d| d.line(&at).is_some_and(|_| d.value.pointer(&at).is_some()));
    Err(spec_error(
        file,
        doc.or(docs.first().copied()),
        &at,
        err.to_string(),
    ))
}

pub(crate) fn load(sources: Vec<Source>) -> Result<Registry> {
    let mut specs: BTreeMap<String, Parsed> = BTreeMap::new();
    let mut rules_docs: BTreeMap<String, Parsed> = BTreeMap::new();
    for source in sources {
        if source.text.len() > MAX_SPEC_BYTES {
            return Err(Error::new(
                ErrorKind::Spec,
                format!(
                    "the file is {} bytes; specs and rules files are limited to {MAX_SPEC_BYTES} bytes",
                    source.text.len()
                ),
            )
            .with_file(&source.file));
        }
        let doc = Document::parse(&source.text).map_err(|(msg, line)| {
            let err =
                Error::new(ErrorKind::Spec, format!("invalid YAML: {msg}")).with_file(&source.file);
            match line {
                Some(l) => err.with_line(l),
                None => err,
            }
        })?;
        let parsed = Parsed {
            file: source.file,
            doc,
        };
        match source.kind {
            SourceKind::Spec => specs.insert(source.id, parsed),
            SourceKind::Rules => rules_docs.insert(source.id, parsed),
        };
    }
    let mut registry = Registry::default();
    for (id, parsed) in &rules_docs {
        registry
            .rules
            .insert(id.clone(), Arc::new(load_rules(parsed)?));
    }
    for (id, parsed) in &specs {
        let merged = resolve_extends(id, &specs)?;
        let docs = chain_docs(id, &specs);
        validate(SPEC_SCHEMA, &parsed.file, &docs, &merged)?;
        let source = parsed.file.display().to_string();
        let provider = compile(id, source, &merged, &registry.rules).map_err(|(at, msg)| {
            let doc = docs
                .iter()
                .copied()
                .find(|d| d.value.pointer(&at).is_some());
            spec_error(&parsed.file, doc.or(Some(&parsed.doc)), &at, msg)
        })?;
        registry.providers.insert(id.clone(), Arc::new(provider));
    }
    Ok(registry)
}

fn load_rules(parsed: &Parsed) -> Result<StrictRules> {
    validate(
        RULES_SCHEMA,
        &parsed.file,
        &[&parsed.doc],
        &parsed.doc.value,
    )?;
    let rules: StrictRules = serde_json::from_value(parsed.doc.value.clone())
        .map_err(|e| spec_error(&parsed.file, Some(&parsed.doc), "", e.to_string()))?;
    rules
        .check()
        .map_err(|msg| spec_error(&parsed.file, Some(&parsed.doc), "", msg))?;
    Ok(rules)
}

/// The documents of `id` and the specs it extends, nearest first.
fn chain_docs<'a>(id: &str, specs: &'a BTreeMap<String, Parsed>) -> Vec<&'a Document> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut next = Some(id.to_owned());
    while let Some(cur) = next.take() {
        let Some(parsed) = specs.get(&cur).filter(|_| seen.insert(cur.clone())) else {
            break;
        };
        out.push(&parsed.doc);
        next = parsed
            .doc
            .value
            .get("extends")
            .and_then(Value::as_str)
            .map(str::to_owned);
    }
    out
}

/// The document of `id` deep-merged over the specs it extends.
fn resolve_extends(id: &str, specs: &BTreeMap<String, Parsed>) -> Result<Value> {
    let mut chain: Vec<&Parsed> = Vec::new();
    let mut seen = vec![id.to_owned()];
    let mut cur = &specs[id];
    loop {
        chain.push(cur);
        let Some(base) = cur.doc.value.get("extends") else {
            break;
        };
        let Some(base_id) = base.as_str() else {
            return Err(spec_error(
                &cur.file,
                Some(&cur.doc),
                "/extends",
                "`extends` must be a spec id",
            ));
        };
        if seen.iter().any(|s| s == base_id) {
            return Err(spec_error(
                &cur.file,
                Some(&cur.doc),
                "/extends",
                format!(
                    "`extends` makes a cycle: {} -> {base_id}",
                    seen.join(" -> ")
                ),
            ));
        }
        cur = specs.get(base_id).ok_or_else(|| {
            spec_error(
                &cur.file,
                Some(&cur.doc),
                "/extends",
                format!("no spec `{base_id}` to extend"),
            )
        })?;
        seen.push(base_id.to_owned());
    }
    let mut merged = Value::Object(Default::default());
    for parsed in chain.iter().rev() {
        deep_merge(&mut merged, &parsed.doc.value);
    }
    if let Value::Object(map) = &mut merged {
        map.shift_remove("extends");
    }
    Ok(merged)
}
