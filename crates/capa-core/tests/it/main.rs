//! The hub core against real MCP servers: the built-in demo, `@modelcontextprotocol/server-everything`
//! (stdio and Streamable HTTP), `server-filesystem` and PyPI's `mcp-server-time`.
//!
//! The servers come from the repository's `node_modules` and `tests/.venv` (`npm ci` and the
//! Python venv that `scripts/test` sets up).

mod approvals;
mod authorizer;
mod concurrency;
mod deep_code;
mod demo;
mod demo_limits;
mod execute;
mod faults;
mod first_sign_in;
mod leases;
mod limits;
mod lookup;
mod oauth;
mod policies;
mod policy_rules;
mod run_states;
mod sandbox_bounds;
mod secrets;
mod skills;
mod support;
mod switches;
mod upstreams;
