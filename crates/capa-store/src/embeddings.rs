//! The sentence model's vectors of tool texts, kept across starts: embedding a catalog of
//! thousands of tools takes seconds, reading the vectors back milliseconds. A row is keyed by
//! the model's id and the SHA-256 of the text embedded (the caller hashes), so a changed
//! description or another model is a miss, never a wrong vector.
//!
//! The cache is untrusted: a row whose vector is not a whole number of little-endian f32s, is
//! empty, or holds a value that is not finite reads as a miss (to be embedded again and
//! overwritten), never as an error. The store does not know the model's dimension; the caller
//! checks a hit's length.

use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::params;
use rusqlite::types::ValueRef;

use crate::StoreError;

/// A hit's `used_at_ms` is refreshed only when it is older than this (an hour), so that reading
/// the whole catalog at every start writes nothing most of the time. Prune with a cutoff well
/// past it.
const TOUCH_AFTER_MS: i64 = 3_600_000;

/// The cache of the sentence model's vectors of tool texts.
pub trait EmbeddingStore: Send + Sync {
    /// The cached vectors of `model` for `hashes` (the SHA-256 of each text), in the order
    /// asked: `None` for a miss or a damaged row. Hits not used within the last hour are marked
    /// used now (one statement); a failure to mark them is logged, not returned.
    fn embeddings(
        &self,
        model: &str,
        hashes: &[[u8; 32]],
    ) -> Result<Vec<Option<Vec<f32>>>, StoreError>;

    /// Stores `vectors` of `model`, each under the SHA-256 of its text, replacing what was
    /// stored under the same hash; one transaction.
    fn put_embeddings(
        &self,
        model: &str,
        vectors: &[([u8; 32], Vec<f32>)],
    ) -> Result<(), StoreError>;

    /// Deletes the vectors of every model but `keep_model`, and those not used (stored or found
    /// by a lookup) since `older_than_ms` (unix ms); returns how many rows went.
    fn prune_embeddings(&self, keep_model: &str, older_than_ms: i64) -> Result<usize, StoreError>;
}

impl EmbeddingStore for crate::SqliteStore {
    fn embeddings(
        &self,
        model: &str,
        hashes: &[[u8; 32]],
    ) -> Result<Vec<Option<Vec<f32>>>, StoreError> {
        if hashes.is_empty() {
            return Ok(Vec::new());
        }
        let now = unix_ms();
        let mut conn = self.conn()?;
        let mut found = Vec::with_capacity(hashes.len());
        let mut stale = Vec::new();
        // One read transaction: one snapshot, and one lock for every lookup.
        let tx = conn.transaction()?;
        {
            let mut select = tx.prepare_cached(
                "SELECT vector, used_at_ms FROM embeddings WHERE model = ?1 AND text_hash = ?2",
            )?;
            for hash in hashes {
                let mut rows = select.query(params![model, hash.as_slice()])?;
                let hit = match rows.next()? {
                    Some(row) => {
                        let vector = decode(row.get_ref(0)?);
                        let used_at = row.get_ref(1)?.as_i64().ok();
                        if vector.is_some() && used_at.is_none_or(|t| t < now - TOUCH_AFTER_MS) {
                            stale.push(hash);
                        }
                        vector
                    }
                    None => None,
                };
                found.push(hit);
            }
        }
        tx.commit()?;
        if !stale.is_empty() {
            // Hex strings in a JSON array: the whole list in one statement, however long.
            let list: Vec<String> = stale
                .iter()
                .map(|hash| format!("\"{}\"", hex(hash)))
                .collect();
            let touched = conn.execute(
                "UPDATE embeddings SET used_at_ms = ?1
                 WHERE model = ?2 AND text_hash IN (SELECT unhex(value) FROM json_each(?3))",
                params![now, model, format!("[{}]", list.join(","))],
            );
            if let Err(e) = touched {
                // The hits are good; only their age for pruning is not updated.
                tracing::warn!(error = %e, "could not mark cached embeddings as used");
            }
        }
        Ok(found)
    }

