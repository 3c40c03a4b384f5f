//! Servers from configuration: which MCP servers to start and how.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::json::{pointer_child, type_name};

/// How to reach one MCP server.
///
/// Its `Debug` output names the environment variables and headers without
/// their values, which often are credentials (an `Authorization` header, an
/// API key in the environment).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerConfig {
    /// A local server spoken to over stdio: the program, its arguments and
    /// extra environment variables (added to the inherited environment).
    Stdio {
        /// The program to run (looked up on `PATH`).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it.
        env: BTreeMap<String, String>,
    },
    /// A remote server spoken to over streamable HTTP (the `rmcp-http` feature).
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
}

/// The arguments [`ServerConfig::stdio`] takes: an array, a slice or a
/// vector of `&str` (`[]` for none), or a vector or slice of `String`s. An
/// array of `String`s is not one (`[]` would then not say which it is):
/// give it as a vector, or borrow it as a slice (`&args[..]`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a server's arguments",
    label = "give them as an array, slice or vector of `&str`, or a vector or slice of `String`s",
    note = "`[]` gives none; an array of `String`s goes as a vector (`vec![...]`) or a slice (`&args[..]`)"
)]
pub trait ServerArgs: sealed::Sealed {
    /// The arguments, owned.
    fn into_args(self) -> Vec<String>;
}

mod sealed {
    pub trait Sealed {}
}

/// `ServerArgs` for each type, by how its items become `String`s.
macro_rules! server_args {
    ($([$($generic:tt)*] $ty:ty;)*) => {$(
        impl<$($generic)*> sealed::Sealed for $ty {}
        impl<$($generic)*> ServerArgs for $ty {
            fn into_args(self) -> Vec<String> {
                self.into_iter().map(|arg| (*arg).to_owned()).collect()
            }
        }
    )*};
}

server_args! {
    ['a, const N: usize] [&'a str; N];
    ['a, 'b, const N: usize] &'b [&'a str; N];
    ['a, 'b] &'b [&'a str];
    ['a] Vec<&'a str>;
    ['a, 'b] &'b Vec<&'a str>;
    ['b] &'b [String];
    ['b] &'b Vec<String>;
}

impl sealed::Sealed for Vec<String> {}
impl ServerArgs for Vec<String> {
    fn into_args(self) -> Vec<String> {
        self
    }
}

/// Names with their values hidden, for `Debug`.
struct Hidden<'a>(&'a BTreeMap<String, String>);

impl std::fmt::Debug for Hidden<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|k| (k, "[hidden]")))
            .finish()
    }
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerConfig::Stdio { command, args, env } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &Hidden(env))
                .finish(),
            ServerConfig::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", url)
                .field("headers", &Hidden(headers))
                .finish(),
        }
    }
}

impl ServerConfig {
    /// A stdio server: `command` with `args`, given as an array, a slice
    /// or a vector of `&str`, or a vector or slice of `String`s (see
    /// [`ServerArgs`]); `[]` for none.
    ///
    /// ```
    /// use mcp_adapters::ServerConfig;
    ///
    /// let everything = ServerConfig::stdio("npx", ["-y", "@modelcontextprotocol/server-everything"]);
    /// let time = ServerConfig::stdio("mcp-server-time", []);
    /// let words: Vec<String> = vec!["--root".into(), "/srv".into()];
    /// let files = ServerConfig::stdio(String::from("mcp-server-files"), &words);
    /// # let _ = (everything, time, files);
    /// ```
    pub fn stdio(command: impl Into<String>, args: impl ServerArgs) -> Self {
        ServerConfig::Stdio {
            command: command.into(),
            args: args.into_args(),
            env: BTreeMap::new(),
        }
    }

    /// A streamable HTTP server at `url`.
    pub fn http(url: impl Into<String>) -> Self {
        ServerConfig::Http {
            url: url.into(),
            headers: BTreeMap::new(),
        }
    }

