//! Which paired client a request comes from. Over HTTP the hub's guard found the client by its
//! key (the bearer) and left it in the request's extensions; a stdio front was given its
//! client when the process started (`CAPA_CLIENT_KEY`, checked against the store once).

use rmcp::service::{RequestContext, RoleServer};

/// The paired client of this request, if it presented a key.
pub(crate) fn paired_client(
    context: &RequestContext<RoleServer>,
    stdio: Option<&capa_core::PairedClient>,
) -> Option<capa_core::PairedClient> {
    match context.extensions.get::<http::request::Parts>() {
        Some(parts) => parts.extensions.get::<capa_core::PairedClient>().cloned(),
        None => stdio.cloned(),
    }
}
