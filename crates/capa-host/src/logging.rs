//! The shells' log: to stderr (never stdout, which MCP over stdio owns), through the redactor,
//! so that no secret the hub knows reaches a log line. `RUST_LOG` overrides the default level.

use std::sync::Arc;

use capa_core::Redactor;
use tracing_subscriber::EnvFilter;

/// rmcp's OAuth client logs the authorization code and the token response's extra fields (an
/// `OpenID Connect` `id_token`) at debug level; those lines never run, whatever `RUST_LOG` says.
const OAUTH_CLIENT_DIRECTIVE: &str = "rmcp::transport::auth=warn";

/// The PostgreSQL driver logs every statement with its parameters at debug level: the keys and
/// the token replicas share (capa-store-pg's keys.rs), and every text a team hub stores. Those
/// lines never run either.
const POSTGRES_DIRECTIVES: [&str; 2] = ["tokio_postgres=info", "postgres=info"];

/// Installs the log for this process; a second call does nothing.
pub fn init_logging(redactor: &Arc<Redactor>, default_level: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let filter = std::iter::once(OAUTH_CLIENT_DIRECTIVE)
        .chain(POSTGRES_DIRECTIVES)
        .filter_map(|d| d.parse().ok())
        .fold(filter, EnvFilter::add_directive);
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(capa_core::redacting_writer(redactor, std::io::stderr))
        .with_ansi(false)
        .try_init();
}
