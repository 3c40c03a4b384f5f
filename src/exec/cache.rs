//! The tool lists a source keeps between listings, and when it lists a
//! server again: when the server announced a change
//! (`notifications/tools/list_changed`, seen through
//! [`Server::tools_version`]), when its list's `ttlMs` ran out, or on
//! [`Source::refresh`](crate::Source::refresh). With them, the tools' input
//! schemas compiled for validation, kept until a server is listed again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;

use super::server::{Server, ToolList, list_all_tools};
use crate::error::{Error, ErrorKind, Result};
use crate::mcp::CacheScope;
use crate::toolset::{ToolSet, ToolSetBuilder};

/// What a source knows of its servers' tools. Its methods take the source's
/// servers, in the source's order, and the naming its toolsets are built with.
#[derive(Default)]
pub(super) struct ToolCache {
    state: Mutex<State>,
    /// Held while listing, so that concurrent calls and listings list a server once.
    listing: tokio::sync::Mutex<()>,
    /// The compiled input and output schemas, by server, tool and which;
    /// emptied whenever a server is listed again.
    validators: Mutex<HashMap<(String, String, SchemaOf), CompiledSchema>>,
}

/// A tool's compiled schema; `None` when the schema does not compile.
type CompiledSchema = Arc<Option<jsonschema::Validator>>;

/// Which of a tool's schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum SchemaOf {
    /// `inputSchema`: the arguments.
    Input,
    /// `outputSchema`: the structured result.
    Output,
}

#[derive(Default)]
struct State {
    /// One entry per server, in the source's order; `None` until listed.
    servers: Vec<Option<Listed>>,
    /// The toolset built from `servers`; `None` once a server was listed again.
    toolset: Option<ToolSet>,
}

/// One server's last listing.
struct Listed {
    outcome: std::result::Result<ToolList, String>,
    /// The server's [`Server::tools_version`] when the listing started.
    version: u64,
    /// When the listing goes stale by its TTL; `None` (no hint): only when the
    /// server announces a change.
    stale_at: Option<Instant>,
}

impl Listed {
    fn is_stale(&self, server: &dyn Server, now: Instant) -> bool {
        self.version != server.tools_version() || self.stale_at.is_some_and(|at| at <= now)
    }
}

fn poisoned<T>(_: T) -> Error {
    Error::new(
        ErrorKind::Server,
        "a lock was poisoned by a panic elsewhere",
    )
}

/// Which servers to list again.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Which {
    /// Those never listed, whose tools changed, or whose listing is stale.
    Stale,
    /// All of them.
    All,
}

impl ToolCache {
    /// The cached toolset, with every server whose tools changed or whose
    /// list's TTL ran out listed again; the first time, every server.
    pub(super) async fn toolset(
        &self,
        servers: &[(String, Arc<dyn Server>)],
        naming: &ToolSetBuilder,
    ) -> Result<ToolSet> {
        self.list(servers, naming, Which::Stale).await
    }

    /// Lists every server again and caches the new toolset.
    pub(super) async fn refresh(
        &self,
        servers: &[(String, Arc<dyn Server>)],
        naming: &ToolSetBuilder,
    ) -> Result<ToolSet> {
        self.list(servers, naming, Which::All).await
    }

    /// Who may reuse the listings, as the servers' last tool lists said.
    pub(super) fn scope(&self, servers: &[(String, Arc<dyn Server>)]) -> Option<CacheScope> {
        let state = self.state.lock().ok()?;
        if state.servers.len() != servers.len() {
            return None;
        }
        let mut scope = Some(CacheScope::Public);
        for entry in &state.servers {
            let listed = entry.as_ref()?.outcome.as_ref().ok()?;
            match listed.scope {
                Some(CacheScope::Private) => return Some(CacheScope::Private),
                Some(CacheScope::Public) => {}
                _ => scope = None,
            }
        }
        scope
    }

    async fn list(
        &self,
        servers: &[(String, Arc<dyn Server>)],
        naming: &ToolSetBuilder,
        which: Which,
    ) -> Result<ToolSet> {
        let _listing = self.listing.lock().await;
        let now = Instant::now();
        let due: Vec<usize> = {
            let state = self.state.lock().map_err(poisoned)?;
            if which == Which::Stale
                && let Some(toolset) = &state.toolset
                && !servers.iter().enumerate().any(|(i, (_, server))| {
                    state
                        .servers
                        .get(i)
                        .and_then(Option::as_ref)
                        .is_none_or(|listed| listed.is_stale(server.as_ref(), now))
                })
            {
                return Ok(toolset.clone());
            }
            (0..servers.len())
                .filter(|&i| {
                    which == Which::All
                        || state
                            .servers
                            .get(i)
                            .and_then(Option::as_ref)
                            .is_none_or(|listed| listed.is_stale(servers[i].1.as_ref(), now))
                })
                .collect()
        };
        let listed = futures_util::future::join_all(due.iter().map(|&i| {
            let (id, server) = &servers[i];
            list_one(id, server.clone())
        }))
        .await;
        let mut state = self.state.lock().map_err(poisoned)?;
        state.servers.resize_with(servers.len(), || None);
        for (i, entry) in due.into_iter().zip(listed) {
            state.servers[i] = Some(entry);
        }
        let mut builder = naming.clone();
        for ((id, server), entry) in servers.iter().zip(&state.servers) {
            if !server.supports_tasks() {
                builder = builder.without_tasks(id);
            }
            builder = match entry.as_ref().map(|e| &e.outcome) {
                Some(Ok(list)) => list.unreadable.iter().fold(
                    builder.shared_server(id, list.tools.iter().cloned()),
                    |builder, tool| builder.unreadable(id, &tool.name, &tool.why),
                ),
                Some(Err(err)) => builder.failed_server(id, err.clone()),
                None => builder.failed_server(id, "not listed"),
            };
        }
        let toolset = builder.build()?;
        state.toolset = Some(toolset.clone());
        drop(state);
        self.validators.lock().map_err(poisoned)?.clear();
        Ok(toolset)
    }

