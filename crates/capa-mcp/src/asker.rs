//! The initialize-era client of a direct call, answering what the tool's source asks it meanwhile
//! (sampling, elicitation, roots; docs/relay.md, "A source's requests to the client"): sent on the
//! client's session, refused with `-32021` (SEP-2575) when the client did not declare the
//! capability. A 2026-07-28 client answers in `input_required` rounds instead (`crate::folded`).

#![expect(
    deprecated,
    reason = "sampling is deprecated by SEP-2577 (2026-07-28) but servers and clients of the 2025 era still use it"
)]

use std::sync::Arc;

use capa_core::{AskFuture, ClientAsker, Wanted};
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ErrorData, ListRootsResult,
};
use rmcp::service::{Peer, RoleServer};

use crate::asking::Asking;

/// The asker of a call with `asking`, when the client has a session to be asked on.
pub(crate) fn asker_for(asking: &Asking) -> Option<Arc<dyn ClientAsker>> {
    let peer = asking.client_peer.as_ref()?;
    Some(Arc::new(SessionAsker {
        key: asking.session.clone(),
        peer: peer.clone(),
        capabilities: asking.client_capabilities.clone().unwrap_or_default(),
    }))
}

/// An initialize-era session: requests go to it as they came.
struct SessionAsker {
    key: String,
    peer: Peer<RoleServer>,
    capabilities: ClientCapabilities,
}

impl ClientAsker for SessionAsker {
    fn key(&self) -> &str {
        &self.key
    }

    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> AskFuture<'_, CreateMessageResult> {
        Box::pin(async move {
            require(&self.capabilities, Wanted::Sampling)?;
            self.peer
                .create_message(params)
                .await
                .map_err(|e| client_failed(&e))
        })
    }

    fn create_elicitation(&self, params: ElicitRequestParams) -> AskFuture<'_, ElicitResult> {
        Box::pin(async move {
            require(&self.capabilities, Wanted::Elicitation)?;
            self.peer
                .create_elicitation(params)
                .await
                .map_err(|e| client_failed(&e))
        })
    }

    fn list_roots(&self) -> AskFuture<'_, ListRootsResult> {
        Box::pin(async move {
            require(&self.capabilities, Wanted::Roots)?;
            self.peer.list_roots().await.map_err(|e| client_failed(&e))
        })
    }

    fn capabilities(&self) -> ClientCapabilities {
        self.capabilities.clone()
    }
}

/// `-32021` (SEP-2575) unless the client declared what `wanted` needs ([`Wanted::declared_by`]).
pub(crate) fn require(capabilities: &ClientCapabilities, wanted: Wanted) -> Result<(), ErrorData> {
    if wanted.declared_by(capabilities) {
        Ok(())
    } else {
        Err(ErrorData::missing_required_client_capability(
            wanted.capability(),
        ))
    }
}

/// The client's own error as it sent it; a transport failure as an internal error.
fn client_failed(error: &rmcp::ServiceError) -> ErrorData {
    match error {
        rmcp::ServiceError::McpError(data) => data.clone(),
        other => ErrorData::internal_error(format!("the client did not answer: {other}"), None),
    }
}
