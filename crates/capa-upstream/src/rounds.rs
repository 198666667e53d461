//! A 2026-07-28 server's `input_required` rounds during a call (SEP-2322): instead of sending
//! its client a request mid-call, such a server answers the call with what it needs (sampling,
//! elicitation, roots, each under a key of its own) and an opaque `requestState`, and is called
//! again with the answers and the state. The hub asks the call's client (`asker.rs`), then calls
//! again, as often as the server asks, within the call's timeout (docs/relay.md).

use futures::future::try_join_all;
use rmcp::model::{
    ClientCapabilities, ElicitRequest, ElicitRequestParams, ElicitationCapability, ErrorData,
    FormElicitationCapability, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    RequestMetaObject, RootsCapabilities,
};

use crate::asker::{ClientAsker, Wanted};
use crate::error::UpstreamError;

/// How many rounds one call may take before the hub gives up on the server (rmcp's and the
/// other SDKs' default): a server that never stops asking must not hold a call forever.
const MAX_ROUNDS: usize = 10;

/// How many requests one round may carry: each may reach a person, and a source that asks for
/// thousands at once is not asking a person.
pub(crate) const MAX_ROUND_REQUESTS: usize = 32;

/// The client capabilities a 2026-07-28 server is told with a call: what the call's client
/// declared, as far as the hub passes it on (sampling, form elicitation, roots). A call whose
/// client cannot be asked anything (code mode's `execute`, the app's calls) declares none, so
/// the server asks nothing it could not have.
fn offered(asker: &dyn ClientAsker) -> ClientCapabilities {
    let client = asker.capabilities();
    let mut offered = ClientCapabilities::default();
    offered.sampling.clone_from(&client.sampling);
    // The hub passes on forms only (see `elicitation_from`).
    offered.elicitation = Wanted::Elicitation
        .declared_by(&client)
        .then(|| ElicitationCapability::new().with_form(FormElicitationCapability::default()));
    // Asked within one call, roots change nothing for other clients (unlike an initialize-era
    // server's, which the hub does not offer: `handler.rs`).
    offered.roots = client.roots.as_ref().map(|_| RootsCapabilities::default());
    // A source's task is followed by the hub (`source_task.rs`): a client that can take a task
    // is relayed one, and the source may require it (`-32021` otherwise, passed on).
    if client.supports_tasks() {
        offered.extensions = ClientCapabilities::builder()
            .enable_tasks()
            .build()
            .extensions;
    }
    offered
}

/// The answers to one round's requests, all asked at once: a client that answers in rounds of
/// its own gets them in one round, under the server's keys.
pub(crate) async fn answer_round(
    source_id: &str,
    asker: &dyn ClientAsker,
    requests: InputRequests,
) -> Result<InputResponses, UpstreamError> {
    let unanswered = |key: &str, e: ErrorData| UpstreamError::Unanswered {
        source_id: source_id.to_owned(),
        key: key.to_owned(),
        reason: e.message.into_owned(),
    };
    // Every request is checked before any is asked: a person is not shown a question for a
    // call that another question of the same round has already failed.
    let declared = asker.capabilities();
    let mut checked = Vec::with_capacity(requests.len());
    for (key, request) in requests {
        let request = match request {
            InputRequest::Elicitation(e) => InputRequest::Elicitation(ElicitRequest::new(
                elicitation_from(source_id, e.params).map_err(|e| unanswered(&key, e))?,
            )),
            other => other,
        };
        answerable(&declared, &request).map_err(|e| unanswered(&key, e))?;
        checked.push((key, request));
    }
    let asked = checked.into_iter().map(|(key, request)| async move {
        let answer = asker
            .answer(&key, request)
            .await
            .map_err(|e| unanswered(&key, e))?;
        Ok::<_, UpstreamError>((key, answer))
    });
    Ok(try_join_all(asked).await?.into_iter().collect())
}

/// An error unless the call's client can answer `request`, as [`offered`] told the source.
fn answerable(declared: &ClientCapabilities, request: &InputRequest) -> Result<(), ErrorData> {
    if Wanted::of(request).is_some_and(|wanted| wanted.declared_by(declared)) {
        Ok(())
    } else {
        Err(ErrorData::internal_error(
            "the client of this call did not declare it can answer this",
            None,
        ))
    }
}

