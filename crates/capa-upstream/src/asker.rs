//! An upstream's own requests to a client (sampling, elicitation, roots), sent to the client
//! whose call is running on that upstream (docs/relay.md, "A source's requests to the client").
//!
//! Over stdio and in the initialize era, such a request names no call. The hub sends it to the
//! client of the calls running on the source when they all come from one client; when calls of
//! several clients run at once, or none does, it refuses, rather than ask the wrong person.
//! A 2026-07-28 server asks within the call instead (an `input_required` result, `rounds.rs`),
//! so its requests go to that call's asker.

#![expect(
    deprecated,
    reason = "sampling is deprecated by SEP-2577 (2026-07-28) but servers of the 2025 era still ask for it"
)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationCapability, ErrorData, InputRequest, InputResponses, ListRootsResult,
    RootsCapabilities, SamplingCapability,
};
use serde_json::Value;

/// The boxed future an asker returns (the trait is object-safe).
pub type AskFuture<'a, T> =
    std::pin::Pin<Box<dyn Future<Output = Result<T, ErrorData>> + Send + 'a>>;

/// The client of one call, able to answer its source's requests.
pub trait ClientAsker: Send + Sync {
    /// Which client this is: two askers with the same key ask the same person.
    fn key(&self) -> &str;
    /// `sampling/createMessage`, to the client.
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> AskFuture<'_, CreateMessageResult>;
    /// `elicitation/create`, to the client.
    fn create_elicitation(&self, params: ElicitRequestParams) -> AskFuture<'_, ElicitResult>;
    /// `roots/list`, to the client.
    fn list_roots(&self) -> AskFuture<'_, ListRootsResult>;
    /// What the client declared it answers (sampling, elicitation, roots); a 2026-07-28 server
    /// is told this with each call, so that it asks only what can be answered.
    fn capabilities(&self) -> ClientCapabilities;
    /// Answers the client sent with the call itself, unasked (a 2026-07-28 client may answer a
    /// stateless server's questions before they are put): given to the server with its first
    /// call, once.
    fn answered_unasked(&self) -> Option<InputResponses> {
        None
    }
    /// The source made a task of this call (SEP-2663), which the hub follows to its end, for
    /// at most `lasts` (`source_task.rs`): a client that takes tasks may be given one of its own
    /// meanwhile, and its answers may take that long.
    fn task_started(&self, lasts: std::time::Duration) {
        let _ = lasts;
    }
    /// One request of a 2026-07-28 server's `input_required` round, under the server's `key`,
    /// answered as JSON. A client that answers in rounds of its own keeps the key, so that the
    /// server's names reach it; others are asked as they would be in the initialize era.
    fn answer(&self, key: &str, request: InputRequest) -> AskFuture<'_, Value> {
        let _ = key;
        Box::pin(async move {
            match request {
                InputRequest::CreateMessage(r) => as_json(self.create_message(r.params).await?),
                InputRequest::Elicitation(r) => as_json(self.create_elicitation(r.params).await?),
                InputRequest::ListRoots(_) => as_json(self.list_roots().await?),
                other => Err(ErrorData::invalid_params(
                    format!("the hub cannot ask a client this: {other:?}"),
                    None,
                )),
            }
        })
    }
}

fn as_json(answer: impl serde::Serialize) -> Result<Value, ErrorData> {
    serde_json::to_value(answer).map_err(|e| {
        ErrorData::internal_error(format!("the client's answer is no JSON: {e}"), None)
    })
}

/// The calls running, by a number of their own, with their askers.
type Running = Vec<(u64, Arc<dyn ClientAsker>)>;

/// Why a source's request found nobody to ask.
const NO_CALL_TO_ASK: &str = "while no call that can pass it on runs on the source (a direct tool call of an MCP client can; code mode's execute and the app's calls cannot)";

/// The stand-in of a call whose caller cannot be asked anything: its key is its own, so a
/// request that comes while it runs next to other calls is refused, and when it runs alone it
/// refuses.
pub(crate) struct Unanswerable {
    key: String,
}

impl Unanswerable {
    pub(crate) fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Self {
            key: format!("unanswerable#{}", NEXT.fetch_add(1, Ordering::Relaxed)),
        }
    }

    fn refuse(wanted: Wanted) -> ErrorData {
        ErrorData::internal_error(format!("{} asked {NO_CALL_TO_ASK}", wanted.as_str()), None)
    }
}

impl ClientAsker for Unanswerable {
    fn key(&self) -> &str {
        &self.key
    }

    fn create_message(
        &self,
        _params: CreateMessageRequestParams,
    ) -> AskFuture<'_, CreateMessageResult> {
        Box::pin(async { Err(Self::refuse(Wanted::Sampling)) })
    }

    fn create_elicitation(&self, _params: ElicitRequestParams) -> AskFuture<'_, ElicitResult> {
        Box::pin(async { Err(Self::refuse(Wanted::Elicitation)) })
    }

    fn list_roots(&self) -> AskFuture<'_, ListRootsResult> {
        Box::pin(async { Err(Self::refuse(Wanted::Roots)) })
    }

    /// None: a 2026-07-28 server then asks nothing of a call that cannot answer.
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default()
    }
}

