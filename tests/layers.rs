//! The layers of `src/`, read from the sources' imports (`use` declarations
//! and inline paths, grouped forms included, comments and strings left out):
//!
//! - each top-level module imports only modules on the floors below its own,
//!   so no two of them import each other and the spec engine stays the ground
//!   floor of the pipeline; the floors are those `docs/architecture.md` draws;
//! - inside `src/exec/`, each file imports only files on the floors below its
//!   own, so no import circle forms between them.
//!
//! A name re-exported by `lib.rs` (`crate::Result`) or by `exec/mod.rs`
//! (`super::Progress`) counts as an import of the module or file it comes
//! from. A module or file on no floor fails, so that a new one is given its
//! floor.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The top-level modules' floors, lowest first: a module may import the
/// modules of the floors before its own, and no other.
const FLOORS: &[&[&str]] = &[
    &["describe", "error", "json"],
    &["config", "files", "mcp", "select", "strict", "telemetry"],
    &["spec"],
    &["toolset"],
    &["callers", "code", "media", "search"],
    &["budget"],
    &["hosted", "listing", "results"],
    &["programs"],
    &["calls"],
    &["deferred", "sampling"],
    &["stream"],
    &["exec"],
    &["client", "store"],
    &["cli", "guide"],
];

/// The floors of `src/exec/`, lowest first, as [`FLOORS`] are.
const EXEC_FLOORS: &[&[&str]] = &[
    &["clock", "future", "gate", "keys", "kept"],
    &["policy", "durable"],
    &["asks", "seal"],
    &["answerer"],
    &["server"],
    &["skills"],
    &["cache", "catalogs", "hooks", "inprocess", "options"],
    &["input", "turn"],
    &["answering", "source"],
    &["check", "turn_run"],
    &["approve"],
    &["call"],
    &["approvals", "program"],
    &["run"],
    &["stream", "resume"],
    // Declares the files and re-exports their public names.
    &["mod"],
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|floor| floor.contains(&module))
}

// ---- the reader ----

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    /// `::`
    Path,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    /// Any other punctuation.
    Other(char),
}

