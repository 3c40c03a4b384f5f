//! What `run` says on stderr after a turn (the summary, the provider's hosted
//! calls, decisions that named no call, what a suspended turn waits for),
//! and the suspended turn's state file.

use std::path::Path;

use mcp_adapters::exec::{CallOutcome, StateKey, Wait};
use mcp_adapters::{ErrorKind, Execution, Result};
use serde_json::{Value, json};

use super::shown::escaped;

/// One line on stderr after a turn: how many calls it has, and how many of
/// them ran, were rejected before anything was sent (unknown tool, bad
/// arguments), were denied (by the policy, an approver, or not run because
/// the turn halted or was interrupted first), failed, or wait (in a
/// suspended turn). The counts add up to the calls.
pub fn summarize(run: &Execution, turn: Option<usize>) {
    let (mut ran, mut rejected, mut denied, mut failed, mut waiting) = (0, 0, 0, 0, 0);
    for call in &run.calls {
        let name = call.exposed_name.as_deref().unwrap_or("?");
        for warning in &call.warnings {
            eprintln!("warning: `{}`: {}", escaped(name), escaped(warning));
        }
        // The model is told only the kind and the server: the person at the
        // terminal reads why (its stderr tail, its command line).
        if let Some(error) = &call.error
            && matches!(
                error.kind(),
                ErrorKind::Unavailable | ErrorKind::Interrupted | ErrorKind::Unauthorized
            )
        {
            eprintln!(
                "error: `{}`: {}",
                escaped(name),
                escaped(&format!("{error:#}"))
            );
        }
        match call.outcome {
            CallOutcome::Ran => ran += 1,
            CallOutcome::Rejected => rejected += 1,
            CallOutcome::Denied => denied += 1,
            CallOutcome::Waiting => waiting += 1,
            // It ran but broke its schema, did not complete, or may have run.
            _ => failed += 1,
        }
    }
    let turn = turn.map(|t| format!(" (turn {t})")).unwrap_or_default();
    eprintln!(
        "summary{turn}: {} call(s): {ran} ran, {rejected} rejected before sending, {denied} denied, {failed} failed, {waiting} waiting",
        run.calls.len()
    );
}

/// What the provider did with the servers it hosts, on stderr: its calls
/// (run by the provider, not here) and the approval answers printed in
/// `approvals`, for the next request.
pub fn summarize_hosted(run: &Execution) {
    for call in &run.hosted.calls {
        let outcome = match &call.error {
            Some(error) => format!("failed: {error}"),
            None => "answered".to_owned(),
        };
        eprintln!(
            "hosted: the provider called `{}/{}` itself ({})",
            escaped(&call.server_id),
            escaped(&call.tool),
            escaped(&outcome)
        );
    }
    for answer in &run.approvals {
        let decision = match &answer.reason {
            _ if answer.approved => "approved".to_owned(),
            Some(reason) => format!("denied: {reason}"),
            None => "denied".to_owned(),
        };
        eprintln!(
            "hosted: `{}/{}` awaits approval: {} (the answer is `approvals[].item`, for the next request)",
            escaped(&answer.server_id),
            escaped(&answer.tool),
            escaped(&decision)
        );
    }
}

/// The programs the model wrote, on stderr: each program the response
/// holds, how many of the turn's calls each program made (answered here,
/// for it), each output a program ended with, and the container they wait
/// in (until when), whose id the next request carries (`request`).
pub fn summarize_programs(run: &Execution) {
    let mut callers: Vec<(&str, usize)> = Vec::new();
    for call in &run.calls {
        if let Some(id) = call.caller.program_id() {
            match callers.iter_mut().find(|(p, _)| *p == id) {
                Some((_, n)) => *n += 1,
                None => callers.push((id, 1)),
            }
        }
    }
    let programs = &run.programs;
    for program in &programs.programs {
        let lines = program.code.as_deref().map_or(0, |c| c.lines().count());
        eprintln!(
            "program: the model wrote program `{}` ({lines} line(s) of code)",
            shown(&program.id)
        );
    }
    for (id, n) in &callers {
        let earlier = if programs.programs.iter().any(|p| p.id == *id) {
            ""
        } else {
            " (written in an earlier response)"
        };
        eprintln!(
            "program: {n} call(s) from program `{}`{earlier}, answered for it",
            shown(id)
        );
    }
    for output in &programs.outputs {
        let text = match &output.output {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let text = shown(&text);
        let text = match text.char_indices().nth(200) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text,
        };
        let status = output
            .status
            .as_deref()
            .map(|s| format!(" ({})", shown(s)))
            .unwrap_or_default();
        eprintln!(
            "program: `{}` ended{status}: {text}",
            shown(&output.program_id)
        );
    }
    if let Some(container) = &programs.container
        && !callers.is_empty()
    {
        let until = container
            .expires_at
            .as_deref()
            .map(|t| format!(" until {}", shown(t)))
            .unwrap_or_default();
        eprintln!(
            "program: its container `{}` waits for the answers{until} (the next request names it: `request`)",
            shown(&container.id)
        );
    }
}

