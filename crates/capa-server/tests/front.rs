//! The MCP front over HTTP with rmcp's own client: tool list changes reach clients of both eras.

use std::sync::Arc;
use std::time::Duration;

use capa_config::ConfigFiles;
use capa_core::{Hub, HubOptions, HubPaths, Redactor};
use rmcp::ClientHandler;
use rmcp::model::{CallToolRequestParams, ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::sync::mpsc;

fn repo_file(relative: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative);
    assert!(
        path.exists(),
        "{} is missing: run scripts/setup --test",
        path.display()
    );
    path.display().to_string()
}

/// A hub serving the growing Python SDK server, over loopback HTTP.
async fn hub() -> (tempfile::TempDir, Arc<Hub>, capa_server::HttpServer, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("capabilities.yaml");
    let yaml = format!(
        "options: {{ demo: false }}\nservers:\n  - id: grow\n    type: mcp\n    def: {{ command: \"{}\", args: [\"{}\"] }}\n",
        repo_file("tests/.venv/bin/python"),
        repo_file("tests/fixtures/growing_server.py")
    );
    std::fs::write(&file, yaml).expect("write");
    let config = capa_config::load(&ConfigFiles::only(file)).expect("config");
    let hub = Hub::start(HubOptions {
        config,
        paths: HubPaths::in_dir(dir.path()),
        redactor: Redactor::new(),
        keychain: capa_secrets::Keychain::default(),
    })
    .await
    .expect("hub");
    hub.settled(Duration::from_secs(30)).await;
    let token = "t".repeat(64);
    let server = capa_server::serve(
        hub.clone(),
        "127.0.0.1:0".parse().expect("addr"),
        token.clone(),
    )
    .await
    .expect("serve");
    (dir, hub, server, token)
}

#[derive(Clone)]
struct Counting(mpsc::UnboundedSender<()>);

impl ClientHandler for Counting {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

fn transport(
    server: &capa_server::HttpServer,
    token: &str,
) -> StreamableHttpClientTransport<reqwest::Client> {
    StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(server.mcp_url())
            .auth_header(token.to_owned()),
    )
}

fn grow(name: &str) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("grow.grow");
    params.arguments = serde_json::json!({"name": name}).as_object().cloned();
    params
}

#[tokio::test]
async fn a_2026_client_hears_of_new_tools_on_its_subscription() {
    let (_dir, hub, server, token) = hub().await;
    let (tx, _rx) = mpsc::unbounded_channel();
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = Counting(tx)
        .serve_with_lifecycle(transport(&server, &token), lifecycle)
        .await
        .expect("connect");
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let mut subscription = client
        .peer()
        .listen(filter)
        .await
        .expect("subscriptions/listen");
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));
    client.peer().call_tool(grow("sprout")).await.expect("grow");
    let notification = tokio::time::timeout(Duration::from_secs(15), subscription.next())
        .await
        .expect("a notification within 15 s")
        .expect("stream open");
    assert!(
        matches!(
            notification,
            Some(ServerNotification::ToolListChangedNotification(_))
        ),
        "{notification:?}"
    );
    let tools = client.peer().list_all_tools().await.expect("list");
    assert!(tools.iter().any(|t| t.name == "grow.sprout"));
    let _ = client.cancel().await;
    server.shutdown().await;
    hub.shutdown().await;
}

#[tokio::test]
async fn an_initialize_era_session_is_told_once_per_change() {
    let (_dir, hub, server, token) = hub().await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let client = Counting(tx)
        .serve_with_lifecycle(transport(&server, &token), ClientLifecycleMode::Initialize)
        .await
        .expect("connect");
    client.peer().call_tool(grow("shoot")).await.expect("grow");
    tokio::time::timeout(Duration::from_secs(15), rx.recv())
        .await
        .expect("told within 15 s");
    // No flood: nothing more arrives while nothing changes.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut extra = 0;
    while rx.try_recv().is_ok() {
        extra += 1;
    }
    assert!(extra <= 1, "{extra} more notifications without a change");
    let _ = client.cancel().await;
    server.shutdown().await;
    hub.shutdown().await;
}
