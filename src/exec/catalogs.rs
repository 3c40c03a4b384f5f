//! The library's tools for what servers offer besides tools: the model lists
//! and reads resources, lists and gets prompts, and loads skills, of the
//! servers a source opens to it
//! ([`SourceBuilder::resources`](super::SourceBuilder::resources),
//! [`SourceBuilder::prompts`](super::SourceBuilder::prompts),
//! [`SourceBuilder::skills`](super::SourceBuilder::skills)). They are
//! answered by the library, which asks the servers, through the governed
//! pipeline like any tool; the policy also decides on each server's
//! `{server}/resources/list`, `{server}/resources/read`, `{server}/prompts/list`,
//! `{server}/prompts/get`, `{server}/skills/list` and `{server}/skills/load`,
//! names no tool can have; the toolset's allow and deny globs decide on
//! those names too, so a server whose tools are filtered out by `server/*`
//! is closed here as well.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::Arc;

use globset::GlobMatcher;
use serde_json::{Map, Value, json};

use super::policy::{Action, Policy};
use super::server::{Server, list_whole_catalog};
use super::skills::{LOAD_SKILL, LoadArguments, SkillList, Skills};
use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{CallToolResult, Catalog, Content, EmbeddedResource, ResourceContents, Tool};
use crate::toolset::Filter;

/// The tool that lists resources.
pub const LIST_RESOURCES: &str = "list_resources";
/// The tool that reads a resource.
pub const READ_RESOURCE: &str = "read_resource";
/// The tool that lists prompts.
pub const LIST_PROMPTS: &str = "list_prompts";
/// The tool that gets a prompt.
pub const GET_PROMPT: &str = "get_prompt";

/// The `_meta` key under which an answer of the library's tools names the
/// servers it holds content of: they go into the turn's `ran_servers`.
pub(crate) const ORIGINS_KEY: &str = "mcp-adapters/servers";

/// An answer of `content` from the one server `server_id`.
fn from_server(content: Vec<Content>, server_id: &str) -> CallToolResult {
    let result = CallToolResult {
        content,
        ..Default::default()
    };
    from_servers(result, vec![server_id.to_owned()])
}

/// A resource's contents as a content block.
fn embedded(resource: ResourceContents) -> Content {
    Content::Resource(EmbeddedResource {
        resource,
        annotations: None,
        meta: None,
    })
}

/// `result` marked as holding content of `servers`.
fn from_servers(mut result: CallToolResult, servers: Vec<String>) -> CallToolResult {
    let mut meta = result.meta.take().unwrap_or_default();
    meta.insert(
        ORIGINS_KEY.into(),
        Value::Array(servers.into_iter().map(Value::String).collect()),
    );
    result.meta = Some(meta);
    result
}

/// The servers whose catalogues the model may reach, and the policy.
pub(super) struct Catalogs {
    pub(super) servers: Vec<(String, Arc<dyn Server>)>,
    pub(super) policy: Option<Policy>,
    pub(super) resources: Vec<GlobMatcher>,
    pub(super) prompts: Vec<GlobMatcher>,
    pub(super) skills: Vec<GlobMatcher>,
    /// The toolset's allow and deny globs: `{server}/resources/read` and the
    /// like must pass them too.
    pub(super) filter: Filter,
    /// The skills listed and loaded.
    pub(super) held_skills: Skills,
}

/// Resources, prompts or skills.
#[derive(Clone, Copy)]
enum Kind {
    Resources,
    Prompts,
    Skills,
}

