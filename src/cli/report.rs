//! What `run` says on stderr after a turn (the summary, the provider's hosted
//! calls, decisions that named no call, what a suspended turn waits for),
//! and the suspended turn's state file.

use std::path::Path;

use mcp_adapters::exec::{TurnState, Wait};
use mcp_adapters::{Error, ErrorKind, Execution, Result};
use serde_json::{Value, json};

use super::RunArgs;

/// One line on stderr after a turn: how many calls it has, and how many of
/// them ran, were rejected before anything was sent (unknown tool, bad
/// arguments), were denied (by the policy, an approver, or not run because
/// the turn halted or was interrupted first), failed, or wait (in a
/// suspended turn). The counts add up to the calls.
pub fn summarize(run: &Execution, turn: Option<usize>) {
    let (mut ran, mut rejected, mut denied, mut failed) = (0, 0, 0, 0);
    for call in &run.calls {
        let name = call.exposed_name.as_deref().unwrap_or("?");
        for warning in &call.warnings {
            eprintln!("warning: `{name}`: {warning}");
        }
        // The model is told only the kind and the server: the person at the
        // terminal reads why (its stderr tail, its command line).
        if let Some(error) = &call.error
            && matches!(
                error.kind(),
                ErrorKind::Unavailable | ErrorKind::Interrupted | ErrorKind::Unauthorized
            )
        {
            eprintln!("error: `{name}`: {error:#}");
        }
        match call.error.as_ref().map(Error::kind) {
            // It ran, but the model was answered with what broke its schema.
            Some(ErrorKind::InvalidResult) => failed += 1,
            _ if call.ran => ran += 1,
            Some(ErrorKind::UnknownTool | ErrorKind::InvalidArguments) => rejected += 1,
            Some(ErrorKind::Denied) => denied += 1,
            _ => failed += 1,
        }
    }
    // The provider's approval requests wait too, but are not the model's calls.
    let waiting = run.waiting.iter().filter(|w| w.index != usize::MAX).count();
    let turn = turn.map(|t| format!(" (turn {t})")).unwrap_or_default();
    eprintln!(
        "summary{turn}: {} call(s): {ran} ran, {rejected} rejected before sending, {denied} denied, {failed} failed, {waiting} waiting",
        run.calls.len() + waiting
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
            "hosted: the provider called `{}/{}` itself ({outcome})",
            call.server_id, call.tool
        );
    }
    for answer in &run.approvals {
        let decision = match &answer.reason {
            _ if answer.approved => "approved".to_owned(),
            Some(reason) => format!("denied: {reason}"),
            None => "denied".to_owned(),
        };
        eprintln!(
            "hosted: `{}/{}` awaits approval: {decision} (the answer is `approvals[].item`, for the next request)",
            answer.server_id, answer.tool
        );
    }
}

/// A warning for each `--approve-call` / `--deny-call` that names no call
/// of the turn (nor a hosted call's approval request): a typo would
/// otherwise only show as the call still waiting, or denied.
pub fn unmatched_decisions(args: &RunArgs, run: &Execution) {
    let named = |id: &str| {
        run.calls
            .iter()
            .any(|c| c.call_id.as_deref() == Some(id) || format!("#{}", c.index) == id)
            || run
                .waiting
                .iter()
                .any(|w| w.call_id.as_deref() == Some(id) || format!("#{}", w.index) == id)
            || run.hosted.approvals.iter().any(|a| a.id == id)
    };
    for (flag, id) in args
        .approve_calls
        .iter()
        .map(|id| ("--approve-call", id))
        .chain(args.deny_calls.iter().map(|id| ("--deny-call", id)))
    {
        if !named(id) {
            eprintln!("warning: {flag} {id} names no call of this turn");
        }
    }
}

/// Writes a suspended turn's state to `file` (`--suspend`).
pub fn write_state(file: &Path, state: &TurnState) -> Result<()> {
    state.write_file(file)
}

/// A suspended turn's state written to `file` (`--suspend`), and what it
/// waits for on stderr: the command then exits with status 3 (or, when a
/// signal interrupted it, with the signal's).
pub fn kept_if_suspended(run: &Execution, file: Option<&Path>) -> Result<()> {
    let (Some(state), Some(file)) = (&run.suspended, file) else {
        return Ok(());
    };
    write_state(file, state)?;
    for waiting in &run.waiting {
        let id = match (&waiting.call_id, waiting.index) {
            (Some(id), _) => id.clone(),
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
                "the end of its task `{}` ({status}) on the server: resume it later",
                mcp_adapters::toolset::sanitize_description(task_id)
            ),
            Wait::Resume => {
                "the turn to be resumed (it was not sent: the run was interrupted first)".to_owned()
            }
            _ => "an answer".to_owned(),
        };
        eprintln!(
            "waiting: call {id} (`{}/{}`) waits for {what}",
            waiting.server_id, waiting.tool
        );
    }
    eprintln!(
        "note: the turn is suspended; its state is in {}: resume it with --resume {}",
        file.display(),
        file.display()
    );
    Ok(())
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