/// Provider text as it may be printed on one line of a terminal: its
/// control (line ends included) and invisible characters written out.
fn shown(text: &str) -> String {
    mcp_adapters::toolset::escape_visible(text).into_owned()
}

/// A suspended turn's state written to `file` (`--suspend`), and what it
/// waits for on stderr: the command then exits with status 3 (or, when a
/// signal interrupted it, with the signal's).
pub fn kept_if_suspended(
    run: &Execution,
    file: Option<&Path>,
    key: Option<&StateKey>,
) -> Result<()> {
    let (Some(state), Some(file)) = (&run.suspended, file) else {
        return Ok(());
    };
    super::state::write(state, file, key)?;
    waiting_lines(run);
    eprintln!(
        "note: the turn is suspended; its state is in {}: resume it with --resume {}",
        file.display(),
        file.display()
    );
    Ok(())
}

/// What a suspended turn waits for, a line each on stderr.
pub fn waiting_lines(run: &Execution) {
    for waiting in &run.waiting {
        let id = match (&waiting.call_id, waiting.index) {
            (Some(id), _) => escaped(id).into_owned(),
            (None, index) => format!("#{index}"),
        };
        let what = match &waiting.what {
            Wait::Approval => "approval (--approve-call or --deny-call)".to_owned(),
            Wait::HostedApproval => {
                "approval of the provider's hosted call (--approve-call or --deny-call)".to_owned()
            }
            Wait::Input { requests } => format!(
                "answers (--answers) to {}",
                requests
                    .iter()
                    .map(|(key, request)| format!("`{key}`: {}", request_text(request)))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            Wait::Task {
                task_id, status, ..
            } => format!(
                "the end of its task `{}` ({}) on the server: resume it later",
                escaped(task_id),
                escaped(status)
            ),
            Wait::Resume => {
                "the turn to be resumed (it was not sent: the run was interrupted first)".to_owned()
            }
            _ => "an answer".to_owned(),
        };
        eprintln!(
            "waiting: call {id} (`{}/{}`) waits for {what}",
            escaped(&waiting.server_id),
            escaped(&waiting.tool)
        );
    }
}

/// A question as one line: an elicitation's message, or its kind.
fn request_text(request: &mcp_adapters::mcp::InputRequest) -> String {
    use mcp_adapters::mcp::{Elicitation, InputRequest};
    let text = match request {
        InputRequest::Elicitation(Elicitation::Form(form)) => format!("{:?}", form.message),
        InputRequest::Elicitation(Elicitation::Url(url)) => {
            format!("{:?} at {}", url.message, url.url)
        }
        InputRequest::Sampling(_) => "a completion (sampling)".to_owned(),
        InputRequest::ListRoots(_) => "the roots".to_owned(),
        _ => "a question".to_owned(),
    };
    mcp_adapters::toolset::sanitize_description(&text).into_owned()
}

/// Each server's state, for the output: `{"name": "up" | "reconnecting" | "down: ..."}`.
pub fn server_states(source: &mcp_adapters::Source) -> Value {
    source
        .server_states()
        .into_iter()
        .map(|(id, state)| (id, json!(state.to_string())))
        .collect::<serde_json::Map<String, Value>>()
        .into()
}
