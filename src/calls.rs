//! Call extraction: the tool calls in a model response, resolved against the toolset.

use std::borrow::Cow;
use std::collections::HashSet;

use fnv::FnvBuildHasher;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::callers::Caller;
use crate::error::{Error, ErrorKind, Result};
use crate::hosted::HostedItems;
use crate::json::{MAX_NESTING, deeper_than, type_name};
use crate::listing::{Listing, ToolSearch};
use crate::programs::{ProgramCall, ProgramItems};
use crate::results::{Outcome, ResultOptions};
use crate::search::SearchCall;
use crate::spec::Provider;
use crate::spec::calls::{ArgFormat, MissingArguments};
use crate::strict::strip_nulls;

/// The call ids of a response read so far (a few short strings, hashed with FNV).
pub(crate) type SeenIds = HashSet<String, FnvBuildHasher>;

/// A call to a tool in the toolset, ready to be sent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ToolCall {
    /// The id the model gave the call (some providers may omit it).
    pub call_id: Option<String>,
    /// The tool's server.
    pub server_id: String,
    /// The tool's name on its server (its MCP name).
    pub tool: String,
    /// The name the model called: the tool's name in the listing.
    pub exposed_name: String,
    /// The arguments, with strict-mode `null`s removed.
    pub arguments: Map<String, Value>,
    /// The call's position among the response's calls.
    pub index: usize,
    /// Who made the call: the model, or a program it wrote (see
    /// [`callers`](crate::callers)).
    #[serde(skip_serializing_if = "Caller::is_model")]
    pub caller: Caller,
    /// The result selection filter the model wrote
    /// ([`ListOptions::select`](crate::ListOptions::select)), taken out of
    /// the arguments before they are checked or sent: the model reads what
    /// it outputs from the result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub select: Option<String>,
}

impl ToolCall {
    /// A call known only by its server and tool (a request that belongs to
    /// no single call of the model's).
    pub(crate) fn bare(server_id: &str, tool: &str) -> Self {
        ToolCall {
            call_id: None,
            server_id: server_id.to_owned(),
            tool: tool.to_owned(),
            exposed_name: String::new(),
            arguments: Map::new(),
            index: 0,
            caller: Caller::Model,
            select: None,
        }
    }
}

/// A call that will not be sent, with the answer to give the model instead.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct RejectedCall {
    /// The call's position among the response's calls.
    pub index: usize,
    /// The id the model gave the call.
    pub call_id: Option<String>,
    /// The name the model called, if it gave one.
    pub exposed_name: Option<String>,
    /// Why the call was rejected.
    #[serde(serialize_with = "serialize_message")]
    pub error: Error,
    /// The provider's error answer.
    pub answer: Value,
    /// Who made the call, as far as it could be read.
    #[serde(skip_serializing_if = "Caller::is_model")]
    pub caller: Caller,
}

fn serialize_message<S: serde::Serializer>(
    e: &Error,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&e.message_with_causes())
}

/// The calls of a response: those to send and those answered already.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct Extracted {
    /// Calls to tools in the toolset, in the model's order.
    pub calls: Vec<ToolCall>,
    /// Rejected calls with their error answers, in the model's order.
    pub rejected: Vec<RejectedCall>,
    /// Searches for deferred tools, in the model's order: answer them with
    /// [`Provider::answer_search`] (the execution layer does).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub searches: Vec<SearchCall>,
    /// What the provider did with the MCP servers it hosts (see
    /// [`hosted`](crate::hosted)): reported, never run here.
    #[serde(skip_serializing_if = "HostedItems::is_empty")]
    pub hosted: HostedItems,
    /// The programs the model wrote, their outputs and the container they
    /// run in (see [`programs`](crate::programs)): their calls are among
    /// [`calls`](Self::calls), each with its
    /// [`caller`](ToolCall::caller).
    #[serde(skip_serializing_if = "ProgramItems::is_empty")]
    pub programs: ProgramItems,
}

impl Extracted {
    /// How many calls the response made.
    pub fn len(&self) -> usize {
        self.calls.len() + self.rejected.len() + self.searches.len()
    }

