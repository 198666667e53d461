//! The shells' log: to stderr (never stdout, which MCP over stdio owns), through the redactor,
//! so that no secret the hub knows reaches a log line. `RUST_LOG` overrides the default level.

use std::sync::Arc;

use capa_core::Redactor;
use tracing_subscriber::EnvFilter;

/// Installs the log for this process; a second call does nothing.
pub fn init_logging(redactor: &Arc<Redactor>, default_level: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(capa_core::redacting_writer(redactor, std::io::stderr))
        .with_ansi(false)
        .try_init();
}