    /// Adds an environment variable (stdio) or a header (HTTP).
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        match &mut self {
            ServerConfig::Stdio { env, .. } => env.insert(name.into(), value.into()),
            ServerConfig::Http { headers, .. } => headers.insert(name.into(), value.into()),
        };
        self
    }

    /// Reads one `mcpServers` entry; `Ok(None)` for a disabled one.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) naming the server and the field (as a JSON pointer).
    pub fn from_value(name: &str, value: &Value) -> Result<Option<Self>> {
        let at = |field: &str| format!("{}{field}", pointer_child("/mcpServers", name));
        let bad = |field: &str, message: String| {
            Error::input(format!("server `{name}`: {message}")).with_path(at(field))
        };
        let Value::Object(entry) = value else {
            return Err(bad("", "expected an object with `command` or `url`".into()));
        };
        if entry.get("disabled").and_then(Value::as_bool) == Some(true) {
            return Ok(None);
        }
        let string = |field: &str| match entry.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(Value::String(_)) => Err(bad(&format!("/{field}"), format!("`{field}` is empty"))),
            Some(other) => Err(bad(
                &format!("/{field}"),
                format!("`{field}` must be a string, not {}", type_name(other)),
            )),
        };
        let table = |field: &str| -> Result<BTreeMap<String, String>> {
            match entry.get(field) {
                None | Some(Value::Null) => Ok(BTreeMap::new()),
                Some(Value::Object(map)) => map
                    .iter()
                    .map(|(k, v)| match v {
                        Value::String(s) => Ok((k.clone(), s.clone())),
                        Value::Number(_) | Value::Bool(_) => Ok((k.clone(), v.to_string())),
                        other => Err(bad(
                            &pointer_child(&format!("/{field}"), k),
                            format!("`{field}.{k}` must be a string, not {}", type_name(other)),
                        )),
                    })
                    .collect(),
                Some(other) => Err(bad(
                    &format!("/{field}"),
                    format!(
                        "`{field}` must be an object of strings, not {}",
                        type_name(other)
                    ),
                )),
            }
        };
        match (string("command")?, string("url")?) {
            (Some(command), None) => {
                let args = match entry.get("args") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(items)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, item)| match item {
                            Value::String(s) => Ok(s.clone()),
                            Value::Number(_) | Value::Bool(_) => Ok(item.to_string()),
                            other => Err(bad(
                                &format!("/args/{i}"),
                                format!("`args[{i}]` must be a string, not {}", type_name(other)),
                            )),
                        })
                        .collect::<Result<_>>()?,
                    Some(other) => {
                        return Err(bad(
                            "/args",
                            format!(
                                "`args` must be an array of strings, not {}",
                                type_name(other)
                            ),
                        ));
                    }
                };
                Ok(Some(ServerConfig::Stdio {
                    command,
                    args,
                    env: table("env")?,
                }))
            }
            (None, Some(url)) => Ok(Some(ServerConfig::Http {
                url,
                headers: table("headers")?,
            })),
            (Some(_), Some(_)) => Err(bad("", "give either `command` or `url`, not both".into())),
            (None, None) => Err(bad(
                "",
                "expected `command` (a local server) or `url` (a remote one)".into(),
            )),
        }
    }
}

/// How one server signs in, as its `mcpServers` entry's `oauth` object says
/// (the `oauth` feature): `{"oauth": {"workloadToken": FILE, "clientId": ID}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerOAuth {
    /// `workloadToken`: a file holding the JWT the workload's platform issued
    /// it (a Kubernetes projected token, a CI job's OIDC token), read at each
    /// sign-in: the server is signed in to with it, as a JWT bearer grant,
    /// with no person.
    pub workload_token: Option<PathBuf>,
    /// `clientId`: the client id to use with the server's authorization
    /// server: sent with the workload's grant, or a client registered
    /// beforehand for a person's sign-in.
    pub client_id: Option<String>,
}

impl ServerOAuth {
    /// Signs in with the workload's JWT in `path`.
    pub fn workload_token(path: impl Into<PathBuf>) -> Self {
        ServerOAuth {
            workload_token: Some(path.into()),
            client_id: None,
        }
    }

    /// With the client id `client_id`.
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Reads an entry's `oauth` object; other members (other clients' own)
    /// are ignored.
    fn from_value(name: &str, value: &Value) -> Result<Self> {
        let at = |field: &str| format!("{}/oauth{field}", pointer_child("/mcpServers", name));
        let Value::Object(members) = value else {
            return Err(Error::input(format!(
                "server `{name}`: `oauth` must be an object (`workloadToken`, `clientId`), not {}",
                type_name(value)
            ))
            .with_path(at("")));
        };
        let string = |field: &str| match members.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(other) => Err(Error::input(format!(
                "server `{name}`: `oauth.{field}` must be a non-empty string, not {}",
                match other {
                    Value::String(_) => "an empty string",
                    other => type_name(other),
                }
            ))
            .with_path(at(&format!("/{field}")))),
        };
        Ok(ServerOAuth {
            workload_token: string("workloadToken")?.map(PathBuf::from),
            client_id: string("clientId")?,
        })
    }
}

