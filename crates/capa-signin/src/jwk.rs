//! The provider's published keys (a JWK Set, RFC 7517) as keys that check signatures.
//!
//! Only public signing keys of the algorithms [`Algorithm`] names are kept; a key for
//! encryption (`use: enc`), of another type, or with parameters that do not parse is skipped, so
//! one odd key does not hide the others.

use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED, ED25519, RSA_PKCS1_2048_8192_SHA256, RSA_PSS_2048_8192_SHA256,
    RsaPublicKeyComponents, UnparsedPublicKey,
};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;

/// The signature algorithms a token may use (JWS `alg`). `none` and the shared-secret ones
/// (`HS256`, …) are not among them: a token signed with a secret the hub could also hold
/// proves nothing about the provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Rs256,
    Ps256,
    Es256,
    EdDsa,
}

impl Algorithm {
    /// The algorithm a JWS header names, if it is one the hub accepts.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "RS256" => Some(Self::Rs256),
            "PS256" => Some(Self::Ps256),
            "ES256" => Some(Self::Es256),
            "EdDSA" => Some(Self::EdDsa),
            _ => None,
        }
    }
}

/// One public key, as its type needs it.
#[derive(Debug, Clone)]
enum Material {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// An uncompressed P-256 point: `04 ‖ x ‖ y`.
    P256(Vec<u8>),
    Ed25519(Vec<u8>),
}

/// A key of the provider's set.
#[derive(Debug, Clone)]
pub(crate) struct Key {
    /// The key's id (`kid`), which a token's header names.
    pub(crate) id: Option<String>,
    /// The one algorithm the key is for, when the set says (`alg`).
    alg: Option<Algorithm>,
    material: Material,
}

impl Key {
    /// Whether `signature` over `message` was made with this key's private half, by `alg`.
    /// A key of another type than the algorithm's, or one whose set names another algorithm,
    /// never verifies.
    pub(crate) fn verifies(&self, alg: Algorithm, message: &[u8], signature: &[u8]) -> bool {
        if self.alg.is_some_and(|own| own != alg) {
            return false;
        }
        match (&self.material, alg) {
            (Material::Rsa { n, e }, Algorithm::Rs256) => RsaPublicKeyComponents { n, e }
                .verify(&RSA_PKCS1_2048_8192_SHA256, message, signature)
                .is_ok(),
            (Material::Rsa { n, e }, Algorithm::Ps256) => RsaPublicKeyComponents { n, e }
                .verify(&RSA_PSS_2048_8192_SHA256, message, signature)
                .is_ok(),
            (Material::P256(point), Algorithm::Es256) => {
                UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
                    .verify(message, signature)
                    .is_ok()
            }
            (Material::Ed25519(x), Algorithm::EdDsa) => UnparsedPublicKey::new(&ED25519, x)
                .verify(message, signature)
                .is_ok(),
            _ => false,
        }
    }
}

/// A JWK as published; every field optional so that any key parses and the odd ones are
/// skipped by [`parse_set`].
#[derive(Deserialize)]
struct RawKey {
    kty: Option<String>,
    kid: Option<String>,
    alg: Option<String>,
    #[serde(rename = "use")]
    usage: Option<String>,
    crv: Option<String>,
    n: Option<String>,
    e: Option<String>,
    x: Option<String>,
    y: Option<String>,
}

#[derive(Deserialize)]
struct RawSet {
    keys: Vec<serde_json::Value>,
}

fn decode(part: Option<&String>) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD
        .decode(part?.trim_end_matches('=').as_bytes())
        .ok()
}

fn key_of(raw: RawKey) -> Option<Key> {
    if raw.usage.as_deref().is_some_and(|u| u != "sig") {
        return None;
    }
    let alg = match raw.alg.as_deref() {
        None => None,
        Some(name) => Some(Algorithm::from_name(name)?),
    };
    let material = match (raw.kty.as_deref()?, raw.crv.as_deref()) {
        ("RSA", _) => Material::Rsa {
            n: decode(raw.n.as_ref())?,
            e: decode(raw.e.as_ref())?,
        },
        ("EC", Some("P-256")) => {
            let (x, y) = (decode(raw.x.as_ref())?, decode(raw.y.as_ref())?);
            if x.len() != 32 || y.len() != 32 {
                return None;
            }
            let mut point = Vec::with_capacity(65);
            point.push(4);
            point.extend_from_slice(&x);
            point.extend_from_slice(&y);
            Material::P256(point)
        }
        ("OKP", Some("Ed25519")) => Material::Ed25519(decode(raw.x.as_ref())?),
        _ => return None,
    };
    Some(Key {
        id: raw.kid,
        alg,
        material,
    })
}

/// The signing keys of a JWK Set document; `None` when it is not one.
pub(crate) fn parse_set(body: &[u8]) -> Option<Vec<Key>> {
    let set: RawSet = serde_json::from_slice(body).ok()?;
    Some(
        set.keys
            .into_iter()
            .filter_map(|k| serde_json::from_value::<RawKey>(k).ok())
            .filter_map(key_of)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_keys_are_skipped_and_the_rest_kept() {
        let set = br#"{"keys":[
            {"kty":"RSA","kid":"r1","n":"AQAB","e":"AQAB"},
            {"kty":"RSA","kid":"enc","use":"enc","n":"AQAB","e":"AQAB"},
            {"kty":"oct","kid":"secret","k":"c2VjcmV0"},
            {"kty":"RSA","kid":"hs","alg":"HS256","n":"AQAB","e":"AQAB"},
            {"kty":"EC","kid":"short","crv":"P-256","x":"AQAB","y":"AQAB"},
            "not a key"
        ]}"#;
        let keys = parse_set(set).expect("a set");
        let ids: Vec<_> = keys.iter().filter_map(|k| k.id.as_deref()).collect();
        assert_eq!(ids, ["r1"]);
        assert!(parse_set(b"{\"keys\": 3}").is_none());
        assert!(parse_set(b"[]").is_none());
    }
}
