//! The layers of `src/`: each top-level module imports only modules on the
//! floors below its own, so no two of them import each other and the spec
//! engine stays the ground floor of the pipeline. The floors are those drawn
//! in `docs/architecture.md`; this test reads every file's `crate::` paths
//! (in `use` declarations and inline, grouped forms included, comments left
//! out) and fails on any that points sideways or up.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Top to bottom. A module may import any module on a floor below its own,
/// and none on its own floor or above.
const FLOORS: &[&[&str]] = &[
    &["cli", "guide"],
    &["client"],
    &["exec"],
    &["stream"],
    &["deferred", "sampling"],
    &["calls"],
    &["listing", "results"],
    &["media", "search"],
    &["toolset"],
    &["spec"],
    &["config", "mcp", "strict"],
    &["describe", "error", "json"],
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|floor| floor.contains(&module))
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`None` for the crate
/// root and the binary's entry point).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).expect("a file under src/");
    let first = rel.components().next()?.as_os_str().to_str()?;
    match first.strip_suffix(".rs") {
        Some("lib" | "main") => None,
        Some(stem) => Some(stem.to_owned()),
        None => Some(first.to_owned()),
    }
}

/// `text` without its comments (line, doc and block comments) and string
/// literals, so that a path in a doc link or a message is not an import.
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'/', Some(b'/')) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                let mut depth = 0;
                while i < bytes.len() {
                    if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            (b'"', _) => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            (b'\'', _) => {
                // A char literal ('a', '\n', '"'); a lifetime has no closing quote.
                let close = if bytes.get(i + 1) == Some(&b'\\') {
                    bytes[i + 2..]
                        .iter()
                        .position(|&b| b == b'\'')
                        .map(|p| i + 2 + p)
                } else if bytes.get(i + 2) == Some(&b'\'') {
                    Some(i + 2)
                } else {
                    None
                };
                match close {
                    Some(end) => {
                        out.push_str("' '");
                        i = end + 1;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            _ => {
                let ch = text[i..].chars().next().expect("a char");
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    out
}

/// The first segment of each path in a `use` tree's body (`a::X`,
/// `{a::X, b::{Y, Z}}`, `self`).
fn tree_heads(tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(inner) = tree.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        let mut depth = 0;
        let mut start = 0;
        for (i, ch) in inner.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    tree_heads(&inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        tree_heads(&inner[start..], out);
        return;
    }
    let head: String = tree
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if !head.is_empty() {
        out.push(head);
    }
}

/// The names the crate root re-exports, with the module each comes from.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let code = code_only(lib);
    let mut names = BTreeMap::new();
    for statement in code.split(';') {
        // (after any attribute: `#[cfg(feature = "...")] pub use ...`)
        let Some((_, rest)) = statement.split_once("pub use ") else {
            continue;
        };
        let Some((module, tree)) = rest.split_once("::") else {
            continue;
        };
        let mut leaves = Vec::new();
        let flat: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
        let flat = flat.trim_matches(|c| c == '{' || c == '}');
        for part in flat.split([',', '{', '}']) {
            let leaf = part.rsplit("::").next().unwrap_or_default();
            let leaf = leaf.rsplit(" as ").next().unwrap_or(leaf);
            if !leaf.is_empty() && leaf != "self" {
                leaves.push(leaf.to_owned());
            }
        }
        for leaf in leaves {
            names.insert(leaf, module.trim().to_owned());
        }
    }
    names
}

/// The top-level modules `code` refers to through `crate::`.
fn imports(code: &str, reexports: &BTreeMap<String, String>) -> Vec<String> {
    let mut heads = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `$crate::`, `my_crate::`
        }
        if rest.starts_with('{') {
            let mut depth = 0;
            let end = rest
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(rest.len(), |(i, _)| i + 1);
            tree_heads(&rest[..end], &mut heads);
        } else {
            tree_heads(rest, &mut heads);
        }
    }
    heads
        .into_iter()
        .map(|head| reexports.get(&head).cloned().unwrap_or(head))
        .collect()
}

#[test]
fn top_level_modules_import_only_the_floors_below() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let reexports = root_reexports(&fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs"));
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        let shown = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        let Some(own) = floor_of(&module) else {
            problems.push(format!(
                "{shown}: the module `{module}` is on no floor of tests/layers.rs (place it, and in docs/architecture.md)"
            ));
            continue;
        };
        let code = code_only(&fs::read_to_string(file).expect("a source file"));
        for target in imports(&code, &reexports) {
            if target == module || target == "self" || target == "super" {
                continue;
            }
            match floor_of(&target) {
                Some(floor) if floor > own => {}
                Some(floor) => problems.push(format!(
                    "{shown}: `{module}` (floor {own}) imports `crate::{target}` (floor {floor}): \
                     a module imports only the floors below its own"
                )),
                None => problems.push(format!(
                    "{shown}: imports `crate::{target}`, which is on no floor of tests/layers.rs"
                )),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_module_is_on_one_floor() {
    let mut seen = BTreeMap::new();
    for (i, floor) in FLOORS.iter().enumerate() {
        for module in *floor {
            if let Some(other) = seen.insert(*module, i) {
                panic!("`{module}` is on floors {other} and {i}");
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for module in files.iter().filter_map(|f| module_of(&src, f)) {
        assert!(
            seen.contains_key(module.as_str()),
            "`{module}` is on no floor"
        );
    }
    for module in seen.keys() {
        assert!(
            files
                .iter()
                .any(|f| module_of(&src, f).as_deref() == Some(*module)),
            "the floors name `{module}`, which src/ does not have"
        );
    }
}

#[test]
fn the_reader_sees_grouped_and_inline_paths_and_skips_comments() {
    let reexports = root_reexports(
        "pub use calls::{Extracted, ToolCall};\n#[cfg(feature = \"x\")]\npub use error::{Error, Result};",
    );
    let code = code_only(
        "use crate::{listing::Listing, spec::{Provider, plan::Field}};\n\
         /// [`Source`](crate::exec::Source)\n\
         // crate::client is a comment\n\
         fn f() -> crate::Result<()> { let s = \"crate::media\"; crate::json::pointer(); }\n\
         use crate::ToolCall;",
    );
    assert_eq!(
        imports(&code, &reexports),
        ["listing", "spec", "error", "json", "calls"]
    );
}

#[test]
fn the_architecture_chapter_draws_the_same_floors() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md");
    let text = fs::read_to_string(&path).expect("docs/architecture.md");
    let section = text
        .split("## Layers")
        .nth(1)
        .expect("docs/architecture.md has a `## Layers` section");
    let drawn: Vec<Vec<String>> = section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
            let [floor, modules] = cells.as_slice() else {
                return None;
            };
            floor.trim().parse::<usize>().ok()?;
            Some(
                modules
                    .split(',')
                    .map(|m| m.trim().trim_matches('`').to_owned())
                    .collect(),
            )
        })
        .collect();
    let floors: Vec<Vec<String>> = FLOORS
        .iter()
        .map(|f| f.iter().map(|m| (*m).to_owned()).collect())
        .collect();
    assert_eq!(
        drawn, floors,
        "the floors of docs/architecture.md and tests/layers.rs differ"
    );
}
