//! Approvals over MCP 2026-07-28 with rmcp's own client driving the rounds by hand
//! (`call_tool_once`): a `requestState` that was forged, tampered with, replayed, expired or
//! sent with another call is refused, and then nothing is decided and nothing runs.

mod support;

use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig,
    ElicitationCapability, FormElicitationCapability, Implementation, InputRequiredResult,
    InputResponses, ProtocolVersion, RequestStateCodec,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use support::{Served, serve_hub, serve_hub_on};

/// Deletes a note (destructive: asks) after writing it.
const CODE: &str = "await demo.write_note({ title: 'n', text: 'x' }); return await demo.delete_note({ title: 'n' });";

#[derive(Clone)]
struct FormClient;

impl ClientHandler for FormClient {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        ClientConfig::new(capabilities, Implementation::new("approvals-test", "1"))
    }
}

/// A paired client's key: only a paired client is shown approval forms (issue 39).
fn paired_key(served: &Served) -> String {
    served
        .hub
        .pairings()
        .pair("approvals-test")
        .expect("pair")
        .key
}

async fn connect(served: &Served) -> RunningService<RoleClient, FormClient> {
    connect_with(served, paired_key(served)).await
}

/// A 2026-07-28 form client sending `bearer`.
async fn connect_with(served: &Served, bearer: String) -> RunningService<RoleClient, FormClient> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(served.server.mcp_url()).auth_header(bearer),
    );
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    FormClient
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("connect")
}

fn execute(code: &str) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("execute");
    params.arguments = json!({ "code": code }).as_object().cloned();
    params
}

fn answer(code: &str, state: &str, approval: &str, decision: &str) -> CallToolRequestParams {
    let mut responses = InputResponses::new();
    responses.insert(
        approval.to_owned(),
        json!({"action": "accept", "content": {"decision": decision}}),
    );
    execute(code)
        .with_input_responses(responses)
        .with_request_state(state.to_owned())
}

/// The first round: the form for `demo.delete_note`, its approval id and the state.
async fn first_round(
    client: &RunningService<RoleClient, FormClient>,
    code: &str,
) -> (InputRequiredResult, String, String) {
    let response = client
        .peer()
        .call_tool_once(execute(code))
        .await
        .expect("call");
    let CallToolResponse::InputRequired(round) = response else {
        panic!("expected input_required, got {response:?}");
    };
    let requests = round.input_requests.clone().expect("input requests");
    assert_eq!(requests.len(), 1);
    let (approval, request) = requests.into_iter().next().expect("one");
    let request = serde_json::to_value(&request).expect("json");
    let message = request["params"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("demo.delete_note"), "{message}");
    let choices: Vec<&str> =
        request["params"]["requestedSchema"]["properties"]["decision"]["oneOf"]
            .as_array()
            .expect("choices")
            .iter()
            .filter_map(|c| c["const"].as_str())
            .collect();
    assert_eq!(
        choices,
        ["approve_once", "approve_run", "always_allow", "deny"]
    );
    let state = round.request_state.clone().expect("state");
    (round, approval, state)
}

/// Milliseconds since the Unix epoch, the clock request states expire by.
fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The run id of the one run the hub holds.
fn only_run(served: &Served) -> String {
    let runs = served
        .hub
        .runs()
        .find(&capa_store::RunFilter {
            limit: 10,
            ..capa_store::RunFilter::default()
        })
        .expect("runs");
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].id.clone()
}

/// The envelope of a run that completed: the answer to a form was taken.
fn completed(response: CallToolResponse) -> Value {
    let CallToolResponse::Complete(result) = response else {
        panic!("expected the envelope, got {response:?}");
    };
    let envelope = result.structured_content.expect("envelope");
    assert_eq!(envelope["status"], "completed", "{envelope}");
    envelope
}

