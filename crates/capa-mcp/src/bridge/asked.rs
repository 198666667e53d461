//! The running hub asking the bridge's client (an approval, a source's sampling, elicitation or
//! roots): the bridge tells the hub, with each call, what its client declared it can answer
//! (SEP-2575's per-request capabilities, which the hub reads before the bridge's own
//! `initialize`), and passes each request the hub then sends on its session to that client.
//!
//! Only a client of the initialize era is asked this way (a stdio client that keeps a session,
//! as Claude Code does); a 2026-07-28 client behind the bridge is told nothing of such
//! requests, and the hub treats its calls as a client's that declared nothing.

#![expect(
    deprecated,
    reason = "sampling and roots are deprecated by SEP-2577 but sources of the 2025 era still ask for them"
)]

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ErrorData, Implementation, ListRootsResult, RequestMetaObject,
};
use rmcp::service::{Peer, RoleServer};

use crate::surface::Asking;

/// The bridge's one client, as it last called through the bridge.
#[derive(Clone, Default)]
pub(super) struct ClientSlot(Arc<Mutex<Option<Peer<RoleServer>>>>);

impl ClientSlot {
    /// The `_meta` of one request to the hub for the call `asking` describes: the client's name
    /// and, for a client that can be asked, what it can answer (then it is the one asked).
    pub(super) fn meta_for(&self, asking: &Asking) -> Option<RequestMetaObject> {
        let info: Option<Implementation> = asking.client_info.clone();
        let capabilities = asking
            .client_peer
            .as_ref()
            .zip(asking.client_capabilities.as_ref())
            .map(|(peer, declared)| {
                *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(peer.clone());
                answerable(declared)
            });
        if info.is_none() && capabilities.is_none() {
            return None;
        }
        let mut meta = RequestMetaObject::new();
        if let Some(info) = info {
            meta.set_client_info(info);
        }
        if let Some(capabilities) = capabilities {
            meta.set_client_capabilities(capabilities);
        }
        Some(meta)
    }

    fn peer(&self) -> Result<Peer<RoleServer>, ErrorData> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(|| {
                ErrorData::internal_error(
                    "the bridge's client has made no call that can be asked anything",
                    None,
                )
            })
    }

    pub(super) async fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.peer()?
            .create_message(params)
            .await
            .map_err(unanswered)
    }

    pub(super) async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult, ErrorData> {
        self.peer()?
            .create_elicitation(params)
            .await
            .map_err(unanswered)
    }

    pub(super) async fn list_roots(&self) -> Result<ListRootsResult, ErrorData> {
        self.peer()?.list_roots().await.map_err(unanswered)
    }
}

/// What of `declared` the hub may ask through the bridge: sampling, elicitation and roots. Not
/// tasks: the bridge takes no task from the hub (its calls wait for their results).
fn answerable(declared: &ClientCapabilities) -> ClientCapabilities {
    let mut answerable = ClientCapabilities::default();
    answerable.sampling.clone_from(&declared.sampling);
    answerable.elicitation.clone_from(&declared.elicitation);
    answerable.roots.clone_from(&declared.roots);
    answerable
}

fn unanswered(e: rmcp::ServiceError) -> ErrorData {
    match e {
        rmcp::ServiceError::McpError(data) => data,
        other => {
            ErrorData::internal_error(format!("the bridge's client did not answer: {other}"), None)
        }
    }
}
