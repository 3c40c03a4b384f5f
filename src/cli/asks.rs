//! What the command line answers when servers ask, from `--answers FILE` and
//! `--root PATH`: one set of [`Handlers`], holding exactly what those flags
//! can answer, so that the clients declare exactly that. There is no one to
//! ask, so a question no rule answers is declined, and stderr says so.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use mcp_adapters::exec::{
    Asking, Attribution, CallRecord, Handlers, InputAnswer, InputQuestions, Roots, Sampling,
    SamplingAnswer, SamplingRequest,
};
use mcp_adapters::mcp::{ElicitAction, InputRequest, InputResponses, Root};
use mcp_adapters::toolset::sanitize_description;
use mcp_adapters::{Error, ErrorKind, Result};

use super::AsksArgs;
use super::answers::{Answers, read_answers};
use super::shown::escaped;

/// The handlers of `--answers` and `--root`, and what their notes on stderr
/// already explained.
pub struct Asks {
    pub handlers: Handlers,
    /// The `server/tool` globs the answers file's rules name: those calls run
    /// alone on their server, so that a question can only be theirs.
    pub alone: Vec<String>,
    /// Whether a question no rule answers waits (`run --suspend`).
    pub suspend: bool,
    notes: Arc<Notes>,
}

/// The calls whose questions a note on stderr already explained, as
/// `(server, call id, exposed name)`.
#[derive(Default)]
struct Notes {
    explained: Mutex<HashSet<(String, Option<String>, String)>>,
}

impl Notes {
    fn explain(&self, server: &str, call: &Attribution) {
        if let (Some(info), Ok(mut explained)) = (call.call(), self.explained.lock()) {
            explained.insert((
                server.to_owned(),
                info.call.call_id.clone(),
                info.call.exposed_name.clone(),
            ));
        }
    }

    fn explained(&self, record: &CallRecord) -> bool {
        let key = (
            record.server_id.clone().unwrap_or_default(),
            record.call_id.clone(),
            record.exposed_name.clone().unwrap_or_default(),
        );
        self.explained.lock().is_ok_and(|e| e.contains(&key))
    }
}

/// Reads `--answers` and `--root` into handlers: an input handler only when
/// the file has `answers:` rules, sampling only with `sampling:` rules, roots
/// only with `--root`; none without the flags.
///
/// # Errors
///
/// As [`read_answers`], and [`ErrorKind::Input`] naming a `--root` that does
/// not exist or has no `file://` URI.
pub fn read(args: &AsksArgs, suspend: bool) -> Result<Asks> {
    let answers = match &args.answers {
        Some(path) => Some(Arc::new(read_answers(path)?)),
        None => None,
    };
    let roots = roots(&args.roots)?;
    let notes = Arc::new(Notes::default());
    let mut handlers = Handlers::new();
    if let Some(answers) = answers.as_ref().filter(|a| a.has_answers()) {
        let (answers, notes) = (answers.clone(), notes.clone());
        handlers = handlers.input(move |questions| {
            let answer = answer_questions(&answers, &notes, &questions, suspend);
            Box::pin(async move { answer })
        });
    }
    if let Some(answers) = answers.as_ref().filter(|a| a.has_sampling()) {
        let (answers, notes) = (answers.clone(), notes.clone());
        handlers = handlers.sampling(Sampling::new(move |request| {
            let answer = answer_sampling(&answers, &notes, &request);
            Box::pin(async move { answer })
        }));
    }
    if !roots.is_empty() {
        handlers = handlers.roots(Roots::new(roots));
    }
    let alone = answers
        .as_ref()
        .map(|a| a.named_tools())
        .unwrap_or_default();
    Ok(Asks {
        handlers,
        alone,
        suspend,
        notes,
    })
}

