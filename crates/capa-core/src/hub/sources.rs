//! The hub's sources: how each is reached (secrets filled in from its connection), and which
//! upstream serves a call.

use std::collections::BTreeMap;
use std::sync::Arc;

use capa_config::SourceTransport;
use capa_demo::DEMO_SOURCE_ID;
use capa_upstream::{LogLevel, Upstream, UpstreamSpec, UpstreamTransport};

use super::Hub;
use super::source_def::{Origin, SourceDef, SourceProblem};
use crate::catalog::ToolAddress;
use crate::error::CallError;

impl Hub {
    pub(super) fn set_problem(&self, source_id: &str, problem: Option<SourceProblem>) {
        if let Ok(mut problems) = self.problems.lock() {
            match problem {
                Some(p) => problems.insert(source_id.to_owned(), p),
                None => problems.remove(source_id),
            };
        }
    }

    pub(super) fn start_default(&self, def: &SourceDef) {
        if def.off {
            self.set_problem(&def.id, Some(SourceProblem::Off));
            return;
        }
        if let Origin::Config(config) = &def.origin
            && let Some(problem) = self.unconfirmed(config)
        {
            tracing::warn!(source = %def.id, "{}", problem.message());
            self.log_source(
                &def.id,
                LogLevel::Warn,
                &format!("not started: {}", problem.message()),
            );
            self.set_problem(&def.id, Some(problem));
            return;
        }
        match self.spec_for(def, None) {
            Ok(spec) => {
                self.set_problem(&def.id, None);
                let upstream = self.start_upstream(spec);
                self.lock_upstreams()
                    .insert((def.id.clone(), None), upstream);
            }
            Err(e) => {
                tracing::warn!(source = %def.id, error = %e, "source not started");
                self.log_source(&def.id, LogLevel::Warn, &format!("not started: {e}"));
                self.set_problem(&def.id, Some(SourceProblem::NeedsConnection(e.to_string())));
            }
        }
    }

    pub(super) fn upstream_for(
        &self,
        address: &ToolAddress,
        connection: Option<&str>,
    ) -> Result<Arc<Upstream>, CallError> {
        let defs = self.source_defs();
        let def = defs
            .iter()
            .find(|d| d.id == address.namespace)
            .ok_or_else(|| CallError::UnknownTool {
                address: address.to_string(),
                suggestions: Vec::new(),
            })?;
        // A connection named like the default one is served by the default upstream.
        let connection = match connection {
            Some(name) if self.default_connection_name(&def.id).as_deref() != Some(name) => {
                Some(name)
            }
            _ => None,
        };
        let key = (def.id.clone(), connection.map(str::to_owned));
        if let Some(upstream) = self.lock_upstreams().get(&key) {
            return Ok(upstream.clone());
        }
        let problem = self
            .problems
            .lock()
            .ok()
            .and_then(|p| p.get(&def.id).cloned());
        match problem {
            // An unconfirmed source starts under no connection.
            Some(SourceProblem::NeedsConfirmation(message)) => {
                return Err(CallError::Unconfirmed {
                    source_id: def.id.clone(),
                    message,
                });
            }
            Some(SourceProblem::Off) => {
                return Err(CallError::UnknownTool {
                    address: address.to_string(),
                    suggestions: Vec::new(),
                });
            }
            Some(SourceProblem::NeedsConnection(message)) if connection.is_none() => {
                return Err(CallError::NeedsConnection {
                    source_id: def.id.clone(),
                    message,
                });
            }
            _ => {}
        }
        let spec = self.spec_for(def, connection)?;
        let upstream = self.start_upstream(spec);
        self.lock_upstreams().insert(key, upstream.clone());
        Ok(upstream)
    }

