//! Pinned tool definitions (docs/pinning.md): per source and tool, the definition a person
//! approved (JSON, already redacted) with its digest and where the person's review stands; and
//! per pending input, the digest of the definition it was asked under.

use rusqlite::params;

use crate::StoreError;

/// Where a pinned tool stands with the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinStatus {
    /// The pinned definition is what the person approved (first listing, or accepted).
    Approved,
    /// The tool appeared in a source after its first listing: pinned as first seen, listed for
    /// the person's review.
    New,
    /// The person blocked the tool: denied until they accept it.
    Blocked,
}

impl PinStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::New => "new",
            Self::Blocked => "blocked",
        }
    }

    /// An unknown word reads as `blocked`: a damaged row never loosens anything.
    /// The value stored as `text` (every backend stores [`Self::as_str`]).
    pub fn parse(text: &str) -> Self {
        match text {
            "approved" => Self::Approved,
            "new" => Self::New,
            _ => Self::Blocked,
        }
    }
}

/// One pinned tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedTool {
    /// The source's key: its id, or a project source's own key.
    pub source: String,
    /// The tool's name at the source.
    pub tool: String,
    /// SHA-256 (hex) of the definition's canonical JSON.
    pub digest: String,
    /// The pinned definition, as JSON text.
    pub definition: String,
    pub status: PinStatus,
}

/// Pinned tool definitions, and the definition an input was asked with.
pub trait PinStore: Send + Sync {
    /// Every pinned tool.
    fn pinned_tools(&self) -> Result<Vec<PinnedTool>, StoreError>;

    /// Pins `pin` (replacing what the tool had).
    fn pin_tool(&self, pin: &PinnedTool, now_ms: i64) -> Result<(), StoreError>;

    /// Pins every one of `pins` in one transaction (a source's first listing may hold
    /// thousands of tools).
    fn pin_tools(&self, pins: &[PinnedTool], now_ms: i64) -> Result<(), StoreError>;

    /// Records the digest of the definition pending input `approval_id` was asked under.
    fn set_input_definition(&self, approval_id: &str, digest: &str) -> Result<(), StoreError>;

    /// The digest of the definition pending input `approval_id` was asked under, if recorded.
    fn input_definition(&self, approval_id: &str) -> Result<Option<String>, StoreError>;
}

impl PinStore for crate::SqliteStore {
    fn pinned_tools(&self) -> Result<Vec<PinnedTool>, StoreError> {
        let conn = self.conn()?;
        let mut statement =
            conn.prepare("SELECT source, tool, digest, definition, status FROM pinned_tools")?;
        let rows = statement
            .query_map([], |row| {
                Ok(PinnedTool {
                    source: row.get(0)?,
                    tool: row.get(1)?,
                    digest: row.get(2)?,
                    definition: row.get(3)?,
                    status: PinStatus::parse(&row.get::<_, String>(4)?),
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    fn pin_tool(&self, pin: &PinnedTool, now_ms: i64) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO pinned_tools (source, tool, digest, definition, status, pinned_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (source, tool) DO UPDATE
                 SET digest = ?3, definition = ?4, status = ?5, pinned_at_ms = ?6",
            params![
                pin.source,
                pin.tool,
                pin.digest,
                pin.definition,
                pin.status.as_str(),
                now_ms
            ],
        )?;
        Ok(())
    }

    fn pin_tools(&self, pins: &[PinnedTool], now_ms: i64) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let transaction = conn.transaction()?;
        for pin in pins {
            transaction.execute(
                "INSERT INTO pinned_tools (source, tool, digest, definition, status, pinned_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (source, tool) DO UPDATE
                     SET digest = ?3, definition = ?4, status = ?5, pinned_at_ms = ?6",
                params![
                    pin.source,
                    pin.tool,
                    pin.digest,
                    pin.definition,
                    pin.status.as_str(),
                    now_ms
                ],
            )?;
        }
        transaction.commit()?;
        Ok(())
    }

    fn set_input_definition(&self, approval_id: &str, digest: &str) -> Result<(), StoreError> {
        self.conn()?.execute(
            "UPDATE approvals SET definition_digest = ?2 WHERE id = ?1",
            params![approval_id, digest],
        )?;
        Ok(())
    }

    fn input_definition(&self, approval_id: &str) -> Result<Option<String>, StoreError> {
        use rusqlite::OptionalExtension;
        Ok(self
            .conn()?
            .query_row(
                "SELECT definition_digest FROM approvals WHERE id = ?1",
                params![approval_id],
                |row| row.get(0),
            )
            .optional()?
            .flatten())
    }
}
