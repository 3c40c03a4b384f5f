//! Starting the servers of a [`HubConfig`].

use std::borrow::Cow;
use std::sync::Arc;

use super::live::McpClient;
use super::options::ClientOptions;
use crate::config::HubConfig;
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{Source, SourceBuilder};
use crate::json::pointer_child;
use crate::toolset::Binding;

impl HubConfig {
    /// Starts every server (concurrently) with default [`ClientOptions`]; see
    /// [`connect_with`](Self::connect_with).
    ///
    /// # Errors
    ///
    /// As [`connect_with`](Self::connect_with).
    pub async fn connect(&self) -> Result<SourceBuilder> {
        self.connect_with(&ClientOptions::default()).await
    }

    /// Starts every server concurrently and returns a source builder: a client
    /// for one server (tools keep their names), a hub for two or more (tools
    /// are named `server__tool`). Add a policy, hooks or filters, then build.
    ///
    /// **A server that does not start is an error**, naming the server, its
    /// command (or URL) and the cause: one line per server that did not
    /// start, as the listing's report says it (`server `git` is down:
    /// cannot start `uvx` (is it installed, and on the PATH?): ...`); the
    /// servers that started are closed again.
    ///
    /// With [`HubConfig::keep_going`], a server that does not start does
    /// not fail the others: it joins the source as a server whose listing
    /// fails with the start-up error, so listing reports it in the toolset's
    /// report ([`failed_servers`](crate::toolset::ToolSetReport::failed_servers))
    /// and offers none of its tools, and the error is logged with `tracing`.
    /// It is down ([`ServerState::Down`](crate::exec::ServerState::Down), in
    /// [`Source::server_states`](crate::Source::server_states)), and tried
    /// again once [`Reconnect::retry_after`](crate::client::Reconnect::retry_after)
    /// has passed, as a server that died would be. The source is built even
    /// when no server started: a call to a tool is then answered "unknown
    /// tool", as any name no listed tool has.
    ///
    /// A server whose entry says how it signs in ([`ServerOAuth`](crate::ServerOAuth))
    /// is connected with `options`' [`OAuth`](crate::client::auth::OAuth)
    /// told so: a workload token file makes it sign in with workload
    /// identity (with no `OAuth` in `options`, one that does only that); a
    /// client id is the client registered for it. A sign-in that does not
    /// complete is a server that did not start.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when the configuration
    /// names no server; [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable)
    /// when a server does not start (unless [`HubConfig::keep_going`]).
    pub async fn connect_with(&self, options: &ClientOptions) -> Result<SourceBuilder> {
        if self.is_empty() {
            return Err(Error::input("the configuration names no MCP server"));
        }
        let bindings = self.parsed_bindings()?;
        let started = futures_util::future::join_all(self.servers().iter().map(
            |(name, config)| async move {
                let connected = match self.options_for(name, options) {
                    Ok(options) => McpClient::connect(name, config, &options).await,
                    Err(error) => Err(error),
                };
                match connected {
                    Ok(client) => Started {
                        name: name.clone(),
                        client,
                        failed: None,
                    },
                    Err(error) => {
                        let client = McpClient::unstarted(name, config, options, &error);
                        let failed = client.down(&error.message_with_causes());
                        Started {
                            name: name.clone(),
                            client,
                            failed: Some(failed),
                        }
                    }
                }
            },
        ))
        .await;
        if !self.keeps_going() && started.iter().any(|s| s.failed.is_some()) {
            let lines: Vec<&str> = started
                .iter()
                .filter_map(|s| s.failed.as_ref().map(Error::message))
                .collect();
            let error = Error::new(ErrorKind::Unavailable, lines.join("\n"));
            let up = started.into_iter().filter(|s| s.failed.is_none());
            futures_util::future::join_all(up.map(|s| s.client.close())).await;
            return Err(error);
        }
        let mut builder = if started.len() == 1 {
            Source::client_builder()
        } else {
            Source::hub()
        };
        for Started {
            name,
            client,
            failed,
        } in started
        {
            if let Some(error) = failed {
                tracing::warn!(server = %name, error = %error, "MCP server failed to start; its tools are left out");
            }
            builder = builder.shared_server(name, Arc::new(client));
        }
        for binding in bindings {
            builder = builder.bind(binding);
        }
        Ok(builder)
    }

    /// The servers' bind rules, read with each server's name before the
    /// tool glob.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] naming the rule and where it stands.
    pub(crate) fn parsed_bindings(&self) -> Result<Vec<Binding>> {
        let mut bindings = Vec::new();
        for (name, _) in self.servers() {
            for (i, rule) in self.bindings_of(name).iter().enumerate() {
                let binding = Binding::parse(&format!("{name}/{rule}")).map_err(|e| {
                    e.with_path(format!("{}/bind/{i}", pointer_child("/mcpServers", name)))
                })?;
                bindings.push(binding);
            }
        }
        Ok(bindings)
    }

    /// `options` for the server `name`, with the sign-in its entry says.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when the entry names a workload token and the
    /// `oauth` feature is off.
    fn options_for<'a>(
        &self,
        name: &str,
        options: &'a ClientOptions,
    ) -> Result<Cow<'a, ClientOptions>> {
        #[cfg(feature = "oauth")]
        if let Some(server) = self.oauth_of(name) {
            use crate::client::auth::{OAuth, RegisteredClient, WorkloadIdentity};
            let workload = server.workload_token.as_ref().map(|file| {
                let workload = WorkloadIdentity::token_file(file);
                match &server.client_id {
                    Some(id) => workload.client_id(id),
                    None => workload,
                }
            });
            let oauth = match (options.oauth.clone(), workload, &server.client_id) {
                (Some(oauth), Some(workload), _) => {
                    Some(oauth.workload_identity_for(name, workload))
                }
                (None, Some(workload), _) => Some(OAuth::workload_identity(workload)),
                (Some(oauth), None, Some(id)) => {
                    Some(oauth.client_for(name, RegisteredClient::new(id)))
                }
                // A client id with no sign-in configured: nothing signs in.
                (oauth, None, _) => oauth,
            };
            let mut options = options.clone();
            options.oauth = oauth;
            return Ok(Cow::Owned(options));
        }
        #[cfg(not(feature = "oauth"))]
        if self
            .oauth_of(name)
            .is_some_and(|server| server.workload_token.is_some())
        {
            return Err(Error::input(format!(
                "server `{name}`: its entry signs in with a workload token (`oauth.workloadToken`), which needs the `oauth` feature"
            )));
        }
        Ok(Cow::Borrowed(options))
    }
}

/// A server of the configuration, started or not.
struct Started {
    name: String,
    /// Its client: one that does not serve until it starts, when it failed.
    client: McpClient,
    /// Why it did not start, as a call or listing would be told.
    failed: Option<Error>,
}
