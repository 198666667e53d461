//! The client that asks, as the approval popup, the Pending page, `capa hub pending --json` and
//! `/api/approvals` name it: the name and version it introduced itself with, over the real HTTP
//! front with rmcp's client, in both eras (2025 `initialize`'s `clientInfo`; 2026-07-28's
//! per-request `_meta`), cleaned of control and format characters and bounded when hostile.

mod support;

use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

use support::{Served, serve_hub};

/// Deletes a note: destructive, so the run pauses for a person (no form is declared).
const CODE: &str = "return await demo.delete_note({ title: 'n' });";

#[derive(Clone)]
struct Named(Implementation);

impl ClientHandler for Named {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), self.0.clone())
    }
}

/// Runs [`CODE`] from a client introducing itself as `name`/`version` over `lifecycle`; returns
/// the client the pending approval names, and the approval as `/api/approvals` serializes it.
async fn asked_by(
    served: &Served,
    name: &str,
    version: &str,
    lifecycle: ClientLifecycleMode,
) -> (Option<String>, serde_json::Value) {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(served.server.mcp_url())
            .auth_header(served.token.clone()),
    );
    let client = Named(Implementation::new(name, version))
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("connect");
    let mut params = CallToolRequestParams::new("execute");
    params.arguments = json!({ "code": CODE }).as_object().cloned();
    let result = client.peer().call_tool(params).await.expect("execute");
    let envelope = result.structured_content.expect("an envelope");
    assert_eq!(envelope["status"], "awaiting_approval", "{envelope}");
    let run = envelope["runId"].as_str().expect("runId");
    let pending = served
        .hub
        .approvals()
        .pending()
        .expect("pending")
        .into_iter()
        .find(|p| p.run_id == run)
        .expect("the run's approval");
    let _ = client.cancel().await;
    let serialized = serde_json::to_value(&pending).expect("json");
    (pending.client, serialized)
}

fn initialize() -> ClientLifecycleMode {
    ClientLifecycleMode::Initialize
}

fn discover() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

#[tokio::test]
async fn a_pending_approval_names_the_client_as_it_introduced_itself_in_both_eras() {
    let served = serve_hub("options: { demo: true, toolExposure: code }\n").await;
    let (client, json) = asked_by(&served, "claude-code", "2.1.3", initialize()).await;
    assert_eq!(client.as_deref(), Some("claude-code 2.1.3"));
    assert_eq!(json["client"], "claude-code 2.1.3");
    let (client, json) = asked_by(&served, "Modern Client", "2026.7", discover()).await;
    assert_eq!(client.as_deref(), Some("Modern Client 2026.7"));
    assert_eq!(json["client"], "Modern Client 2026.7");
}

#[tokio::test]
async fn a_hostile_client_name_is_cleaned_and_bounded_before_anyone_sees_it() {
    let served = serve_hub("options: { demo: true, toolExposure: code }\n").await;
    // A terminal escape, a forged second line, a right-to-left override, zero-width characters,
    // and a name long enough to push the version (and everything after it) off any screen.
    let name = format!(
        "Evil\u{1b}[2J\nApproved by admin\u{202E}txt.exe\u{200B}{}",
        "A".repeat(5000)
    );
    let version = "6.6.6\r\n\u{7}";
    for lifecycle in [initialize(), discover()] {
        let (client, _) = asked_by(&served, &name, version, lifecycle).await;
        let client = client.expect("a client label");
        assert!(
            client.starts_with("Evil[2J Approved by admintxt.exeAAAA"),
            "{client}"
        );
        assert!(
            client.ends_with("… 6.6.6"),
            "the version stays in view: {client}"
        );
        // 64 characters of name, a space, 32 of version (capa_domain::client).
        assert!(client.chars().count() <= 97, "{client}");
        assert!(
            !client
                .chars()
                .any(|c| c.is_control() || matches!(c, '\u{202E}' | '\u{200B}')),
            "{client:?}"
        );
    }
    // The store holds the cleaned label, never the raw name: what `capa hub pending` reads
    // without a running hub is as safe.
    let stored = capa_store::Store::open(&served.hub.paths().database())
        .expect("the hub's database")
        .pending_approvals(0)
        .expect("stored")
        .into_iter()
        .filter_map(|a| a.client)
        .collect::<Vec<_>>();
    assert_eq!(stored.len(), 2);
    assert!(
        stored
            .iter()
            .all(|c| !c.contains('\u{1b}') && c.len() < 300),
        "{stored:?}"
    );
}
