//! Approvals: how long a replay of a long run takes on resume, and how long an approved call
//! takes from the decision to the client's result on each delivery path. A hub runs in this
//! process (demo source, code mode) behind its loopback HTTP server; clients are rmcp's.
//!
//! Baselines in the same run: the same 500-call code run fresh (the replay answers from the
//! journal instead of calling), and the same code run with the tool allowed (no approval).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, bail};
use capa_core::{Choice, EnvelopeStatus, ExecuteRequest, Hub};
use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, FormElicitationCapability,
    Implementation, InputResponses, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

use crate::calls::Samples;

const ROUNDS: usize = 20;
/// `demo.add` calls before the asking pair: with the write, 499 journaled calls and the approved
/// delete make 500, the spec's `maxCalls`.
const JOURNALED: usize = 498;
/// Writes then deletes a note: the delete asks (the demo marks it destructive).
const ASKING: &str = "await demo.write_note({ title: 'b', text: 'x' }); return await demo.delete_note({ title: 'b' });";

pub(crate) struct ApprovalsReport {
    /// A fresh run of the same 500 calls with nothing asking, in ms.
    pub fresh_500_ms: Samples,
    /// Resume of a 500-call run after approving its last call (499 answered from the journal), in ms.
    pub replay_500_ms: Samples,
    /// The asking code with the tool allowed, one `execute`, in ms.
    pub allowed_ms: Samples,
    /// From the decision to the result, in ms, per delivery path.
    pub paths: Vec<(&'static str, Samples)>,
}

async fn start_hub(dir: &std::path::Path) -> anyhow::Result<(Arc<Hub>, capa_server::HttpServer)> {
    let hub = crate::inprocess::code_mode_hub(dir).await?;
    let server = capa_server::serve(hub.clone(), "127.0.0.1:0".parse()?, "b".repeat(64)).await?;
    Ok((hub, server))
}

async fn execute(
    hub: &Arc<Hub>,
    code: Option<&str>,
    resume: Option<&str>,
) -> anyhow::Result<capa_core::Envelope> {
    Ok(hub
        .execute(ExecuteRequest {
            code: code.map(str::to_owned),
            resume: resume.map(str::to_owned),
            client: None,
        })
        .await?)
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

pub(crate) async fn measure() -> anyhow::Result<ApprovalsReport> {
    eprintln!("capa-bench: approvals…");
    let dir = tempfile::tempdir()?;
    let (hub, server) = start_hub(dir.path()).await?;
    let long = format!(
        "let s = 0; for (let i = 0; i < {JOURNALED}; i++) s += await demo.add({{ a: i, b: 1 }}); {ASKING} return s;"
    );
    let long_allowed = format!(
        "let s = 0; for (let i = 0; i < {JOURNALED}; i++) s += await demo.add({{ a: i, b: 1 }}); await demo.write_note({{ title: 'b', text: 'x' }}); return s + (await demo.echo({{ text: 'x' }})).length;"
    );
    let (mut fresh, mut replay, mut allowed, mut cli) = (vec![], vec![], vec![], vec![]);
    for _ in 0..ROUNDS / 4 {
        let started = Instant::now();
        execute(&hub, Some(&long_allowed), None).await?;
        fresh.push(ms(started));
        let paused = execute(&hub, Some(&long), None).await?;
        if paused.status != EnvelopeStatus::AwaitingApproval {
            bail!(
                "the long run did not pause: {} {:?}",
                paused.status,
                paused.error
            );
        }
        hub.approvals()
            .decide_run(&paused.run_id, Choice::Once, "bench")?;
        let started = Instant::now();
        let done = execute(&hub, None, Some(&paused.run_id)).await?;
        replay.push(ms(started));
        if done.status != EnvelopeStatus::Completed {
            bail!("the replay did not complete: {:?}", done.error);
        }
    }
    for _ in 0..ROUNDS {
        let started = Instant::now();
        execute(&hub, Some("return await demo.echo({ text: 'x' });"), None).await?;
        allowed.push(ms(started));
        // Terminal path: decide through the store, then the client resumes.
        let paused = execute(&hub, Some(ASKING), None).await?;
        let started = Instant::now();
        hub.approvals()
            .decide_run(&paused.run_id, Choice::Once, "bench")?;
        let done = execute(&hub, None, Some(&paused.run_id)).await?;
        cli.push(ms(started));
        if done.status != EnvelopeStatus::Completed {
            bail!("resume after approval did not complete");
        }
    }
    // Only a paired client's own forms answer approvals (docs/security.md, "Who may say yes"):
    // the form clients below present a client key, as a paired Claude Code would.
    let key = hub.pairings().pair("capa-bench")?.key;
    let input_required = input_required_path(&server, &key).await?;
    let elicitation = elicitation_path(&server, &key).await?;
    server.shutdown().await;
    hub.shutdown().await;
    Ok(ApprovalsReport {
        fresh_500_ms: Samples(fresh),
        replay_500_ms: Samples(replay),
        allowed_ms: Samples(allowed),
        paths: vec![
            (
                "2026-07-28 `input_required` (answer sent → result)",
                input_required,
            ),
            (
                "2025-11-25 `elicitation/create` (answer sent → result)",
                elicitation,
            ),
            (
                "`awaiting_approval`, decided in the hub, then `resume`",
                Samples(cli),
            ),
        ],
    })
}

#[derive(Clone)]
struct FormClient {
    /// When the elicitation answer left the client.
    answered: Arc<Mutex<Option<Instant>>>,
}

impl ClientHandler for FormClient {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        ClientConfig::new(capabilities, Implementation::new("capa-bench", "1"))
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        if let Ok(mut at) = self.answered.lock() {
            *at = Some(Instant::now());
        }
        Ok(ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({"decision": "approve_once"})))
    }
}

