//! The sentence model's vectors of tool texts (capa-store's embeddings.rs): keyed by the model
//! and the SHA-256 of the text, each a `bytea` of little-endian f32s. The cache is untrusted: a
//! row that is not whole finite f32s reads as a miss, never as an error.

use std::collections::{HashMap, HashSet};
use std::time::{SystemTime, UNIX_EPOCH};

use capa_store::{EmbeddingStore, StoreError};

use crate::PgStore;

/// A hit's `used_at_ms` is refreshed only when it is older than this (an hour), so that reading
/// the whole catalog at every start writes nothing most of the time (as SQLite's store).
const TOUCH_AFTER_MS: i64 = 3_600_000;

impl EmbeddingStore for PgStore {
    fn embeddings(
        &self,
        model: &str,
        hashes: &[[u8; 32]],
    ) -> Result<Vec<Option<Vec<f32>>>, StoreError> {
        if hashes.is_empty() {
            return Ok(Vec::new());
        }
        let now = unix_ms();
        let (model, asked) = (model.to_owned(), hashes.to_vec());
        self.pool.run(move |c| {
            let list: Vec<&[u8]> = asked.iter().map(<[u8; 32]>::as_slice).collect();
            // The whole list is one array parameter: one statement, one snapshot, however many
            // thousands of hashes are asked.
            let rows = c.query(
                "SELECT text_hash, vector, used_at_ms FROM embeddings
                 WHERE model = $1 AND text_hash = ANY($2::bytea[])",
                &[&model, &list],
            )?;
            // Hash → the vector, and whether it is due to be marked used. A damaged row is left
            // out (a miss), and so is never marked.
            let mut hits: HashMap<[u8; 32], (Vec<f32>, bool)> = HashMap::new();
            for row in &rows {
                let (Ok(hash), Some(vector)) = (
                    <[u8; 32]>::try_from(row.get::<_, &[u8]>(0)),
                    decode(row.get(1)),
                ) else {
                    continue;
                };
                let used_at: i64 = row.get(2);
                hits.insert(hash, (vector, used_at < now - TOUCH_AFTER_MS));
            }
            let found = asked
                .iter()
                .map(|hash| hits.get(hash).map(|(vector, _)| vector.clone()))
                .collect();
            let stale: Vec<&[u8]> = hits
                .iter()
                .filter(|(_, (_, stale))| *stale)
                .map(|(hash, _)| hash.as_slice())
                .collect();
            if !stale.is_empty() {
                let touched = c.execute(
                    "UPDATE embeddings SET used_at_ms = $1
                     WHERE model = $2 AND text_hash = ANY($3::bytea[])",
                    &[&now, &model, &stale],
                );
                if let Err(e) = touched {
                    // The hits are good; only their age for pruning is not updated.
                    tracing::warn!(error = %e, "could not mark cached embeddings as used");
                }
            }
            Ok(found)
        })
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
        // One statement cannot update a row twice: of a hash given twice, the last vector
        // stands, as when SQLite's store writes them one after the other.
        let mut seen = HashSet::new();
        let (mut hashes, mut blobs) = (Vec::new(), Vec::new());
        for (hash, vector) in vectors.iter().rev() {
            if seen.insert(*hash) {
                hashes.push(*hash);
                blobs.push(encode(vector));
            }
        }
        let model = model.to_owned();
        self.pool.run(move |c| {
            let hashes: Vec<&[u8]> = hashes.iter().map(<[u8; 32]>::as_slice).collect();
            // One statement for the whole list: all or nothing, in one round trip.
            c.execute(
                "INSERT INTO embeddings (model, text_hash, vector, used_at_ms)
                 SELECT $1::TEXT, h, v, $4::BIGINT FROM unnest($2::bytea[], $3::bytea[]) AS t(h, v)
                 ON CONFLICT (model, text_hash)
                 DO UPDATE SET vector = EXCLUDED.vector, used_at_ms = EXCLUDED.used_at_ms",
                &[&model, &hashes, &blobs, &now],
            )?;
            Ok(())
        })
    }

    fn prune_embeddings(&self, keep_model: &str, older_than_ms: i64) -> Result<usize, StoreError> {
        let keep_model = keep_model.to_owned();
        self.pool.run(move |c| {
            // `used_at_ms` is a NOT NULL BIGINT here: no row has the damaged time SQLite's
            // store also deletes.
            let deleted = c.execute(
                "DELETE FROM embeddings WHERE model <> $1 OR used_at_ms < $2",
                &[&keep_model, &older_than_ms],
            )?;
            Ok(usize::try_from(deleted).unwrap_or(usize::MAX))
        })
    }
}

/// A vector as stored: its values as little-endian f32s, one after the other.
fn encode(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A stored vector, or `None` when the row is damaged: empty, not whole f32s, or a value that
/// is not finite.
fn decode(bytes: &[u8]) -> Option<Vec<f32>> {
    if bytes.is_empty() || !bytes.len().is_multiple_of(4) {
        return None;
    }
    let vector: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|chunk| chunk.try_into().ok().map(f32::from_le_bytes))
        .collect::<Option<_>>()?;
    vector.iter().all(|x| x.is_finite()).then_some(vector)
}

/// Now, in unix milliseconds (0 before 1970): the hub's clock, as SQLite's store uses, so that
/// both backends age rows alike.
fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .unwrap_or(0)
}
