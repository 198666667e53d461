//! Keys every replica of a team hub shares (capa-store's keys.rs), kept in the database: a
//! fixed key (the bearer token) is one row named after it, the first replica's standing; a
//! rotating key (the `requestState` key) is one row per generation, named `family@N` (a row
//! named `family` alone, as hubs before rotation wrote, counts as generation 0).

use capa_store::{KeyStore, Rotation, SharedKey, StoreError};

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

    fn rotating_keys(
        &self,
        family: &str,
        candidate: &[u8],
        rotation: Rotation,
    ) -> Result<Option<Vec<SharedKey>>, StoreError> {
        let (family, candidate) = (family.to_owned(), candidate.to_vec());
        self.pool.run(move |c| {
            let mut tx = c.transaction()?;
            // Replicas rotate one at a time, so two that find the key old at once make one
            // generation, not two. Reads of fixed keys go on beside.
            tx.batch_execute("LOCK TABLE shared_keys IN SHARE ROW EXCLUSIVE MODE")?;
            // Ages on the database's clock: every replica measures against the same one.
            let now: i64 = tx
                .query_one("SELECT (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT", &[])?
                .get(0);
            let mut keys = Vec::new();
            for row in tx.query("SELECT name, key, created_at_ms FROM shared_keys", &[])? {
                let name: String = row.get(0);
                if let Some(generation) = generation_of(&family, &name) {
                    keys.push((
                        name,
                        SharedKey {
                            generation,
                            key: row.get(1),
                            created_at_ms: row.get(2),
                        },
                    ));
                }
            }
            keys.sort_by_key(|(_, key)| std::cmp::Reverse(key.generation));
            let stale = keys
                .first()
                .is_none_or(|(_, newest)| now - newest.created_at_ms >= rotation.every_ms);
            if stale {
                let generation = keys.first().map_or(0, |(_, newest)| newest.generation + 1);
                let name = format!("{family}@{generation}");
                tx.execute(
                    "INSERT INTO shared_keys (name, key, created_at_ms) VALUES ($1, $2, $3)",
                    &[&name, &candidate, &now],
                )?;
                keys.insert(
                    0,
                    (
                        name,
                        SharedKey {
                            generation,
                            key: candidate,
                            created_at_ms: now,
                        },
                    ),
                );
            }
            // A generation stops signing when the next one is made; what it signed lives at most
            // `accept_ms` after that.
            let mut kept = Vec::with_capacity(keys.len());
            let mut replaced_at = None;
            for (name, key) in keys {
                if replaced_at.is_some_and(|at: i64| now - at > rotation.accept_ms) {
                    tx.execute("DELETE FROM shared_keys WHERE name = $1", &[&name])?;
                } else {
                    replaced_at = Some(key.created_at_ms);
                    kept.push(key);
                }
            }
            tx.commit()?;
            Ok(Some(kept))
        })
    }
}

/// The generation `name` holds of `family`'s key, if it is one.
fn generation_of(family: &str, name: &str) -> Option<u64> {
    let rest = name.strip_prefix(family)?;
    if rest.is_empty() {
        return Some(0);
    }
    rest.strip_prefix('@')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::generation_of;

    #[test]
    fn names_a_generation_only_of_its_own_family() {
        assert_eq!(generation_of("request_state", "request_state"), Some(0));
        assert_eq!(generation_of("request_state", "request_state@7"), Some(7));
        assert_eq!(generation_of("request_state", "request_state@x"), None);
        assert_eq!(generation_of("request_state", "request_states@1"), None);
        assert_eq!(generation_of("request_state", "http_token"), None);
    }
}
