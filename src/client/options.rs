//! How an [`McpClient`](super::McpClient) starts, talks to and comes back to
//! its server.

use std::time::Duration;

use crate::exec::Handlers;

/// How [`McpClient`](super::McpClient) starts its session: the MCP lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Lifecycle {
    /// `server/discover` first (MCP 2026-07-28: per-request metadata, input
    /// rounds, list changes on a subscription); a server that answers it with
    /// an error is started with `initialize` instead, and so is one whose
    /// answer cannot be read (once the fields the official SDKs default are
    /// filled in) and one that does not answer within 10 s (the SDK's fixed
    /// wait, spent on a legacy server that ignores requests it does not
    /// know). The server is down only when `initialize` fails too.
    #[default]
    Auto,
    /// `initialize` only (MCP 2025-11-25 and earlier): no input rounds; no wait
    /// for a legacy server that ignores `server/discover`.
    Legacy,
    /// `server/discover` only: a server that does not speak 2026-07-28 fails to start.
    Modern,
}

/// When a server that died is started (or connected to) again.
///
/// The next listing or call after the session ended starts a new one: up to
/// [`attempts`](Self::attempts) tries, waiting the first
/// [`backoff`](Self::backoff) after the first failure and twice as long after
/// each next one, up to its bound. When every try fails the server is down:
/// calls and listings fail at once, naming the last error, and the server is
/// tried again only once [`retry_after`](Self::retry_after) has passed. The
/// defaults: 3 attempts, 200 ms doubling to 2 s, then 30 s down.
///
/// ```
/// use std::time::Duration;
/// use mcp_adapters::client::{ClientOptions, Reconnect};
///
/// let options = ClientOptions::new().reconnect(
///     Reconnect::new()
///         .attempts(5)
///         .backoff(Duration::from_millis(100), Duration::from_secs(5))
///         .retry_after(Duration::from_secs(60)),
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reconnect {
    /// Tries per round; 0 never starts the server again.
    pub(crate) attempts: u32,
    /// The wait after the first failed try.
    pub(crate) backoff: Duration,
    /// The longest wait between tries.
    pub(crate) max_backoff: Duration,
    /// How long a server stays down before it is tried again.
    pub(crate) retry_after: Duration,
}

impl Default for Reconnect {
    fn default() -> Self {
        Reconnect {
            attempts: 3,
            backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(2),
            retry_after: Duration::from_secs(30),
        }
    }
}

impl Reconnect {
    /// The defaults: 3 attempts, 200 ms doubling to 2 s, 30 s down.
    pub fn new() -> Self {
        Self::default()
    }

    /// Never starts the server again: once its session ends, it is down for good.
    pub fn never() -> Self {
        Reconnect {
            attempts: 0,
            ..Self::default()
        }
    }

    /// Tries per round; 0 never starts the server again.
    pub fn attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts;
        self
    }

    /// The wait after the first failed try, and the longest wait between
    /// tries (at least `first`).
    pub fn backoff(mut self, first: Duration, max: Duration) -> Self {
        self.backoff = first;
        self.max_backoff = max.max(first);
        self
    }

    /// How long a server stays down before it is tried again.
    pub fn retry_after(mut self, wait: Duration) -> Self {
        self.retry_after = wait;
        self
    }

    /// The wait after failed try number `attempt` (1-based).
    pub(crate) fn wait(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.saturating_sub(1).min(16);
        self.backoff.saturating_mul(factor).min(self.max_backoff)
    }
}

/// How [`McpClient`](super::McpClient) starts and talks to a server, set
/// with its builder methods.
///
/// ```
/// use std::time::Duration;
/// use mcp_adapters::client::{ClientOptions, Lifecycle};
///
/// let options = ClientOptions::new()
///     .lifecycle(Lifecycle::Legacy)
///     .init_timeout(Duration::from_secs(20))
///     .list_timeout(Duration::from_secs(10))
///     .mcp_apps(true);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Bound on starting the server and its handshake (default 60 s).
    pub(crate) init_timeout: Duration,
    /// Bound on one `tools/list` page (default 60 s).
    pub(crate) list_timeout: Duration,
    /// The lifecycle ([`Lifecycle::Auto`] by default).
    pub(crate) lifecycle: Lifecycle,
    /// What the client answers when the server asks, and so declares (none
    /// by default); see [`Handlers`].
    pub(crate) handlers: Handlers,
    /// When a server that died is started again ([`Reconnect::default`]).
    pub(crate) reconnect: Reconnect,
    /// How to sign in to streamable HTTP servers that require it (none by
    /// default); see [`OAuth`](crate::client::auth::OAuth).
    #[cfg(feature = "oauth")]
    pub(crate) oauth: Option<super::auth::OAuth>,
    /// Declares the MCP Apps extension (`io.modelcontextprotocol/ui`, with
    /// the `text/html;profile=mcp-app` views): for a host that renders the
    /// tools' user interfaces. Off by default, so that servers do not offer
    /// views nobody shows. Tools for an app's interface only are never
    /// offered to a model either way.
    pub(crate) mcp_apps: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            init_timeout: Duration::from_secs(60),
            list_timeout: Duration::from_secs(60),
            lifecycle: Lifecycle::Auto,
            handlers: Handlers::default(),
            reconnect: Reconnect::default(),
            #[cfg(feature = "oauth")]
            oauth: None,
            mcp_apps: false,
        }
    }
}

impl ClientOptions {
    /// The defaults: 60 s to start, 60 s per `tools/list` page,
    /// [`Lifecycle::Auto`], no handlers, [`Reconnect::default`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The lifecycle ([`Lifecycle::Auto`] by default).
    pub fn lifecycle(mut self, lifecycle: Lifecycle) -> Self {
        self.lifecycle = lifecycle;
        self
    }

    /// Bound on starting the server and its handshake (default 60 s).
    pub fn init_timeout(mut self, timeout: Duration) -> Self {
        self.init_timeout = timeout;
        self
    }

    /// Bound on one `tools/list` page (default 60 s).
    pub fn list_timeout(mut self, timeout: Duration) -> Self {
        self.list_timeout = timeout;
        self
    }

    /// What the client answers when the server asks (none by default; see
    /// [`Handlers`]): the client declares their capabilities (at `initialize` up to 2025-11-25, on every request from
    /// 2026-07-28) and answers the server's requests with them; give the same
    /// handlers to the source that runs the calls (a source given none takes
    /// these).
    pub fn handlers(mut self, handlers: Handlers) -> Self {
        self.handlers = handlers;
        self
    }

    /// Declares the MCP Apps extension (`io.modelcontextprotocol/ui`, with
    /// the `text/html;profile=mcp-app` views): for a host that renders the
    /// tools' user interfaces. Off by default, so that servers do not offer
    /// views nobody shows. Tools for an app's interface only are never
    /// offered to a model either way.
    pub fn mcp_apps(mut self, declare: bool) -> Self {
        self.mcp_apps = declare;
        self
    }

    /// When a server that died is started again ([`Reconnect::default`]).
    pub fn reconnect(mut self, reconnect: Reconnect) -> Self {
        self.reconnect = reconnect;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_bound() {
        let r = Reconnect::new();
        let waits: Vec<u128> = (1..=6).map(|a| r.wait(a).as_millis()).collect();
        assert_eq!(waits, [200, 400, 800, 1600, 2000, 2000]);
        assert_eq!(Reconnect::never().attempts, 0);
    }
}
