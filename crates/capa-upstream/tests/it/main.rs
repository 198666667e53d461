//! Upstream connections against real MCP servers (the official Python SDK, from the
//! repository's `tests/.venv`, which `scripts/test` sets up).

mod http_limits;
mod limits;
mod supervisor;
