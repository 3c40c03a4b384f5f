//! Starting the servers of a [`HubConfig`].

use std::borrow::Cow;
use std::sync::Arc;

use super::live::McpClient;
use super::options::ClientOptions;
use crate::config::HubConfig;
use crate::error::{Error, Result};
use crate::exec::{Server, Source, SourceBuilder};

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
    /// **A server that fails to start does not fail the others**: it joins the
    /// source as a server whose listing fails with the start-up error, so
    /// listing reports it in the toolset's report (`failed_servers`) and offers
    /// none of its tools, and the error is logged with `tracing`. Check
    /// [`Listing::report`](crate::Listing::report) to see which servers are
    /// missing. It is down ([`ServerState::Down`](crate::exec::ServerState::Down)),
    /// and tried again once [`Reconnect::retry_after`](crate::client::Reconnect::retry_after)
    /// has passed, as a server that died would be.
    ///
    /// A server whose entry says how it signs in ([`ServerOAuth`](crate::ServerOAuth))
    /// is connected with `options`' [`OAuth`](crate::client::auth::OAuth)
    /// told so: a workload token file makes it sign in with workload
    /// identity (with no `OAuth` in `options`, one that does only that); a
    /// client id is the client registered for it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when the configuration names no server.
    pub async fn connect_with(&self, options: &ClientOptions) -> Result<SourceBuilder> {
        if self.is_empty() {
            return Err(Error::input("the configuration names no MCP server"));
        }
        let started = futures_util::future::join_all(self.servers().iter().map(
            |(name, config)| async move {
                let connected = match self.options_for(name, options) {
                    Ok(options) => McpClient::connect(name, config, &options).await,
                    Err(error) => Err(error),
                };
                let server: Arc<dyn Server> = match connected {
                    Ok(client) => Arc::new(client),
                    Err(error) => {
                        tracing::warn!(server = %name, error = %format_args!("{error:#}"), "MCP server failed to start; its tools are left out");
                        Arc::new(McpClient::unstarted(name, config, options, &error))
                    }
                };
                (name.clone(), server)
            },
        ))
        .await;
        let mut builder = if started.len() == 1 {
            Source::client_builder()
        } else {
            Source::hub()
        };
        for (name, server) in started {
            builder = builder.shared_server(name, server);
        }
        Ok(builder)
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
