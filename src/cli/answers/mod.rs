//! `--answers FILE`: canned answers to what servers ask. `answers:` rules
//! answer elicitations (forms and pages to open), `sampling:` rules answer
//! sampling requests with a canned model message. The file is read and
//! checked once; the rules are then matched against each question.

mod canned;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use globset::{Glob, GlobMatcher};
use mcp_adapters::exec::SamplingAnswer;
use mcp_adapters::mcp::{ElicitResult, Elicitation, FormElicitation};
use mcp_adapters::{Error, ErrorKind, Result};
use serde::Deserialize;
use serde_json::{Map, Value};
use serde_saphyr::Spanned;

use canned::{model_message, type_name};

/// An answers file: `{"answers": [rule...], "sampling": [rule...]}`, each optional.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswersFile {
    #[serde(default)]
    answers: Vec<Spanned<RuleFile>>,
    #[serde(default)]
    sampling: Vec<Spanned<SamplingRuleFile>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    /// A glob over `server/tool`; any tool when absent.
    #[serde(default)]
    tool: Option<String>,
    /// The question's key in an `input_required` round; any question when absent.
    #[serde(default)]
    key: Option<String>,
    /// `accept` (the default), `decline` or `cancel`.
    #[serde(default)]
    action: Option<ActionFile>,
    /// A form's content, for `accept`.
    #[serde(default)]
    content: Option<Spanned<Value>>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ActionFile {
    Accept,
    Decline,
    Cancel,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SamplingRuleFile {
    /// A glob over `server/tool`; any request when absent.
    #[serde(default)]
    tool: Option<String>,
    /// `respond` (the default, with `result`), `decline` or `cancel`.
    #[serde(default)]
    action: Option<SamplingActionFile>,
    /// The canned `CreateMessageResult`.
    #[serde(default)]
    result: Option<Spanned<Value>>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SamplingActionFile {
    Respond,
    Decline,
    Cancel,
}

/// What an `answers:` rule does with the elicitation it matches.
#[derive(Debug, Clone, PartialEq)]
enum Reply {
    /// Accept: a form with the defaults it declares, overridden by `content`;
    /// a page without content.
    Accept(Option<Map<String, Value>>),
    Decline,
    Cancel,
}

#[derive(Debug)]
struct Rule {
    tool: Option<GlobMatcher>,
    key: Option<String>,
    reply: Reply,
}

#[derive(Debug)]
struct SamplingRule {
    tool: Option<GlobMatcher>,
    answer: SamplingAnswer,
}

/// The rules of one answers file.
#[derive(Debug)]
pub struct Answers {
    file: PathBuf,
    rules: Vec<Rule>,
    sampling: Vec<SamplingRule>,
}

/// Reads YAML (or JSON) as the library reads its specs: only `true` and
/// `false` are booleans, and `yes`, `010` or `1_000` stay strings, so that a
/// canned code or name keeps its characters.
fn parse<T: for<'de> Deserialize<'de>>(text: &str) -> std::result::Result<T, serde_saphyr::Error> {
    let options = serde_saphyr::options! {
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
        budget: serde_saphyr::budget! {
            max_depth: 64,
            flow_nesting_limit: 64,
            max_nodes: 100_000,
            max_aliases: 1_000,
        },
    };
    serde_saphyr::from_str_with_options(text, options)
}

/// Reads an answers file (JSON or YAML).
///
/// # Errors
///
/// [`ErrorKind::Io`] when it cannot be read; [`ErrorKind::Input`], naming the
/// file, the line and the path inside it, when it is not an answers file, has
/// no rule, or a rule is invalid (a bad glob, `content` that is not an
/// object or goes with another action than `accept`, a `result` that is not
/// a model's message).
pub fn read_answers(path: &Path) -> Result<Answers> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(ErrorKind::Io, format!("cannot read {}", path.display()))
            .with_file(path)
            .with_source(e)
    })?;
    parse_answers(path, &text)
}