/// A source's elicitation as the person sees it: its message names the source, so they know
/// who asks. Only forms: a link to open is no form, and sending a person to a source's page is
/// not the hub's to do unasked.
pub(crate) fn elicitation_from(
    source_id: &str,
    mut params: ElicitRequestParams,
) -> Result<ElicitRequestParams, ErrorData> {
    match &mut params {
        ElicitRequestParams::FormElicitationParams { message, .. } => {
            *message = format!("{source_id} asks: {message}");
            Ok(params)
        }
        _ => Err(ErrorData::invalid_params(
            "the hub takes form elicitation only from its sources",
            None,
        )),
    }
}

/// What one request of a call that may take rounds came back with.
pub(crate) enum Answer<T> {
    Done(T),
    Round(InputRequiredResult),
}

/// Sends a request as often as its server asks for input: `send` sends it with the answers and
/// the state of the round before (none the first time). The caller bounds the whole in time.
pub(crate) async fn drive<T, F, Fut>(
    source_id: &str,
    asker: &dyn ClientAsker,
    mut send: F,
) -> Result<T, UpstreamError>
where
    F: FnMut(Option<InputResponses>, Option<String>) -> Fut,
    Fut: Future<Output = Result<Answer<T>, UpstreamError>>,
{
    let protocol = |message: String| UpstreamError::Protocol {
        source_id: source_id.to_owned(),
        code: None,
        message,
    };
    let (mut responses, mut state) = (asker.answered_unasked(), None);
    for sent in 1..=MAX_ROUNDS {
        let round = match send(responses.take(), state.take()).await? {
            Answer::Done(value) => return Ok(value),
            Answer::Round(round) => round,
        };
        // The last time it may be called: nobody is asked for answers that would not be sent.
        if sent == MAX_ROUNDS {
            break;
        }
        let requests = round.input_requests.unwrap_or_default();
        if requests.is_empty() && round.request_state.is_none() {
            return Err(protocol(
                "answered input_required with nothing to answer and no state".to_owned(),
            ));
        }
        if requests.len() > MAX_ROUND_REQUESTS {
            return Err(protocol(format!(
                "asked for {} things in one round; the hub passes at most {MAX_ROUND_REQUESTS} on",
                requests.len()
            )));
        }
        if !requests.is_empty() {
            responses = Some(answer_round(source_id, asker, requests).await?);
        }
        state = round.request_state;
    }
    Err(protocol(format!(
        "asked for input {MAX_ROUNDS} times in one request; the hub stopped there"
    )))
}

/// The `_meta` a request goes out with: what its client can answer (SEP-2575's per-request
/// capabilities), so that the server asks only that. A 2026-07-28 server would otherwise be told
/// what the hub's connection declared, and a server of the initialize era that answers
/// `input_required` anyway reads the same key.
pub(crate) fn meta_for(asker: &dyn ClientAsker) -> RequestMetaObject {
    let mut meta = RequestMetaObject::new();
    meta.set_client_capabilities(offered(asker));
    meta
}

#[cfg(test)]
#[expect(
    deprecated,
    reason = "sampling and roots are deprecated by SEP-2577 but sources still ask for them in rounds"
)]
mod tests {
    use std::sync::Mutex;

    use rmcp::model::{
        CreateMessageRequestParams, CreateMessageResult, ElicitResult, ListRootsRequest,
        ListRootsResult,
    };
    use serde_json::json;

    use super::*;
    use crate::asker::AskFuture;

    /// A client that answers every roots request with one root and remembers the keys asked.
    #[derive(Default)]
    struct Rooted {
        asked: Mutex<Vec<String>>,
        unasked: Mutex<Option<InputResponses>>,
    }

