//! Programs: code the model writes and the provider runs, which calls the
//! application's tools (programmatic tool calling, the spec's
//! `programmatic:` section).
//!
//! A response then holds the programs ([`Program`]), the calls they made
//! (each [`ToolCall`](crate::ToolCall) with its
//! [`Caller`]), their outputs once they ended
//! ([`ProgramOutput`]) and, for providers whose programs run in a
//! container that waits for the answers, the container ([`Container`]):
//! [`Extracted::programs`](crate::Extracted::programs) reports them, and
//! [`Provider::program_request`] writes what the next request carries on
//! (the container's id). Which tools a program may call is the [callers
//! rule](crate::callers).
//!
//! An answer meant for a program is not an answer for the model, which
//! never reads it: [`Provider::answer_program`](crate::Provider::answer_program)
//! (and execution) gives the program the structured result when there is
//! one, else the text; no result budget cuts it and no notice is put into
//! it, but a byte cap holds ([`ResultOptions::max_program_result_bytes`]);
//! a medium a program cannot take (an image, audio, a binary resource) is
//! an error that names it; and the caller goes back with the answer where
//! the provider asks for it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::callers::Caller;
use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{CallToolResult, Content};
use crate::media::{Measured, text_form_measured};
use crate::results::{Outcome, ResultOptions};
use crate::spec::Provider;
use crate::spec::programmatic::ProgramContent;
use crate::spec::template::Var;

/// The most bytes a program's answer carries unless
/// [`ResultOptions::max_program_result_bytes`] says otherwise: 4 MiB.
pub const DEFAULT_MAX_PROGRAM_RESULT_BYTES: usize = 4 * 1024 * 1024;

/// A program the model wrote, as the response holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Program {
    /// Its id: what its calls' callers name.
    pub id: String,
    /// Its code, when the response shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The item as the response holds it (an opaque fingerprint the
    /// provider needs back included): replay it as it is.
    pub item: Value,
}

/// What a program gave back when it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProgramOutput {
    /// The program's id.
    pub program_id: String,
    /// Its output, as the provider reports it (a text, or an object with
    /// its standard output and error).
    pub output: Value,
    /// How it ended (`completed`, `incomplete`), where the provider says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// Where the provider runs programs, for providers whose programs wait in
/// a container for the answers to their calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Container {
    /// Its id: the next request names it
    /// ([`Provider::program_request`]).
    pub id: String,
    /// Until when it waits for the answers (as the provider writes the
    /// time, RFC 3339): a program whose calls are not answered by then
    /// fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// A response's programs, their outputs and their container.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProgramItems {
    /// The programs the response holds, in its order (a program's calls
    /// may come in later responses, which do not repeat it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<Program>,
    /// The outputs of the programs that ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<ProgramOutput>,
    /// The container they run in, when the provider names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<Container>,
}

impl ProgramItems {
    /// Whether the response had none.
    pub fn is_empty(&self) -> bool {
        self.programs.is_empty() && self.outputs.is_empty() && self.container.is_none()
    }

    /// The output of the program `id`, if the response holds it.
    pub fn output_of(&self, id: &str) -> Option<&ProgramOutput> {
        self.outputs.iter().find(|o| o.program_id == id)
    }
}

/// A call a program made, as its answer needs it.
pub(crate) struct ProgramCall<'a> {
    pub call_id: Option<&'a str>,
    pub name: &'a str,
    pub caller: &'a Caller,
    /// Whether the tool was listed with its output schema.
    pub schema_listed: bool,
}

impl ResultOptions {
    /// The most bytes one answer to a program's call may carry (its
    /// content, the structured result's JSON text or the text):
    /// [`DEFAULT_MAX_PROGRAM_RESULT_BYTES`] unless set. A larger result is
    /// answered with an error that says so; the model's result budgets
    /// ([`max_result_tokens`](Self::max_result_tokens)) never apply to a
    /// program's answers, which the model does not read.
    pub fn max_program_result_bytes(mut self, bytes: usize) -> Self {
        self.program_bytes = Some(bytes);
        self
    }
}

impl Provider {
    /// Whether the provider's models can write programs that call the
    /// application's tools (its spec has a `programmatic:` section).
    pub fn has_programmatic(&self) -> bool {
        self.programmatic.is_some()
    }

