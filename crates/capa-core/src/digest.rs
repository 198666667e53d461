//! SHA-256 digests as lower-case hex: what a pending call asks, and which `requestState`
//! values were used.

use sha2::{Digest, Sha256};

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

pub use capa_domain::hex::lower_hex as hex;

/// `count` random bytes from the system; none without system randomness (callers fail closed:
/// a secret guessable from the clock is no secret).
pub fn random_bytes(count: usize) -> Option<Vec<u8>> {
    let mut buffer = vec![0u8; count];
    getrandom::fill(&mut buffer).ok()?;
    Some(buffer)
}

/// [`random_bytes`] as hex.
pub fn random_hex(bytes: usize) -> Option<String> {
    random_bytes(bytes).map(|b| hex(&b))
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_digest() {
        assert_eq!(
            super::sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