/// The tokens of Rust source that matter to paths, with comments (doc
/// comments too), string and character literals left out.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        match c {
            '/' if at(i + 1) == '/' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if at(i + 1) == '*' => {
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && at(i + 1) == '*' {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && at(i + 1) == '/' {
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
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
            }
            // Raw strings: r"...", r#"..."#, br#"..."#.
            'r' | 'b'
                if {
                    let mut j = i + usize::from(c == 'b' && at(i + 1) == 'r') + 1;
                    while at(j) == '#' {
                        j += 1;
                    }
                    (c == 'r' || at(i + 1) == 'r') && at(j) == '"'
                } =>
            {
                let mut j = i + usize::from(c == 'b') + 1;
                let mut hashes = 0;
                while at(j) == '#' {
                    hashes += 1;
                    j += 1;
                }
                j += 1;
                loop {
                    if j >= chars.len() {
                        break;
                    }
                    if chars[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#') {
                        j += 1 + hashes;
                        break;
                    }
                    j += 1;
                }
                i = j;
            }
            // A character literal ('x', '\n', '\u{..}'), or a lifetime ('a).
            '\'' => {
                if at(i + 1) == '\\' {
                    i += 2;
                    while i < chars.len() && chars[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if at(i + 2) == '\'' {
                    i += 3;
                } else {
                    i += 1;
                }
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push(Token::Ident(chars[start..i].iter().collect()));
            }
            c if c.is_ascii_digit() => {
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
            ':' if at(i + 1) == ':' => {
                out.push(Token::Path);
                i += 2;
            }
            '{' => {
                out.push(Token::Open);
                i += 1;
            }
            '}' => {
                out.push(Token::Close);
                i += 1;
            }
            ',' => {
                out.push(Token::Comma);
                i += 1;
            }
            ';' => {
                out.push(Token::Semi);
                i += 1;
            }
            '*' => {
                out.push(Token::Star);
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            c => {
                out.push(Token::Other(c));
                i += 1;
            }
        }
    }
    out
}

/// The paths of a `use` tree starting at `tokens[*i]`, each with `prefix`
/// before it; stops after the tree (at `,`, `}` or `;`, not consumed).
fn use_tree(tokens: &[Token], i: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(*i) {
            Some(Token::Ident(name)) => {
                path.push(name.clone());
                *i += 1;
                // `as alias`: the alias does not matter.
                if let Some(Token::Ident(next)) = tokens.get(*i)
                    && next == "as"
                {
                    *i += 2;
                }
            }
            Some(Token::Star) => {
                path.push("*".to_owned());
                *i += 1;
            }
            Some(Token::Open) => {
                *i += 1;
                loop {
                    match tokens.get(*i) {
                        Some(Token::Close) => {
                            *i += 1;
                            return;
                        }
                        Some(Token::Comma) => *i += 1,
                        None => return,
                        _ => use_tree(tokens, i, &path, out),
                    }
                }
            }
            _ => {}
        }
        if tokens.get(*i) == Some(&Token::Path) {
            *i += 1;
        } else {
            out.push(path);
            return;
        }
    }
}

/// Every path a file's code names that starts with `super` or `crate`, with
/// how many inline modules (`mod tests { .. }`) enclose it.
fn paths(text: &str) -> Vec<(usize, Vec<String>)> {
    let tokens = tokens(text);
    let mut out = Vec::new();
    // The brace depth at which each enclosing inline module opened.
    let mut modules: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Open => {
                depth += 1;
                i += 1;
            }
            Token::Close => {
                depth = depth.saturating_sub(1);
                if modules.last() == Some(&depth) {
                    modules.pop();
                }
                i += 1;
            }
            Token::Ident(word)
                if word == "mod"
                    && matches!(tokens.get(i + 1), Some(Token::Ident(_)))
                    && tokens.get(i + 2) == Some(&Token::Open) =>
            {
                modules.push(depth);
                depth += 1;
                i += 3;
            }
            Token::Ident(word) if word == "use" => {
                i += 1;
                let mut found = Vec::new();
                use_tree(&tokens, &mut i, &[], &mut found);
                out.extend(
                    found
                        .into_iter()
                        .filter(|p| {
                            matches!(p.first().map(String::as_str), Some("super" | "crate"))
                        })
                        .map(|p| (modules.len(), p)),
                );
            }
            Token::Ident(word)
                if (word == "super" || word == "crate")
                    && (i == 0 || tokens[i - 1] != Token::Path) =>
            {
                let mut path = vec![word.clone()];
                i += 1;
                while tokens.get(i) == Some(&Token::Path) {
                    match tokens.get(i + 1) {
                        Some(Token::Ident(name)) => path.push(name.clone()),
                        Some(Token::Star) => path.push("*".to_owned()),
                        _ => break,
                    }
                    i += 2;
                }
                out.push((modules.len(), path));
            }
            _ => i += 1,
        }
    }
    out
}

/// The sibling an exec file's path names (a file stem, a name `mod.rs`
/// re-exports, `*`), if it names one: `super::x` from the file's top,
/// `super::super::x` from inside one inline module, `crate::exec::x` anywhere.
fn sibling(nesting: usize, path: &[String]) -> Option<String> {
    if path.first().map(String::as_str) == Some("crate") {
        return match path.get(1).map(String::as_str) {
            Some("exec") => path.get(2).cloned(),
            _ => None,
        };
    }
    let supers = path.iter().take_while(|s| *s == "super").count();
    if supers == nesting + 1 {
        path.get(supers).cloned()
    } else {
        None
    }
}

