//! The MCP server of one OpenAPI source: its operations listed as tools (in pages), each call
//! an HTTP request. It runs inside the hub over an in-memory pipe, so the hub connects to it,
//! lists and watches it as any other upstream (supervision, timeouts, policies, approvals); once
//! connected, calls skip the pipe ([`capa_upstream::DirectCalls`]) and reach the same
//! [`answer`] the session's `tools/call` does.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use crate::api::Api;

/// The longest message the in-process server reads or writes: what the hub reads of an
/// upstream (`capa_upstream::MAX_MESSAGE_BYTES`).
const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;

/// The most tools per `tools/list` page.
const PAGE_TOOLS: usize = 100;
/// The most bytes of tools per page (one oversized tool still makes a page of its own):
/// GitHub's 1,200 operations (8.7 MB) arrive in pages well inside the hub's 8 MiB per message.
const PAGE_BYTES: usize = 2 * 1024 * 1024;

#[derive(Clone)]
pub(crate) struct OpenApiServer {
    pub api: Arc<Api>,
}

impl ServerHandler for OpenApiServer {
    fn get_info(&self) -> ServerConfig {
        let mut config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        if let Some(instructions) = &self.api.instructions {
            config = config.with_instructions(instructions.clone());
        }
        config
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|&n| n <= self.api.tools.len())
                .ok_or_else(|| McpError::invalid_params("unknown cursor", None))?,
        };
        let sizes = &self.api.tool_sizes;
        let mut end = start;
        let mut bytes = 0;
        while end < sizes.len()
            && end - start < PAGE_TOOLS
            && (end == start || bytes + sizes[end] <= PAGE_BYTES)
        {
            bytes += sizes[end];
            end += 1;
        }
        let mut page = ListToolsResult::with_all_items(self.api.tools[start..end].to_vec());
        if end < self.api.tools.len() {
            page.next_cursor = Some(end.to_string());
        }
        Ok(page)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        answer(&self.api, &request.name, request.arguments)
            .await
            .map(CallToolResponse::from)
    }
}

impl capa_upstream::DirectCalls for OpenApiServer {
    fn call_tool(&self, name: &str, arguments: Option<JsonObject>) -> capa_upstream::DirectAnswer {
        let (api, name) = (self.api.clone(), name.to_owned());
        Box::pin(async move { answer(&api, &name, arguments).await })
    }
}

/// A call of operation `name`: its HTTP request and the response as a tool result, or the
/// error both roads answer (an unknown operation, arguments the operation cannot take).
async fn answer(
    api: &Api,
    name: &str,
    arguments: Option<JsonObject>,
) -> Result<CallToolResult, McpError> {
    let Some(operation) = api.operation(name) else {
        return Err(McpError::invalid_params(
            format!("no operation `{name}`"),
            None,
        ));
    };
    api.caller
        .call(operation, arguments.unwrap_or_default())
        .await
        .map_err(|bad| McpError::invalid_params(bad.0, None))
}

/// Serves `api` as an MCP server on one end of an in-memory pipe and returns the other end,
/// ready to be used as a client transport, with the same server's direct calls.
pub fn serve_in_process(api: Arc<Api>) -> capa_upstream::InProcessServer {
    use rmcp::ServiceExt;
    use rmcp::transport::async_rw::AsyncRwTransport;
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let server = OpenApiServer { api };
    let direct: Arc<dyn capa_upstream::DirectCalls> = Arc::new(server.clone());
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_end);
        let transport =
            AsyncRwTransport::new_server(read, write).with_max_line_length(MAX_MESSAGE_BYTES);
        match server.serve(transport).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(e) => tracing::warn!(error = %e, "an OpenAPI source failed to start"),
        }
    });
    capa_upstream::InProcessServer {
        stream: client_end,
        direct: Some(direct),
    }
}