    /// Before a call is sent: a server that announced a change since its last
    /// listing is listed again, and a call to a tool it no longer lists is an
    /// error (nothing is sent). A cache that never listed knows nothing and
    /// lets the call through.
    pub(super) async fn check_offered(
        &self,
        servers: &[(String, Arc<dyn Server>)],
        server_id: &str,
        tool: &str,
    ) -> Result<()> {
        let Some(index) = servers.iter().position(|(id, _)| id == server_id) else {
            return Ok(());
        };
        let version = servers[index].1.tools_version();
        match self.offered_now(index, version, tool)? {
            Some(offered) => gone_unless(offered, server_id, tool),
            // Boxed: the common path above stays small in every call's future.
            None => {
                Box::pin(self.offered_after_listing(&servers[index], index, version, tool)).await
            }
        }
    }

    /// Whether the last listing (still current at `version`) offers `tool`;
    /// `None` when the server changed since.
    fn offered_now(&self, index: usize, version: u64, tool: &str) -> Result<Option<bool>> {
        let state = self.state.lock().map_err(poisoned)?;
        Ok(offered(&state, index, version, tool))
    }

    async fn offered_after_listing(
        &self,
        (server_id, server): &(String, Arc<dyn Server>),
        index: usize,
        version: u64,
        tool: &str,
    ) -> Result<()> {
        let _listing = self.listing.lock().await;
        if let Some(offered) = self.offered_now(index, version, tool)? {
            return gone_unless(offered, server_id, tool);
        }
        let fresh = list_one(server_id, server.clone()).await;
        let mut state = self.state.lock().map_err(poisoned)?;
        let Some(Some(entry)) = state.servers.get_mut(index) else {
            return Ok(());
        };
        match fresh.outcome {
            Ok(_) => *entry = fresh,
            // The server could not say: keep what it listed last, and let the call through.
            Err(_) => {
                entry.version = fresh.version;
                return Ok(());
            }
        }
        state.toolset = None;
        let offered = offered(&state, index, version, tool).unwrap_or(true);
        drop(state);
        self.validators.lock().map_err(poisoned)?.clear();
        gone_unless(offered, server_id, tool)
    }

    /// The compiled validator for one of a tool's schemas, compiled once per
    /// tool and listing.
    pub(super) fn validator(
        &self,
        server_id: &str,
        tool: &str,
        which: SchemaOf,
        schema: &Value,
    ) -> Arc<Option<jsonschema::Validator>> {
        let key = (server_id.to_owned(), tool.to_owned(), which);
        let Ok(mut cache) = self.validators.lock() else {
            return Arc::new(None);
        };
        cache
            .entry(key)
            .or_insert_with(|| {
                let compiled = jsonschema::validator_for(schema);
                if let Err(err) = &compiled {
                    match which {
                        SchemaOf::Input => tracing::warn!(server = %server_id, tool = %tool, error = %err, "input schema does not compile; arguments are not validated"),
                        SchemaOf::Output => tracing::warn!(server = %server_id, tool = %tool, error = %err, "output schema does not compile; structured results are not checked"),
                    }
                }
                Arc::new(compiled.ok())
            })
            .clone()
    }
}

/// Whether server `index`'s last listing offers `tool`: `Some(true)` when it
/// was never listed (nothing is known) or its listing failed, `None` when the
/// server changed since (`version`).
fn offered(state: &State, index: usize, version: u64, tool: &str) -> Option<bool> {
    let Some(Some(listed)) = state.servers.get(index) else {
        return Some(true);
    };
    if listed.version != version {
        return None;
    }
    Some(match &listed.outcome {
        Ok(list) => list.tools.iter().any(|t| t.name == tool),
        Err(_) => true,
    })
}

fn gone_unless(offered: bool, server_id: &str, tool: &str) -> Result<()> {
    if offered {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::UnknownTool,
        format!(
            "`{server_id}/{tool}` is no longer offered: the server's tool list changed since the \
             tools were listed; list the tools again"
        ),
    ))
}

async fn list_one(id: &str, server: Arc<dyn Server>) -> Listed {
    let version = server.tools_version();
    let started = Instant::now();
    let outcome = list_all_tools(server.as_ref()).await.map_err(|err| {
        tracing::warn!(server = %id, error = %format_args!("{err:#}"), "listing tools failed; the server's tools are left out");
        format!("{err:#}")
    });
    let stale_at = match &outcome {
        Ok(list) => list.ttl.map(|ttl| started + ttl),
        Err(_) => None,
    };
    Listed {
        outcome,
        version,
        stale_at,
    }
}