fn parse_answers(path: &Path, text: &str) -> Result<Answers> {
    let file: AnswersFile = parse(text).map_err(|e| {
        let error = Error::new(
            ErrorKind::Input,
            "not an answers file (expected `answers:` and/or `sampling:` rules)",
        )
        .with_file(path);
        let error = match e.location().map(|l| l.line() as usize).filter(|&l| l > 0) {
            Some(line) => error.with_line(line),
            None => error,
        };
        error.with_source(e)
    })?;
    if file.answers.is_empty() && file.sampling.is_empty() {
        return Err(Error::new(
            ErrorKind::Input,
            "the answers file has no rule: give `answers:` rules (elicitations), `sampling:` rules, or both",
        )
        .with_file(path));
    }
    let bad = |at: String, line: usize, message: String| {
        let error = Error::new(ErrorKind::Input, message)
            .with_file(path)
            .with_path(at);
        if line > 0 {
            error.with_line(line)
        } else {
            error
        }
    };
    let rules = file
        .answers
        .into_iter()
        .enumerate()
        .map(|(i, rule)| read_rule(&format!("answers/{i}"), rule, &bad))
        .collect::<Result<Vec<_>>>()?;
    let sampling = file
        .sampling
        .into_iter()
        .enumerate()
        .map(|(i, rule)| read_sampling_rule(&format!("sampling/{i}"), rule, &bad))
        .collect::<Result<Vec<_>>>()?;
    Ok(Answers {
        file: path.to_owned(),
        rules,
        sampling,
    })
}

type Bad<'a> = dyn Fn(String, usize, String) -> Error + 'a;

fn line(location: &serde_saphyr::Location) -> usize {
    location.line() as usize
}

fn glob(at: &str, line: usize, glob: Option<String>, bad: &Bad) -> Result<Option<GlobMatcher>> {
    let Some(glob) = glob else {
        return Ok(None);
    };
    // A glob without `/` names a tool on any server, as everywhere else.
    let full = match glob.contains('/') {
        true => glob.clone(),
        false => format!("*/{glob}"),
    };
    match Glob::new(&full) {
        Ok(compiled) => Ok(Some(compiled.compile_matcher())),
        Err(e) => {
            Err(bad(format!("{at}/tool"), line, format!("invalid glob `{glob}`")).with_source(e))
        }
    }
}

fn read_rule(at: &str, rule: Spanned<RuleFile>, bad: &Bad) -> Result<Rule> {
    let rule_line = line(&rule.referenced);
    let rule = rule.value;
    let tool = glob(at, rule_line, rule.tool, bad)?;
    let reply = match (rule.action.unwrap_or(ActionFile::Accept), rule.content) {
        (ActionFile::Accept, None) => Reply::Accept(None),
        (
            ActionFile::Accept,
            Some(Spanned {
                value: Value::Object(content),
                ..
            }),
        ) => Reply::Accept(Some(content)),
        (ActionFile::Accept, Some(other)) => {
            return Err(bad(
                format!("{at}/content"),
                line(&other.referenced),
                format!(
                    "`content` must be an object (the form's fields), not {}",
                    type_name(&other.value)
                ),
            ));
        }
        (ActionFile::Decline, None) => Reply::Decline,
        (ActionFile::Cancel, None) => Reply::Cancel,
        (_, Some(content)) => {
            return Err(bad(
                format!("{at}/content"),
                line(&content.referenced),
                "`content` goes only with `action: accept`".into(),
            ));
        }
    };
    Ok(Rule {
        tool,
        key: rule.key,
        reply,
    })
}

fn read_sampling_rule(
    at: &str,
    rule: Spanned<SamplingRuleFile>,
    bad: &Bad,
) -> Result<SamplingRule> {
    let rule_line = line(&rule.referenced);
    let rule = rule.value;
    let tool = glob(at, rule_line, rule.tool, bad)?;
    let answer = match (
        rule.action.unwrap_or(SamplingActionFile::Respond),
        rule.result,
    ) {
        (SamplingActionFile::Respond, Some(result)) => {
            let result_line = line(&result.referenced);
            let result = model_message(&result.value).map_err(|(path, message)| {
                bad(format!("{at}/result{path}"), result_line, message)
            })?;
            SamplingAnswer::Respond(result)
        }
        (SamplingActionFile::Respond, None) => {
            return Err(bad(
                at.to_owned(),
                rule_line,
                "a sampling rule needs a `result` (the model's message) or `action: decline` or `action: cancel`".into(),
            ));
        }
        (action, Some(result)) => {
            return Err(bad(
                format!("{at}/result"),
                line(&result.referenced),
                format!(
                    "`result` goes only with `action: respond`, not `{}`",
                    match action {
                        SamplingActionFile::Decline => "decline",
                        _ => "cancel",
                    }
                ),
            ));
        }
        (SamplingActionFile::Decline, None) => {
            SamplingAnswer::Decline("the answers file declines this sampling request".into())
        }
        (SamplingActionFile::Cancel, None) => {
            SamplingAnswer::Cancel("the answers file cancels this sampling request".into())
        }
    };
    Ok(SamplingRule { tool, answer })
}