    fn put_embeddings(
        &self,
        model: &str,
        vectors: &[([u8; 32], Vec<f32>)],
    ) -> Result<(), StoreError> {
        if vectors.is_empty() {
            return Ok(());
        }
        let now = unix_ms();
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        {
            let mut upsert = tx.prepare_cached(
                "INSERT INTO embeddings (model, text_hash, vector, used_at_ms) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (model, text_hash)
                 DO UPDATE SET vector = excluded.vector, used_at_ms = excluded.used_at_ms",
            )?;
            for (hash, vector) in vectors {
                upsert.execute(params![model, hash.as_slice(), encode(vector), now])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn prune_embeddings(&self, keep_model: &str, older_than_ms: i64) -> Result<usize, StoreError> {
        Ok(self.conn()?.execute(
            "DELETE FROM embeddings
             WHERE model != ?1 OR used_at_ms < ?2 OR typeof(used_at_ms) != 'integer'",
            params![keep_model, older_than_ms],
        )?)
    }
}

/// A vector as stored: its values as little-endian f32s, one after the other.
fn encode(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A stored vector, or `None` when the row is damaged: not a blob, empty, not whole f32s, or a
/// value that is not finite.
fn decode(value: ValueRef<'_>) -> Option<Vec<f32>> {
    let ValueRef::Blob(bytes) = value else {
        return None;
    };
    if bytes.is_empty() || bytes.len() % 4 != 0 {
        return None;
    }
    let vector: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|chunk| chunk.try_into().ok().map(f32::from_le_bytes))
        .collect::<Option<_>>()?;
    vector.iter().all(|x| x.is_finite()).then_some(vector)
}

fn hex(bytes: &[u8; 32]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Now, in unix milliseconds (0 before 1970).
fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SqliteStore;

    fn hash(n: u8) -> [u8; 32] {
        [n; 32]
    }

    #[test]
    fn a_damaged_row_reads_as_a_miss_and_a_put_repairs_it() {
        let store = SqliteStore::in_memory().expect("store");
        store
            .put_embeddings("m", &[(hash(9), vec![0.5])])
            .expect("a good row");
        let nan = encode(&[1.0, f32::NAN]);
        {
            let conn = store.conn().expect("conn");
            let mut insert = conn
                .prepare("INSERT INTO embeddings (model, text_hash, vector, used_at_ms) VALUES ('m', ?1, ?2, 0)")
                .expect("prepare");
            let damaged: [(u8, rusqlite::types::Value); 5] = [
                (1, vec![0u8; 7].into()),
                (2, Vec::<u8>::new().into()),
                (3, "not a blob".to_owned().into()),
                (4, 42_i64.into()),
                (5, nan.into()),
            ];
            for (n, vector) in damaged {
                insert
                    .execute(params![hash(n).as_slice(), vector])
                    .expect("damaged row");
            }
            conn.execute(
                "INSERT INTO embeddings (model, text_hash, vector, used_at_ms) VALUES ('m', ?1, ?2, 'never')",
                params![hash(6).as_slice(), encode(&[1.0])],
            )
            .expect("a row with a damaged used_at");
        }
        let asked: Vec<[u8; 32]> = (1..=6).chain([9]).map(hash).collect();
        let got = store.embeddings("m", &asked).expect("no error");
        assert_eq!(
            got,
            vec![
                None,
                None,
                None,
                None,
                None,
                Some(vec![1.0]),
                Some(vec![0.5])
            ]
        );
        store
            .put_embeddings("m", &[(hash(1), vec![7.0])])
            .expect("overwrite");
        assert_eq!(
            store.embeddings("m", &[hash(1)]).expect("read"),
            vec![Some(vec![7.0])]
        );
    }

    #[test]
    fn vectors_survive_reopening_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("hub.db");
        let store = SqliteStore::open(&file).expect("open");
        store
            .put_embeddings("m", &[(hash(1), vec![0.5, -0.5])])
            .expect("put");
        drop(store);
        let store = SqliteStore::open(&file).expect("reopen");
        assert_eq!(
            store.embeddings("m", &[hash(1), hash(2)]).expect("read"),
            vec![Some(vec![0.5, -0.5]), None]
        );
    }
}