/// The roots of `--root`: each path must exist, and is offered as its
/// canonical absolute path (`..` and symbolic links resolved), named after
/// its last component.
fn roots(paths: &[PathBuf]) -> Result<Vec<Root>> {
    paths
        .iter()
        .map(|path| {
            let canonical = std::fs::canonicalize(path).map_err(|e| {
                Error::new(
                    ErrorKind::Input,
                    format!("--root `{}` cannot be a root", path.display()),
                )
                .with_source(e)
            })?;
            Root::from_path(&canonical).map_err(|e| e.with_file(path))
        })
        .collect()
}

/// Who asked, for stderr: `server/tool`, or the server and why no single
/// call is known.
fn asker(server: &str, call: &Attribution) -> String {
    let text = match call {
        Attribution::Call(info) => format!("`{server}/{}`", info.call.tool),
        Attribution::Ambiguous(calls) => format!(
            "`{server}` (during one of its calls to {}; stdio cannot tell which)",
            calls
                .iter()
                .map(|c| format!("`{}`", c.call.tool))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => format!("`{server}` (outside any call)"),
    };
    escaped(&text).into_owned()
}

/// A question no single call is known to have asked, for a decline: the
/// calls it may have come from, if any.
fn of_no_single_call(call: &Attribution) -> String {
    match call {
        Attribution::Ambiguous(calls) => format!(
            "a request during one of {} calls in flight ({}), which the transport cannot tell apart: only a rule without `tool` answers it",
            calls.len(),
            calls
                .iter()
                .map(|c| format!("`{}/{}`", c.call.server_id, c.call.tool))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => "a request outside any call".to_owned(),
    }
}

/// The call's `server/tool`, when the question belongs to exactly one call.
fn tool_of(server: &str, call: &Attribution) -> Option<String> {
    call.call()
        .map(|info| format!("{server}/{}", info.call.tool))
}

/// `text` cleaned for a terminal and cut to 200 characters.
fn shown(text: &str) -> String {
    let clean = sanitize_description(text);
    match clean.char_indices().nth(200) {
        Some((at, _)) => format!("{}...", &clean[..at]),
        None => clean.into_owned(),
    }
}

/// One line per question, for stderr.
fn questions_text(questions: &InputQuestions) -> String {
    questions
        .requests
        .iter()
        .map(|(key, request)| {
            let what = match request {
                InputRequest::Elicitation(e) => format!("{:?}", shown(e.message())),
                other => format!("a {} request", other.method()),
            };
            match questions.asking {
                Asking::InputRequired => format!("{key}: {what}"),
                _ => what,
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Answers a round (or a request during a call) from the `answers:` rules,
/// or declines it all when one question has no answer, saying so on stderr.
/// With `suspend`, a round's questions that have no answer wait (the
/// turn's `waiting` lists them).
fn answer_questions(
    answers: &Answers,
    notes: &Notes,
    questions: &InputQuestions,
    suspend: bool,
) -> InputAnswer {
    let tool = tool_of(&questions.server_id, &questions.call);
    let keyed = matches!(questions.asking, Asking::InputRequired);
    let mut responses = InputResponses::new();
    let mut unanswered = Vec::new();
    let mut unfit = Vec::new();
    let mut cancelled = false;
    for (key, request) in &questions.requests {
        let name = if keyed {
            format!("`{key}`")
        } else {
            "the request".to_owned()
        };
        let found = match request {
            InputRequest::Elicitation(e) => {
                answers.elicitation(tool.as_deref(), keyed.then_some(key.as_str()), e)
            }
            _ => None,
        };
        match found {
            // A person who cancels stops the turn: its question is not answered.
            Some(Ok(answer)) if answer.action == ElicitAction::Cancel => cancelled = true,
            Some(Ok(answer)) => {
                responses.insert(key.clone(), answer.into());
            }
            Some(Err(why)) => unfit.push(format!("{name}: {why}")),
            None if keyed => unanswered.push(key.clone()),
            None => unanswered.push(name),
        }
    }
    if cancelled {
        notes.explain(&questions.server_id, &questions.call);
        eprintln!(
            "note: {} asked for input ({}); cancelled: {} cancels it, and the turn halts",
            asker(&questions.server_id, &questions.call),
            questions_text(questions),
            answers.file().display(),
        );
        return InputAnswer::Cancel("the answers file cancels it".to_owned());
    }
    if unanswered.is_empty() && unfit.is_empty() {
        return InputAnswer::Respond(responses);
    }
    if suspend && unfit.is_empty() && keyed {
        notes.explain(&questions.server_id, &questions.call);
        return InputAnswer::Later;
    }
    let mut why = Vec::new();
    if !unanswered.is_empty() {
        why.push(format!("has no answer for {}", unanswered.join(", ")));
    }
    if !unfit.is_empty() {
        why.push(format!("cannot answer {}", unfit.join("; ")));
    }
    let why = why.join(" and ");
    notes.explain(&questions.server_id, &questions.call);
    eprintln!(
        "note: {} asked for input ({}); declined: {} {why}",
        asker(&questions.server_id, &questions.call),
        questions_text(questions),
        answers.file().display(),
    );
    InputAnswer::Decline(match tool {
        Some(_) => format!("the answers file {why}"),
        None => format!(
            "the answers file {why} ({})",
            of_no_single_call(&questions.call)
        ),
    })
}

/// Answers a sampling request from the `sampling:` rules, or declines it,
/// saying on stderr who asked and what.
fn answer_sampling(answers: &Answers, notes: &Notes, request: &SamplingRequest) -> SamplingAnswer {
    let tool = tool_of(&request.server_id, &request.call);
    if let Some(answer) = answers.sampling(tool.as_deref()) {
        if matches!(answer, SamplingAnswer::Cancel(_)) {
            notes.explain(&request.server_id, &request.call);
            eprintln!(
                "note: {} asked for a completion; cancelled: {} cancels it, and the turn halts",
                asker(&request.server_id, &request.call),
                answers.file().display(),
            );
        }
        return answer.clone();
    }
    let asked = request
        .params
        .messages
        .iter()
        .rev()
        .map(|m| m.text())
        .find(|t| !t.is_empty())
        .unwrap_or_default();
    notes.explain(&request.server_id, &request.call);
    eprintln!(
        "note: {} asked for a completion ({:?}, at most {} tokens); declined: {} has no sampling rule for it",
        asker(&request.server_id, &request.call),
        shown(&asked),
        request.params.max_tokens,
        answers.file().display(),
    );
    SamplingAnswer::Decline(match tool {
        Some(tool) => format!("the answers file has no sampling rule for `{tool}`"),
        None => format!(
            "the answers file has no sampling rule for {}",
            of_no_single_call(&request.call)
        ),
    })
}

impl Asks {
    /// After a run: a note on stderr for each call that ended because its
    /// tool asked for what the command line was not told how to answer (and
    /// that no note explained yet), with the flags that would answer it.
    pub fn report(&self, calls: &[CallRecord]) {
        let features = self.handlers.features();
        let mut missing = Vec::new();
        if !features.elicitation_form {
            missing.push("`answers:` rules in --answers FILE answer forms and pages to open");
        }
        if !features.sampling {
            missing.push("`sampling:` rules in --answers FILE answer completions");
        }
        if !features.roots {
            missing.push("--root PATH offers roots");
        }
        let hint = match missing.as_slice() {
            [] => String::new(),
            some => format!(
                " The command line answers only what its flags say: {}.",
                some.join("; ")
            ),
        };
        for call in calls {
            let Some(error) = &call.error else {
                continue;
            };
            if error.kind() != ErrorKind::InputRequired || self.notes.explained(call) {
                continue;
            }
            let id = call
                .call_id
                .as_deref()
                .map(|id| format!(" `{id}`"))
                .unwrap_or_default();
            eprintln!(
                "note: call{} to `{}` (server `{}`): {}{hint}",
                escaped(&id),
                escaped(call.exposed_name.as_deref().unwrap_or("")),
                escaped(call.server_id.as_deref().unwrap_or("")),
                escaped(error.message()),
            );
        }
    }
}
