//! `run --answers FILE`: canned answers to the questions of tools that ask for
//! input (MCP 2026-07-28 `input_required`). The command line has no one to
//! ask, so a question without a canned answer is declined, and stderr says so.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::{Glob, GlobMatcher};
use mcp_adapters::mcp::{ElicitResult, InputRequest, InputResponses};
use mcp_adapters::{Error, ErrorKind, InputAnswer, InputQuestions, Result, SourceBuilder};
use serde::Deserialize;
use serde_json::Value;

/// An answers file: `{"answers": [{"tool": GLOB, "key": KEY, "action": ACTION, "content": {...}}]}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswersFile {
    answers: Vec<RuleFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    /// A glob over `server/tool`; any tool when absent.
    #[serde(default)]
    tool: Option<String>,
    /// The question's key; any question when absent.
    #[serde(default)]
    key: Option<String>,
    /// `accept` (the default), `decline` or `cancel`.
    #[serde(default)]
    action: Option<ActionFile>,
    /// The form's content, for `accept`.
    #[serde(default)]
    content: Option<Value>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ActionFile {
    Accept,
    Decline,
    Cancel,
}

struct Rule {
    tool: Option<GlobMatcher>,
    key: Option<String>,
    answer: ElicitResult,
}

/// The canned answers of one file.
pub struct Answers {
    file: PathBuf,
    rules: Vec<Rule>,
}

/// Reads an answers file (JSON or YAML). The first rule whose `tool` and
/// `key` match a question answers it.
pub fn read_answers(path: &Path) -> Result<Answers> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(ErrorKind::Io, format!("cannot read {}", path.display()))
            .with_file(path)
            .with_source(e)
    })?;
    let file: AnswersFile = serde_saphyr::from_str(&text).map_err(|e| {
        Error::new(ErrorKind::Input, "not an answers file")
            .with_file(path)
            .with_source(e)
    })?;
    let rules = file
        .answers
        .into_iter()
        .enumerate()
        .map(|(i, rule)| {
            let at = format!("answers/{i}");
            let tool = match &rule.tool {
                Some(glob) => Some(
                    Glob::new(glob)
                        .map_err(|e| {
                            Error::new(ErrorKind::Input, format!("invalid glob `{glob}`"))
                                .with_file(path)
                                .with_path(format!("{at}/tool"))
                                .with_source(e)
                        })?
                        .compile_matcher(),
                ),
                None => None,
            };
            let answer = match (rule.action.unwrap_or(ActionFile::Accept), rule.content) {
                (ActionFile::Accept, Some(content)) if content.is_object() => {
                    ElicitResult::accept(content)
                }
                (ActionFile::Accept, Some(_)) => {
                    return Err(Error::new(ErrorKind::Input, "`content` must be an object")
                        .with_file(path)
                        .with_path(format!("{at}/content")));
                }
                (ActionFile::Accept, None) => ElicitResult::accept_without_content(),
                (ActionFile::Decline, None) => ElicitResult::decline(),
                (ActionFile::Cancel, None) => ElicitResult::cancel(),
                (_, Some(_)) => {
                    return Err(Error::new(
                        ErrorKind::Input,
                        "`content` goes only with `action: accept`",
                    )
                    .with_file(path)
                    .with_path(format!("{at}/content")));
                }
            };
            Ok(Rule {
                tool,
                key: rule.key,
                answer,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Answers {
        file: path.to_owned(),
        rules,
    })
}

impl Answers {
    fn find(&self, tool: &str, key: &str) -> Option<&ElicitResult> {
        self.rules
            .iter()
            .find(|rule| {
                rule.tool.as_ref().is_none_or(|glob| glob.is_match(tool))
                    && rule.key.as_deref().is_none_or(|k| k == key)
            })
            .map(|rule| &rule.answer)
    }
}

/// One line per question, for stderr.
fn questions_text(questions: &InputQuestions) -> String {
    questions
        .requests
        .iter()
        .map(|(key, request)| match request {
            InputRequest::Elicitation(e) => format!("{key}: {:?}", e.message()),
            other => format!("{key}: a {} request", other.method()),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Answers from `answers`, or declines (saying so on stderr) what they do not cover.
pub fn with_answers(builder: SourceBuilder, answers: Option<Arc<Answers>>) -> SourceBuilder {
    builder.input_handler(move |questions| {
        let tool = format!("{}/{}", questions.server_id, questions.tool().unwrap_or(""));
        let answer = match &answers {
            None => {
                eprintln!(
                    "note: `{tool}` asked for input ({}); declined: the command line has no one to ask (give --answers FILE)",
                    questions_text(&questions)
                );
                InputAnswer::Decline(
                    "the command line has no one to ask and no --answers file was given".into(),
                )
            }
            Some(answers) => {
                let mut responses = InputResponses::new();
                let mut missing = Vec::new();
                for (key, request) in &questions.requests {
                    match (request, answers.find(&tool, key)) {
                        (InputRequest::Elicitation(_), Some(answer)) => {
                            responses.insert(key.clone(), answer.clone().into());
                        }
                        _ => missing.push(key.clone()),
                    }
                }
                if missing.is_empty() {
                    InputAnswer::Respond(responses)
                } else {
                    eprintln!(
                        "note: `{tool}` asked for input ({}); declined: {} has no answer for {}",
                        questions_text(&questions),
                        answers.file.display(),
                        missing.join(", ")
                    );
                    InputAnswer::Decline(format!(
                        "the answers file has no answer for {}",
                        missing.join(", ")
                    ))
                }
            }
        };
        Box::pin(async move { answer })
    })
}