    /// Who made the call `item`: the model when the spec has no
    /// programmatic calling or the item no caller.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] for a caller the spec knows neither as the
    /// model's nor as a program's, or a program caller without the
    /// program's id.
    pub(crate) fn read_caller(&self, item: &Value) -> Result<Caller> {
        let Some(plan) = &self.programmatic else {
            return Ok(Caller::Model);
        };
        let caller = match plan.caller.get(item) {
            None | Some(Value::Null) => return Ok(Caller::Model),
            Some(caller) => caller,
        };
        if plan.caller_model.matches(caller) {
            return Ok(Caller::Model);
        }
        if !plan.caller_program.matches(caller) {
            let shown: String = caller.to_string().chars().take(200).collect();
            return Err(Error::input(format!(
                "the call's caller {shown} is neither the model nor a program this provider's \
                 spec knows: not run"
            )));
        }
        match plan.program_id.get(caller).and_then(Value::as_str) {
            Some(id) if !id.is_empty() => Ok(Caller::program(id, caller.clone())),
            _ => Err(Error::input(
                "the call's caller is a program, and names no program: not run",
            )),
        }
    }

    /// The programs, their outputs and their container among a response's
    /// `items`; `response` is the whole input (a response or a message),
    /// where the container is.
    pub(crate) fn read_programs(&self, response: Option<&Value>, items: &[Value]) -> ProgramItems {
        let mut found = ProgramItems::default();
        let Some(plan) = &self.programmatic else {
            return found;
        };
        for item in items {
            if plan.programs.select.matches(item) {
                let Some(id) = plan.programs.id.read_string(item) else {
                    tracing::warn!(
                        provider = self.id(),
                        "a program item has no id; it is not reported"
                    );
                    continue;
                };
                found.programs.push(Program {
                    id,
                    code: plan
                        .programs
                        .code
                        .as_ref()
                        .and_then(|f| f.read_string(item)),
                    item: item.clone(),
                });
            } else if let Some(outputs) = &plan.outputs
                && outputs.select.matches(item)
            {
                found.outputs.push(ProgramOutput {
                    program_id: outputs.program_id.read_string(item).unwrap_or_default(),
                    output: outputs
                        .output
                        .path
                        .get(item)
                        .cloned()
                        .unwrap_or(Value::Null),
                    status: outputs.status.as_ref().and_then(|f| f.read_string(item)),
                });
            }
        }
        if let (Some((id, expires)), Some(response)) = (&plan.container, response)
            && let Some(container_id) = id.get(response).and_then(Value::as_str)
        {
            found.container = Some(Container {
                id: container_id.to_owned(),
                expires_at: expires
                    .as_ref()
                    .and_then(|p| p.get(response))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            });
        }
        found
    }

    /// The top-level fields the next request carries to take the programs
    /// of `programs` on (the container's id, for providers whose programs
    /// wait in one): empty when the spec says none, or there is nothing
    /// to carry.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Spec`] when the spec's `request` template needs what
    /// `programs` does not have.
    pub fn program_request(&self, programs: &ProgramItems) -> Result<Map<String, Value>> {
        let (Some(plan), Some(container)) = (&self.programmatic, &programs.container) else {
            return Ok(Map::new());
        };
        let Some(template) = &plan.request else {
            return Ok(Map::new());
        };
        let rendered = template
            .render([("container", Var::Str(&container.id))].as_slice())
            .map_err(|m| {
                Error::spec(format!("the programs' request fields need `{}`", m.0))
                    .with_file(self.source())
                    .with_path("/programmatic/request")
            })?;
        match rendered {
            Value::Object(map) => Ok(map),
            other => Err(Error::spec(format!(
                "the programs' request fields are {}, not an object",
                crate::json::type_name(&other)
            ))
            .with_file(self.source())
            .with_path("/programmatic/request")),
        }
    }

