//! capa-mcp's integration tests: the MCP side on its own, without the HTTP server (tests that
//! need a served hub are capa-server's).

mod code_surface;
mod front;
