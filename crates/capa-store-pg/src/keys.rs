//! Keys every replica of a team hub shares (capa-store's keys.rs): kept in the database, the
//! first replica's key standing.

use capa_store::{KeyStore, StoreError};

use crate::PgStore;

impl KeyStore for PgStore {
    fn shared_key(&self, name: &str, candidate: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let (name, candidate) = (name.to_owned(), candidate.to_vec());
        self.pool.run(move |c| {
            c.execute(
                "INSERT INTO shared_keys (name, key, created_at_ms)
                 VALUES ($1, $2, (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT)
                 ON CONFLICT (name) DO NOTHING",
                &[&name, &candidate],
            )?;
            let row = c.query_one("SELECT key FROM shared_keys WHERE name = $1", &[&name])?;
            Ok(Some(row.get(0)))
        })
    }
}