    /// The answer to a call a program made, and, when the result could not
    /// be given to the program (a medium, over the byte cap), why: the
    /// answer then says so as an error.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when the provider has no programmatic calling,
    /// or its envelope needs what the call lacks.
    pub(crate) fn program_answer(
        &self,
        call: &ProgramCall<'_>,
        outcome: Outcome<'_>,
        options: &ResultOptions,
    ) -> Result<(Value, Option<Error>)> {
        let plan = self.programmatic_plan()?;
        let cap = options
            .program_bytes
            .unwrap_or(DEFAULT_MAX_PROGRAM_RESULT_BYTES);
        let json = match plan.content {
            ProgramContent::Text => false,
            ProgramContent::Json => true,
            ProgramContent::JsonIfSchema => call.schema_listed,
        };
        let (content, is_error, refused) = match outcome {
            Outcome::Failed(error) => (error.told_to_model(), true, None),
            Outcome::Completed(result) => match program_content(result, json, cap) {
                Ok(content) => (content, result.is_error, None),
                Err(error) => (error.told_to_model(), true, Some(error)),
            },
        };
        let content = match (is_error, &plan.error_prefix, &plan.error_envelope) {
            (true, Some(prefix), None) => format!("{prefix}{content}"),
            _ => content,
        };
        // A text the provider parses as JSON goes as a JSON string; a
        // structured result is JSON text already.
        let content = match (json, is_error || !is_json_text(outcome)) {
            (true, true) => Value::String(content).to_string(),
            _ => content,
        };
        let template = match (is_error, &plan.error_envelope) {
            (true, Some(envelope)) => envelope,
            _ => &plan.envelope,
        };
        let program_id = call.caller.program_id().unwrap_or_default();
        let sent = match call.caller {
            Caller::Program(program) => Some(&program.sent),
            Caller::Model | Caller::Code(_) => None,
        };
        let mut vars: Vec<(&str, Var<'_>)> = vec![
            ("name", Var::Str(call.name)),
            ("content", Var::Str(&content)),
            ("program_id", Var::Str(program_id)),
        ];
        if let Some(id) = call.call_id {
            vars.push(("call_id", Var::Str(id)));
        }
        if let Some(sent) = sent {
            vars.push(("caller", Var::Json(std::borrow::Cow::Borrowed(sent))));
        }
        let answer = template.render(vars.as_slice()).map_err(|missing| {
            Error::input(format!(
                "provider `{}` answers to a program's call need `{}`, which the call lacks",
                self.id(),
                missing.0
            ))
            .with_tool(call.name)
        })?;
        Ok((answer, refused))
    }
}

/// Whether a completed outcome's answer is the structured result's JSON text.
fn is_json_text(outcome: Outcome<'_>) -> bool {
    matches!(outcome, Outcome::Completed(result) if result.structured_content.is_some())
}

/// What a program is given of `result`: its structured content as JSON
/// text when it has one, else its text (text blocks and text resources,
/// a link's URI), within `cap` bytes.
///
/// # Errors
///
/// [`ErrorKind::InvalidResult`] naming a medium a program cannot take, or
/// saying the result is over the cap.
fn program_content(result: &CallToolResult, json: bool, cap: usize) -> Result<String> {
    let content = match &result.structured_content {
        Some(value) => value.to_string(),
        None => {
            let mut texts: Vec<&str> = Vec::new();
            for block in result.content.iter().filter(|b| b.for_model()) {
                match block {
                    Content::Text(text) => texts.push(&text.text),
                    Content::ResourceLink(link) => texts.push(&link.uri),
                    Content::Resource(r) if r.resource.blob.is_none() => {
                        texts.push(r.resource.text.as_deref().unwrap_or_default());
                    }
                    other => {
                        let what = text_form_measured(other, Measured::of(other));
                        return Err(Error::new(
                            ErrorKind::InvalidResult,
                            format!(
                                "the result holds {what}, which a program cannot take: a \
                                 program is given text and JSON only"
                            ),
                        ));
                    }
                }
            }
            texts.join("\n")
        }
    };
    // A text sent as a JSON string grows by its escapes: the cap holds on
    // what is sent.
    let size = if json && result.structured_content.is_none() {
        Value::String(content.clone()).to_string().len()
    } else {
        content.len()
    };
    if size > cap {
        return Err(Error::new(
            ErrorKind::InvalidResult,
            format!(
                "the result is {size} bytes, over the cap of {cap} bytes for an answer to a \
                 program (raise it with max_program_result_bytes, or make the tool return less)"
            ),
        ));
    }
    Ok(content)
}
