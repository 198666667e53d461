//! Capabilities file parsing and validation through the public API.

mod all_at_once;
mod expose_policy;
mod limits;
mod malformed;
mod namespace;
mod oauth;
mod openapi;
mod policy;
mod profiles;
mod select;
mod semantic_search;
mod skills;
mod valid;
