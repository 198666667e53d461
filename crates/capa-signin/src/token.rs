//! An access token (a JWT, RFC 9068's profile) checked as a protected resource must: signed by
//! one of the provider's keys with an algorithm the hub accepts, issued by the provider the hub
//! trusts, meant for this hub (its resource URL among the audiences), and valid now.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;

use crate::jwk::{Algorithm, Key};

/// How far the hub's clock and the provider's may disagree, in seconds.
pub const CLOCK_LEEWAY_SECS: f64 = 5.0;
/// The longest token the hub reads: provider tokens are a few KB.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// Why a token was refused. The message is for the client's `error_description` and logs: it
/// never repeats the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the token is not a signed JWT")]
    Malformed,
    #[error("the token's signing algorithm `{0}` is not accepted (RS256, PS256, ES256, EdDSA are)")]
    Algorithm(String),
    #[error("the token was signed by a key the provider does not publish")]
    UnknownKey,
    #[error("the token's signature does not verify")]
    Signature,
    #[error("the token was issued by `{0}`, not by this hub's provider")]
    Issuer(String),
    #[error(
        "the token is not meant for this hub (its audience does not include the hub's resource URL)"
    )]
    Audience,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet")]
    NotYet,
    #[error("the token names no subject (`sub`)")]
    NoSubject,
}

/// What the hub learned of the person from a token that passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    /// The provider's id for the person (`sub`); stable, never reassigned.
    pub subject: String,
    /// `email`, when the provider put it in the token.
    pub email: Option<String>,
    /// `name`, when the provider put it in the token.
    pub name: Option<String>,
    /// The OAuth client the person signed in with (`client_id`), when named.
    pub client_id: Option<String>,
}

/// What a token must match.
#[derive(Debug, Clone)]
pub(crate) struct Expected<'a> {
    pub(crate) issuer: &'a str,
    /// The hub's resource URL (RFC 8707), e.g. `https://capa.example.com/mcp`.
    pub(crate) audience: &'a str,
    /// Seconds since the Unix epoch.
    pub(crate) now: f64,
}

#[derive(Deserialize)]
struct Header {
    alg: String,
    kid: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
struct Claims {
    iss: Option<String>,
    sub: Option<String>,
    aud: Option<Audience>,
    exp: Option<f64>,
    nbf: Option<f64>,
    email: Option<String>,
    name: Option<String>,
    client_id: Option<String>,
}

/// The parts of a compact JWS, decoded.
pub(crate) struct Parsed {
    pub(crate) alg: Algorithm,
    pub(crate) kid: Option<String>,
    signed: Vec<u8>,
    signature: Vec<u8>,
    claims: Vec<u8>,
}

fn part(text: &str) -> Result<Vec<u8>, Refusal> {
    URL_SAFE_NO_PAD
        .decode(text.as_bytes())
        .map_err(|_| Refusal::Malformed)
}

/// Splits and decodes a compact JWS (`header.claims.signature`), checking the algorithm.
pub(crate) fn parse(token: &str) -> Result<Parsed, Refusal> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(Refusal::Malformed);
    }
    let mut parts = token.split('.');
    let (Some(header), Some(claims), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Refusal::Malformed);
    };
    let head: Header = serde_json::from_slice(&part(header)?).map_err(|_| Refusal::Malformed)?;
    let alg = Algorithm::from_name(&head.alg).ok_or(Refusal::Algorithm(head.alg))?;
    Ok(Parsed {
        alg,
        kid: head.kid,
        signed: token.as_bytes()[..header.len() + 1 + claims.len()].to_vec(),
        signature: part(signature)?,
        claims: part(claims)?,
    })
}

/// A value from a token as an error may show it (in a header, in the log): printable
/// characters only, at most 100 of them.
fn shown(value: &str) -> String {
    let mut shown: String = value
        .chars()
        .filter(|c| !c.is_control())
        .take(100)
        .collect();
    if value.chars().count() > 100 {
        shown.push('…');
    }
    shown
}

/// Checks a parsed token against the provider's `keys` and what it must match.
pub(crate) fn check(
    parsed: &Parsed,
    keys: &[Key],
    expected: &Expected<'_>,
) -> Result<Person, Refusal> {
    // A token naming its key is checked against that key only; one that names none, against
    // every key (a provider with one key often leaves `kid` out).
    let candidates: Vec<&Key> = keys
        .iter()
        .filter(|k| parsed.kid.is_none() || k.id == parsed.kid)
        .collect();
    if candidates.is_empty() {
        return Err(Refusal::UnknownKey);
    }
    if !candidates
        .iter()
        .any(|k| k.verifies(parsed.alg, &parsed.signed, &parsed.signature))
    {
        return Err(Refusal::Signature);
    }
    // Only a token whose signature holds is read further.
    let claims: Claims = serde_json::from_slice(&parsed.claims).map_err(|_| Refusal::Malformed)?;
    let issuer = claims.iss.unwrap_or_default();
    if issuer != expected.issuer {
        return Err(Refusal::Issuer(shown(&issuer)));
    }
    let meant_here = match &claims.aud {
        Some(Audience::One(aud)) => aud == expected.audience,
        Some(Audience::Many(auds)) => auds.iter().any(|a| a == expected.audience),
        None => false,
    };
    if !meant_here {
        return Err(Refusal::Audience);
    }
    // An access token without an expiry would be good forever: refused as expired.
    match claims.exp {
        Some(exp) if exp + CLOCK_LEEWAY_SECS > expected.now => {}
        _ => return Err(Refusal::Expired),
    }
    if claims
        .nbf
        .is_some_and(|nbf| nbf - CLOCK_LEEWAY_SECS > expected.now)
    {
        return Err(Refusal::NotYet);
    }
    let subject = claims
        .sub
        .filter(|s| !s.is_empty())
        .ok_or(Refusal::NoSubject)?;
    Ok(Person {
        subject,
        email: claims.email,
        name: claims.name,
        client_id: claims.client_id,
    })
}

#[cfg(test)]
mod tests;
