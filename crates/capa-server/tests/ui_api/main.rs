//! The web UI's local API on a real hub and server: the one-time login link, the session cookie
//! and its CSRF token, sources added and removed through the global file, connections whose
//! secret is never echoed, run history, paused approvals and the event stream.
//!
//! One test binary; each module is one part of the API, `harness` starts the hub and logs in.

#[expect(
    dead_code,
    reason = "shared by the test binaries; this one starts its hub with `serve_hub_with` only"
)]
#[path = "../support/mod.rs"]
mod support;

mod harness;

mod approvals;
mod assets;
mod connections;
mod login;
mod sources;
mod switches;
