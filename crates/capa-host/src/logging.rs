//! The shells' log: to stderr (never stdout, which MCP over stdio owns), through the redactor,
//! so that no secret the hub knows reaches a log line. `RUST_LOG` overrides the default level.

use std::sync::Arc;

use capa_core::Redactor;
use tracing_subscriber::EnvFilter;

/// rmcp's OAuth client logs the authorization code and the token response's extra fields (an
/// `OpenID Connect` `id_token`) at debug level; those lines never run, whatever `RUST_LOG` says.
const OAUTH_CLIENT_DIRECTIVE: &str = "rmcp::transport::auth=warn";

/// Installs the log for this process; a second call does nothing.
pub fn init_logging(redactor: &Arc<Redactor>, default_level: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let filter = match OAUTH_CLIENT_DIRECTIVE.parse() {
        Ok(directive) => filter.add_directive(directive),
        Err(_) => filter,
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(capa_core::redacting_writer(redactor, std::io::stderr))
        .with_ansi(false)
        .try_init();
}