impl Catalogs {
    /// The library's tools the model is offered: those of resources when a
    /// server's resources are open to it, those of prompts likewise.
    pub(super) fn tools(&self) -> Vec<Tool> {
        let mut tools = Vec::new();
        let server =
            json!({"type": "string", "description": "The server's id, as the list names it."});
        if !self.resources.is_empty() {
            tools.push(Tool::new(
                LIST_RESOURCES,
                "Lists the resources the servers offer (documents, files, records): their URIs, \
                 names, types and descriptions, and the URI templates of resources made on \
                 demand. Read one with read_resource.",
                json!({"type": "object", "properties": {"server": server}, "additionalProperties": false}),
            ));
            tools.push(Tool::new(
                READ_RESOURCE,
                "Reads a resource of a server by its URI (from list_resources, or a template \
                 filled in).",
                json!({"type": "object", "properties": {"server": server,
                    "uri": {"type": "string", "description": "The resource's URI."}},
                    "required": ["server", "uri"], "additionalProperties": false}),
            ));
        }
        if !self.prompts.is_empty() {
            tools.push(Tool::new(
                LIST_PROMPTS,
                "Lists the prompts the servers offer: their names, descriptions and arguments. \
                 Get one with get_prompt.",
                json!({"type": "object", "properties": {"server": server}, "additionalProperties": false}),
            ));
            tools.push(Tool::new(
                GET_PROMPT,
                "Gets a prompt of a server by its name, with its arguments.",
                json!({"type": "object", "properties": {"server": server,
                    "name": {"type": "string", "description": "The prompt's name."},
                    "arguments": {"type": "object", "additionalProperties": {"type": "string"},
                        "description": "The prompt's arguments by name."}},
                    "required": ["server", "name"], "additionalProperties": false}),
            ));
        }
        if !self.skills.is_empty() {
            tools.push(Tool::new(
                LOAD_SKILL,
                SKILLS_ABOUT,
                json!({"type": "object", "properties": {
                    "skill": {"type": "string", "description": "The skill's name, as the list names it."},
                    "server": {"type": "string", "description": "The skill's server, when two servers have a skill of that name."},
                    "file": {"type": "string", "description": "A file of the loaded skill to read, by its path in the skill (`references/FORMS.md`); leave it out to load the skill."}},
                    "required": ["skill"], "additionalProperties": false}),
            ));
        }
        tools
    }

    /// The skills of the servers open to the model (fresh), and the
    /// description of [`LOAD_SKILL`] that shows them; `None` when no skill
    /// is open.
    pub(super) async fn skill_catalogue(&self) -> (SkillList, Option<String>) {
        if self.skills.is_empty() {
            return (SkillList::default(), None);
        }
        let none = BTreeSet::new();
        let open = self
            .servers
            .iter()
            .filter(|(id, _)| self.open(id, Kind::Skills, "skills/list", &none))
            .map(|(id, server)| (id.as_str(), server.as_ref() as &dyn Server));
        let list = self.held_skills.list(open).await;
        if list.skills.is_empty() {
            return (list, None);
        }
        let mut text = format!("{SKILLS_ABOUT}\n\nSkills:");
        let several = list
            .skills
            .iter()
            .any(|s| s.server_id != list.skills[0].server_id);
        for skill in &list.skills {
            let _ = write!(text, "\n- {}", skill.name);
            if several {
                let _ = write!(text, " (server `{}`)", skill.server_id);
            }
            let _ = write!(
                text,
                ": {}",
                crate::describe::sanitize_description(&skill.description)
            );
        }
        (list, Some(text))
    }

    /// Whether `server_id`'s `kind` is open to the model and the policy
    /// allows `action` on it (given the conversation's `taint`).
    fn open(&self, server_id: &str, kind: Kind, action: &str, taint: &BTreeSet<String>) -> bool {
        let globs = match kind {
            Kind::Resources => &self.resources,
            Kind::Prompts => &self.prompts,
            Kind::Skills => &self.skills,
        };
        globs.iter().any(|g| g.is_match(server_id))
            && self.filter.admits(server_id, action)
            && self
                .policy
                .as_ref()
                .is_none_or(|p| p.decide(server_id, action, taint) == Action::Allow)
    }

    /// The server a call names (the one open server when it names none).
    fn server_named(
        &self,
        arguments: &Map<String, Value>,
        kind: Kind,
        action: &str,
        taint: &BTreeSet<String>,
    ) -> Result<(&str, &Arc<dyn Server>)> {
        let open: Vec<&(String, Arc<dyn Server>)> = self
            .servers
            .iter()
            .filter(|(id, _)| self.open(id, kind, action, taint))
            .collect();
        let named = match arguments.get("server").and_then(Value::as_str) {
            Some(name) => open.iter().find(|(id, _)| id == name),
            None if open.len() == 1 => open.first(),
            None => {
                return Err(Error::input(
                    "`server` is required: name one of the servers the list shows",
                ));
            }
        };
        named
            .map(|(id, server)| (id.as_str(), server))
            .ok_or_else(|| {
                let names: Vec<&str> = open.iter().map(|(id, _)| id.as_str()).collect();
                Error::new(
                    ErrorKind::Denied,
                    format!(
                        "no server {} is open for {action} here; these are: {}",
                        arguments
                            .get("server")
                            .map_or("".into(), |s| format!("{s}")),
                        names.join(", ")
                    ),
                )
            })
    }

