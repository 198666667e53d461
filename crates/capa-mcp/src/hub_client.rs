//! The HTTP client for talking to a running hub, shared by `capa mcp`'s bridge and capa-server's
//! discovery (which proves the hub before anything secret is sent).

use std::time::Duration;

/// The HTTP client for talking to a hub: no proxy (a proxy configured for the web must not see
/// the hub's token), no redirects (a listener must not send us elsewhere), and `timeout` for a
/// whole request when given (none for a long-lived event stream).
pub fn client(timeout: Option<Duration>) -> Option<reqwest::Client> {
    let builder = reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .redirect(reqwest::redirect::Policy::none());
    match timeout {
        Some(timeout) => builder.timeout(timeout),
        None => builder,
    }
    .build()
    .ok()
}
