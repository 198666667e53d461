//! What the hub holds of each source, apart from its live upstream: where it came from, what
//! it exposes, and why it is not started when it is not.

use capa_config::{SourceConfig, SourceTransport, ToolSelection};
use capa_domain::SourceState;

/// A source as the hub knows it.
#[derive(Debug, Clone)]
pub(super) struct SourceDef {
    pub(super) id: String,
    pub(super) description: Option<String>,
    pub(super) selection: ToolSelection,
    pub(super) origin: Origin,
    /// Turned off by a person (`disabled: true`): listed, never started.
    pub(super) off: bool,
}

#[derive(Debug, Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "a hub has a handful of sources; boxing them buys nothing"
)]
pub(super) enum Origin {
    Config(SourceConfig),
    Demo,
}

/// The digest recorded for a source a person turned off: it matches no real digest, so the
/// source turned on again waits for a person (see `switches.rs`).
pub(super) const OFF_MARK: &str = "off";

/// Upstreams by source and connection; `None` is the source's default connection.
pub(super) type UpstreamKey = (String, Option<String>);

/// Why a source is not started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SourceProblem {
    /// It needs a connection (credentials) that is not set; the message says how to add it.
    NeedsConnection(String),
    /// It is new or changed and waits for a person's confirmation.
    NeedsConfirmation(String),
    /// A person turned it off: not started, and not an error.
    Off,
}

impl SourceProblem {
    pub(super) fn state(&self) -> SourceState {
        match self {
            Self::NeedsConnection(_) => SourceState::NeedsConnection,
            Self::NeedsConfirmation(_) => SourceState::NeedsConfirmation,
            Self::Off => SourceState::Off,
        }
    }

    pub(super) fn message(&self) -> &str {
        match self {
            Self::NeedsConnection(m) | Self::NeedsConfirmation(m) => m,
            Self::Off => "",
        }
    }
}

/// The command line or URL a source is reached at, for listings (never secrets: `env` and
/// headers are left out).
pub(super) fn describe_target(transport: &SourceTransport) -> String {
    match transport {
        SourceTransport::Stdio { command, args, .. } => std::iter::once(command.as_str())
            .chain(args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        SourceTransport::Http { url, .. } => url.clone(),
        SourceTransport::OpenApi { spec, base_url, .. } => match base_url {
            Some(base) => format!("OpenAPI {spec} → {base}"),
            None => format!("OpenAPI {spec}"),
        },
    }
}
