//! Capabilities file parsing and validation through the public API.

mod expose_policy;
mod malformed;
mod policy;
mod select;
mod skills;
mod valid;