/// Named servers and how to reach them.
///
/// A [`HubConfig`] names servers and says how to reach each one
/// ([`ServerConfig`]: a command to spawn, or a URL). It is built in code or
/// read from the common `mcpServers` JSON layout that desktop clients use:
///
/// ```json
/// {"mcpServers": {
///   "time":  {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
///   "files": {"url": "http://localhost:8000/mcp", "headers": {"Authorization": "Bearer ..."}}
/// }}
/// ```
///
/// Parsing is pure serde and needs no feature; an error names the server and
/// the field. Connecting ([`HubConfig::connect`]) needs the `rmcp` feature (and
/// `rmcp-http` for URLs). Entries with `"disabled": true` are skipped; fields
/// other clients add (`type`, `cwd`, `autoApprove`, ...) are ignored.
/// `"hosted": true` asks for the server to be called by the provider itself.
///
/// An entry may ask to be hosted by the provider (`"hosted": true`, or
/// [`HubConfig::host`]): see [`client::split_hosted`](crate::client::split_hosted).
/// An HTTP server's entry may say how it signs in (`"oauth": {"workloadToken":
/// FILE, "clientId": ID}`, or [`HubConfig::server_oauth`]): see [`ServerOAuth`].
/// An entry may bind its tools' arguments to the application's values
/// (`"bind": ["TOOL:/POINTER=VALUE"]`, or [`HubConfig::bind`]): see
/// [`Binding::parse`](crate::toolset::Binding::parse).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HubConfig {
    servers: Vec<(String, ServerConfig)>,
    hosted: std::collections::BTreeSet<String>,
    oauth: BTreeMap<String, ServerOAuth>,
    keep_going: bool,
    bind: BindRules,
}

/// Each server's bind rules, as written; `Debug` leaves out their values.
#[derive(Clone, Default, PartialEq, Eq)]
struct BindRules(BTreeMap<String, Vec<String>>);

impl std::fmt::Debug for BindRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |rule: &String| match rule.split_once('=') {
            Some((place, _)) => format!("{place}=[hidden]"),
            None => rule.clone(),
        };
        f.debug_map()
            .entries(
                self.0
                    .iter()
                    .map(|(k, v)| (k, v.iter().map(shown).collect::<Vec<_>>())),
            )
            .finish()
    }
}

impl HubConfig {
    /// No servers yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a named server.
    pub fn server(mut self, name: impl Into<String>, server: ServerConfig) -> Self {
        let name = name.into();
        self.servers.retain(|(n, _)| *n != name);
        self.servers.push((name, server));
        self
    }

    /// The servers, in the order they were added (a file's order).
    pub fn servers(&self) -> &[(String, ServerConfig)] {
        &self.servers
    }

    /// Asks for the server `name` to be hosted by the provider where it can
    /// be (an entry's `"hosted": true`).
    pub fn host(mut self, name: impl Into<String>) -> Self {
        self.hosted.insert(name.into());
        self
    }

    /// Whether the server `name` asks to be hosted by the provider.
    pub fn is_hosted(&self, name: &str) -> bool {
        self.hosted.contains(name)
    }

    /// Says how the server `name` signs in (an entry's `oauth` object).
    pub fn server_oauth(mut self, name: impl Into<String>, oauth: ServerOAuth) -> Self {
        self.oauth.insert(name.into(), oauth);
        self
    }

    /// How the server `name` signs in, when its entry says.
    pub fn oauth_of(&self, name: &str) -> Option<&ServerOAuth> {
        self.oauth.get(name)
    }

    /// Binds an argument of the server `name`'s tools to a value of the
    /// application's (an entry's `"bind"`): `rule` is
    /// `TOOL:/POINTER=VALUE`, the tool glob over that server's tool names
    /// (see [`Binding::parse`](crate::toolset::Binding::parse), which reads
    /// it with `name/` before it when the servers are connected).
    pub fn bind(mut self, name: impl Into<String>, rule: impl Into<String>) -> Self {
        self.bind
            .0
            .entry(name.into())
            .or_default()
            .push(rule.into());
        self
    }

