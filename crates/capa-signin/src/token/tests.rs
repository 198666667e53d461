//! Tokens made and signed here with P-256 keys (aws-lc-rs), checked as a provider's would be.

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;

use super::*;
use crate::jwk::parse_set;

const ISSUER: &str = "http://127.0.0.1:9999";
const HUB: &str = "http://127.0.0.1:4400/mcp";
const NOW: f64 = 1_800_000_000.0;

struct Signer {
    pair: EcdsaKeyPair,
    kid: &'static str,
}

impl Signer {
    fn new(kid: &'static str) -> Self {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .expect("a key");
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref())
            .expect("the key reads");
        Self { pair, kid }
    }

    fn jwk(&self) -> serde_json::Value {
        let point = self.pair.public_key().as_ref();
        json!({
            "kty": "EC", "crv": "P-256", "kid": self.kid, "alg": "ES256", "use": "sig",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        })
    }

    fn token(&self, header: &serde_json::Value, claims: &serde_json::Value) -> String {
        let signed = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&SystemRandom::new(), signed.as_bytes())
            .expect("signs");
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
    }

    fn sign(&self, claims: &serde_json::Value) -> String {
        self.token(
            &json!({"alg": "ES256", "kid": self.kid, "typ": "at+jwt"}),
            claims,
        )
    }
}

fn claims() -> serde_json::Value {
    json!({
        "iss": ISSUER, "sub": "alice", "aud": HUB, "exp": NOW + 600.0, "iat": NOW,
        "email": "alice@example.com", "client_id": "mcp-client",
    })
}

fn verify(token: &str, keys: &[Key]) -> Result<Person, Refusal> {
    let expected = Expected {
        issuer: ISSUER,
        audience: HUB,
        now: NOW,
    };
    check(&parse(token)?, keys, &expected)
}

fn keys_of(signers: &[&Signer]) -> Vec<Key> {
    let set = json!({"keys": signers.iter().map(|s| s.jwk()).collect::<Vec<_>>()});
    parse_set(set.to_string().as_bytes()).expect("a set")
}

#[test]
fn a_token_of_the_provider_for_this_hub_names_its_person() {
    let signer = Signer::new("k1");
    let person = verify(&signer.sign(&claims()), &keys_of(&[&signer])).expect("accepted");
    assert_eq!(person.subject, "alice");
    assert_eq!(person.email.as_deref(), Some("alice@example.com"));
    assert_eq!(person.client_id.as_deref(), Some("mcp-client"));
    // An audience list that includes the hub is fine too.
    let mut listed = claims();
    listed["aud"] = json!(["https://other.example", HUB]);
    assert!(verify(&signer.sign(&listed), &keys_of(&[&signer])).is_ok());
}

#[test]
fn wrong_audience_other_issuer_expired_and_early_tokens_are_refused() {
    let signer = Signer::new("k1");
    let keys = keys_of(&[&signer]);
    let with = |key: &str, value: serde_json::Value| {
        let mut c = claims();
        c[key] = value;
        verify(&signer.sign(&c), &keys)
    };
    assert_eq!(
        with("aud", json!("http://127.0.0.1:4400/other")),
        Err(Refusal::Audience)
    );
    assert_eq!(with("aud", json!([])), Err(Refusal::Audience));
    assert_eq!(
        with("iss", json!("http://evil.example")),
        Err(Refusal::Issuer("http://evil.example".into()))
    );
    assert_eq!(
        with("exp", json!(NOW - CLOCK_LEEWAY_SECS - 1.0)),
        Err(Refusal::Expired)
    );
    assert!(with("exp", json!(NOW - 1.0)).is_ok(), "within the leeway");
    assert_eq!(with("exp", serde_json::Value::Null), Err(Refusal::Expired));
    // A token's own text is shown without control characters (it goes into a header and
    // the log), and cut.
    assert_eq!(
        with("iss", json!("http://evil\r\nSet-Cookie: x")),
        Err(Refusal::Issuer("http://evilSet-Cookie: x".into()))
    );
    let Err(Refusal::Issuer(long)) = with("iss", json!("x".repeat(5000))) else {
        panic!("refused");
    };
    assert_eq!(long.chars().count(), 101);
    assert_eq!(with("nbf", json!(NOW + 60.0)), Err(Refusal::NotYet));
    assert_eq!(with("sub", json!("")), Err(Refusal::NoSubject));
}

#[test]
fn a_signature_by_another_key_or_a_weak_algorithm_is_refused() {
    let (ours, theirs) = (Signer::new("k1"), Signer::new("k1"));
    let keys = keys_of(&[&ours]);
    // Same key id, another key: the signature does not hold.
    assert_eq!(
        verify(&theirs.sign(&claims()), &keys),
        Err(Refusal::Signature)
    );
    // A key id the provider does not publish.
    let stranger = Signer::new("k9");
    assert_eq!(
        verify(&stranger.sign(&claims()), &keys),
        Err(Refusal::UnknownKey)
    );
    // `none` and a shared-secret algorithm are refused before any key is looked at.
    let unsigned = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(json!({"alg": "none"}).to_string()),
        URL_SAFE_NO_PAD.encode(claims().to_string())
    );
    assert_eq!(
        verify(&unsigned, &keys),
        Err(Refusal::Algorithm("none".into()))
    );
    let hs = ours.token(&json!({"alg": "HS256", "kid": "k1"}), &claims());
    assert_eq!(verify(&hs, &keys), Err(Refusal::Algorithm("HS256".into())));
    // An ES256 key never checks an RS256 signature, whatever the header says.
    let confused = ours.token(&json!({"alg": "RS256", "kid": "k1"}), &claims());
    assert_eq!(verify(&confused, &keys), Err(Refusal::Signature));
    // Claims changed after signing.
    let token = ours.sign(&claims());
    let mut forged: Vec<&str> = token.split('.').collect();
    let mut changed = claims();
    changed["sub"] = json!("mallory");
    let payload = URL_SAFE_NO_PAD.encode(changed.to_string());
    forged[1] = &payload;
    assert_eq!(verify(&forged.join("."), &keys), Err(Refusal::Signature));
}

#[test]
fn garbage_is_malformed_not_a_panic() {
    let keys = keys_of(&[&Signer::new("k1")]);
    for token in ["", ".", "a.b", "a.b.c.d", "!!.!!.!!", "e30.e30.e30"] {
        assert!(verify(token, &keys).is_err(), "{token}");
    }
    let deep = format!("{}.e30.AA", URL_SAFE_NO_PAD.encode("[".repeat(100_000)));
    assert_eq!(verify(&deep, &keys), Err(Refusal::Malformed));
}