    /// How to reach a source under a connection, secrets filled in.
    pub(super) fn spec_for(
        &self,
        def: &SourceDef,
        connection: Option<&str>,
    ) -> Result<UpstreamSpec, CallError> {
        let needs = |message: String| CallError::NeedsConnection {
            source_id: def.id.clone(),
            message,
        };
        let transport = match &def.origin {
            Origin::Demo => {
                let notes = self.notes.clone();
                return Ok(UpstreamSpec {
                    source_id: def.id.clone(),
                    connection: None,
                    transport: UpstreamTransport::InProcess {
                        name: DEMO_SOURCE_ID.to_owned(),
                        connect: Arc::new(move || {
                            let notes = notes.clone();
                            Box::pin(async move { Ok(capa_demo::spawn_in_process(notes)) })
                        }),
                    },
                    call_timeout: self.config.upstream_timeout,
                });
            }
            Origin::Config(config) => &config.transport,
        };
        if self.is_oauth(def) {
            return self.oauth_spec(def, connection);
        }
        if !def_uses_secrets(def) {
            return Ok(UpstreamSpec {
                source_id: def.id.clone(),
                connection: None,
                transport: upstream_transport(
                    &def.id,
                    transport,
                    self.config.upstream_timeout,
                    |v| Ok(v.clone()),
                )?,
                call_timeout: self.config.upstream_timeout,
            });
        }
        let resolved = self
            .connections
            .resolve(&self.connection_key(&def.id), connection)
            .map_err(|e| needs(format!("cannot read the connections of `{}`: {e}", def.id)))?;
        let Some(resolved) = resolved else {
            return Err(needs(match connection {
                Some(name) => format!(
                    "source `{}` has no connection named `{name}`; `capa connections list` shows them",
                    def.id
                ),
                None => format!(
                    "source `{}` needs a connection: run `capa connections set {} <name>` (the secret is read from stdin)",
                    def.id, def.id
                ),
            }));
        };
        let transport = upstream_transport(
            &def.id,
            transport,
            self.config.upstream_timeout,
            |value| {
                capa_config::secret_ref::substitute(value, |name| {
                resolved.secrets.get(name).map(|s| s.expose().to_owned())
            })
            .map_err(|missing| {
                needs(format!(
                    "connection `{}` of `{}` has no secret `{missing}`: run `capa connections set {} {} --field {missing}`",
                    resolved.name, def.id, def.id, resolved.name
                ))
            })
            },
        )?;
        let connection_name = Some(resolved.name.clone());
        Ok(UpstreamSpec {
            source_id: def.id.clone(),
            connection: connection_name,
            transport,
            call_timeout: self.config.upstream_timeout,
        })
    }

    pub(crate) fn default_connection_name(&self, source_id: &str) -> Option<String> {
        let key = self.connection_key(source_id);
        self.store
            .connections()
            .ok()?
            .into_iter()
            .find(|c| c.source == key && c.is_default)
            .map(|c| c.name)
    }

    /// The key the connections of source `source_id` are stored under: its id, or for a project
    /// source a key of its own (`super::source_confirmation::connection_key`).
    pub(crate) fn connection_key(&self, source_id: &str) -> String {
        match self.sources().config(source_id) {
            Some(config) => crate::trust::connection_key(&self.store, &config),
            None => source_id.to_owned(),
        }
    }
}

/// The upstream transport of a configured source, with `fill` applied to every `env`,
/// `headers` and `auth` value (where secrets go).
fn upstream_transport(
    source_id: &str,
    transport: &SourceTransport,
    timeout: std::time::Duration,
    fill: impl Fn(&String) -> Result<String, CallError>,
) -> Result<UpstreamTransport, CallError> {
    let fill_all = |values: &BTreeMap<String, String>| {
        values
            .iter()
            .map(|(k, v)| Ok((k.clone(), fill(v)?)))
            .collect::<Result<BTreeMap<_, _>, CallError>>()
    };
    Ok(match transport {
        SourceTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => UpstreamTransport::Stdio {
            command: command.clone(),
            args: args.clone(),
            env: fill_all(env)?,
            cwd: cwd.clone(),
        },
        SourceTransport::Http { url, headers, .. } => UpstreamTransport::Http {
            url: url.clone(),
            headers: fill_all(headers)?,
            oauth: None,
        },
        SourceTransport::OpenApi {
            spec,
            base_url,
            headers,
            auth,
        } => super::openapi::transport(
            source_id,
            capa_openapi::Settings {
                location: match spec {
                    capa_config::SpecLocation::File(path) => {
                        capa_openapi::Location::File(path.clone())
                    }
                    capa_config::SpecLocation::Url(url) => capa_openapi::Location::Url(url.clone()),
                },
                base_url: base_url.clone(),
                headers: fill_all(headers)?,
                auth: fill_all(auth)?,
                // Inside the hub's own bound on the call, so that a slow API ends as this
                // source's retryable error, which says what it waited for.
                timeout: timeout
                    .saturating_sub((timeout / 10).min(std::time::Duration::from_secs(1))),
            },
        ),
    })
}

pub(super) fn def_uses_secrets(def: &SourceDef) -> bool {
    matches!(&def.origin, Origin::Config(c) if !c.secret_names().is_empty())
}
