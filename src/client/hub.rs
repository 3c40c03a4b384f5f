//! Starting the servers of a [`HubConfig`].

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
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when the configuration names no server.
    pub async fn connect_with(&self, options: &ClientOptions) -> Result<SourceBuilder> {
        if self.is_empty() {
            return Err(Error::input("the configuration names no MCP server"));
        }
        let started = futures_util::future::join_all(self.servers().iter().map(
            |(name, config)| async move {
                let server: Arc<dyn Server> = match McpClient::connect(name, config, options).await {
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
}
