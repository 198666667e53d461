//! Upstream connections against real MCP servers: the official Python SDK, from the
//! repository's `tests/.venv`, and server-everything, from `node_modules` (`scripts/test` sets up
//! both).

mod http_limits;
mod limits;
// Kills a server with SIGKILL and watches it in `/proc`.
#[cfg(target_os = "linux")]
mod supervisor;
