//! What every attempt of every run shares besides the gateway.

use std::sync::Arc;

use capa_domain::Redactor;
use capa_sandbox::Limits;
use capa_store::Store;

use crate::namespaces::NamespaceCache;
use crate::slots::RunSlots;

/// What every attempt shares besides the gateway: the runs' records, the redactor, the bounds.
#[derive(Debug)]
pub struct RunnerContext {
    /// Runs, journals and inputs.
    pub store: Arc<Store>,
    pub redactor: Arc<Redactor>,
    pub slots: Arc<RunSlots>,
    /// The limits every run gets.
    pub limits: Limits,
    /// How long a pending input waits for a person before it expires.
    pub approval_ttl_ms: i64,
    /// The recent runs' sandbox globals, shared by the hub's runners.
    pub namespaces: Arc<NamespaceCache>,
}