    /// Whether the response made no call.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Provider {
    /// Reads the tool calls in `input`: a full response, an assistant message,
    /// or the list of content blocks / output items / parts.
    ///
    /// Calls resolve against the `listing`'s toolset only, and the `null`s
    /// its strict schemas added are removed. A call is rejected, and answered
    /// with an error, when its tool is not in the toolset, its arguments are
    /// absent, not an object, or not valid JSON, it lacks an id the provider
    /// requires, or it repeats an earlier call's id. Arguments sent as an empty
    /// string count as `{}`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when `input` is none of the accepted forms, or
    /// `listing` was made for another provider.
    ///
    /// The spec says where the calls are (in a full response, an assistant
    /// message, or the bare list of blocks / items / parts the user holds), which
    /// items are calls, and how their id, name and arguments are read. Every call
    /// whose name resolves in the toolset and whose arguments are an object becomes
    /// a [`ToolCall`], with strict-mode `null`s stripped. Every other call becomes
    /// a [`RejectedCall`] carrying the provider's error answer: nothing of it is
    /// ever sent to a server (HB-2). Other items are ignored. Both lists keep the
    /// model's order, and each entry its position in it.
    ///
    /// # Limits
    ///
    /// - Arguments sent as a JSON string are parsed with serde_json's
    ///   128-level nesting limit; deeper text is rejected as invalid JSON.
    /// - Arguments given as an object (a response built in memory) that nest
    ///   deeper than 256 levels are
    ///   rejected, since copying them would recurse that deep.
    /// - A call repeating an earlier call's id is rejected: it never runs twice.
    /// - There is no cap on the number of calls in a response; extraction is
    ///   linear in the response (10,000 calls take well under a second).
    pub fn extract_calls(&self, input: &Value, listing: &Listing) -> Result<Extracted> {
        if listing.provider_id() != self.id() {
            return Err(Error::input(format!(
                "the listing is in the format of provider `{}`, not `{}`: extract calls with the provider that listed the tools",
                listing.provider_id(),
                self.id()
            )));
        }
        let items = self.locate(input)?;
        let mut out = Extracted {
            hosted: self.read_hosted(items),
            programs: self.read_programs(Some(input), items),
            ..Default::default()
        };
        let mut seen_ids = SeenIds::default();
        for item in items {
            let index = out.len();
            if let Some(search) = self.search_item(item, index, listing) {
                out.searches.push(search);
                continue;
            }
            if !self.is_call(item) {
                continue;
            }
            match self.extract_item(item, index, listing, &mut seen_ids, None)? {
                Ok(call) => out.calls.push(call),
                Err(rejected) => out.rejected.push(rejected),
            }
        }
        Ok(out)
    }

    /// Whether a response item is a tool call (the spec's `calls.select`).
    pub(crate) fn is_call(&self, item: &Value) -> bool {
        self.calls.select.matches(item)
    }

    /// Reads one call item, the `index`-th call of its response: a call to
    /// send, or a rejection with its answer. `seen_ids` holds the ids of the
    /// response's earlier calls; `arguments_error`, when given, is why the
    /// item's arguments could not be read (a stream whose argument text was
    /// not JSON).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when the provider cannot shape the rejection's answer.
    pub(crate) fn extract_item(
        &self,
        item: &Value,
        index: usize,
        listing: &Listing,
        seen_ids: &mut SeenIds,
        arguments_error: Option<Error>,
    ) -> Result<Result<ToolCall, RejectedCall>> {
        let plan = &self.calls;
        // Borrowed from the item: a call that is sent copies its id once.
        let call_id = plan.id.read_str(item);
        let name = plan.name.read_str(item);
        let caller = self.read_caller(item);
        let read = self.read_call(
            &CallItem {
                item,
                call_id: call_id.as_deref(),
                name: name.as_deref(),
                caller: caller.as_ref(),
            },
            listing,
            seen_ids,
            arguments_error,
        );
        let caller = caller.unwrap_or_default();
        match read {
            Ok(mut call) => {
                if let Some(paths) = listing.null_paths.get(&call.exposed_name) {
                    strip_nulls(&mut call.arguments, paths);
                }
                call.index = index;
                Ok(Ok(call))
            }
            Err(error) => {
                let shown = name.as_deref().unwrap_or_default().to_owned();
                let options = ResultOptions::default();
                let answer_to = |id: Option<&str>| match &caller {
                    Caller::Model | Caller::Code(_) => {
                        self.answer(id, &shown, Outcome::Failed(&error), &options)
                    }
                    Caller::Program(_) => {
                        let call = ProgramCall {
                            call_id: id,
                            name: &shown,
                            caller: &caller,
                            schema_listed: listing.lists_output_schema(&shown),
                        };
                        self.program_answer(&call, Outcome::Failed(&error), &options)
                            .map(|(answer, _)| answer)
                    }
                };
                // A provider that requires ids still gets an answer for a call without one.
                let answer = answer_to(call_id.as_deref()).or_else(|_| answer_to(Some("")))?;
                tracing::warn!(provider = self.id(), tool = %shown, call_id = call_id.as_deref().unwrap_or(""),
                    reason = %error.message_with_causes(), "tool call rejected");
                Ok(Err(RejectedCall {
                    index,
                    call_id: call_id.map(Cow::into_owned),
                    exposed_name: name.map(Cow::into_owned),
                    error,
                    answer,
                    caller,
                }))
            }
        }
    }

