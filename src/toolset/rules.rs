//! Rules that name no tool: a filter or policy glob over `server/tool` that
//! matches none of the tools the servers listed is most likely written on
//! another name (an exposed name such as `raw__delete_file`, a tool's name
//! in another case): it then protects nothing, and is reported with the
//! tools it may have meant.

use globset::GlobMatcher;
use serde::Serialize;

use super::{compile_glob, compile_tool_glob};
use crate::error::Result;

/// A filter or policy rule that matches none of the tools the servers
/// listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct UnmatchedRule {
    /// The kind of rule: `allow`, `deny` (the toolset's filters), or
    /// `policy allow`, `policy ask`, `policy deny`.
    pub rule: String,
    /// The glob as written.
    pub pattern: String,
    /// The listed tools it may have meant, as `server/tool` (MCP names):
    /// those whose exposed name, or whose name in another case, it matches.
    pub could_mean: Vec<String>,
}

impl std::fmt::Display for UnmatchedRule {
    /// `the deny rule `raw__delete_file` matches no listed tool (did you mean `raw/delete_file`?)`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the {} rule `{}` matches no listed tool",
            self.rule, self.pattern
        )?;
        if !self.could_mean.is_empty() {
            let names: Vec<String> = self.could_mean.iter().map(|n| format!("`{n}`")).collect();
            write!(f, " (did you mean {}?)", names.join(" or "))?;
        }
        Ok(())
    }
}

/// The most tools an [`UnmatchedRule`] names.
const MAX_MEANT: usize = 5;

/// The policy names of what the library serves itself on a server's
/// behalf (its catalogues), which policy rules may name too.
const LIBRARY_NAMES: &[&str] = &[
    "resources/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "skills/list",
    "skills/load",
];

/// Every `server/tool` the servers listed, kept while the toolset is built
/// when there are rules to check.
pub(super) struct Listed<'a> {
    rules: Vec<(&'a str, &'a str)>,
    tools: Vec<String>,
    servers: Vec<String>,
}

impl<'a> Listed<'a> {
    pub(super) fn new(
        allow: &'a [String],
        deny: &'a [String],
        checked: &'a [(String, String)],
    ) -> Self {
        let rules = allow
            .iter()
            .map(|p| ("allow", p.as_str()))
            .chain(deny.iter().map(|p| ("deny", p.as_str())))
            .chain(checked.iter().map(|(r, p)| (r.as_str(), p.as_str())))
            .collect();
        Listed {
            rules,
            tools: Vec::new(),
            servers: Vec::new(),
        }
    }

    /// Whether there is any rule to check, and any listed tool to check
    /// it against.
    pub(super) fn has_rules(&self) -> bool {
        !self.rules.is_empty() && !self.tools.is_empty()
    }

    /// Notes a listed tool.
    pub(super) fn push(&mut self, server_id: &str, tool: &str) {
        if self.rules.is_empty() {
            return;
        }
        if self.servers.last().is_none_or(|s| s != server_id) {
            self.servers.push(server_id.to_owned());
        }
        self.tools.push(format!("{server_id}/{tool}"));
    }

    /// The rules that match no listed tool (nor a library name on a listed
    /// server, nor anything on a server in `failed`, whose tools are not
    /// known), each with what it may have meant: `exposed` holds each
    /// offered tool's exposed name and `server/tool`.
    pub(super) fn unmatched(
        &self,
        failed: &[&str],
        exposed: &[(&str, String)],
    ) -> Result<Vec<UnmatchedRule>> {
        let mut out = Vec::new();
        for &(rule, pattern) in &self.rules {
            let matcher = compile_tool_glob(pattern)?;
            if self.matches_any(&matcher, failed, pattern) {
                continue;
            }
            out.push(UnmatchedRule {
                rule: rule.to_owned(),
                pattern: pattern.to_owned(),
                could_mean: self.meant(pattern, exposed)?,
            });
        }
        Ok(out)
    }

    fn matches_any(&self, matcher: &GlobMatcher, failed: &[&str], pattern: &str) -> bool {
        let library = self
            .servers
            .iter()
            .flat_map(|s| LIBRARY_NAMES.iter().map(move |n| format!("{s}/{n}")));
        let on_failed = failed.iter().any(|server| match pattern.split_once('/') {
            None => true,
            Some((glob, _)) => compile_glob(glob).map_or(true, |m| m.is_match(server)),
        });
        on_failed
            || self.tools.iter().any(|t| matcher.is_match(t))
            || library.into_iter().any(|n| matcher.is_match(&n))
            || matcher.is_match("mcp-adapters/read_result")
    }

    /// The tools `pattern` may have meant: those it matches by their
    /// exposed name, or in another case.
    fn meant(&self, pattern: &str, exposed: &[(&str, String)]) -> Result<Vec<String>> {
        let plain = compile_glob(pattern)?;
        let folded = compile_tool_glob(&pattern.to_lowercase())?;
        let mut meant: Vec<String> = Vec::new();
        let mut add = |name: &String| {
            if meant.len() < MAX_MEANT && !meant.contains(name) {
                meant.push(name.clone());
            }
        };
        // Written on an exposed name (`server__tool`, or a prefixed one).
        for (name, tool) in exposed {
            if plain.is_match(name) {
                add(tool);
            }
        }
        for tool in &self.tools {
            let (server, name) = tool.split_once('/').unwrap_or(("", tool));
            if plain.is_match(format!("{server}__{name}")) || folded.is_match(tool.to_lowercase()) {
                add(tool);
            }
        }
        Ok(meant)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed<'a>(deny: &'a [String]) -> Listed<'a> {
        let mut listed = Listed::new(&[], deny, &[]);
        listed.push("raw", "delete_file");
        listed.push("raw", "read_file");
        listed
    }

    #[test]
    fn a_rule_written_on_an_exposed_name_names_the_tool_meant() {
        let deny = vec!["raw__delete_file".to_owned(), "raw/read_file".to_owned()];
        let exposed = [("raw__delete_file", "raw/delete_file".to_owned())];
        let unmatched = listed(&deny).unmatched(&[], &exposed[..0]).unwrap();
        assert_eq!(unmatched.len(), 1);
        assert_eq!(unmatched[0].pattern, "raw__delete_file");
        assert_eq!(unmatched[0].could_mean, vec!["raw/delete_file"]);
        let by_exposed = listed(&deny).unmatched(&[], &exposed).unwrap();
        assert_eq!(by_exposed, unmatched);
        assert_eq!(
            unmatched[0].to_string(),
            "the deny rule `raw__delete_file` matches no listed tool (did you mean `raw/delete_file`?)"
        );
    }

    #[test]
    fn another_case_library_names_and_failed_servers() {
        let deny = vec![
            "raw/Delete_File".to_owned(),
            "*/resources/read".to_owned(),
            "down/anything".to_owned(),
        ];
        let unmatched = listed(&deny).unmatched(&["down"], &[]).unwrap();
        assert_eq!(unmatched.len(), 1, "{unmatched:?}");
        assert_eq!(unmatched[0].could_mean, vec!["raw/delete_file"]);
    }
}
