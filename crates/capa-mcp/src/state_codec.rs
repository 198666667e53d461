//! The codec that seals and opens `requestState`, following the hub's keys: a person's hub has
//! one (legacy `rs1` states, no key id); a team hub's replicas share rotating generations, so a
//! state names the generation that sealed it (`rs2`) and opens on any replica while that
//! generation is kept (capa-core's `state_keys.rs`, `STATE_KEY_ROTATION`).

use std::sync::{Arc, Mutex};

use capa_core::{Hub, StateKeys};
use rmcp::model::{RequestStateCodec, RequestStateError};

pub(crate) struct StateCodec {
    hub: Arc<Hub>,
    /// The codec made for the keys it was made from, until the hub's keys change.
    made: Mutex<Option<(Arc<StateKeys>, Arc<RequestStateCodec>)>>,
}

impl std::fmt::Debug for StateCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateCodec").finish_non_exhaustive()
    }
}

impl StateCodec {
    pub(crate) fn new(hub: Arc<Hub>) -> Self {
        Self {
            hub,
            made: Mutex::new(None),
        }
    }

    /// The codec for the hub's keys now; `None` (logged) when they make none.
    pub(crate) fn get(&self) -> Option<Arc<RequestStateCodec>> {
        let keys = self.hub.runs().state_keys();
        let mut made = self
            .made
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((from, codec)) = made.as_ref()
            && Arc::ptr_eq(from, &keys)
        {
            return Some(codec.clone());
        }
        let codec = Arc::new(
            codec_for(&keys)
                .map_err(|e| tracing::error!(error = %e, "no requestState codec; 2026-07-28 clients get awaiting_approval and a source's requests to them are refused"))
                .ok()?,
        );
        *made = Some((keys, codec.clone()));
        Some(codec)
    }

    /// Opens `sealed` (bound to `bound`). A state naming a generation this replica has not read
    /// yet (another replica rotated since its last look, within `LEASE_RENEW_EVERY`) makes it
    /// read the keys again, once, before it is refused.
    pub(crate) fn open_json_with<T: serde::de::DeserializeOwned>(
        &self,
        sealed: &str,
        bound: &[u8],
    ) -> Result<T, RequestStateError> {
        let codec = self.get().ok_or(RequestStateError::UnknownKeyId)?;
        match codec.open_json_with(sealed, bound) {
            Err(RequestStateError::UnknownKeyId)
                if matches!(*self.hub.runs().state_keys(), StateKeys::Shared(_)) =>
            {
                self.hub
                    .runs()
                    .rotate_state_keys(capa_core::STATE_KEY_ROTATION);
                let codec = self.get().ok_or(RequestStateError::UnknownKeyId)?;
                codec.open_json_with(sealed, bound)
            }
            opened => opened,
        }
    }
}

fn codec_for(keys: &StateKeys) -> Result<RequestStateCodec, RequestStateError> {
    match keys {
        StateKeys::Local(key) => RequestStateCodec::try_new(key.clone()),
        StateKeys::Shared(generations) => {
            let active = generations
                .first()
                .map(|k| k.generation.to_string())
                .unwrap_or_default();
            let ring = generations
                .iter()
                .map(|k| (k.generation.to_string(), k.key.clone()));
            let codec = RequestStateCodec::new_with_keyring(active, ring)?;
            // A replica from before rotation sealed `rs1` states with the key now generation 0.
            if generations.iter().any(|k| k.generation == 0) {
                codec.with_rs1_fallback("0")
            } else {
                Ok(codec)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use capa_store::SharedKey;

    use super::*;

    fn generation(generation: u64, byte: u8) -> SharedKey {
        SharedKey {
            generation,
            key: vec![byte; 32],
            created_at_ms: 0,
        }
    }

    #[test]
    fn a_state_opens_while_the_generation_that_sealed_it_is_kept() {
        let before = codec_for(&StateKeys::Shared(vec![generation(0, 1)])).expect("codec");
        let rotated =
            codec_for(&StateKeys::Shared(vec![generation(1, 2), generation(0, 1)])).expect("codec");
        let retired = codec_for(&StateKeys::Shared(vec![generation(1, 2)])).expect("codec");
        let old = before.seal(b"sealed by generation 0");
        let new = rotated.seal(b"sealed by generation 1");
        assert_eq!(
            rotated.open(&old).expect("old opens"),
            b"sealed by generation 0"
        );
        assert_eq!(
            retired.open(&new).expect("new opens"),
            b"sealed by generation 1"
        );
        assert!(
            retired.open(&old).is_err(),
            "a retired generation's state is refused"
        );
        assert!(
            before.open(&new).is_err(),
            "a generation this replica has not read yet"
        );
        // A state a replica before rotation sealed (one key, no key id) is generation 0's.
        let legacy = RequestStateCodec::try_new(vec![1; 32])
            .expect("codec")
            .seal(b"legacy");
        assert_eq!(rotated.open(&legacy).expect("legacy opens"), b"legacy");
        assert!(retired.open(&legacy).is_err());
    }
}