/// The names a `mod.rs` (or `lib.rs`) re-exports, with the file (or module)
/// each comes from.
fn reexports(mod_rs: &str) -> BTreeMap<String, String> {
    let tokens = tokens(mod_rs);
    let mut out = BTreeMap::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == Token::Ident("use".into()) {
            i += 1;
            let mut found = Vec::new();
            use_tree(&tokens, &mut i, &[], &mut found);
            for path in found {
                if let [file, .., name] = path.as_slice() {
                    out.insert(name.clone(), file.clone());
                }
            }
        } else {
            i += 1;
        }
    }
    out
}

// ---- src/exec/ ----

fn exec_dir() -> PathBuf {
    root().join("src/exec")
}

/// Every `src/exec/*.rs` file: its stem and its text.
fn exec_files() -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    for entry in fs::read_dir(exec_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            files.insert(stem, fs::read_to_string(&path).unwrap());
        }
    }
    files
}

fn exec_floor_of(stem: &str) -> Option<usize> {
    EXEC_FLOORS.iter().position(|floor| floor.contains(&stem))
}

/// The floors, for a failure message: `0 [clock, future, gate] < 1 [policy] < ...`.
fn exec_floors_shown() -> String {
    EXEC_FLOORS
        .iter()
        .enumerate()
        .map(|(i, floor)| format!("{i} [{}]", floor.join(", ")))
        .collect::<Vec<_>>()
        .join(" < ")
}

/// The imports of `stem` that do not point down the table, each said in full.
fn upward_imports(
    stem: &str,
    text: &str,
    files: &BTreeMap<String, String>,
    reexported: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(own) = exec_floor_of(stem) else {
        return vec![format!(
            "src/exec/{stem}.rs is on no floor: add it to EXEC_FLOORS in tests/layers.rs ({})",
            exec_floors_shown()
        )];
    };
    for (nesting, path) in paths(text) {
        let Some(name) = sibling(nesting, &path) else {
            continue;
        };
        let shown = path.join("::");
        let target = if files.contains_key(&name) {
            name.clone()
        } else if let Some(file) = reexported.get(&name) {
            file.clone()
        } else {
            problems.push(format!(
                "src/exec/{stem}.rs imports `{shown}`, which names no file of src/exec/ (import \
                 from the file itself, so that its floor is known)"
            ));
            continue;
        };
        if target == stem {
            continue;
        }
        let Some(theirs) = exec_floor_of(&target) else {
            problems.push(format!(
                "src/exec/{stem}.rs imports `{shown}` from {target}.rs, which is on no floor ({})",
                exec_floors_shown()
            ));
            continue;
        };
        if theirs >= own {
            problems.push(format!(
                "src/exec/{stem}.rs (floor {own}) imports `{shown}` from {target}.rs (floor \
                 {theirs}): an import must point down the floors ({})",
                exec_floors_shown()
            ));
        }
    }
    problems
}

// ---- the top-level modules ----

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

/// The module path of a file of `src/` (`["exec", "run"]` for
/// `src/exec/run.rs`, `["exec"]` for `src/exec/mod.rs`); empty for the crate
/// root and the binary's entry point.
fn module_path(file: &Path) -> Vec<String> {
    let rel = file
        .strip_prefix(root().join("src"))
        .expect("a file under src/");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    match last.strip_suffix(".rs") {
        Some("mod") => {}
        Some("lib" | "main") if parts.is_empty() => {}
        Some(stem) => parts.push(stem.to_owned()),
        None => parts.push(last),
    }
    parts
}

/// The top-level module (or name the crate root re-exports) a path leaves
/// for, if it leaves its own module: `crate::x::..` anywhere, or enough
/// `super`s to reach the root from a file `depth` modules deep inside
/// `nesting` inline modules.
fn top_level_target(depth: usize, nesting: usize, path: &[String]) -> Option<String> {
    match path.first().map(String::as_str) {
        Some("crate") => path.get(1).cloned(),
        Some("super") => {
            let supers = path.iter().take_while(|s| *s == "super").count();
            (supers == depth + nesting)
                .then(|| path.get(supers).cloned())
                .flatten()
        }
        _ => None,
    }
}

