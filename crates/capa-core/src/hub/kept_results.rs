//! Large results of direct calls as handles (docs/profiles.md, "Large results in direct mode"):
//! a direct profile that serves `read_result` keeps a result over `inlineResultBytes` whole,
//! redacted, for the client that called, and the cut result names its handle. The same store
//! and reader as code mode's `hub.read` (`capa_runner::handles`), so a handle kept here is readable
//! from that client's `execute` too.

use capa_runner::handles::{self, HandleRef, Reader};
use capa_sandbox::{ToolFailure, Whole};
use serde_json::Value;

use super::Runs;

impl Runs<'_> {
    /// Keeps `value`, the whole result of a direct call by `client`; its handle, or why it was
    /// not kept (a client without a name keeps nothing: another nameless client would read it).
    /// Blocking (SQLite; tens of MB).
    pub fn keep_direct_result(
        &self,
        client: Option<&str>,
        value: Value,
    ) -> Result<HandleRef, String> {
        // Not a run: handles are listed by run, and a direct call's are nobody's run.
        let Some(id) = crate::digest::random_hex(8).map(|hex| format!("direct_{hex}")) else {
            return Err("the system gave no randomness for the result's handle".to_owned());
        };
        let whole = Whole {
            result: Some(value),
            logs: None,
        };
        let (kept, notices) = handles::keep(
            &self.hub.store,
            &self.hub.redactor,
            &id,
            client,
            whole,
            crate::clock::now_ms(),
        );
        kept.into_iter().next().ok_or_else(|| notices.join("; "))
    }

    /// `read_result(handle, options)` of `client`: a piece of a result it kept (here or in a
    /// run), `default_length` bytes when `options` name no length, redacted again (a secret
    /// added since). Blocking.
    pub fn read_kept_result(
        &self,
        client: Option<&str>,
        handle: &str,
        options: &str,
        default_length: usize,
    ) -> Result<Value, ToolFailure> {
        let mut piece = handles::read(
            &self.hub.store,
            Reader::Client(client),
            handle,
            options,
            default_length,
        )?;
        self.hub.redactor.redact_json(&mut piece);
        Ok(piece)
    }
}
