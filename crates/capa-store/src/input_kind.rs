//! What a pending input of a call waits for, in the spec's spelling (`pending[].kind`).

use serde::{Deserialize, Serialize};

/// What a pending input waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// A person's decision on the call.
    Approval,
    /// A connection (credentials) for the call's source.
    Connection,
}

impl InputKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approval => "approval",
            Self::Connection => "connection",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Approval, Self::Connection]
            .into_iter()
            .find(|k| k.as_str() == text)
    }
}

impl std::fmt::Display for InputKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl rusqlite::ToSql for InputKind {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl rusqlite::types::FromSql for InputKind {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let text = value.as_str()?;
        Self::parse(text).ok_or_else(|| {
            rusqlite::types::FromSqlError::Other(format!("unknown input kind `{text}`").into())
        })
    }
}
