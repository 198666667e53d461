//! Where a person is asked about a pending input.

use serde::{Deserialize, Serialize};

/// A channel that can put an approval in front of a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum AskingChannel {
    /// The client's own form; `client` is its name as it introduced itself.
    ClientForm { client: String },
}

impl AskingChannel {
    /// The form of the client that introduced itself as `client`.
    pub fn client_form(client: Option<&str>) -> Self {
        Self::ClientForm {
            client: client.unwrap_or("the client").to_owned(),
        }
    }

    /// "answer in Claude Code", for the tray and the UI.
    pub fn where_to_answer(&self) -> String {
        match self {
            Self::ClientForm { client } => format!("answer in {client}"),
        }
    }
}
