//! The MCP front over HTTP with rmcp's own client: tool list changes reach clients of both eras.

use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::{CallToolRequestParams, ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::sync::mpsc;

mod support;

use support::{Served, repo_file, serve_hub};

/// A hub serving the growing Python SDK server, over loopback HTTP.
async fn hub() -> Served {
    let yaml = format!(
        "options: {{ demo: false }}\nservers:\n  - id: grow\n    type: mcp\n    def: {{ command: \"{}\", args: [\"{}\"] }}\n",
        repo_file("tests/.venv/bin/python"),
        repo_file("tests/fixtures/growing_server.py")
    );
    serve_hub(&yaml).await
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
    let Served {
        _dir,
        hub,
        server,
        token,
    } = hub().await;
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
    let Served {
        _dir,
        hub,
        server,
        token,
    } = hub().await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let client = Counting(tx)
        .serve_with_lifecycle(transport(&server, &token), ClientLifecycleMode::Initialize)
        .await
        .expect("connect");
    // Two changes, one after the other: each is told exactly once.
    for name in ["shoot", "leaf"] {
        client.peer().call_tool(grow(name)).await.expect("grow");
        tokio::time::timeout(Duration::from_secs(15), rx.recv())
            .await
            .expect("told within 15 s");
        // No flood: nothing more arrives while nothing changes. (A quiet spell cannot prove
        // that nothing ever comes; it is the longest the test waits for an extra one.)
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut extra = 0;
        while rx.try_recv().is_ok() {
            extra += 1;
        }
        assert_eq!(extra, 0, "{extra} more notifications after growing {name}");
    }
    let _ = client.cancel().await;
    server.shutdown().await;
    hub.shutdown().await;
}
