//! `strict-schema` and `check`: what a server author runs to see how providers take their tools.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mcp_adapters::listing::StrictIssue;
use mcp_adapters::toolset::RenameReason;
use mcp_adapters::{Error, ErrorKind, ListOptions, Registry, Result, ToolSet, strict};
use serde::Serialize;
use serde_json::{Value, json};

use super::commands::list_options;
use super::input::{read_json, read_servers, registry, toolset};
use super::{CheckArgs, StrictSchemaArgs};

/// Prints `{"schema", "null_paths"}`, or `{"error": {"path", "reason"}}` and fails.
///
/// `--rules ID` converts by that rules file, strict or subset; `--provider ID`
/// as the provider lists a tool: its schema rules, then its strict rules.
pub fn strict_schema(args: &StrictSchemaArgs) -> Result<(Value, bool)> {
    let registry = registry(args.specs.specs.as_deref())?;
    let ids: Vec<String> = match (&args.rules, &args.provider) {
        (Some(id), _) => vec![id.clone()],
        (None, Some(provider)) => {
            let provider_spec = registry.get(provider)?;
            let ids: Vec<String> = [provider_spec.schema_rules(), provider_spec.strict_rules()]
                .into_iter()
                .flatten()
                .map(str::to_owned)
                .collect();
            if ids.is_empty() {
                return Err(Error::new(
                    ErrorKind::Input,
                    format!("provider `{provider}` has no schema or strict rules"),
                ));
            }
            ids
        }
        (None, None) => vec![
            registry
                .default_rules()
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::Input,
                        "no provider uses strict rules; pass --rules",
                    )
                })?
                .to_owned(),
        ],
    };
    let input = read_json(&args.file)?;
    // A tool (with `inputSchema`) or a bare schema.
    let mut schema = input.get("inputSchema").unwrap_or(&input).clone();
    let mut null_paths = Vec::new();
    for rules_id in &ids {
        let rules = registry.rules(rules_id).ok_or_else(|| {
            let known: Vec<_> = registry.rules_ids().collect();
            Error::new(
                ErrorKind::Input,
                format!("no rules `{rules_id}`; known: {}", known.join(", ")),
            )
        })?;
        match strict::convert(&schema, rules) {
            Ok(converted) => {
                schema = converted.schema;
                null_paths.extend(converted.null_paths);
            }
            Err(err) => {
                let error = json!({"path": err.pointer(), "reason": err.kind().to_string(), "rules": rules_id});
                return Ok((json!({ "error": error }), false));
            }
        }
    }
    Ok((json!({"schema": schema, "null_paths": null_paths}), true))
}

/// One row of `check`: how one provider takes one tool.
#[derive(Debug, Serialize)]
struct Row {
    server: String,
    tool: String,
    exposed_name: Option<String>,
    provider: Option<String>,
    status: &'static str,
    detail: String,
}

pub fn check(args: &CheckArgs) -> Result<(Value, String)> {
    let registry = registry(args.specs.specs.as_deref())?;
    let ids: Vec<String> = if args.providers.is_empty() {
        registry.providers().map(|p| p.id().to_owned()).collect()
    } else {
        args.providers.clone()
    };
    let toolset = toolset(&args.toolset.naming, read_servers(&args.files)?)?;
    let options = list_options(&args.toolset);
    let renames: BTreeMap<(&str, &str), String> = toolset
        .report()
        .renamed
        .iter()
        .map(|r| {
            (
                (r.server_id.as_str(), r.tool.as_str()),
                describe_renames(&r.reasons),
            )
        })
        .collect();
    let mut rows = Vec::new();
    for dropped in &toolset.report().dropped {
        let reason = serde_json::to_value(&dropped.reason).unwrap_or_default();
        rows.push(Row {
            server: dropped.server_id.clone(),
            tool: dropped.tool.clone(),
            exposed_name: None,
            provider: None,
            status: "dropped",
            detail: reason
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .replace('_', " "),
        });
    }
    for id in &ids {
        rows.extend(provider_rows(&registry, id, &toolset, &options, &renames)?);
    }
    let mut table = render_table(&rows);
    let offered = option_rows(&registry, &ids)?;
    if !offered.is_empty() {
        table.push_str("\nOPTIONS (--option NAME=VALUE on tools, run and result)\n");
        table.push_str(&render_options(&offered));
    }
    Ok((json!({"rows": rows, "options": offered}), table))
}