/// The askers of the calls running on one upstream.
#[derive(Clone, Default)]
pub(crate) struct Askers {
    running: Arc<Mutex<Running>>,
    next: Arc<AtomicU64>,
}

/// An asker registered for one call; dropping it ends the registration.
pub(crate) struct Registration {
    askers: Askers,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.askers.lock().retain(|(id, _)| *id != self.id);
    }
}

impl Askers {
    pub(crate) fn register(&self, asker: Arc<dyn ClientAsker>) -> Registration {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().push((id, asker));
        Registration {
            askers: self.clone(),
            id,
        }
    }

    /// The one client of the calls running now.
    pub(crate) fn current(
        &self,
        source_id: &str,
        wanted: Wanted,
    ) -> Result<Arc<dyn ClientAsker>, ErrorData> {
        let running = self.lock();
        let Some((_, first)) = running.first() else {
            return Err(no_client(source_id, wanted, NO_CALL_TO_ASK));
        };
        if running.iter().any(|(_, a)| a.key() != first.key()) {
            return Err(no_client(
                source_id,
                wanted,
                "while calls of several clients run on it, so the hub cannot tell whom to ask",
            ));
        }
        Ok(first.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Running> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What a source asked its client for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    Sampling,
    Elicitation,
    Roots,
}

impl Wanted {
    fn as_str(self) -> &'static str {
        match self {
            Self::Sampling => "sampling",
            Self::Elicitation => "elicitation",
            Self::Roots => "roots",
        }
    }

    /// What a request of a source's round asks for; none for a kind the hub cannot ask.
    pub fn of(request: &InputRequest) -> Option<Self> {
        match request {
            InputRequest::CreateMessage(_) => Some(Self::Sampling),
            InputRequest::Elicitation(_) => Some(Self::Elicitation),
            InputRequest::ListRoots(_) => Some(Self::Roots),
            _ => None,
        }
    }

    /// Whether a client that declared `capabilities` can answer this: sampling, form
    /// elicitation (an empty `elicitation` means form; one with only `url` takes no forms), or
    /// roots.
    pub fn declared_by(self, capabilities: &ClientCapabilities) -> bool {
        match self {
            Self::Sampling => capabilities.sampling.is_some(),
            Self::Elicitation => capabilities
                .elicitation
                .as_ref()
                .is_some_and(|e| e.form.is_some() || e.url.is_none()),
            Self::Roots => capabilities.roots.is_some(),
        }
    }

    /// The client capability this needs, for a `-32021` answer (SEP-2575).
    pub fn capability(self) -> ClientCapabilities {
        let mut needed = ClientCapabilities::default();
        match self {
            Self::Sampling => needed.sampling = Some(SamplingCapability::default()),
            Self::Elicitation => needed.elicitation = Some(ElicitationCapability::default()),
            Self::Roots => needed.roots = Some(RootsCapabilities::default()),
        }
        needed
    }
}

fn no_client(source_id: &str, wanted: Wanted, when: &str) -> ErrorData {
    ErrorData::internal_error(
        format!(
            "source `{source_id}` asked for {} {when}; the hub passes a source's requests only to the client whose call is running",
            wanted.as_str()
        ),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Named(&'static str);

    impl ClientAsker for Named {
        fn key(&self) -> &str {
            self.0
        }
        fn create_message(
            &self,
            _params: CreateMessageRequestParams,
        ) -> AskFuture<'_, CreateMessageResult> {
            Box::pin(async { Err(ErrorData::internal_error("unused", None)) })
        }
        fn create_elicitation(&self, _params: ElicitRequestParams) -> AskFuture<'_, ElicitResult> {
            Box::pin(async { Err(ErrorData::internal_error("unused", None)) })
        }
        fn list_roots(&self) -> AskFuture<'_, ListRootsResult> {
            Box::pin(async { Err(ErrorData::internal_error("unused", None)) })
        }
        fn capabilities(&self) -> ClientCapabilities {
            ClientCapabilities::default()
        }
    }

    #[test]
    fn one_client_is_asked_several_are_not_and_none_outside_a_call() {
        let askers = Askers::default();
        assert!(askers.current("s", Wanted::Sampling).is_err());
        let first = askers.register(Arc::new(Named("a")));
        let same = askers.register(Arc::new(Named("a")));
        assert_eq!(
            askers
                .current("s", Wanted::Sampling)
                .expect("one client")
                .key(),
            "a"
        );
        let other = askers.register(Arc::new(Named("b")));
        let refused = askers
            .current("s", Wanted::Elicitation)
            .err()
            .expect("refused");
        assert!(refused.message.contains("several clients"), "{refused:?}");
        drop(other);
        drop(first);
        assert_eq!(
            askers
                .current("s", Wanted::Sampling)
                .expect("one client")
                .key(),
            "a"
        );
        drop(same);
        assert!(askers.current("s", Wanted::Sampling).is_err());
    }
}