/// A client of `server` with `bearer` (the paired client's key).
fn transport(
    server: &capa_server::HttpServer,
    bearer: &str,
) -> StreamableHttpClientTransport<reqwest::Client> {
    StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(server.mcp_url()).auth_header(bearer),
    )
}

fn execute_params(code: &str) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("execute");
    params.arguments = json!({ "code": code }).as_object().cloned();
    params
}

async fn input_required_path(
    server: &capa_server::HttpServer,
    key: &str,
) -> anyhow::Result<Samples> {
    let client = FormClient {
        answered: Arc::default(),
    };
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = client
        .serve_with_lifecycle(transport(server, key), lifecycle)
        .await?;
    let mut samples = Vec::new();
    for _ in 0..ROUNDS {
        let CallToolResponse::InputRequired(round) =
            client.peer().call_tool_once(execute_params(ASKING)).await?
        else {
            bail!("expected input_required");
        };
        let state = round.request_state.context("requestState")?;
        let mut responses = InputResponses::new();
        for id in round.input_requests.unwrap_or_default().keys() {
            responses.insert(
                id.clone(),
                json!({"action": "accept", "content": {"decision": "approve_once"}}),
            );
        }
        let answer = execute_params(ASKING)
            .with_input_responses(responses)
            .with_request_state(state);
        let started = Instant::now();
        let CallToolResponse::Complete(result) = client.peer().call_tool_once(answer).await? else {
            bail!("expected the result after the answer");
        };
        samples.push(ms(started));
        if result.is_error == Some(true) {
            bail!("the answer was refused: {result:?}");
        }
    }
    let _ = client.cancel().await;
    Ok(Samples(samples))
}

async fn elicitation_path(server: &capa_server::HttpServer, key: &str) -> anyhow::Result<Samples> {
    let answered: Arc<Mutex<Option<Instant>>> = Arc::default();
    let handler = FormClient {
        answered: answered.clone(),
    };
    let client = handler
        .serve_with_lifecycle(transport(server, key), ClientLifecycleMode::Initialize)
        .await?;
    let mut samples = Vec::new();
    for _ in 0..ROUNDS {
        let result = client.peer().call_tool(execute_params(ASKING)).await?;
        let at = answered.lock().ok().and_then(|mut a| a.take());
        let Some(at) = at else {
            bail!("the hub did not elicit: {result:?}");
        };
        samples.push(ms(at));
    }
    let _ = client.cancel().await;
    Ok(Samples(samples))
}
