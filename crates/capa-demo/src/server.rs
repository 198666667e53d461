//! The demo MCP server's tools.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

use crate::notes::Notes;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct EchoInput {
    /// Text to send back.
    pub text: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct TwoNumbers {
    /// First operand.
    pub a: f64,
    /// Second operand.
    pub b: f64,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct NoteTitle {
    /// Title of the note.
    pub title: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct NoteWrite {
    /// Title of the note; an existing note with this title is replaced.
    pub title: String,
    /// Text of the note (at most 64 KiB).
    pub text: String,
}

/// The demo server.
#[derive(Debug, Clone)]
pub struct DemoServer {
    notes: Notes,
    tool_router: ToolRouter<Self>,
}

impl DemoServer {
    pub fn new(notes: Notes) -> Self {
        Self {
            notes,
            tool_router: Self::tool_router(),
        }
    }
}

/// Whole numbers print without a fraction (`5`, not `5.0`).
#[expect(
    clippy::cast_possible_truncation,
    reason = "only a whole number below 2^53 is cast, and it fits i64 exactly"
)]
fn number(value: f64) -> Result<String, String> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53: every integer below is exact in f64.
    if !value.is_finite() {
        return Err("the result is not a finite number".into());
    }
    if value.fract() == 0.0 && value.abs() < EXACT {
        Ok(format!("{}", value as i64))
    } else {
        Ok(value.to_string())
    }
}

#[tool_router]
#[expect(
    clippy::unused_self,
    reason = "rmcp's #[tool] methods take &self, even those that need nothing of the server"
)]
impl DemoServer {
    #[tool(
        description = "Echo a text back unchanged. Handy to check that calls reach the hub.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) fn echo(&self, Parameters(EchoInput { text }): Parameters<EchoInput>) -> String {
        text
    }

    #[tool(
        description = "Add two numbers and return the sum.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) fn add(
        &self,
        Parameters(TwoNumbers { a, b }): Parameters<TwoNumbers>,
    ) -> Result<String, String> {
        number(a + b)
    }

    #[tool(
        description = "Multiply two numbers and return the product.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) fn multiply(
        &self,
        Parameters(TwoNumbers { a, b }): Parameters<TwoNumbers>,
    ) -> Result<String, String> {
        number(a * b)
    }

    #[tool(
        description = "Divide `a` by `b`. Dividing by zero is a tool error.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) fn divide(
        &self,
        Parameters(TwoNumbers { a, b }): Parameters<TwoNumbers>,
    ) -> Result<String, String> {
        if b == 0.0 {
            return Err("cannot divide by zero".into());
        }
        number(a / b)
    }

    #[tool(
        description = "List the titles of all demo notes, sorted.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) fn list_notes(&self) -> Result<String, String> {
        let titles = self.notes.list()?;
        serde_json::to_string(&titles).map_err(|e| e.to_string())
    }

    #[tool(
        description = "Read one demo note by its title.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) fn read_note(
        &self,
        Parameters(NoteTitle { title }): Parameters<NoteTitle>,
    ) -> Result<String, String> {
        self.notes
            .read(&title)?
            .ok_or_else(|| format!("no note titled {title:?}"))
    }

    #[tool(
        description = "Write a demo note, replacing any note with the same title.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub(crate) fn write_note(
        &self,
        Parameters(NoteWrite { title, text }): Parameters<NoteWrite>,
    ) -> Result<String, String> {
        self.notes.write(&title, &text)?;
        Ok(format!("saved note {title:?}"))
    }

    #[tool(
        description = "Delete a demo note by its title.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub(crate) fn delete_note(
        &self,
        Parameters(NoteTitle { title }): Parameters<NoteTitle>,
    ) -> Result<String, String> {
        if self.notes.delete(&title)? {
            Ok(format!("deleted note {title:?}"))
        } else {
            Err(format!("no note titled {title:?}"))
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for DemoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions(
            "Demo tools built into Capabilities: echo, arithmetic and a small notes store.",
        )
    }
}