    /// Answers a call of one of the library's catalogue tools.
    pub(super) async fn answer(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
        taint: &BTreeSet<String>,
    ) -> Result<CallToolResult> {
        match tool {
            LIST_RESOURCES => self.list(Kind::Resources, arguments, taint).await,
            LIST_PROMPTS => self.list(Kind::Prompts, arguments, taint).await,
            READ_RESOURCE => {
                let (id, server) =
                    self.server_named(arguments, Kind::Resources, "resources/read", taint)?;
                let uri = arguments
                    .get("uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| Error::input("`uri` must be a string"))?;
                // A skill's file is read verified, as load_skill reads it,
                // and only where the skill may be loaded.
                if let Some(skill) = self.held_skills.skill_holding(id, uri) {
                    if !self.open(id, Kind::Skills, "skills/load", taint) {
                        return Err(Error::new(
                            ErrorKind::Denied,
                            format!("`{uri}` is a file of skill `{skill}`, which is not open here"),
                        ));
                    }
                    let (_, resource) = self
                        .held_skills
                        .read_file(id, server.as_ref(), &skill, uri)
                        .await
                        .map_err(|e| e.of_server(id))?;
                    return Ok(from_server(vec![embedded(resource)], id));
                }
                let read = server
                    .read_resource(uri)
                    .await
                    .map_err(|e| e.of_server(id))?;
                Ok(from_server(
                    read.contents.into_iter().map(embedded).collect(),
                    id,
                ))
            }
            GET_PROMPT => {
                let (id, server) =
                    self.server_named(arguments, Kind::Prompts, "prompts/get", taint)?;
                let name = arguments
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| Error::input("`name` must be a string"))?;
                let prompt_arguments = match arguments.get("arguments") {
                    None | Some(Value::Null) => Map::new(),
                    Some(Value::Object(map)) => map.clone(),
                    Some(other) => {
                        return Err(Error::input(format!(
                            "`arguments` must be an object of strings, not {other}"
                        )));
                    }
                };
                let prompt = server
                    .get_prompt(name, prompt_arguments)
                    .await
                    .map_err(|e| e.of_server(id))?;
                let mut content = Vec::with_capacity(prompt.messages.len() * 2 + 1);
                if let Some(description) = prompt.description {
                    content.push(Content::text(description));
                }
                for message in prompt.messages {
                    content.push(Content::text(format!("[{}]", message.role)));
                    content.push(message.content);
                }
                Ok(from_server(content, id))
            }
            LOAD_SKILL => self.load_skill(arguments, taint).await,
            other => Err(Error::new(
                ErrorKind::UnknownTool,
                format!("the library has no tool `{other}`"),
            )),
        }
    }

    /// Loads a skill, or reads one of its files.
    async fn load_skill(
        &self,
        arguments: &Map<String, Value>,
        taint: &BTreeSet<String>,
    ) -> Result<CallToolResult> {
        let asked = LoadArguments::read(arguments)?;
        let mut named = arguments.clone();
        if asked.server.is_none() {
            let holding: Vec<String> = self
                .held_skills
                .servers_holding(asked.skill)
                .into_iter()
                .filter(|id| self.open(id, Kind::Skills, "skills/list", taint))
                .collect();
            match holding.as_slice() {
                [] => {}
                [only] => {
                    named.insert("server".into(), Value::String(only.clone()));
                }
                several => {
                    return Err(Error::input(format!(
                        "servers {} each have a skill `{}`: name one with `server`",
                        several.join(", "),
                        asked.skill
                    )));
                }
            }
        }
        let (id, server) = self.server_named(&named, Kind::Skills, "skills/load", taint)?;
        let content = match asked.file {
            None => {
                let loaded = self
                    .held_skills
                    .load(id, server.as_ref(), asked.skill)
                    .await
                    .map_err(|e| e.of_server(id))?;
                let skill = &loaded.skill;
                let mut head = format!("Skill `{}` of server `{id}`, loaded", skill.name);
                match &skill.files {
                    Some(files) => {
                        head.push_str(" (verified against its manifest).");
                        if files.len() > 1 {
                            head.push_str(" Its files, read with `file`:");
                            for file in &files[1..] {
                                let _ = write!(head, "\n- {} ({} bytes)", file.path, file.size);
                            }
                        }
                    }
                    None => head.push_str(
                        " (dynamic: the server publishes no digests, so it is unverified). \
                         Read the files it names with `file`.",
                    ),
                }
                vec![Content::text(head), Content::text(loaded.text)]
            }
            Some(file) => {
                let (skill, resource) = self
                    .held_skills
                    .read_file(id, server.as_ref(), asked.skill, file)
                    .await
                    .map_err(|e| e.of_server(id))?;
                let mut content = Vec::with_capacity(2);
                if skill.files.is_none() {
                    content.push(Content::text(format!(
                        "`{file}` of dynamic skill `{}`: unverified (the server publishes no digests).",
                        skill.name
                    )));
                }
                content.push(embedded(resource));
                content
            }
        };
        Ok(from_server(content, id))
    }