    fn locate<'v>(&self, input: &'v Value) -> Result<&'v [Value]> {
        let obj = match input {
            Value::Array(items) => return Ok(items),
            Value::Object(obj) => obj,
            other => {
                return Err(Error::input(format!(
                    "expected a response, a message or a list of items, got {}",
                    type_name(other)
                )));
            }
        };
        let Some(entry) = self.calls.locate.iter().find(|l| obj.contains_key(&l.when)) else {
            let keys: Vec<_> = self
                .calls
                .locate
                .iter()
                .map(|l| format!("`{}`", l.when))
                .collect();
            return Err(Error::input(format!(
                "not a `{}` response or message: it has none of {}",
                self.id(),
                keys.join(", ")
            )));
        };
        match entry.list.get(input) {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(Error::input(format!(
                "the list of calls is {}, not an array",
                type_name(other)
            ))),
        }
    }

    fn read_call(
        &self,
        read: &CallItem<'_>,
        listing: &Listing,
        seen_ids: &mut SeenIds,
        arguments_error: Option<Error>,
    ) -> Result<ToolCall> {
        let plan = &self.calls;
        let (item, call_id, toolset) = (read.item, read.call_id, listing.toolset());
        let name = read
            .name
            .ok_or_else(|| Error::new(ErrorKind::UnknownTool, "the call names no tool"))?;
        if call_id.is_none() && !plan.id.optional {
            return Err(Error::input("the call has no id").with_tool(name));
        }
        if let Some(id) = call_id.filter(|id| !seen_ids.insert((*id).to_owned())) {
            return Err(Error::input(format!(
                "call id `{id}` was already used by an earlier call; not run twice"
            )));
        }
        // A name no listed tool has is unknown, whatever the state of the
        // server its prefix names: a server that did not start lists none,
        // and why it did not is the application's to read (the toolset's
        // report), never the model's.
        let tool = toolset.resolve(name).ok_or_else(|| {
            Error::new(
                ErrorKind::UnknownTool,
                format!("unknown tool `{name}`: call one of the tools offered"),
            )
        })?;
        let caller = read.caller.map_err(Clone::clone)?.clone();
        listing.check_caller(&tool.exposed_name, &caller)?;
        if let Some(error) = arguments_error {
            return Err(error);
        }
        let arguments = read_arguments(
            plan.arguments.path.get(item),
            plan.arg_format,
            plan.missing_arguments,
        )?;
        // A bound argument the model wrote is rejected with the call (the
        // library's own tools bind nothing).
        if tool.server_id != crate::budget::LIBRARY_SERVER {
            toolset.refuse_bound(tool, &arguments)?;
        }
        let (arguments, select) = listing.take_selection(tool, arguments)?;
        Ok(ToolCall {
            call_id: call_id.map(str::to_owned),
            server_id: tool.server_id.clone(),
            tool: tool.tool.name.clone(),
            exposed_name: tool.exposed_name.clone(),
            arguments,
            index: 0,
            caller,
            select,
        })
    }

    /// The search call in `item`, when `listing` takes searches and the item is one.
    pub(crate) fn search_item(
        &self,
        item: &Value,
        index: usize,
        listing: &Listing,
    ) -> Option<SearchCall> {
        let search = listing.deferral.search.as_ref()?;
        if *search == ToolSearch::Client
            && let Some(calls) = self.client_search().and_then(|c| c.calls.as_ref())
        {
            if !calls.select.matches(item) {
                return None;
            }
            let call_id = calls.id.read_string(item);
            let args = read_arguments(
                calls.arguments.path.get(item),
                calls.arg_format,
                Default::default(),
            )
            .unwrap_or_default();
            return Some(SearchCall::from_arguments(index, call_id, &args));
        }
        let name = listing.deferral.search_tool.as_deref()?;
        if !self.is_call(item) || self.calls.name.read_string(item).as_deref() != Some(name) {
            return None;
        }
        let call_id = self.calls.id.read_string(item);
        let args = read_arguments(
            self.calls.arguments.path.get(item),
            self.calls.arg_format,
            Default::default(),
        )
        .unwrap_or_default();
        Some(SearchCall::from_arguments(index, call_id, &args))
    }

    /// Whether `item` is a search call item of its own kind (not a call).
    pub(crate) fn is_search_item(&self, item: &Value, listing: &Listing) -> bool {
        listing.deferral.search == Some(ToolSearch::Client)
            && self
                .client_search()
                .and_then(|c| c.calls.as_ref())
                .is_some_and(|calls| calls.select.matches(item))
    }
}

