//! What a panic inside the hub while it serves one request turns into: the text for the log and
//! the words for the client. The front contains a request's panic with them here, the HTTP
//! server's middleware (capa-server's `panics.rs`) with the same words.

use std::any::Any;

/// The text a panic carried, for the log.
pub fn panic_text(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// What a client is told: the same words on every channel.
pub const PANIC_ANSWER: &str = "the hub failed on this request (a bug, logged); nothing else was affected: send it again, and report it if it repeats";