    /// The catalogue of each open server (or of the one the call names), as text.
    async fn list(
        &self,
        kind: Kind,
        arguments: &Map<String, Value>,
        taint: &BTreeSet<String>,
    ) -> Result<CallToolResult> {
        let (action, catalogs) = match kind {
            Kind::Resources => (
                "resources/list",
                &[Catalog::Resources, Catalog::ResourceTemplates][..],
            ),
            Kind::Prompts => ("prompts/list", &[Catalog::Prompts][..]),
            Kind::Skills => ("skills/list", &[Catalog::Skills][..]),
        };
        let asked = arguments.get("server").and_then(Value::as_str);
        let mut text = String::new();
        let mut listed = Vec::new();
        for (id, server) in &self.servers {
            if asked.is_some_and(|a| a != id) || !self.open(id, kind, action, taint) {
                continue;
            }
            listed.push(id.clone());
            let _ = writeln!(text, "server `{id}`:");
            for catalog in catalogs {
                let items = match list_whole_catalog(server.as_ref(), *catalog).await {
                    Ok(items) => items,
                    Err(e) => {
                        let told = e.of_server(id).told_to_model();
                        let _ = writeln!(text, "  ({} failed: {told})", catalog.method());
                        continue;
                    }
                };
                if *catalog == Catalog::ResourceTemplates && !items.is_empty() {
                    let _ = writeln!(text, "  templates:");
                }
                for item in items {
                    let _ = writeln!(text, "  - {}", describe(&item));
                }
            }
        }
        if text.is_empty() {
            return Err(Error::new(
                ErrorKind::Denied,
                format!("no server is open for {action} here"),
            ));
        }
        Ok(from_servers(CallToolResult::text(text.trim_end()), listed))
    }
}

/// What [`LOAD_SKILL`] is for; the listing adds the skills.
const SKILLS_ABOUT: &str = "Loads a skill: instructions for a kind of task, with files they may \
     point to. Before such a task, load the skill that fits it by name; then read the files its \
     instructions name with `file`.";

/// One entry as a line: its URI (or name), name, type, description and arguments.
fn describe(item: &crate::mcp::Object) -> String {
    let field = |k: &str| item.get(k).and_then(Value::as_str);
    let head = field("uri")
        .or(field("uriTemplate"))
        .or(field("name"))
        .unwrap_or("?");
    let mut line = head.to_owned();
    let mut about: Vec<&str> = Vec::new();
    if let Some(name) = field("name").filter(|n| *n != head) {
        about.push(name);
    }
    if let Some(mime) = field("mimeType") {
        about.push(mime);
    }
    if !about.is_empty() {
        let _ = write!(line, " ({})", about.join(", "));
    }
    if let Some(description) = field("description") {
        let _ = write!(
            line,
            ": {}",
            crate::describe::sanitize_description(description)
        );
    }
    if let Some(arguments) = item.get("arguments").and_then(Value::as_array) {
        let names: Vec<String> = arguments
            .iter()
            .filter_map(|a| {
                let name = a.get("name")?.as_str()?;
                let required = a.get("required").and_then(Value::as_bool) == Some(true);
                Some(if required {
                    format!("{name} (required)")
                } else {
                    name.to_owned()
                })
            })
            .collect();
        if !names.is_empty() {
            let _ = write!(line, " [arguments: {}]", names.join(", "));
        }
    }
    line
}