fn refusal_code(response: &CallToolResponse) -> String {
    let CallToolResponse::Complete(result) = response else {
        panic!("expected a refusal, got {response:?}");
    };
    assert_eq!(result.is_error, Some(true), "{result:?}");
    result
        .meta
        .as_ref()
        .and_then(|m| m.0.get("capabilities/error"))
        .and_then(|e| e["code"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Nothing ran past the pause: the delete call is not journaled, the approval still pending.
fn assert_nothing_ran(served: &Served, run_id: &str) {
    let journal = served
        .hub
        .runs()
        .history(run_id)
        .expect("history")
        .expect("the run")
        .journal;
    assert_eq!(
        journal
            .iter()
            .map(|e| e.address.as_str())
            .collect::<Vec<_>>(),
        ["demo.write_note"]
    );
    assert_eq!(
        served
            .hub
            .approvals()
            .pending_of(run_id)
            .expect("pending")
            .len(),
        1
    );
}

#[tokio::test]
async fn forged_tampered_other_call_and_replayed_states_run_nothing() {
    let served = serve_hub("options: { toolExposure: code }\n").await;
    let client = connect(&served).await;
    let (_, approval, state) = first_round(&client, CODE).await;
    let run_id = only_run(&served);
    let peer = client.peer();

    // Tampered: one character of the signed state changed.
    let mut tampered = state.clone().into_bytes();
    let middle = tampered.len() / 2;
    tampered[middle] = if tampered[middle] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("ascii");
    let response = peer
        .call_tool_once(answer(CODE, &tampered, &approval, "approve_once"))
        .await
        .expect("call");
    assert_eq!(refusal_code(&response), "invalid_request_state");
    assert_nothing_ran(&served, &run_id);

    // Forged: the same payload signed with another key.
    let payload = json!({"run": run_id, "inputs": [{"id": approval, "call": 1, "args": "x"}]});
    let forged = RequestStateCodec::try_new(vec![7u8; 32])
        .expect("codec")
        .seal_json(&payload)
        .expect("seal");
    let response = peer
        .call_tool_once(answer(CODE, &forged, &approval, "approve_once"))
        .await
        .expect("call");
    assert_eq!(refusal_code(&response), "invalid_request_state");
    assert_nothing_ran(&served, &run_id);

    // Another call: the genuine state sent with different execute arguments.
    let response = peer
        .call_tool_once(answer("return 1", &state, &approval, "approve_once"))
        .await
        .expect("call");
    assert_eq!(refusal_code(&response), "invalid_request_state");
    assert_nothing_ran(&served, &run_id);

    // The genuine answer: the run resumes and completes in the same call.
    let response = peer
        .call_tool_once(answer(CODE, &state, &approval, "approve_once"))
        .await
        .expect("call");
    let envelope = completed(response);
    assert_eq!(envelope["runId"], Value::String(run_id.clone()));

    // Replayed: the same state again is refused, and runs nothing more.
    let journal_before = served
        .hub
        .runs()
        .history(&run_id)
        .expect("history")
        .expect("the run")
        .journal
        .len();
    let response = peer
        .call_tool_once(answer(CODE, &state, &approval, "deny"))
        .await
        .expect("call");
    assert_eq!(refusal_code(&response), "request_state_used");
    assert_eq!(
        served
            .hub
            .runs()
            .history(&run_id)
            .expect("history")
            .expect("the run")
            .journal
            .len(),
        journal_before
    );
    assert_eq!(
        served
            .hub
            .runs()
            .history(&run_id)
            .expect("history")
            .expect("the run")
            .inputs
            .iter()
            .find(|a| a.id == approval)
            .map(|a| a.status.as_str()),
        Some("approved")
    );
    let _ = client.cancel().await;
    served.server.shutdown().await;
    served.hub.shutdown().await;
}

#[tokio::test]
async fn an_expired_state_is_refused_and_the_approval_expires() {
    let served = serve_hub("options: { toolExposure: code, approvalTtlMs: 1000 }\n").await;
    let client = connect(&served).await;
    let (_, approval, state) = first_round(&client, CODE).await;
    let sealed_by = unix_ms();
    let run_id = only_run(&served);
    // The approval lives 1 s, and its state was sealed for as long (1 s is also the shortest
    // state the hub seals) before `first_round` returned: wait until the hub no longer holds
    // the approval pending and the state's expiry has passed.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !(served
        .hub
        .approvals()
        .pending_of(&run_id)
        .expect("pending")
        .is_empty()
        && unix_ms() > sealed_by + 1000)
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the approval never expired"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let response = client
        .peer()
        .call_tool_once(answer(CODE, &state, &approval, "approve_once"))
        .await
        .expect("call");
    assert_eq!(refusal_code(&response), "invalid_request_state");
    let journal = served
        .hub
        .runs()
        .history(&run_id)
        .expect("history")
        .expect("the run")
        .journal;
    assert_eq!(journal.len(), 1, "only the write ran: {journal:?}");
    assert!(
        served
            .hub
            .approvals()
            .pending_of(&run_id)
            .expect("pending")
            .is_empty()
    );
    // Resuming now replays the run: the expired call throws inside the guest.
    let resumed = served
        .hub
        .execute(capa_core::ExecuteRequest {
            code: None,
            resume: Some(run_id.clone()),
            client: None,
        })
        .await
        .expect("resume");
    assert_eq!(resumed.status.to_string(), "failed");
    assert_eq!(
        resumed.error.as_ref().map(|e| e.code.as_str()),
        Some("approval_expired")
    );
    let _ = client.cancel().await;
    served.server.shutdown().await;
    served.hub.shutdown().await;
}

#[tokio::test]
async fn a_cancelled_form_leaves_the_run_awaiting_approval_without_asking_again() {
    let served = serve_hub("options: { toolExposure: code }\n").await;
    let client = connect(&served).await;
    let (_, approval, state) = first_round(&client, CODE).await;
    let mut responses = InputResponses::new();
    responses.insert(approval.clone(), json!({"action": "cancel"}));
    let cancelled = execute(CODE)
        .with_input_responses(responses)
        .with_request_state(state);
    let response = client.peer().call_tool_once(cancelled).await.expect("call");
    let CallToolResponse::Complete(result) = response else {
        panic!("a cancelled form must not be asked again at once: {response:?}");
    };
    let envelope = result.structured_content.expect("envelope");
    assert_eq!(envelope["status"], "awaiting_approval", "{envelope}");
    assert_eq!(envelope["pending"][0]["id"], Value::String(approval));
    let _ = client.cancel().await;
    served.server.shutdown().await;
    served.hub.shutdown().await;
}

/// A state is bound to the MCP session it was issued on (a 2026-07-28 request over HTTP has
/// none: it is bound to its client's name and version). Another session of a client with the
/// same self-declared name cannot use it.
#[tokio::test]
async fn a_state_is_refused_from_another_session_with_the_same_client_name() {
    use rmcp::ServiceExt;
    let served = serve_hub("options: { toolExposure: code }\n").await;
    let client = connect(&served).await;
    let (_, approval, state) = first_round(&client, CODE).await;
    let run_id = only_run(&served);
    // An initialize-era session (it has an Mcp-Session-Id) naming itself the same way.
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(served.server.mcp_url())
            .auth_header(paired_key(&served)),
    );
    let other = FormClient.serve(transport).await.expect("other session");
    let response = other
        .peer()
        .call_tool(answer(CODE, &state, &approval, "approve_once"))
        .await;
    let refused = match response {
        Ok(result) => refusal_code(&CallToolResponse::Complete(result)),
        Err(e) => panic!("expected a refusal result, got {e}"),
    };
    assert_eq!(refused, "invalid_request_state");
    assert_nothing_ran(&served, &run_id);
    let _ = other.cancel().await;
    let _ = client.cancel().await;
    served.server.shutdown().await;
    served.hub.shutdown().await;
}

/// Issue 39: a 2026-07-28 client that holds only the hub's token (every local process can read
/// it) and declares form elicitation is sent no approval form: its run waits for a person.
#[tokio::test]
async fn a_token_only_client_is_sent_no_approval_form() {
    let served = serve_hub("options: { toolExposure: code }\n").await;
    let client = connect_with(&served, served.token.clone()).await;
    let response = client
        .peer()
        .call_tool_once(execute(CODE))
        .await
        .expect("call");
    let CallToolResponse::Complete(result) = response else {
        panic!("a token-only client was sent input_required: {response:?}");
    };
    let envelope = result.structured_content.expect("envelope");
    assert_eq!(envelope["status"], "awaiting_approval", "{envelope}");
    assert_nothing_ran(&served, &only_run(&served));
    let _ = client.cancel().await;
    served.server.shutdown().await;
    served.hub.shutdown().await;
}

/// Deletes a note that this hub's data dir may not have: completes on any replica.
const CODE_ANYWHERE: &str = "await demo.write_note({ title: 'n', text: 'x' }); try { return await demo.delete_note({ title: 'n' }); } catch (e) { return e.code; }";

/// Two replicas of a team hub (issue 44): two hubs, each with its own data dir, on one
/// PostgreSQL database made for the test on `CAPA_TEST_POSTGRES` (none without it, which
/// `CAPA_REQUIRE_ALL` makes a failure). The database lives as long as the first value.
async fn two_replicas() -> Option<(capa_store_pg::scratch::ScratchDatabase, Served, Served)> {
    let Some(admin) = std::env::var("CAPA_TEST_POSTGRES")
        .ok()
        .filter(|a| !a.is_empty())
    else {
        assert!(
            std::env::var_os("CAPA_REQUIRE_ALL").is_none(),
            "CAPA_TEST_POSTGRES is not set: tests/support/postgres.sh starts a server"
        );
        eprintln!("CAPA_TEST_POSTGRES is not set: skipped");
        return None;
    };
    let database =
        capa_store_pg::scratch::ScratchDatabase::new(&admin, "replicas").expect("a database");
    let on_database = || {
        capa_store::Store::from_backend(
            capa_store_pg::PgStore::connect(&database.url()).expect("connect"),
        )
    };
    let yaml = "options: { toolExposure: code }\n";
    let a = serve_hub_on(yaml, on_database()).await;
    let b = serve_hub_on(yaml, on_database()).await;
    Some((database, a, b))
}

/// Two replicas of a team hub (issue 44): separate processes' worth of hub, each with its own
/// data dir, on one PostgreSQL database. A form's `requestState` sealed by A is accepted by B,
/// once: the same answer sent back to A is refused as used.
#[tokio::test]
async fn a_state_sealed_by_one_replica_is_accepted_once_by_another() {
    let Some((_database, a, b)) = two_replicas().await else {
        return;
    };
    // A pairing is kept in the database: the client's key counts on either replica.
    let key = paired_key(&a);
    let on_a = connect_with(&a, key.clone()).await;
    let on_b = connect_with(&b, key).await;
    let (_, approval, state) = first_round(&on_a, CODE_ANYWHERE).await;
    let run_id = only_run(&b);

    let response = on_b
        .peer()
        .call_tool_once(answer(CODE_ANYWHERE, &state, &approval, "approve_once"))
        .await
        .expect("call");
    let envelope = completed(response);
    assert_eq!(envelope["runId"], Value::String(run_id.clone()));

    let replayed = on_a
        .peer()
        .call_tool_once(answer(CODE_ANYWHERE, &state, &approval, "approve_once"))
        .await
        .expect("call");
    assert_eq!(refusal_code(&replayed), "request_state_used");
    let journal = a
        .hub
        .runs()
        .history(&run_id)
        .expect("history")
        .expect("the run")
        .journal;
    assert_eq!(
        journal
            .iter()
            .map(|e| e.address.as_str())
            .collect::<Vec<_>>(),
        ["demo.write_note", "demo.delete_note"],
        "the approved call ran once, on B"
    );
}

/// The replicas' `requestState` key rotates (docs/team.md): a state sealed before A made a new
/// generation still opens on B; one sealed with the new generation opens on B although B had
/// not looked since (it reads the keys again); once a generation's window has passed and B has
/// looked, what it sealed is refused.
#[tokio::test]
async fn states_open_across_a_rotation_until_their_generation_is_retired() {
    use capa_store::Rotation;
    const HOUR: i64 = 3_600_000;
    let Some((_database, a, b)) = two_replicas().await else {
        return;
    };
    let key = paired_key(&a);
    let on_a = connect_with(&a, key.clone()).await;
    let on_b = connect_with(&b, key).await;
    let answer_on_b = |state: String, approval: String| {
        let peer = on_b.peer().clone();
        async move {
            let answered = answer(CODE_ANYWHERE, &state, &approval, "approve_once");
            peer.call_tool_once(answered).await.expect("call")
        }
    };
    let (_, before, sealed_before) = first_round(&on_a, CODE_ANYWHERE).await;
    a.hub.runs().rotate_state_keys(Rotation {
        every_ms: 0,
        accept_ms: HOUR,
    });
    let (_, after, sealed_after) = first_round(&on_a, CODE_ANYWHERE).await;
    completed(answer_on_b(sealed_after, after).await);
    completed(answer_on_b(sealed_before, before).await);

    let (_, last, sealed_last) = first_round(&on_a, CODE_ANYWHERE).await;
    // A rotates again and the generation `sealed_last` names is past its window at once.
    a.hub.runs().rotate_state_keys(Rotation {
        every_ms: 0,
        accept_ms: -1,
    });
    b.hub.runs().rotate_state_keys(Rotation {
        every_ms: HOUR,
        accept_ms: HOUR,
    });
    let refused = answer_on_b(sealed_last, last).await;
    assert_eq!(refusal_code(&refused), "invalid_request_state");
}

/// Waits until `watch` reads `wanted` (a deadline turns a hang into a failure).
async fn until_count(watch: &mut tokio::sync::watch::Receiver<u64>, wanted: u64, what: &str) {
    let reached = tokio::time::timeout(Duration::from_secs(20), async {
        while *watch.borrow_and_update() != wanted {
            if watch.changed().await.is_err() {
                return;
            }
        }
    })
    .await;
    assert!(reached.is_ok(), "{what}: the count never read {wanted}");
    assert_eq!(*watch.borrow(), wanted, "{what}");
}

/// Replicas hear each other (PostgreSQL's LISTEN/NOTIFY): an input recorded through B counts
/// on A at once, and a decision taken on A clears it on B, with no request to either.
#[tokio::test]
async fn replicas_hear_each_others_inputs_and_decisions() {
    let Some((_database, a, b)) = two_replicas().await else {
        return;
    };
    let (mut on_a, mut on_b) = (
        a.hub.approvals().watch_pending(),
        b.hub.approvals().watch_pending(),
    );
    until_count(&mut on_a, 0, "A before").await;

    let client = connect_with(&b, paired_key(&b)).await;
    let _ = first_round(&client, CODE_ANYWHERE).await;
    let run_id = only_run(&a);
    until_count(&mut on_b, 1, "B, where it was asked").await;
    until_count(&mut on_a, 1, "A, told by B").await;

    a.hub
        .approvals()
        .decide_run(&run_id, capa_core::Choice::Once, "test")
        .expect("decide on A");
    until_count(&mut on_a, 0, "A, where it was decided").await;
    until_count(&mut on_b, 0, "B, told by A").await;
}