/// A call item as read so far: its id, its name and who made it.
struct CallItem<'v> {
    item: &'v Value,
    call_id: Option<&'v str>,
    name: Option<&'v str>,
    caller: std::result::Result<&'v Caller, &'v Error>,
}

impl Listing {
    /// Refuses a call from `caller` to the tool exposed as `name` that the
    /// listing did not open to it: a program's call to a tool not open to
    /// code, or the model's direct call to a tool open to code only.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Denied`] saying who may call the tool.
    pub fn check_caller(&self, name: &str, caller: &Caller) -> Result<()> {
        let callers = self.callers(name);
        if callers.admit(caller) {
            return Ok(());
        }
        let why = match caller {
            Caller::Program(_) | Caller::Code(_) => format!(
                "tool `{name}` is not open to code: a program may not call it (call it directly, \
                 or ask the application to open it to code)"
            ),
            Caller::Model => {
                format!("tool `{name}` may be called only from code: call it from a program")
            }
        };
        Err(Error::new(ErrorKind::Denied, why).with_tool(name))
    }
}

impl Provider {
    /// The answer to `call`, made by a program the model wrote: the
    /// structured result when there is one, else the text, never cut by a
    /// result budget (the model does not read it) but within
    /// [`ResultOptions::max_program_result_bytes`], with the caller carried
    /// back where the provider asks for it (see [`programs`](crate::programs)).
    /// A result holding a medium a program cannot take, or over the cap, is
    /// answered with an error saying so. `listing` says whether the tool
    /// was listed with its output schema (the provider then parses the
    /// answer as JSON).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when the call is not a program's, the provider
    /// has no programmatic calling, or its envelope needs what the call
    /// lacks.
    pub fn answer_program(
        &self,
        call: &ToolCall,
        listing: &Listing,
        outcome: Outcome<'_>,
        options: &ResultOptions,
    ) -> Result<Value> {
        if call.caller.is_model() {
            return Err(Error::input(
                "the call is the model's own: answer it with Provider::answer",
            )
            .with_tool(&call.exposed_name));
        }
        let program = ProgramCall {
            call_id: call.call_id.as_deref(),
            name: &call.exposed_name,
            caller: &call.caller,
            schema_listed: listing.lists_output_schema(&call.exposed_name),
        };
        self.program_answer(&program, outcome, options)
            .map(|(answer, _)| answer)
    }
}

/// Reads arguments in `format`; a string is parsed with serde_json, whose
/// error becomes the rejection's source.
pub(crate) fn read_arguments(
    value: Option<&Value>,
    format: ArgFormat,
    missing: MissingArguments,
) -> Result<Map<String, Value>> {
    let invalid = |msg: String| Error::new(ErrorKind::InvalidArguments, msg);
    match (value, format) {
        (None | Some(Value::Null), _) if missing == MissingArguments::EmptyObject => Ok(Map::new()),
        (None | Some(Value::Null), _) => Err(invalid(
            "the call has no arguments; send a JSON object".into(),
        )),
        (Some(Value::Object(map)), ArgFormat::Object | ArgFormat::ObjectOrJsonText) => {
            // Parsed text is at most 128 levels deep; a response built in memory may be deeper.
            if map.values().any(|v| deeper_than(v, MAX_NESTING - 1)) {
                return Err(invalid(format!(
                    "the arguments nest deeper than {MAX_NESTING} levels"
                )));
            }
            Ok(map.clone())
        }
        // JSON text `null` is no arguments too (a provider sends it for a tool without parameters).
        (Some(Value::String(text)), ArgFormat::JsonText | ArgFormat::ObjectOrJsonText)
            if missing == MissingArguments::EmptyObject && text.trim() == "null" =>
        {
            Ok(Map::new())
        }
        (Some(Value::String(text)), ArgFormat::JsonText | ArgFormat::ObjectOrJsonText) => {
            parse_arguments(text)
        }
        (Some(other), ArgFormat::JsonText) => Err(invalid(format!(
            "the arguments must be a string holding a JSON object, got {}",
            type_name(other)
        ))),
        (Some(other), _) => Err(invalid(format!(
            "the arguments must be a JSON object, got {}",
            type_name(other)
        ))),
    }
}

/// Parses arguments sent as JSON text: blank text is `{}`.
pub(crate) fn parse_arguments(text: &str) -> Result<Map<String, Value>> {
    let invalid = |msg: String| Error::new(ErrorKind::InvalidArguments, msg);
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(invalid(format!(
            "the arguments must be a JSON object, got {}",
            type_name(&other)
        ))),
        Err(e) => Err(invalid("the arguments are not valid JSON".into()).with_source(e)),
    }
}
