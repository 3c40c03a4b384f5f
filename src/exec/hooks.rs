//! Code the application runs around every call a source sends.

use super::future::BoxFuture;
use super::server::CallContext;
use crate::calls::ToolCall;
use crate::error::Result;
use crate::mcp::CallToolResult;

/// Code run around every call: `before` may change the arguments or refuse the
/// call; `after` may change the result or turn it into an error.
pub trait Hooks: Send + Sync {
    /// Runs before the call is sent.
    ///
    /// # Errors
    ///
    /// An error stops the call; its message is the model's answer.
    fn before<'a>(
        &'a self,
        call: &'a mut ToolCall,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<()>> {
        let _ = (call, context);
        Box::pin(async { Ok(()) })
    }

    /// Runs after the server answered.
    ///
    /// # Errors
    ///
    /// An error replaces the result; its message is the model's answer.
    fn after<'a>(
        &'a self,
        call: &'a ToolCall,
        result: &'a mut CallToolResult,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<()>> {
        let _ = (call, result, context);
        Box::pin(async { Ok(()) })
    }
}
