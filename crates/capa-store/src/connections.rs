//! Connection metadata: which connections a source has, which secret fields each holds, and which
//! one is the default. The values are in the keychain; this table only names them.

use rusqlite::{OptionalExtension, params};

use crate::StoreError;

/// A connection of a source, without its secret values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionRecord {
    pub source: String,
    pub name: String,
    /// Names of the secret fields stored in the keychain.
    pub fields: Vec<String>,
    pub is_default: bool,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

/// Connection metadata (never the secret values).
pub trait ConnectionStore: Send + Sync {
    /// Adds `field` to a connection (creating it). The first connection of a source, or one set
    /// with `make_default`, becomes the default.
    fn upsert_connection_field(
        &self,
        source: &str,
        name: &str,
        field: &str,
        make_default: bool,
        now_ms: i64,
    ) -> Result<ConnectionRecord, StoreError>;

    /// One connection.
    fn connection(&self, source: &str, name: &str) -> Result<Option<ConnectionRecord>, StoreError>;

    /// Every connection, by source then name.
    fn connections(&self) -> Result<Vec<ConnectionRecord>, StoreError>;

    /// Removes a connection; returns it if it existed. When the default goes, the oldest remaining
    /// connection of the source becomes the default.
    fn remove_connection(
        &self,
        source: &str,
        name: &str,
    ) -> Result<Option<ConnectionRecord>, StoreError>;
}

impl ConnectionStore for crate::SqliteStore {
    fn upsert_connection_field(
        &self,
        source: &str,
        name: &str,
        field: &str,
        make_default: bool,
        now_ms: i64,
    ) -> Result<ConnectionRecord, StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        let existing: Option<String> = tx
            .query_row(
                "SELECT fields FROM connections WHERE source = ?1 AND name = ?2",
                params![source, name],
                |row| row.get(0),
            )
            .optional()?;
        let mut fields: Vec<String> = existing
            .as_deref()
            .and_then(|f| serde_json::from_str(f).ok())
            .unwrap_or_default();
        if !fields.iter().any(|f| f == field) {
            fields.push(field.to_owned());
            fields.sort();
        }
        let fields_json = serde_json::to_string(&fields).unwrap_or_else(|_| "[]".into());
        let has_default: bool = tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM connections WHERE source = ?1 AND is_default = 1 AND name != ?2)",
            params![source, name],
            |row| row.get(0),
        )?;
        let is_default = make_default || !has_default;
        if make_default {
            tx.execute(
                "UPDATE connections SET is_default = 0 WHERE source = ?1",
                params![source],
            )?;
        }
        tx.execute(
            "INSERT INTO connections (source, name, fields, is_default, created_at_ms, updated_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?5)
             ON CONFLICT(source, name) DO UPDATE SET fields = ?3, is_default = ?4 OR is_default,
                                                     updated_at_ms = ?5",
            params![source, name, fields_json, is_default, now_ms],
        )?;
        tx.commit()?;
        drop(conn);
        self.connection(source, name)?
            .ok_or(StoreError::Sqlite(rusqlite::Error::QueryReturnedNoRows))
    }

    fn connection(&self, source: &str, name: &str) -> Result<Option<ConnectionRecord>, StoreError> {
        Ok(self
            .select_connections("WHERE source = ?1 AND name = ?2", params![source, name])?
            .pop())
    }

    fn connections(&self) -> Result<Vec<ConnectionRecord>, StoreError> {
        self.select_connections("", params![])
    }

    fn remove_connection(
        &self,
        source: &str,
        name: &str,
    ) -> Result<Option<ConnectionRecord>, StoreError> {
        let Some(record) = self.connection(source, name)? else {
            return Ok(None);
        };
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        tx.execute(
            "DELETE FROM connections WHERE source = ?1 AND name = ?2",
            params![source, name],
        )?;
        if record.is_default {
            tx.execute(
                "UPDATE connections SET is_default = 1 WHERE source = ?1 AND name =
                   (SELECT name FROM connections WHERE source = ?1 ORDER BY created_at_ms, name LIMIT 1)",
                params![source],
            )?;
        }
        tx.commit()?;
        Ok(Some(record))
    }
}

impl crate::SqliteStore {
    fn select_connections(
        &self,
        filter: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<ConnectionRecord>, StoreError> {
        let conn = self.conn()?;
        let sql = format!(
            "SELECT source, name, fields, is_default, created_at_ms, updated_at_ms FROM connections {filter} ORDER BY source, name"
        );
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map(params, |row| {
            let fields: String = row.get(2)?;
            Ok(ConnectionRecord {
                source: row.get(0)?,
                name: row.get(1)?,
                fields: serde_json::from_str(&fields).unwrap_or_default(),
                is_default: row.get(3)?,
                created_at_ms: row.get(4)?,
                updated_at_ms: row.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
