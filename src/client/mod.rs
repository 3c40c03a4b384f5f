//! Real MCP servers, through the official Rust SDK (the `rmcp` feature).

#[cfg(feature = "oauth")]
mod auth;
mod changes;
mod convert;
mod handler;
#[cfg(feature = "rmcp-http")]
mod http;
mod hub;
mod live;
mod options;
mod requests;
mod session;
mod stdio;
mod tasks;

#[cfg(feature = "oauth")]
pub use auth::{
    ClientCredentials, EnterpriseSignIn, FileTokenStore, IdTokenFn, JwtAlgorithm, MemoryTokenStore,
    OAuth, RegisteredClient, SignInAnswer, SignInFn, SignInReason, SignInRequest, StoredSignIn,
    TokenStore,
};
pub use live::McpClient;
pub use options::{ClientOptions, Lifecycle, Reconnect};
