//! `execute` on the hub: the runner (`capa_runner`) with the hub as its gateway.

use std::sync::Arc;

use capa_runner::{ExecuteError, Runner, RunnerContext};
use capa_sandbox::Limits;

use super::{Hub, Profile};
use crate::gateway::HubGateway;
use crate::lookup::LookupError;
use crate::{Envelope, ExecuteOptions, ExecuteRequest};

impl Hub {
    /// Runs model code, or goes on with an earlier run.
    pub async fn execute(
        self: &Arc<Self>,
        request: ExecuteRequest,
    ) -> Result<Envelope, LookupError> {
        self.execute_with(request, ExecuteOptions::default()).await
    }

    /// [`Hub::execute`] for a client that can cancel, go away, or show its own forms (see
    /// [`ExecuteOptions`]).
    pub async fn execute_with(
        self: &Arc<Self>,
        request: ExecuteRequest,
        options: ExecuteOptions,
    ) -> Result<Envelope, LookupError> {
        self.execute_in(request, options, None).await
    }

    /// [`Hub::execute_with`] for a client of `profile`: its sources are the run's globals, its
    /// rules apply on top of the policy and its limits are the run's. A run paused in one
    /// profile and resumed through another goes on with the resuming client's profile.
    pub async fn execute_in(
        self: &Arc<Self>,
        request: ExecuteRequest,
        options: ExecuteOptions,
        profile: Option<&Profile>,
    ) -> Result<Envelope, LookupError> {
        self.runner(profile)
            .execute(request, options)
            .await
            .map_err(|e| match e {
                ExecuteError::InvalidArguments(m) => LookupError::InvalidArguments(m),
                ExecuteError::Store(m) => LookupError::Store(m),
            })
    }

    /// Makes the warm sandboxes `execute` takes its runs from (capa-sandbox's pool), so the
    /// first run does not pay for a cold one. For a hub that serves clients; a one-shot
    /// command that runs no code need not.
    pub fn prewarm_sandboxes(&self) {
        capa_sandbox::prewarm();
    }

    /// How long one call of a source may take (`upstreamTimeoutMs`, as configured): what every
    /// upstream request of the hub is bounded by, whichever profile it serves.
    pub fn upstream_timeout(&self) -> std::time::Duration {
        self.config.upstream_timeout
    }

    /// The limits runs get: the spec's defaults, lowered where the configuration asks.
    pub fn run_limits(&self) -> Limits {
        let configured = Limits {
            upstream_timeout_ms: u64::try_from(self.config.upstream_timeout.as_millis())
                .unwrap_or(u64::MAX),
            ..Limits::default()
        };
        configured.lowered_to(&Limits::default())
    }

    fn runner(self: &Arc<Self>, profile: Option<&Profile>) -> Runner<HubGateway> {
        let context = RunnerContext {
            store: self.store.clone(),
            redactor: self.redactor.clone(),
            slots: self.slots.clone(),
            limits: self.run_limits_in(profile),
            approval_ttl_ms: i64::try_from(self.config.approval_ttl.as_millis())
                .unwrap_or(i64::MAX),
            namespaces: self.namespaces.clone(),
        };
        Runner::new(
            Arc::new(HubGateway::new(self.clone(), profile.cloned())),
            context,
        )
    }
}