    /// The bind rules of the server `name`, as written.
    pub fn bindings_of(&self, name: &str) -> &[String] {
        self.bind.0.get(name).map_or(&[], Vec::as_slice)
    }

    /// Whether [`connect`](Self::connect) goes on without the servers that
    /// do not start (`true`) or fails naming them (`false`, the default).
    /// Going on, each one that did not start is reported where the listing
    /// reports a server it could not list
    /// ([`ToolSetReport::failed_servers`](crate::toolset::ToolSetReport::failed_servers))
    /// and offers no tool, and it is tried again later; a call the model
    /// makes to a name no listed tool has is answered "unknown tool". The
    /// turn goes on even when no server started.
    pub fn keep_going(mut self, keep_going: bool) -> Self {
        self.keep_going = keep_going;
        self
    }

    /// Whether [`connect`](Self::connect) goes on without the servers that
    /// do not start (see [`keep_going`](Self::keep_going)).
    pub fn keeps_going(&self) -> bool {
        self.keep_going
    }

    /// Whether there are no servers.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Reads an `mcpServers` document.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when `mcpServers` is missing or not an object, a
    /// server name is empty, or an entry is malformed (see [`ServerConfig::from_value`]).
    pub fn from_value(value: &Value) -> Result<Self> {
        let servers: &Map<String, Value> = match value.get("mcpServers") {
            Some(Value::Object(servers)) => servers,
            Some(other) => {
                return Err(Error::input(format!(
                    "`mcpServers` must be an object of named servers, not {}",
                    type_name(other)
                ))
                .with_path("/mcpServers"));
            }
            None => {
                return Err(Error::input(
                    "expected {\"mcpServers\": {\"name\": {\"command\": ...} | {\"url\": ...}}}",
                ));
            }
        };
        let mut config = HubConfig::new();
        for (name, entry) in servers {
            if name.trim().is_empty() {
                return Err(Error::input("a server name is empty").with_path("/mcpServers"));
            }
            if let Some(server) = ServerConfig::from_value(name, entry)? {
                let is_http = matches!(server, ServerConfig::Http { .. });
                config = config.server(name.clone(), server);
                match entry.get("oauth") {
                    None | Some(Value::Null) => {}
                    Some(_) if !is_http => {
                        return Err(Error::input(format!("server `{name}`: `oauth` goes with a `url`: a stdio server does not sign in"),
                        )
                        .with_path(format!("{}/oauth", pointer_child("/mcpServers", name))));
                    }
                    Some(oauth) => {
                        config = config
                            .server_oauth(name.clone(), ServerOAuth::from_value(name, oauth)?);
                    }
                }
                config = config.read_bind(name, entry)?;
                match entry.get("hosted") {
                    None | Some(Value::Null) | Some(Value::Bool(false)) => {}
                    Some(Value::Bool(true)) => config = config.host(name.clone()),
                    Some(other) => {
                        return Err(Error::input(format!(
                            "server `{name}`: `hosted` must be true or false, not {}",
                            type_name(other)
                        ))
                        .with_path(format!("{}/hosted", pointer_child("/mcpServers", name))));
                    }
                }
            }
        }
        Ok(config)
    }

    /// `self` with the bind rules of the entry `name` (its `"bind"`: an
    /// array of `TOOL:/POINTER=VALUE` strings).
    fn read_bind(mut self, name: &str, entry: &Value) -> Result<Self> {
        let at = |field: String| format!("{}{field}", pointer_child("/mcpServers", name));
        match entry.get("bind") {
            None | Some(Value::Null) => {}
            Some(Value::Array(rules)) => {
                for (i, rule) in rules.iter().enumerate() {
                    let Value::String(rule) = rule else {
                        return Err(Error::input(format!(
                            "server `{name}`: `bind[{i}]` must be a string (TOOL:/POINTER=VALUE), not {}",
                            type_name(rule)
                        ))
                        .with_path(at(format!("/bind/{i}"))));
                    };
                    self = self.bind(name, rule.clone());
                }
            }
            Some(other) => {
                return Err(Error::input(format!(
                    "server `{name}`: `bind` must be an array of TOOL:/POINTER=VALUE strings, not {}",
                    type_name(other)
                ))
                .with_path(at("/bind".to_owned())));
            }
        }
        Ok(self)
    }

