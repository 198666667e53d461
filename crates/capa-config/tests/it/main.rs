//! Capabilities file parsing and validation through the public API.

mod malformed;
mod valid;
