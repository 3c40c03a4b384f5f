//! The future the library's callbacks return: [`Server`](crate::Server)
//! methods, handlers, approvers and hooks.

use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future: what [`Server`](crate::Server) methods return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