    /// Reads an `mcpServers` JSON text.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) for invalid JSON (with its line) or a malformed document.
    pub fn from_json_str(text: &str) -> Result<Self> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            let line = e.line();
            Error::input("invalid JSON").with_line(line).with_source(e)
        })?;
        Self::from_value(&value)
    }

    /// Reads an `mcpServers` JSON file.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) when the file cannot be read; otherwise as
    /// [`from_json_str`](Self::from_json_str), with the file named.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(e, path))?;
        Self::from_json_str(&text).map_err(|e| e.with_file(path))
    }
}

#[cfg(test)]
mod tests {
    use super::ServerConfig;

    #[test]
    fn debug_output_hides_header_and_environment_values() {
        let http = ServerConfig::http("https://x.example/mcp")
            .with("Authorization", "Bearer sekrit-token");
        let stdio = ServerConfig::stdio("srv", ["--flag"]).with("API_KEY", "sekrit-key");
        let hub = super::HubConfig::new().server("x", http.clone());
        let text = format!("{http:?} {stdio:?} {hub:?}");
        assert!(!text.contains("sekrit"), "{text}");
        assert!(
            text.contains("Authorization") && text.contains("API_KEY"),
            "{text}"
        );
    }

    #[test]
    fn an_entry_binds_its_tools_arguments_and_debug_hides_the_values() {
        use serde_json::json;
        let config = super::HubConfig::from_value(&json!({"mcpServers": {
            "crm": {"command": "crm", "bind": ["*:/tenant=sekrit-acme", "create:/owner=env:OWNER"]},
            "plain": {"command": "plain"},
        }}))
        .unwrap();
        assert_eq!(
            config.bindings_of("crm"),
            ["*:/tenant=sekrit-acme", "create:/owner=env:OWNER"]
        );
        assert!(config.bindings_of("plain").is_empty());
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("sekrit") && shown.contains("*:/tenant=[hidden]"),
            "{shown}"
        );
        for (bind, at) in [
            (json!("*:/t=1"), "/mcpServers/crm/bind"),
            (json!([1]), "/mcpServers/crm/bind/0"),
        ] {
            let err = super::HubConfig::from_value(&json!({"mcpServers": {
                "crm": {"command": "crm", "bind": bind}}}))
            .unwrap_err();
            assert_eq!(err.location().path.as_deref(), Some(at), "{err}");
        }
    }

    #[test]
    fn an_entry_says_how_its_server_signs_in() {
        use serde_json::json;
        let config = super::HubConfig::from_value(&json!({"mcpServers": {
            "notes": {"url": "https://n.example/mcp",
                      "oauth": {"workloadToken": "/var/run/secrets/mcp/token", "clientId": "job", "callbackPort": 8080}},
            "plain": {"url": "https://p.example/mcp"},
        }}))
        .unwrap();
        let notes = config.oauth_of("notes").unwrap();
        assert_eq!(
            notes,
            &super::ServerOAuth::workload_token("/var/run/secrets/mcp/token").client_id("job")
        );
        assert!(config.oauth_of("plain").is_none());
        for (entry, pointer, says) in [
            (
                json!({"url": "https://x/mcp", "oauth": "token"}),
                "/mcpServers/x/oauth",
                "must be an object",
            ),
            (
                json!({"url": "https://x/mcp", "oauth": {"workloadToken": ""}}),
                "/mcpServers/x/oauth/workloadToken",
                "non-empty string, not an empty string",
            ),
            (
                json!({"url": "https://x/mcp", "oauth": {"clientId": 7}}),
                "/mcpServers/x/oauth/clientId",
                "not a number",
            ),
            (
                json!({"command": "srv", "oauth": {"clientId": "c"}}),
                "/mcpServers/x/oauth",
                "goes with a `url`",
            ),
        ] {
            let err =
                super::HubConfig::from_value(&json!({"mcpServers": {"x": entry}})).unwrap_err();
            assert_eq!(err.location().path.as_deref(), Some(pointer), "{err}");
            assert!(err.to_string().contains(says), "{err}");
        }
    }
}