    impl ClientAsker for Rooted {
        fn key(&self) -> &'static str {
            "rooted"
        }
        fn create_message(
            &self,
            _params: CreateMessageRequestParams,
        ) -> AskFuture<'_, CreateMessageResult> {
            Box::pin(async { Err(ErrorData::internal_error("no sampling", None)) })
        }
        fn create_elicitation(&self, _params: ElicitRequestParams) -> AskFuture<'_, ElicitResult> {
            Box::pin(async { Err(ErrorData::internal_error("no elicitation", None)) })
        }
        fn list_roots(&self) -> AskFuture<'_, ListRootsResult> {
            Box::pin(async { Ok(ListRootsResult::new(Vec::new())) })
        }
        fn capabilities(&self) -> ClientCapabilities {
            let mut declared = ClientCapabilities::default();
            declared.roots = Some(RootsCapabilities::default());
            declared
        }
        fn answered_unasked(&self) -> Option<InputResponses> {
            self.unasked.lock().expect("lock").take()
        }
        fn answer(&self, key: &str, request: InputRequest) -> AskFuture<'_, serde_json::Value> {
            self.asked.lock().expect("lock").push(key.to_owned());
            let InputRequest::ListRoots(_) = request else {
                return Box::pin(async { Err(ErrorData::internal_error("only roots", None)) });
            };
            Box::pin(async { Ok(json!({ "roots": [] })) })
        }
    }

    fn round(keys: &[&str], state: Option<&str>) -> InputRequiredResult {
        let requests: InputRequests = keys
            .iter()
            .map(|k| {
                (
                    (*k).to_owned(),
                    InputRequest::ListRoots(ListRootsRequest::default()),
                )
            })
            .collect();
        InputRequiredResult::new(
            (!requests.is_empty()).then_some(requests),
            state.map(str::to_owned),
        )
    }

    #[tokio::test]
    async fn rounds_are_answered_under_the_sources_keys_until_it_is_done() {
        let asker = Rooted::default();
        *asker.unasked.lock().expect("lock") = Some([("early".to_owned(), json!({}))].into());
        let mut sent = Vec::new();
        let done = drive("s", &asker, |responses, state| {
            let n = sent.len();
            sent.push((responses, state));
            async move {
                Ok(match n {
                    0 => Answer::Round(round(&["a", "b"], Some("one"))),
                    1 => Answer::Round(round(&[], Some("two"))),
                    _ => Answer::Done("done"),
                })
            }
        })
        .await
        .expect("done");
        assert_eq!(done, "done");
        // The client's unasked answers go with the first call; then each round's answers
        // under the source's keys, with the state it gave; a state-only round is sent back as
        // it came, with no answers.
        let keys =
            |r: &Option<InputResponses>| r.as_ref().map(|r| r.keys().cloned().collect::<Vec<_>>());
        assert_eq!(keys(&sent[0].0), Some(vec!["early".to_owned()]));
        assert_eq!(sent[0].1, None);
        assert_eq!(keys(&sent[1].0), Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(sent[1].1.as_deref(), Some("one"));
        assert_eq!(sent[2].0, None);
        assert_eq!(sent[2].1.as_deref(), Some("two"));
        let mut asked = asker.asked.lock().expect("lock").clone();
        asked.sort();
        assert_eq!(asked, ["a", "b"]);
    }

    #[tokio::test]
    async fn a_source_that_never_stops_asking_is_stopped() {
        let asker = Rooted::default();
        let mut calls = 0;
        let failed = drive::<(), _, _>("s", &asker, |_, _| {
            calls += 1;
            async { Ok(Answer::Round(round(&["again"], Some("s")))) }
        })
        .await
        .expect_err("stopped");
        assert_eq!(calls, MAX_ROUNDS);
        assert!(failed.to_string().contains("10 times"), "{failed}");
        // The last answer would not be sent, so nobody is asked for it.
        assert_eq!(asker.asked.lock().expect("lock").len(), MAX_ROUNDS - 1);
    }

    #[tokio::test]
    async fn a_round_of_too_many_requests_or_of_nothing_asks_nobody() {
        let asker = Rooted::default();
        let keys: Vec<String> = (0..=MAX_ROUND_REQUESTS).map(|n| format!("k{n}")).collect();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let many = drive::<(), _, _>("s", &asker, |_, _| {
            let r = round(&keys, None);
            async move { Ok(Answer::Round(r)) }
        })
        .await
        .expect_err("refused");
        assert!(many.to_string().contains("at most 32"), "{many}");
        let empty = drive::<(), _, _>("s", &asker, |_, _| async {
            Ok(Answer::Round(round(&[], None)))
        })
        .await
        .expect_err("refused");
        assert!(empty.to_string().contains("nothing to answer"), "{empty}");
        assert!(asker.asked.lock().expect("lock").is_empty());
    }

    #[tokio::test]
    async fn an_unanswered_request_names_its_key_and_a_url_elicitation_is_refused() {
        let asker = Rooted::default();
        let sampling = InputRequest::CreateMessage(rmcp::model::CreateMessageRequest::new(
            CreateMessageRequestParams::new(Vec::new(), 10),
        ));
        let failed = answer_round("s", &asker, [("wording".to_owned(), sampling)].into())
            .await
            .expect_err("unanswered");
        assert_eq!(failed.code(), "source_request_unanswered");
        assert!(failed.to_string().contains("`wording`"), "{failed}");
        // Refused before anything is asked: the client declared no sampling.
        assert!(asker.asked.lock().expect("lock").is_empty());
        let url = ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: "open this".to_owned(),
            url: "https://example.com".to_owned(),
            elicitation_id: "e".to_owned(),
        };
        assert!(elicitation_from("s", url).is_err());
    }
}
