//! The capabilities file: its format, the rules it must follow, where it is found, and the
//! configuration the hub runs with.
//!
//! A person writes `capabilities.yaml` (a global one in the platform's config dir and, optionally,
//! one per project). This crate turns those files into a [`HubConfig`], or into errors that name the
//! file, the line and column, and the fix. It knows nothing about MCP or processes.

mod error;
mod file;
mod load;
mod located;
mod resolved;
mod schema;
pub mod secret_ref;
mod validate;

pub use error::{ConfigError, ConfigIssue};
pub use file::{
    CapabilitiesFile, ExposePolicy, ExposureMode, Options, ServerDef, ServerEntry, ServerKind,
    ToolEntry,
};
pub use load::{ConfigFiles, PROJECT_FILE_NAMES, find_project_file, load, load_file, parse_str};
pub use located::{Located, Position};
pub use resolved::{
    ExplicitTool, ExposureChoice, HubConfig, MAX_UPSTREAM_TIMEOUT_MS, SourceConfig,
    SourceTransport, ToolSelection,
};
pub use schema::json_schema;
pub use validate::{CheckedFile, RESERVED_IDS, is_source_id};
