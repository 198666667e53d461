//! The MCP front over an in-memory transport: a request that panics costs only its own answer.

use std::time::Duration;

use rmcp::model::CallToolRequestParams;

/// A surface with a bug on purpose: its calls panic. No real server can make the hub's own code
/// panic, so this one is a fake (issue 16: a panic in one request's task becomes that request's
/// error answer, and the front serves on).
struct Panicking;

impl capa_mcp::Surface for Panicking {
    fn list_tools(
        &self,
    ) -> capa_mcp::surface::BoxFuture<'_, Result<Vec<capa_core::Tool>, rmcp::ErrorData>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    fn call_tool(
        &self,
        address: String,
        _arguments: Option<capa_core::JsonObject>,
        _client: Option<String>,
        _progress: Option<capa_core::ProgressSink>,
    ) -> capa_mcp::surface::BoxFuture<'_, Result<capa_core::CallToolResult, rmcp::ErrorData>> {
        Box::pin(async move { panic!("a bug met by {address}") })
    }

    fn tool_changes(&self) -> Box<dyn capa_mcp::ToolChanges> {
        Box::new(tokio::sync::watch::channel(0u64).1)
    }
}

#[tokio::test]
async fn a_request_that_panics_gets_an_error_answer_and_the_front_serves_on() {
    use rmcp::ServiceExt;
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let front = capa_mcp::McpFront::new(std::sync::Arc::new(Panicking));
    let server = tokio::spawn(async move {
        let running = front.serve(server_io).await.expect("server starts");
        let _ = running.waiting().await;
    });
    let client = ().serve(client_io).await.expect("client connects");
    // Without the fix no answer ever comes: the wait is bounded so the test fails, not hangs.
    let failed = tokio::time::timeout(
        Duration::from_secs(30),
        client
            .peer()
            .call_tool(CallToolRequestParams::new("any.tool")),
    )
    .await
    .expect("an answer, not silence")
    .expect_err("an error answer");
    assert!(
        failed.to_string().contains("failed on this request"),
        "{failed}"
    );
    // The same connection still answers.
    let listed = client.peer().list_all_tools().await.expect("still serving");
    assert!(listed.is_empty());
    let again = client
        .peer()
        .call_tool(CallToolRequestParams::new("any.tool"))
        .await
        .expect_err("an error answer again");
    assert!(
        again.to_string().contains("failed on this request"),
        "{again}"
    );
    drop(client);
    server.abort();
}
