//! Hosting the hub for the shells (`capa` and the desktop app), so that they only parse,
//! call and print.
//!
//! [`serve`] is the one start-up of a hosted hub (running-hub check, configuration, hub, HTTP
//! server, token, discovery file) that `capa hub serve` and the app both call, and
//! [`shutdown_signal`] the one way they wait to stop; [`serve_stdio`] is `capa mcp`'s MCP over
//! stdio, and [`init_logging`] the shells' redacted log. [`client`] is a typed client of the hub
//! for one-shot commands: in this process ([`client::LocalHub`]) or the running hub over HTTP
//! ([`client::RemoteHub`]), with the API's requests and answers as types ([`api`]). The rest is
//! what a command does to the hub's files when a person acts at a terminal: decisions
//! ([`approvals`]), the policy file ([`policy`]), connections and source confirmations
//! ([`store`], [`sources`]) and login links ([`ui_link`]).

pub mod api;
pub mod approvals;
pub mod client;
mod logging;
pub mod policy;
pub mod running;
mod serve;
pub mod sources;
mod start;
mod stdio;
pub mod store;
mod trust;
pub mod ui_link;

pub use capa_server::discovery::Silence;
pub use client::{HubClient, LocalHub, OpenHub, RemoteHub};
pub use logging::init_logging;
pub use running::{ClientError, HubProbe, RunningHub, matching_hub};
pub use serve::{HostError, HostOptions, Hosted, serve, shutdown_signal};
pub use start::{StartHubError, config_files, load_config, read_config, start_hub};
pub use stdio::serve_stdio;
pub use store::{Secret, open_connections, open_store};
pub use trust::{RunningHubTrust, project_trust_question, record_project_trust};
