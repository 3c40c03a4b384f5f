//! Text from servers, models and state documents on the terminal: every
//! control and invisible character written out (`\x1b`, `\u{202e}`), never
//! acted on, line by line.

use std::borrow::Cow;

/// `text` as the terminal shows it; line feeds stay line breaks.
pub fn escaped(text: &str) -> Cow<'_, str> {
    if !text.contains('\n') {
        return mcp_adapters::toolset::escape_visible(text);
    }
    let lines: Vec<Cow<'_, str>> = text
        .split('\n')
        .map(mcp_adapters::toolset::escape_visible)
        .collect();
    Cow::Owned(lines.join("\n"))
}

/// A warning on stderr for each rule of the toolset that matches no listed
/// tool, and each name or value of a tool's schema that holds hidden
/// characters.
pub fn warn_of(report: &mcp_adapters::toolset::ToolSetReport) {
    for rule in &report.unmatched_rules {
        eprintln!("warning: {}", escaped(&rule.to_string()));
    }
    for rule in &report.bound_undeclared {
        eprintln!(
            "warning: {}: the value is written all the same; check the property's name",
            escaped(&rule.to_string())
        );
    }
    for hidden in &report.hidden {
        eprintln!(
            "warning: `{}/{}`: its input schema holds hidden characters at {} ({:?}: {}); \
             refuse such tools with --refuse-hidden",
            escaped(&hidden.server_id),
            escaped(&hidden.tool),
            hidden.path,
            hidden.kind,
            hidden.text
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_stay_and_escapes_are_written_out() {
        assert_eq!(escaped("plain\ntext"), "plain\ntext");
        assert_eq!(
            escaped("stderr:\n\u{1b}[2Jgone\r\n\u{202e}"),
            "stderr:\n\\x1b[2Jgone\\x0d\n\\u{202e}"
        );
    }
}
