//! Where a source stands, as listings, the API and the UI show it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A source's state. Serialised in the spelling the API and the UI use (`needs_connection`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceState {
    /// Connecting (or reconnecting after a restart).
    Starting,
    /// Connected; its tools are in the catalog.
    Ready,
    /// The connection failed or ended; it is retried with backoff.
    Down,
    /// Not running (removed, or the hub is stopping).
    Stopped,
    /// It needs a connection (credentials) that is not set.
    NeedsConnection,
    /// It is new or changed and waits for a person's confirmation.
    NeedsConfirmation,
    /// A person turned it off (`disabled: true`): nothing of it runs, none of its tools is
    /// served. Not a failure.
    Off,
}

impl SourceState {
    /// The API's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Ready => "ready",
            Self::Down => "down",
            Self::Stopped => "stopped",
            Self::NeedsConnection => "needs_connection",
            Self::NeedsConfirmation => "needs_confirmation",
            Self::Off => "off",
        }
    }

    /// Whether waiting may make it ready on its own (it is connecting or retrying); a source
    /// that waits for a person does not come by waiting.
    pub fn may_come(self) -> bool {
        matches!(self, Self::Starting | Self::Down)
    }

    /// Whether a person should look at it (it failed, or waits for credentials).
    pub fn is_trouble(self) -> bool {
        matches!(self, Self::Down | Self::NeedsConnection)
    }
}

impl fmt::Display for SourceState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a source comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceOrigin {
    /// The built-in demo source.
    Demo,
    /// A capabilities file.
    Config,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_serialise_as_the_api_spells_them() {
        for state in [
            SourceState::Starting,
            SourceState::Ready,
            SourceState::Down,
            SourceState::Stopped,
            SourceState::NeedsConnection,
            SourceState::NeedsConfirmation,
            SourceState::Off,
        ] {
            let json = serde_json::to_string(&state).expect("json");
            assert_eq!(json, format!("\"{}\"", state.as_str()));
            assert_eq!(
                serde_json::from_str::<SourceState>(&json).expect("back"),
                state
            );
        }
        assert_eq!(
            serde_json::to_string(&SourceOrigin::Config).expect("json"),
            "\"config\""
        );
    }
}