/// The top-level modules a file's code imports, resolved through the root's
/// re-exports.
fn top_level_imports(
    depth: usize,
    text: &str,
    reexported: &BTreeMap<String, String>,
) -> Vec<String> {
    paths(text)
        .into_iter()
        .filter_map(|(nesting, path)| top_level_target(depth, nesting, &path))
        .map(|name| reexported.get(&name).cloned().unwrap_or(name))
        .collect()
}

#[test]
fn top_level_modules_import_only_the_floors_below() {
    let lib = fs::read_to_string(root().join("src/lib.rs")).expect("src/lib.rs");
    let reexported = reexports(&lib);
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut problems = Vec::new();
    for file in &files {
        let module = module_path(file);
        let Some(top) = module.first() else {
            continue;
        };
        let shown = file
            .strip_prefix(root())
            .unwrap_or(file)
            .display()
            .to_string();
        let Some(own) = floor_of(top) else {
            problems.push(format!(
                "{shown}: the module `{top}` is on no floor of tests/layers.rs (place it, and in docs/architecture.md)"
            ));
            continue;
        };
        let text = fs::read_to_string(file).expect("a source file");
        for target in top_level_imports(module.len(), &text, &reexported) {
            if &target == top || target == "self" || target == "*" {
                continue;
            }
            match floor_of(&target) {
                Some(floor) if floor < own => {}
                Some(floor) => problems.push(format!(
                    "{shown}: `{top}` (floor {own}) imports `crate::{target}` (floor {floor}): \
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
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let modules: Vec<String> = files
        .iter()
        .filter_map(|f| module_path(f).first().cloned())
        .collect();
    for module in &modules {
        assert!(
            seen.contains_key(module.as_str()),
            "`{module}` is on no floor"
        );
    }
    for module in seen.keys() {
        assert!(
            modules.iter().any(|m| m == module),
            "the floors name `{module}`, which src/ does not have"
        );
    }
}

#[test]
fn the_architecture_chapter_draws_the_same_floors() {
    let path = root().join("docs/architecture.md");
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

#[test]
fn the_reader_sees_grouped_and_inline_paths_and_skips_comments() {
    let reexported = reexports(
        "pub use calls::{Extracted, ToolCall};\n#[cfg(feature = \"x\")]\npub use error::{Error, Result};",
    );
    let text = "use crate::{listing::Listing, spec::{Provider, calls::Field}};\n\
                /// [`Source`](crate::exec::Source)\n\
                // crate::client is a comment\n\
                fn f() -> crate::Result<()> { let s = \"crate::media\"; crate::json::pointer(); }\n\
                use crate::ToolCall;\n\
                fn g() -> super::super::toolset::ToolSet { todo!() }";
    assert_eq!(
        top_level_imports(2, text, &reexported),
        [
            "listing", "spec", "spec", "error", "json", "calls", "toolset"
        ]
    );
}

#[test]
fn exec_files_import_only_floors_below_their_own() {
    let files = exec_files();
    assert!(files.contains_key("mod"), "src/exec/mod.rs not found");
    let reexported = reexports(&files["mod"]);
    let mut problems = Vec::new();
    for floor in EXEC_FLOORS {
        for stem in *floor {
            if !files.contains_key(*stem) {
                problems.push(format!(
                    "EXEC_FLOORS names `{stem}`, but src/exec/{stem}.rs does not exist"
                ));
            }
        }
    }
    for (stem, text) in &files {
        // `mod.rs` is the top floor: its paths are its own children, not `super::`.
        if stem != "mod" {
            problems.extend(upward_imports(stem, text, &files, &reexported));
        } else if exec_floor_of(stem).is_none() {
            problems.push("src/exec/mod.rs is on no floor".to_owned());
        }
    }
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

/// The reader itself: grouped and nested imports, paths in code, comments and
/// strings, and `super` inside an inline module.
#[test]
fn the_reader_finds_every_form_of_import() {
    let text = r##"
//! use super::stream::Doc;
/// use super::run::Doc;
use super::clock::Halt;
use super::{asks::{Handlers, Roots}, policy::Policy as P, self};
use crate::exec::server::Server;
use crate::{exec::turn::Execution, error::Error};
use crate::error::Result;
/* use super::stream::Block; */
pub(super) fn f() -> super::options::ExecOptions {
    let s = "super::run::Quoted";
    let r = r#"super::run::Raw"#;
    let c = '"';
    let _ = super::cache::ToolCache::default();
    pub(super) struct Inner<'a>(&'a str);
    todo!()
}
#[cfg(test)]
mod tests {
    use super::*;
    use super::super::input::Rounds;
}
"##;
    let named: Vec<String> = paths(text)
        .into_iter()
        .filter_map(|(nesting, path)| sibling(nesting, &path))
        .collect();
    assert_eq!(
        named,
        [
            "clock", "asks", "asks", "policy", "self", "server", "turn", "options", "cache",
            "input"
        ]
    );
}

#[test]
fn an_upward_import_is_named_with_its_floors() {
    let files = exec_files();
    let reexported = reexports(&files["mod"]);
    let text = "use super::{future::BoxFuture, stream::StreamedExecution};\n\
                fn f(_: super::ExecOptions, _: super::Handlers) {}\n";
    let problems = upward_imports("server", text, &files, &reexported);
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(
        problems[0].starts_with(
            "src/exec/server.rs (floor 4) imports `super::stream::StreamedExecution` from \
             stream.rs (floor 14): an import must point down the floors (0 [clock, future, gate, keys, kept] < 1 \
             [policy, durable] <"
        ),
        "{}",
        problems[0]
    );
    assert!(
        problems[1].starts_with(
            "src/exec/server.rs (floor 4) imports `super::ExecOptions` from options.rs (floor 6)"
        ),
        "{}",
        problems[1]
    );
    assert_eq!(
        upward_imports("brand_new", "", &files, &reexported)[0]
            .split(':')
            .next(),
        Some("src/exec/brand_new.rs is on no floor")
    );
}

// ---- inherent methods ----
//
// A method one module defines on another module's type (`impl Provider`
// outside `spec/`, `impl Source` outside `source.rs`) is called without a
// path: `provider.list_deferred(..)` names no module, so the import reader
// cannot see a call that goes up the floors to it. These tests read the
// inherent `impl` blocks themselves, and each call to a method defined in
// one by its name. A name defined as `fn` in more than one module (or exec
// file) cannot be told apart by its text, and is left out.

/// The types a file's code defines (`struct`, `enum`, `union`).
fn defined_types(text: &str) -> Vec<String> {
    let tokens = tokens(text);
    tokens
        .windows(2)
        .filter_map(|pair| match pair {
            [Token::Ident(kw), Token::Ident(name)]
                if kw == "struct" || kw == "enum" || kw == "union" =>
            {
                Some(name.clone())
            }
            _ => None,
        })
        .collect()
}

/// Every function a file's code defines, by name.
fn defined_fns(text: &str) -> Vec<String> {
    let tokens = tokens(text);
    tokens
        .windows(2)
        .filter_map(|pair| match pair {
            [Token::Ident(kw), Token::Ident(name)] if kw == "fn" => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// Skips a `<...>` group starting at `tokens[*i]`, if there is one.
fn skip_generics(tokens: &[Token], i: &mut usize) {
    if tokens.get(*i) != Some(&Token::Other('<')) {
        return;
    }
    let mut depth = 0usize;
    while let Some(token) = tokens.get(*i) {
        *i += 1;
        match token {
            Token::Other('<') => depth += 1,
            Token::Other('>') => {
                depth -= 1;
                if depth == 0 {
                    return;
                }
            }
            _ => {}
        }
    }
}

/// The methods of a file's inherent `impl` blocks: `(type, method)`.
fn inherent_methods(text: &str) -> Vec<(String, String)> {
    let tokens = tokens(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] != Token::Ident("impl".into()) {
            i += 1;
            continue;
        }
        i += 1;
        skip_generics(&tokens, &mut i);
        // The type's path; its last name is the type.
        let mut ty = None;
        while let Some(Token::Ident(name)) = tokens.get(i) {
            ty = Some(name.clone());
            i += 1;
            if tokens.get(i) == Some(&Token::Path) {
                i += 1;
            } else {
                break;
            }
        }
        skip_generics(&tokens, &mut i);
        let (Some(ty), Some(Token::Open)) = (ty, tokens.get(i)) else {
            // A trait's impl (`impl Trait for Type`), or not an impl block.
            continue;
        };
        let mut depth = 0usize;
        while let Some(token) = tokens.get(i) {
            match token {
                Token::Open => depth += 1,
                Token::Close => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Token::Ident(kw) if kw == "fn" && depth == 1 => {
                    if let Some(Token::Ident(name)) = tokens.get(i + 1) {
                        out.push((ty.clone(), name.clone()));
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

/// Whether `tokens[..i]` ends with `#[cfg(test)]`.
fn after_cfg_test(tokens: &[Token], i: usize) -> bool {
    let attribute = [
        Token::Other('#'),
        Token::Other('['),
        Token::Ident("cfg".into()),
        Token::Other('('),
        Token::Ident("test".into()),
        Token::Other(')'),
        Token::Other(']'),
    ];
    i >= attribute.len() && tokens[i - attribute.len()..i] == attribute
}

/// The names a file's code calls as methods or associated functions:
/// `.name(`, `.name::<..>(` and `Type::name(`, outside its tests
/// (`#[cfg(test)] mod .. { .. }`).
fn called_methods(text: &str) -> Vec<String> {
    let tokens = tokens(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 < tokens.len() {
        if tokens[i] == Token::Ident("mod".into())
            && after_cfg_test(&tokens, i)
            && tokens.get(i + 2) == Some(&Token::Open)
        {
            let mut depth = 0usize;
            i += 2;
            while let Some(token) = tokens.get(i) {
                i += 1;
                match token {
                    Token::Open => depth += 1,
                    Token::Close => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            continue;
        }
        if let (Token::Other('.') | Token::Path, Token::Ident(name)) = (&tokens[i], &tokens[i + 1])
        {
            let called = match tokens[i + 2] {
                Token::Other('(') => true,
                Token::Path => tokens.get(i + 3) == Some(&Token::Other('<')),
                _ => false,
            };
            if called {
                out.push(name.clone());
            }
        }
        i += 1;
    }
    out
}

/// A unit of the layering (a top-level module, or a file of `src/exec/`):
/// its name, its floor, and its files' texts.
struct Unit {
    name: String,
    floor: usize,
    texts: Vec<(String, String)>,
}

/// The calls that go to a method defined on a floor not below the
/// caller's own, on a type of another unit, each said in full.
fn upward_method_calls(units: &[Unit], floors: &str) -> Vec<String> {
    let mut homes: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut fns: BTreeMap<String, std::collections::BTreeSet<&str>> = BTreeMap::new();
    for unit in units {
        for (_, text) in &unit.texts {
            for ty in defined_types(text) {
                homes.entry(ty).or_default().push(&unit.name);
            }
            for name in defined_fns(text) {
                fns.entry(name).or_default().insert(&unit.name);
            }
        }
    }
    // Each method defined on another unit's type, with the unit that defines it.
    let mut foreign: BTreeMap<String, (&Unit, String)> = BTreeMap::new();
    for unit in units {
        for (_, text) in &unit.texts {
            for (ty, method) in inherent_methods(text) {
                // A type the unit defines itself (whatever else defines one
                // of the same name), or one defined nowhere in src/.
                let home = homes.get(&ty).map(Vec::as_slice).unwrap_or_default();
                let own = home.is_empty() || home.contains(&unit.name.as_str());
                let unique = fns.get(&method).is_some_and(|units| units.len() == 1);
                if !own && unique {
                    foreign.insert(method, (unit, ty));
                }
            }
        }
    }
    let mut problems = Vec::new();
    for unit in units {
        for (shown, text) in &unit.texts {
            for name in called_methods(text) {
                let Some((definer, ty)) = foreign.get(&name) else {
                    continue;
                };
                if definer.name != unit.name && unit.floor <= definer.floor {
                    problems.push(format!(
                        "{shown} (`{}`, floor {}) calls `{ty}::{name}`, which `{}` (floor {}) \
                         defines: a method is defined on the floor of its callers or below \
                         ({floors})",
                        unit.name, unit.floor, definer.name, definer.floor
                    ));
                }
            }
        }
    }
    problems.sort();
    problems.dedup();
    problems
}

/// The top-level modules as units of the layering.
fn top_level_units() -> Vec<Unit> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut units: Vec<Unit> = Vec::new();
    for file in &files {
        let Some(top) = module_path(file).first().cloned() else {
            continue;
        };
        let Some(floor) = floor_of(&top) else {
            continue;
        };
        let shown = file
            .strip_prefix(root())
            .unwrap_or(file)
            .display()
            .to_string();
        let text = fs::read_to_string(file).expect("a source file");
        match units.iter_mut().find(|u| u.name == top) {
            Some(unit) => unit.texts.push((shown, text)),
            None => units.push(Unit {
                name: top,
                floor,
                texts: vec![(shown, text)],
            }),
        }
    }
    units
}

#[test]
fn top_level_modules_call_no_method_defined_on_a_floor_above() {
    let floors = FLOORS
        .iter()
        .enumerate()
        .map(|(i, floor)| format!("{i} [{}]", floor.join(", ")))
        .collect::<Vec<_>>()
        .join(" < ");
    let problems = upward_method_calls(&top_level_units(), &floors);
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

#[test]
fn exec_files_call_no_method_defined_on_a_floor_above() {
    let units: Vec<Unit> = exec_files()
        .into_iter()
        .filter_map(|(stem, text)| {
            let floor = exec_floor_of(&stem)?;
            Some(Unit {
                texts: vec![(format!("src/exec/{stem}.rs"), text)],
                name: stem,
                floor,
            })
        })
        .collect();
    let problems = upward_method_calls(&units, &exec_floors_shown());
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

/// The reader of methods: a call up the floors to a method defined on
/// another unit's type is named, one down is not, a trait's impl and a name
/// defined twice are left out.
#[test]
fn an_upward_method_call_is_named_with_its_floors() {
    let unit = |name: &str, floor: usize, text: &str| Unit {
        name: name.to_owned(),
        floor,
        texts: vec![(format!("src/{name}.rs"), text.to_owned())],
    };
    let units = [
        unit(
            "spec",
            2,
            "pub struct Provider; impl Provider { pub fn id(&self) {} }",
        ),
        unit(
            "listing",
            6,
            "impl Provider { pub fn list_tools(&self) { self.list_deferred(); self.id(); self.answer(); } }",
        ),
        unit(
            "deferred",
            8,
            "impl<'a> crate::spec::Provider { pub(crate) fn list_deferred(&self) {} \
             fn answer(&self) { self.list_tools(); } }\n\
             impl std::fmt::Debug for Provider { fn fmt(&self) {} }\n\
             fn fmt() {}",
        ),
        unit(
            "calls",
            7,
            "fn answer() {} fn f(p: &Provider) { p.fmt(); Provider::list_deferred(p); }",
        ),
    ];
    let problems = upward_method_calls(&units, "the floors");
    assert_eq!(
        problems,
        [
            "src/calls.rs (`calls`, floor 7) calls `Provider::list_deferred`, which `deferred` \
             (floor 8) defines: a method is defined on the floor of its callers or below (the \
             floors)",
            "src/listing.rs (`listing`, floor 6) calls `Provider::list_deferred`, which \
             `deferred` (floor 8) defines: a method is defined on the floor of its callers or \
             below (the floors)",
        ]
    );
}
