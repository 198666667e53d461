//! The hub's domain: the words every other crate speaks, with no I/O and no heavy dependency (its
//! tests build without QuickJS, tantivy, oxc, SQLite, rmcp or keyring).
//!
//! - [`tool`]: a tool's definition as the hub holds it; [`address`]: `namespace.tool`.
//! - [`catalog`]: every exposed tool of every source, the expose policies applied.
//! - [`policy`]: the rules a person wrote and the verdict for one call (the authorizer in
//!   `capa-core` asks it).
//! - [`redact`]: secret values out of text and JSON; [`preview`]: the bounded, redacted view of a
//!   call's arguments a person approves.
//! - [`names`]: valid names and "did you mean"; [`asking`]: where a person is asked;
//!   [`clock`]: the one wall clock.
//! - [`pins`]: the tool definitions a person approved, and which tools differ from them.
//! - [`json_size`]: how long a value is as JSON, measured without building it; [`hex`]: bytes
//!   as lower-case hex.
//! - [`tool_text`]: upstream tool text made safe to show a person and to hand a model, and the
//!   rules that flag a tool whose text hides characters or turns on the model.

pub mod address;
pub mod asking;
pub mod catalog;
pub mod client;
pub mod clock;
pub mod hex;
pub mod json_size;
pub mod names;
pub mod pins;
pub mod policy;
pub mod preview;
pub mod redact;
pub mod source_state;
pub mod tool;
pub mod tool_text;

pub use address::ToolAddress;
pub use asking::AskingChannel;
pub use catalog::{Catalog, CatalogTool, SharedCatalog, SourceTools};
pub use client::{clean_client_label, client_label};
pub use names::{edit_distance, is_connection_name};
pub use pins::{ChangedTools, DefinitionChange, DefinitionPart, PinnedDefinition};
pub use policy::{Decision, Loosening, Policy, PolicyVerdict, ProfileScope, Rule};
pub use preview::{is_secret_name, preview};
pub use redact::Redactor;
pub use source_state::{SourceOrigin, SourceState};
pub use tool::{JsonObject, ToolDefinition, ToolHints};
