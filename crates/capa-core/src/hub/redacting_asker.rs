//! What a source asks a client during a call (sampling, elicitation, roots) leaves the hub with every
//! known secret redacted, as everything else a source says does (docs/security.md): a source
//! that puts its environment into a sampling message must not hand a secret to the model. Its
//! sampling requests pass only when the person allowed the source, labelled with it
//! ([`SamplingGate`]).

#![expect(
    deprecated,
    reason = "sampling is deprecated by SEP-2577 but 2025-era sources still ask for it"
)]

use std::sync::Arc;

use capa_domain::Redactor;

use super::sampling_gate::SamplingGate;
use capa_upstream::{
    AskFuture, ClientAsker, ClientCapabilities, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, InputRequest, InputResponses, ListRootsResult,
};

/// `value` with every known secret redacted, wherever in it a secret sits.
pub(super) fn redacted<T: serde::Serialize + serde::de::DeserializeOwned>(
    redactor: &Redactor,
    value: T,
) -> T {
    if redactor.is_empty() {
        return value;
    }
    let Ok(mut json) = serde_json::to_value(&value) else {
        return value;
    };
    redactor.redact_json(&mut json);
    serde_json::from_value(json).unwrap_or(value)
}

/// An asker whose requests are redacted before they reach the client, and whose sampling
/// requests pass `gate` first.
pub(super) struct RedactingAsker {
    inner: Arc<dyn ClientAsker>,
    redactor: Arc<Redactor>,
    gate: SamplingGate,
}

impl RedactingAsker {
    pub(super) fn wrap(
        inner: Arc<dyn ClientAsker>,
        redactor: Arc<Redactor>,
        gate: SamplingGate,
    ) -> Arc<dyn ClientAsker> {
        Arc::new(Self {
            inner,
            redactor,
            gate,
        })
    }
}

impl ClientAsker for RedactingAsker {
    fn key(&self) -> &str {
        self.inner.key()
    }

    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> AskFuture<'_, CreateMessageResult> {
        match self.gate.admit(params) {
            Ok(params) => self.inner.create_message(redacted(&self.redactor, params)),
            Err(refused) => Box::pin(async move { Err(refused) }),
        }
    }

    fn create_elicitation(&self, params: ElicitRequestParams) -> AskFuture<'_, ElicitResult> {
        self.inner
            .create_elicitation(redacted(&self.redactor, params))
    }

    /// A roots request carries nothing of the source's.
    fn list_roots(&self) -> AskFuture<'_, ListRootsResult> {
        self.inner.list_roots()
    }

    fn capabilities(&self) -> ClientCapabilities {
        self.inner.capabilities()
    }

    /// The client's own words, to the source: nothing of a source's to redact.
    fn answered_unasked(&self) -> Option<InputResponses> {
        self.inner.answered_unasked()
    }

    fn task_started(&self, lasts: std::time::Duration) {
        self.inner.task_started(lasts);
    }

    fn answer(&self, key: &str, request: InputRequest) -> AskFuture<'_, serde_json::Value> {
        let request = match request {
            InputRequest::CreateMessage(mut r) => match self.gate.admit(r.params) {
                Ok(params) => {
                    r.params = redacted(&self.redactor, params);
                    InputRequest::CreateMessage(r)
                }
                Err(refused) => return Box::pin(async move { Err(refused) }),
            },
            InputRequest::Elicitation(mut r) => {
                r.params = redacted(&self.redactor, r.params);
                InputRequest::Elicitation(r)
            }
            // Roots, and what rmcp may add: nothing of the source's to redact.
            other => other,
        };
        self.inner
            .answer(&redacted(&self.redactor, key.to_owned()), request)
    }
}

impl super::Hub {
    /// The asker a call (or prompt) of `source` hands its source: what the source asks the
    /// client leaves redacted, and its sampling passes only when allowed, labelled.
    pub(super) fn source_asker(
        &self,
        asker: Arc<dyn ClientAsker>,
        source: &str,
    ) -> Arc<dyn ClientAsker> {
        RedactingAsker::wrap(
            asker,
            self.redactor.clone(),
            SamplingGate::new(source, self.store().clone()),
        )
    }
}
