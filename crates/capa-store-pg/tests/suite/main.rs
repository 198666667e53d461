//! The store's behaviour, the same on every backend: each test runs on SQLite and on
//! PostgreSQL (support.rs).

mod support;

mod approvals;
mod calls;
mod claims;
mod client_tasks;
mod connections;
mod embeddings;
mod handles;
mod keys;
mod pairings;
mod pins;
mod policy;
mod runs;
mod sampling;
mod tool_text;
