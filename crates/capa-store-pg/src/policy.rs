//! What a person confirmed (capa-store's policy.rs): the policy, the sources (with a marker row
//! saying that confirmations began) and the project sources and settings they trusted.

use std::collections::BTreeMap;

use capa_store::{ConfirmationStore, StoreError, TrustedProjectSource};

use crate::PgStore;

/// The id of the row that marks that source confirmations began (SQLite's store uses the same).
const STARTED: &str = "";

impl ConfirmationStore for PgStore {
    fn confirmed_policy(&self) -> Result<Option<String>, StoreError> {
        self.pool.run(|c| {
            Ok(
                c.query_opt("SELECT rules FROM confirmed_policy WHERE id = 1", &[])?
                    .map(|row| row.get(0)),
            )
        })
    }

    fn set_confirmed_policy(&self, rules: &str, now_ms: i64) -> Result<(), StoreError> {
        let rules = rules.to_owned();
        self.pool.run(move |c| {
            c.execute(
                "INSERT INTO confirmed_policy (id, rules, confirmed_at_ms) VALUES (1, $1, $2)
                 ON CONFLICT (id) DO UPDATE
                     SET rules = EXCLUDED.rules, confirmed_at_ms = EXCLUDED.confirmed_at_ms",
                &[&rules, &now_ms],
            )?;
            Ok(())
        })
    }

    fn confirmed_sources(&self) -> Result<Option<BTreeMap<String, String>>, StoreError> {
        self.pool.run(|c| {
            let rows: Vec<(String, String)> = c
                .query("SELECT id, digest FROM confirmed_sources", &[])?
                .iter()
                .map(|row| (row.get(0), row.get(1)))
                .collect();
            if !rows.iter().any(|(id, _)| id == STARTED) {
                return Ok(None);
            }
            Ok(Some(
                rows.into_iter().filter(|(id, _)| id != STARTED).collect(),
            ))
        })
    }

    fn confirm_source(&self, id: &str, digest: &str, now_ms: i64) -> Result<(), StoreError> {
        let (id, digest) = (id.to_owned(), digest.to_owned());
        self.pool.run(move |c| {
            // The marker and the source in one transaction: a confirmation is never kept
            // without the marker that makes `confirmed_sources` read it.
            let mut tx = c.transaction()?;
            for (id, digest) in [(STARTED, ""), (id.as_str(), digest.as_str())] {
                tx.execute(
                    "INSERT INTO confirmed_sources (id, digest, confirmed_at_ms)
                     VALUES ($1, $2, $3)
                     ON CONFLICT (id) DO UPDATE
                         SET digest = EXCLUDED.digest, confirmed_at_ms = EXCLUDED.confirmed_at_ms",
                    &[&id, &digest, &now_ms],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    fn trusted_project_source(
        &self,
        file: &str,
        source_id: &str,
    ) -> Result<Option<TrustedProjectSource>, StoreError> {
        let (file, source_id) = (file.to_owned(), source_id.to_owned());
        self.pool.run(move |c| {
            Ok(c.query_opt(
                "SELECT digest, global_connections FROM trusted_project_sources
                 WHERE file = $1 AND source_id = $2",
                &[&file, &source_id],
            )?
            .map(|row| TrustedProjectSource {
                digest: row.get(0),
                global_connections: row.get(1),
            }))
        })
    }

    fn trust_project_source(
        &self,
        file: &str,
        source_id: &str,
        trusted: &TrustedProjectSource,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let (file, source_id, trusted) = (file.to_owned(), source_id.to_owned(), trusted.clone());
        self.pool.run(move |c| {
            c.execute(
                "INSERT INTO trusted_project_sources
                     (file, source_id, digest, global_connections, trusted_at_ms)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (file, source_id) DO UPDATE
                     SET digest = EXCLUDED.digest,
                         global_connections = EXCLUDED.global_connections,
                         trusted_at_ms = EXCLUDED.trusted_at_ms",
                &[
                    &file,
                    &source_id,
                    &trusted.digest,
                    &trusted.global_connections,
                    &now_ms,
                ],
            )?;
            Ok(())
        })
    }

    fn trusted_project_settings(&self, file: &str) -> Result<Option<String>, StoreError> {
        let file = file.to_owned();
        self.pool.run(move |c| {
            Ok(c.query_opt(
                "SELECT digest FROM trusted_project_settings WHERE file = $1",
                &[&file],
            )?
            .map(|row| row.get(0)))
        })
    }

    fn trust_project_settings(
        &self,
        file: &str,
        digest: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let (file, digest) = (file.to_owned(), digest.to_owned());
        self.pool.run(move |c| {
            c.execute(
                "INSERT INTO trusted_project_settings (file, digest, trusted_at_ms)
                 VALUES ($1, $2, $3)
                 ON CONFLICT (file) DO UPDATE
                     SET digest = EXCLUDED.digest, trusted_at_ms = EXCLUDED.trusted_at_ms",
                &[&file, &digest, &now_ms],
            )?;
            Ok(())
        })
    }
}
