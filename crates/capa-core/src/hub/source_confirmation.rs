//! Sources wait for a person's confirmation when they are new or changed outside the app's
//! window or an interactive terminal: a source is a command the hub runs (or a URL it sends the
//! user's credentials to), so a file edit — by hand, by a script, by a tool that writes files —
//! or the API with the bearer token must not make the hub run a new one on its own.
//!
//! What is confirmed is a digest of how the source starts (command, arguments, environment as
//! written with its `${secret:…}` references, working directory; or URL and headers). The first
//! start on a database counts the sources it finds as confirmed (they are what the person had).

use capa_config::{SourceConfig, SourceTransport};

use super::Hub;
use super::sources::Origin;

/// Why a source is not started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SourceProblem {
    /// It needs a connection (credentials) that is not set; the message says how to add it.
    NeedsConnection(String),
    /// It is new or changed and waits for a person's confirmation.
    NeedsConfirmation(String),
}

impl SourceProblem {
    pub(super) fn state(&self) -> &'static str {
        match self {
            Self::NeedsConnection(_) => "needs_connection",
            Self::NeedsConfirmation(_) => "needs_confirmation",
        }
    }

    pub(super) fn message(&self) -> &str {
        match self {
            Self::NeedsConnection(m) | Self::NeedsConfirmation(m) => m,
        }
    }
}

/// SHA-256 of how `source` starts.
pub fn source_digest(source: &SourceConfig) -> String {
    let text = match &source.transport {
        SourceTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => format!(
            "stdio\n{command}\n{}\n{}\n{}",
            args.join("\u{0}"),
            env.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("\u{0}"),
            cwd.as_ref()
                .map(|c| c.display().to_string())
                .unwrap_or_default()
        ),
        SourceTransport::Http { url, headers } => format!(
            "http\n{url}\n{}",
            headers
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("\u{0}")
        ),
    };
    crate::digest::sha256_hex(text.as_bytes())
}

impl Hub {
    /// On the first start with confirmations, counts the configured sources as confirmed.
    pub(super) fn begin_source_confirmations(&self, sources: &[SourceConfig]) {
        match self.store().confirmed_sources() {
            Ok(Some(_)) => {}
            Ok(None) => {
                let now = crate::runner::now_ms();
                let mut recorded = self.store().confirm_source("", "", now);
                for source in sources {
                    recorded = recorded.and(self.store().confirm_source(
                        &source.id,
                        &source_digest(source),
                        now,
                    ));
                }
                if let Err(e) = recorded {
                    tracing::warn!(error = %e, "could not record the confirmed sources");
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not read the confirmed sources"),
        }
    }

    /// Why `source` may not start yet, when it waits for a person's confirmation.
    pub(super) fn unconfirmed(&self, source: &SourceConfig) -> Option<SourceProblem> {
        let confirmed = match self.store().confirmed_sources() {
            Ok(Some(confirmed)) => confirmed,
            // Before confirmations began (a database the first start has not seen yet).
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!(error = %e, "could not read the confirmed sources; not starting unconfirmed ones");
                Default::default()
            }
        };
        let digest = source_digest(source);
        if confirmed.get(&source.id) == Some(&digest) {
            return None;
        }
        let what = if confirmed.contains_key(&source.id) {
            "changed"
        } else {
            "new"
        };
        Some(SourceProblem::NeedsConfirmation(format!(
            "source `{}` is {what} ({}, in {}) and was not confirmed in the app or at a terminal: it starts once you confirm it in Capabilities, or with `capa sources confirm {}` in a terminal",
            source.id,
            super::status::describe_target(&source.transport),
            source.file.display(),
            source.id
        )))
    }

    /// A person confirms source `id` as it is configured now: it starts.
    pub async fn confirm_source(&self, id: &str) -> Result<(), super::SourceChangeError> {
        let def = self
            .source_defs()
            .into_iter()
            .find(|d| d.id == id)
            .ok_or_else(|| super::SourceChangeError::Unknown(id.to_owned()))?;
        let Origin::Config(config) = &def.origin else {
            return Ok(()); // the demo is built in
        };
        if let Err(e) =
            self.store()
                .confirm_source(id, &source_digest(config), crate::runner::now_ms())
        {
            tracing::warn!(error = %e, source = id, "could not record the confirmed source");
        }
        self.restart_source(id).await
    }

    /// Records a person's confirmation of `config` (before it is added or replaced).
    pub(super) fn record_confirmed(&self, config: &SourceConfig) {
        let stored = self.store().confirm_source(
            &config.id,
            &source_digest(config),
            crate::runner::now_ms(),
        );
        if let Err(e) = stored {
            tracing::warn!(error = %e, source = %config.id, "could not record the confirmed source");
        }
    }
}
