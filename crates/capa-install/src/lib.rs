//! What `capa install` writes into MCP clients' configuration files, kept apart from the binary so
//! that every rule is testable without starting a hub.
//!
//! The command (`crates/capa-cli/src/commands/install.rs`) connects to the project's servers and
//! asks the person; this crate decides the rest:
//!
//! - [`client`]: which clients a project has and where each reads its MCP servers;
//! - [`entry`]: the `capa` entry itself and how capa recognises one it wrote;
//! - [`json_file`] (Claude Code, Cursor, VS Code) and [`codex_toml`] (Codex): merging the entry
//!   into a file, or taking it out, without touching anything else in it;
//! - [`plan`]: one file's change (old text, new text, action) and writing it atomically;
//! - [`review`]: the unified diff shown before a change and the question asked;
//! - [`warnings`]: what install tells a person about the servers' tools and the file's policies;
//! - [`user`]: each client's user-wide file on each OS ([`user_files`]), for the global hub;
//! - [`user_plan`]: a user file's status and connecting it to the global hub, or disconnecting it
//!   ([`json_splice`] edits JSON/JSONC in place, so only capa's entry's bytes change);
//! - [`import`]: the servers of a client's file as hub sources, and a list of well-known servers.
//!
//! - [`program`]: which program clients run (`capa`, also when it is the app's binary).
//!
//! Nothing here reads the environment or prompts on its own: paths come in as arguments and the
//! question goes through the [`review::Prompter`] the caller passes; the one exception is
//! [`program::this_capa_program`], which reads how this process was started.

pub mod client;
pub mod codex_toml;
pub mod entry;
mod error;
pub mod import;
pub mod json_file;
pub mod json_splice;
pub mod plan;
pub mod program;
pub mod review;
pub mod running;
#[cfg(test)]
mod test_support;
pub mod user;
pub mod user_plan;
pub mod warnings;

pub use client::{Client, ClientFile, FileFormat, Locations, Scope};
pub use entry::{CapaEntry, Intent};
pub use error::InstallError;
pub use plan::{Action, FilePlan};
pub use user::{Os, UserClient, UserFile, UserHome, user_file, user_files};
pub use user_plan::{ClientStatus, Mode, Status, UserPlan};
pub use warnings::{InstallWarning, ServerTools, WarningKind};
