//! Capabilities file parsing and validation through the public API.

mod malformed;
mod policy;
mod valid;