/// One option value a provider offers: `check` lists them after the tools.
#[derive(Debug, Serialize)]
struct OptionRow {
    provider: String,
    option: String,
    changes: Vec<String>,
    description: Option<String>,
}

fn option_rows(registry: &Registry, ids: &[String]) -> Result<Vec<OptionRow>> {
    let mut out = Vec::new();
    for id in ids {
        let info = registry.get(id)?.info();
        let Some(options) = info["options"].as_object() else {
            continue;
        };
        for (name, option) in options {
            let Some(values) = option["values"].as_object() else {
                continue;
            };
            for (value, effect) in values {
                let strings = |v: &Value| -> Vec<String> {
                    v.as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                };
                out.push(OptionRow {
                    provider: id.clone(),
                    option: format!("{name}={value}"),
                    changes: strings(&effect["changes"]),
                    description: effect["description"].as_str().map(str::to_owned),
                });
            }
        }
    }
    Ok(out)
}

fn render_options(rows: &[OptionRow]) -> String {
    let width = |f: fn(&OptionRow) -> usize| rows.iter().map(f).max().unwrap_or(0);
    let (wp, wo) = (width(|r| r.provider.len()), width(|r| r.option.len()));
    let mut out = String::new();
    for r in rows {
        let line = format!(
            "{:<wp$}  {:<wo$}  {}: {}",
            r.provider,
            r.option,
            r.changes.join(", "),
            r.description.as_deref().unwrap_or("")
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

fn provider_rows(
    registry: &Registry,
    id: &str,
    toolset: &ToolSet,
    options: &ListOptions,
    renames: &BTreeMap<(&str, &str), String>,
) -> Result<Vec<Row>> {
    let provider = registry.get(id)?;
    let listing = provider.list_tools(toolset, options)?;
    let issue = |list: &[StrictIssue], name: &str| {
        list.iter().find(|i| i.exposed_name == name).map(|i| {
            format!(
                "{} at {}",
                i.reason,
                if i.path.is_empty() { "/" } else { &i.path }
            )
        })
    };
    Ok(toolset
        .tools()
        .iter()
        .map(|tool| {
            let name = tool.exposed_name.as_str();
            let schema_rules = provider.schema_rules().unwrap_or_default();
            let (status, mut detail) = if let Some(why) = issue(&listing.report.unsupported, name) {
                ("excluded", format!("{why} (schema rules {schema_rules})"))
            } else if let Some(why) = issue(&listing.report.excluded, name) {
                ("excluded", why)
            } else if let Some(why) = issue(&listing.report.fallbacks, name) {
                ("fallback", why)
            } else if listing.is_strict(name) {
                ("strict", String::new())
            } else if listing.is_rewritten(name) {
                ("converted", format!("schema rules {schema_rules}"))
            } else {
                ("as is", String::new())
            };
            if let Some(renamed) = renames.get(&(tool.server_id.as_str(), tool.tool.name.as_str()))
            {
                detail = if detail.is_empty() {
                    renamed.clone()
                } else {
                    format!("{detail}; {renamed}")
                };
            }
            Row {
                server: tool.server_id.clone(),
                tool: tool.tool.name.clone(),
                exposed_name: Some(name.to_owned()),
                provider: Some(id.to_owned()),
                status,
                detail,
            }
        })
        .collect())
}

fn describe_renames(reasons: &[RenameReason]) -> String {
    let parts: Vec<String> = reasons
        .iter()
        .map(|r| match r {
            RenameReason::InvalidCharacters => "renamed: invalid characters".to_owned(),
            RenameReason::LeadingCharacter => "renamed: must start with a letter or _".to_owned(),
            RenameReason::Truncated => "renamed: longer than 64 characters".to_owned(),
            RenameReason::Collision {
                with_server,
                with_tool,
            } => format!("renamed: name taken by {with_server}/{with_tool}"),
        })
        .collect();
    parts.join(", ")
}

fn render_table(rows: &[Row]) -> String {
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            [
                r.server.clone(),
                r.tool.clone(),
                r.exposed_name.clone().unwrap_or_else(|| "-".into()),
                r.provider.clone().unwrap_or_else(|| "-".into()),
                r.status.to_owned(),
                r.detail.clone(),
            ]
        })
        .collect();
    let header = [
        "SERVER",
        "TOOL",
        "EXPOSED AS",
        "PROVIDER",
        "STATUS",
        "DETAIL",
    ]
    .map(str::to_owned);
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&cells) {
        let line: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    out
}
