//! The boxed future every surface and relay method returns (their traits are object-safe), and
//! the stream of changes a front listens to.

use std::future::Future;
use std::pin::Pin;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Signals that a tool list changed. Each listener owns one: a shared watch receiver that is
/// cloned per wait would never mark a change as seen, and would fire forever.
pub trait ToolChanges: Send {
    /// Resolves at the next change; `false` when no further change can come.
    fn next(&mut self) -> BoxFuture<'_, bool>;
}

impl<T: Send + Sync> ToolChanges for tokio::sync::watch::Receiver<T> {
    fn next(&mut self) -> BoxFuture<'_, bool> {
        Box::pin(async move { self.changed().await.is_ok() })
    }
}

/// A list that never changes.
pub(crate) struct Never;

impl ToolChanges for Never {
    fn next(&mut self) -> BoxFuture<'_, bool> {
        Box::pin(std::future::pending())
    }
}