/// Whether a rule's `tool` glob admits a question: a rule without one admits
/// any; one with a glob only a question that belongs to exactly one call
/// (`tool` is then its `server/tool`).
fn admits(glob: Option<&GlobMatcher>, tool: Option<&str>) -> bool {
    match glob {
        None => true,
        Some(glob) => tool.is_some_and(|tool| glob.is_match(tool)),
    }
}

impl Answers {
    /// The file the rules come from.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Whether the file has `answers:` rules (so the client declares elicitation).
    pub fn has_answers(&self) -> bool {
        !self.rules.is_empty()
    }

    /// The `server/tool` globs the rules name (`answers:` and `sampling:`,
    /// each once): the calls whose questions are answered by call, which
    /// therefore run alone on their server.
    pub fn named_tools(&self) -> Vec<String> {
        let mut globs: Vec<String> = Vec::new();
        let named = self.rules.iter().filter_map(|r| r.tool.as_ref());
        let sampled = self.sampling.iter().filter_map(|r| r.tool.as_ref());
        for glob in named.chain(sampled) {
            let glob = glob.glob().glob();
            if !globs.iter().any(|g| g == glob) {
                globs.push(glob.to_owned());
            }
        }
        globs
    }

    /// Whether the file has `sampling:` rules (so the client declares sampling).
    pub fn has_sampling(&self) -> bool {
        !self.sampling.is_empty()
    }

    /// The answer to one elicitation: from the first rule whose `tool` admits
    /// `tool` (the call's `server/tool`, `None` when the question belongs to
    /// no single call) and whose `key` is `key` (`None` for a request sent
    /// during a call, whose key is its JSON-RPC id: only rules without `key`
    /// match). `None` when no rule matches; `Some(Err(why))` when the first
    /// that matches cannot answer the form (a required field it leaves out
    /// has no default).
    pub fn elicitation(
        &self,
        tool: Option<&str>,
        key: Option<&str>,
        elicitation: &Elicitation,
    ) -> Option<std::result::Result<ElicitResult, String>> {
        let rule = self.rules.iter().find(|rule| {
            admits(rule.tool.as_ref(), tool)
                && match (&rule.key, key) {
                    (None, _) => true,
                    (Some(wanted), Some(key)) => wanted == key,
                    (Some(_), None) => false,
                }
        })?;
        Some(match (&rule.reply, elicitation) {
            (Reply::Accept(content), Elicitation::Form(form)) => fill(form, content.as_ref()),
            (Reply::Accept(_), _) => Ok(ElicitResult::accept_without_content()),
            (Reply::Decline, _) => Ok(ElicitResult::decline()),
            (Reply::Cancel, _) => Ok(ElicitResult::cancel()),
        })
    }

    /// The answer to a sampling request from the first `sampling:` rule whose
    /// `tool` admits `tool` (as for [`elicitation`](Self::elicitation)).
    pub fn sampling(&self, tool: Option<&str>) -> Option<&SamplingAnswer> {
        self.sampling
            .iter()
            .find(|rule| admits(rule.tool.as_ref(), tool))
            .map(|rule| &rule.answer)
    }
}

/// A form's answer: the defaults it declares (SEP-1034), overridden by
/// `content`; an error naming the required fields still missing.
fn fill(
    form: &FormElicitation,
    content: Option<&Map<String, Value>>,
) -> std::result::Result<ElicitResult, String> {
    let mut answer = form.defaults();
    if let Some(content) = content {
        answer.extend(content.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let missing: Vec<&str> = form
        .requested_schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|field| !answer.contains_key(*field))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the answer leaves out {}, which the form requires and gives no default for",
            missing
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(ElicitResult::accept(Value::Object(answer)))
}
