//! Every relative link and `#anchor` in README.md and docs/*.md resolves: the file
//! exists, and the anchor is a heading of the file it points at (GitHub's anchors).
//! The guide's table of error kinds is `ErrorKind`'s.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown files whose links are checked.
fn documents() -> Vec<PathBuf> {
    let mut out = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

/// GitHub's anchor for a heading: lower case, every character but letters, digits, `_`, `-`
/// and spaces removed, spaces made `-`; a repeated anchor gets `-1`, `-2`, ...
fn slug(text: &str, seen: &mut BTreeMap<String, usize>) -> String {
    let base: String = text
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect();
    let n = seen.entry(base.clone()).or_insert(0);
    let out = if *n == 0 {
        base.clone()
    } else {
        format!("{base}-{n}")
    };
    *n += 1;
    out
}

struct Doc {
    anchors: BTreeSet<String>,
    links: Vec<String>,
}

fn read(path: &Path) -> Doc {
    let text = std::fs::read_to_string(path).unwrap();
    let mut anchors = BTreeSet::new();
    let mut links = Vec::new();
    let mut seen = BTreeMap::new();
    let mut heading: Option<String> = None;
    for event in Parser::new(&text) {
        match event {
            Event::Start(Tag::Heading { level, .. }) if level <= HeadingLevel::H6 => {
                heading = Some(String::new());
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(h) = heading.take() {
                    anchors.insert(slug(&h, &mut seen));
                }
            }
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => {
                links.push(dest_url.to_string());
            }
            _ => {}
        }
    }
    Doc { anchors, links }
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for path in documents() {
        let doc = read(&path);
        let shown = path.strip_prefix(root()).unwrap().display().to_string();
        for link in &doc.links {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = match link.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (link.as_str(), None),
            };
            let target = if file.is_empty() {
                path.clone()
            } else {
                path.parent().unwrap().join(file)
            };
            if !target.exists() {
                problems.push(format!("{shown}: `{link}`: no {}", target.display()));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if target.extension().is_none_or(|e| e != "md") {
                problems.push(format!(
                    "{shown}: `{link}`: an anchor into a file that is not Markdown"
                ));
                continue;
            }
            let anchors = if target == path {
                doc.anchors.clone()
            } else {
                read(&target).anchors
            };
            if !anchors.contains(anchor) {
                problems.push(format!("{shown}: `{link}`: no heading `#{anchor}` there"));
            }
        }
    }
    assert!(checked > 20, "{checked} links checked");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The checker itself: it finds a missing file and a missing anchor.
#[test]
fn the_checker_finds_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.md");
    std::fs::write(
        &file,
        "# A title: here\n\n## A title: here\n\n[x](#a-title-here-1) [y](b.md)\n",
    )
    .unwrap();
    let doc = read(&file);
    assert!(doc.anchors.contains("a-title-here") && doc.anchors.contains("a-title-here-1"));
    assert_eq!(doc.links, ["#a-title-here-1", "b.md"]);
    assert!(!dir.path().join("b.md").exists());
    let mut seen = BTreeMap::new();
    assert_eq!(
        slug(
            "Adding a provider, step by step (worked example: Mistral)",
            &mut seen
        ),
        "adding-a-provider-step-by-step-worked-example-mistral"
    );
    assert_eq!(
        slug("The `stream:` section", &mut seen),
        "the-stream-section"
    );
}

/// The agent loop chapter's table of error kinds lists every `ErrorKind`,
/// in the enum's order, and nothing else: the variants are read from
/// `src/error.rs`, and each name the table gives is a kind (read back
/// through its serialized `snake_case` name).
#[test]
fn the_guide_lists_every_error_kind() {
    let guide = std::fs::read_to_string(root().join("docs/agent-loop.md")).unwrap();
    let section = guide
        .split("\n## Errors\n")
        .nth(1)
        .expect("an Errors section");
    let listed: Vec<&str> = section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`').map(|(name, _)| name))
        .collect();
    let source = std::fs::read_to_string(root().join("src/error.rs")).unwrap();
    let body = source
        .split("pub enum ErrorKind {")
        .nth(1)
        .and_then(|rest| rest.split("\n}").next())
        .expect("the ErrorKind enum");
    let variants: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|line| !line.starts_with("//") && !line.starts_with('#'))
        .filter_map(|line| line.strip_suffix(','))
        .filter(|name| name.chars().all(|c| c.is_ascii_alphanumeric()))
        .collect();
    assert!(variants.len() >= 16, "{variants:?}");
    assert_eq!(
        listed, variants,
        "the guide's error kinds are not ErrorKind's"
    );
    for name in listed {
        let mut snake = String::new();
        for (i, c) in name.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                snake.push('_');
            }
            snake.push(c.to_ascii_lowercase());
        }
        let kind: mcp_adapters::ErrorKind =
            serde_json::from_value(serde_json::Value::String(snake)).unwrap();
        assert_eq!(format!("{kind:?}"), name);
    }
}
