//! What a person confirmed, kept beside the files it concerns: the policy (a change of the file
//! that loosens it is held back until confirmed), the sources (one that is new or changed
//! outside the app or a terminal waits to start until confirmed) and the project sources a
//! person trusted (a project file runs nothing before).

use rusqlite::{OptionalExtension, params};

use crate::StoreError;

/// What a person confirmed: the policy, the sources and trusted project files.
pub trait ConfirmationStore: Send + Sync {
    /// The confirmed rules (JSON text), `None` before the first confirmation.
    fn confirmed_policy(&self) -> Result<Option<String>, StoreError>;

    /// Records `rules` (JSON text) as what a person confirmed.
    fn set_confirmed_policy(&self, rules: &str, now_ms: i64) -> Result<(), StoreError>;

    /// The confirmed sources (id → digest), `None` before confirmations began.
    fn confirmed_sources(
        &self,
    ) -> Result<Option<std::collections::BTreeMap<String, String>>, StoreError>;

    /// Records that a person confirmed source `id` as `digest` (and that confirmations began).
    fn confirm_source(&self, id: &str, digest: &str, now_ms: i64) -> Result<(), StoreError>;

    /// What a person trusted of source `source_id` of the project file `file` (its canonical
    /// path), if anything.
    fn trusted_project_source(
        &self,
        file: &str,
        source_id: &str,
    ) -> Result<Option<TrustedProjectSource>, StoreError>;

    /// Records that a person trusted source `source_id` of the project file `file` (its
    /// canonical path) as `trusted` says.
    fn trust_project_source(
        &self,
        file: &str,
        source_id: &str,
        trusted: &TrustedProjectSource,
        now_ms: i64,
    ) -> Result<(), StoreError>;

    /// The digest of the settings a person trusted for project file `file` (its canonical
    /// path), when they trusted any.
    fn trusted_project_settings(&self, file: &str) -> Result<Option<String>, StoreError>;

    /// Records that a person trusted the settings of project file `file` with digest `digest`.
    fn trust_project_settings(
        &self,
        file: &str,
        digest: &str,
        now_ms: i64,
    ) -> Result<(), StoreError>;
}

impl ConfirmationStore for crate::SqliteStore {
    fn confirmed_policy(&self) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()?
            .query_row(
                "SELECT rules FROM confirmed_policy WHERE id = 1",
                [],
                |row| row.get(0),
            )
            .optional()?)
    }

    fn set_confirmed_policy(&self, rules: &str, now_ms: i64) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO confirmed_policy (id, rules, confirmed_at_ms) VALUES (1, ?1, ?2)
             ON CONFLICT (id) DO UPDATE SET rules = ?1, confirmed_at_ms = ?2",
            params![rules, now_ms],
        )?;
        Ok(())
    }

    fn confirmed_sources(
        &self,
    ) -> Result<Option<std::collections::BTreeMap<String, String>>, StoreError> {
        let conn = self.conn()?;
        let mut statement = conn.prepare("SELECT id, digest FROM confirmed_sources")?;
        let rows: Vec<(String, String)> = statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        if !rows.iter().any(|(id, _)| id == STARTED) {
            return Ok(None);
        }
        Ok(Some(
            rows.into_iter().filter(|(id, _)| id != STARTED).collect(),
        ))
    }

    fn confirm_source(&self, id: &str, digest: &str, now_ms: i64) -> Result<(), StoreError> {
        let conn = self.conn()?;
        for (id, digest) in [(STARTED, ""), (id, digest)] {
            conn.execute(
                "INSERT INTO confirmed_sources (id, digest, confirmed_at_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT (id) DO UPDATE SET digest = ?2, confirmed_at_ms = ?3",
                params![id, digest, now_ms],
            )?;
        }
        Ok(())
    }

    fn trusted_project_source(
        &self,
        file: &str,
        source_id: &str,
    ) -> Result<Option<TrustedProjectSource>, StoreError> {
        Ok(self
            .conn()?
            .query_row(
                "SELECT digest, global_connections FROM trusted_project_sources
                 WHERE file = ?1 AND source_id = ?2",
                params![file, source_id],
                |row| {
                    Ok(TrustedProjectSource {
                        digest: row.get(0)?,
                        global_connections: row.get::<_, i64>(1)? != 0,
                    })
                },
            )
            .optional()?)
    }

    fn trust_project_source(
        &self,
        file: &str,
        source_id: &str,
        trusted: &TrustedProjectSource,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO trusted_project_sources
                 (file, source_id, digest, global_connections, trusted_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (file, source_id) DO UPDATE
                 SET digest = ?3, global_connections = ?4, trusted_at_ms = ?5",
            params![
                file,
                source_id,
                trusted.digest,
                i64::from(trusted.global_connections),
                now_ms
            ],
        )?;
        Ok(())
    }

    fn trusted_project_settings(&self, file: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()?
            .query_row(
                "SELECT digest FROM trusted_project_settings WHERE file = ?1",
                params![file],
                |row| row.get(0),
            )
            .optional()?)
    }

    fn trust_project_settings(
        &self,
        file: &str,
        digest: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO trusted_project_settings (file, digest, trusted_at_ms)
             VALUES (?1, ?2, ?3)
             ON CONFLICT (file) DO UPDATE SET digest = ?2, trusted_at_ms = ?3",
            params![file, digest, now_ms],
        )?;
        Ok(())
    }
}

/// The id of the row that marks that source confirmations began.
const STARTED: &str = "";

/// A project source a person trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedProjectSource {
    /// Digest of how the source starts, as it was trusted.
    pub digest: String,
    /// The person let it use the connections of the global source with the same id.
    pub global_connections: bool,
}
