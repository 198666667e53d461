//! `hub.json`, the discovery file: how the CLI, `capa mcp` and the desktop app find the hub that
//! runs for a data dir — and know that what listens at its address is that hub before they send
//! it the token.
//!
//! After a crash (or `kill -9`) the file stays behind, and whoever binds the port next would get
//! the token of every client that trusts the file. So each start writes a fresh proof key beside
//! the URL (the file is 0600 in the 0700 data dir, like the token); a client sends a random
//! challenge to [`PROVE_PATH`], without the token, and goes on only when the answer is the
//! HMAC of the challenge under that key. A listener that is not this start of the hub cannot
//! answer. A file whose port refuses connections, or whose listener fails the proof while the
//! recorded process is gone, is stale: removed, and no hub is running.

use std::path::Path;
use std::time::Duration;

use capa_core::HubPaths;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// The HTTP client for talking to a hub (no proxy, no redirects), shared with the bridge.
pub use capa_mcp::hub_client::client;

/// Where a hub proves it holds the discovery file's key: `GET /api/hub/prove?challenge=<hex>`.
pub const PROVE_PATH: &str = "/api/hub/prove";

/// Bytes of the per-start proof key and of a client's challenge.
const KEY_BYTES: usize = 32;

/// How long a client waits for the proof: the hub answers from memory, at once.
pub const PROVE_TIMEOUT: Duration = Duration::from_secs(3);

/// What a running hub writes to `hub.json` in its data dir.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DiscoveryFile {
    /// Base URL, `http://127.0.0.1:4477`.
    url: String,
    pid: u32,
    version: String,
    /// Hex; only this start of the hub holds it.
    proof_key: String,
}

/// A hub that proved it is the one the discovery file names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundHub {
    /// Base URL, `http://127.0.0.1:4477`.
    pub url: String,
    pub pid: u32,
    pub version: String,
}

/// The key a hub proves it holds, made fresh on every start.
pub(crate) struct ProofKey(Vec<u8>);

impl std::fmt::Debug for ProofKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProofKey(..)")
    }
}

impl ProofKey {
    /// None without system randomness (a guessable key would prove nothing).
    pub(crate) fn generate() -> Option<Self> {
        capa_core::digest::random_bytes(KEY_BYTES).map(Self)
    }

    fn hex(&self) -> String {
        capa_core::digest::hex(&self.0)
    }

    /// The answer to `challenge` from the hub at `url`.
    pub(crate) fn answer(&self, url: &str, challenge: &str) -> String {
        answer(&self.0, url, challenge)
    }
}

/// HMAC-SHA256 over the URL and the challenge: an answer for one address is no answer for
/// another.
fn answer(key: &[u8], url: &str, challenge: &str) -> String {
    let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(key) else {
        // HMAC takes keys of any length; this cannot happen, and an empty answer proves nothing.
        return String::new();
    };
    mac.update(b"capabilities hub proof\n");
    mac.update(url.as_bytes());
    mac.update(b"\n");
    mac.update(challenge.as_bytes());
    capa_core::digest::hex(&mac.finalize().into_bytes())
}

/// Whether `challenge` is what a client sends: hex, at least as long as a key.
pub(crate) fn valid_challenge(challenge: &str) -> bool {
    (KEY_BYTES * 2..=KEY_BYTES * 4).contains(&challenge.len())
        && challenge.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Writes `hub.json` for the hub listening at `url` (0600, in one step).
pub(crate) fn publish(paths: &HubPaths, url: &str, key: &ProofKey) -> std::io::Result<()> {
    let file = DiscoveryFile {
        url: url.to_owned(),
        pid: std::process::id(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        proof_key: key.hex(),
    };
    let text = serde_json::to_string_pretty(&file).map_err(std::io::Error::other)?;
    capa_core::write_private_file(&paths.discovery(), text.as_bytes())
}

/// Removes `hub.json` when it still names this process at `url` (a newer hub's file stays).
pub(crate) fn withdraw(paths: &HubPaths, url: &str) {
    if read(&paths.discovery()).is_some_and(|f| f.pid == std::process::id() && f.url == url) {
        let _ = std::fs::remove_file(paths.discovery());
    }
}

fn read(path: &Path) -> Option<DiscoveryFile> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// The hub that runs for this data dir, once it proved it holds this start's key. None when no
/// file is there, the file is stale (then it is removed), the listener did not prove itself
/// (then nothing secret was sent to it, and a warning says so), or the hub did not answer
/// ([`locate`] tells these apart).
pub async fn find(paths: &HubPaths) -> Option<FoundHub> {
    find_with(paths, &client(Some(PROVE_TIMEOUT))?).await
}

/// [`find`] with the caller's client, so that the token can follow on the connection the proof
/// used.
pub async fn find_with(paths: &HubPaths, client: &reqwest::Client) -> Option<FoundHub> {
    match locate_with(paths, client).await {
        Located::Proven { hub, .. } => Some(hub),
        _ => None,
    }
}

/// What answers at the address the discovery file names, if anything.
#[derive(Debug)]
#[non_exhaustive]
pub enum Located {
    /// The hub proved itself, in `took`.
    Proven { hub: FoundHub, took: Duration },
    /// No hub runs for this data dir: there is no discovery file, or it was stale (its process
    /// is gone, or its port refuses connections where the process cannot be checked) and has
    /// been removed.
    Absent,
    /// The file's process runs, but the hub did not answer its proof: busy or stuck.
    Silent { url: String, pid: u32, why: Silence },
    /// Something that is not this start of the hub answered; nothing secret was sent to it.
    NotTheHub { url: String },
}

/// How a running hub failed to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Silence {
    /// It took the connection but sent no answer within the wait.
    TimedOut,
    /// It closed the connection without an answer.
    Closed,
    /// Its port refuses connections although its process runs: its HTTP server has stopped.
    Refused,
}

/// [`find`], telling why no hub was found.
pub async fn locate(paths: &HubPaths) -> Located {
    match client(Some(PROVE_TIMEOUT)) {
        Some(client) => locate_with(paths, &client).await,
        None => Located::Absent,
    }
}

/// [`locate`] with the caller's client.
pub async fn locate_with(paths: &HubPaths, client: &reqwest::Client) -> Located {
    let path = paths.discovery();
    let Some(file) = read(&path) else {
        return Located::Absent;
    };
    if !loopback_url(&file.url) {
        tracing::warn!(file = %path.display(), url = %file.url, "the discovery file names an address that is not loopback; ignoring it");
        return Located::Absent;
    }
    let started = std::time::Instant::now();
    let proof = prove(client, &file).await;
    let took = started.elapsed();
    // The file is written after its hub started: a process that started later only reuses the pid.
    let alive = written_ms(&path).map_or_else(
        || capa_core::process::alive(file.pid),
        |written| capa_core::process::alive_since(file.pid, written),
    );
    let silent = |why| Located::Silent {
        url: file.url.clone(),
        pid: file.pid,
        why,
    };
    match proof {
        Proof::Proven => Located::Proven {
            hub: FoundHub {
                url: file.url.clone(),
                pid: file.pid,
                version: file.version.clone(),
            },
            took,
        },
        // Linux can tell from the pid whether the hub is gone; elsewhere a refused port is taken
        // as gone, as before (`alive` cannot be trusted there).
        Proof::NobodyListens if alive && cfg!(target_os = "linux") => silent(Silence::Refused),
        Proof::NobodyListens => {
            remove_stale(&path, &file);
            Located::Absent
        }
        Proof::Failed => {
            tracing::warn!(url = %file.url, file = %path.display(), "what listens at the hub's address did not prove it is the hub; not sending it the token");
            if !alive {
                remove_stale(&path, &file);
            }
            Located::NotTheHub {
                url: file.url.clone(),
            }
        }
        Proof::Unanswered(e) => {
            tracing::warn!(url = %file.url, error = %e, "the hub named in the discovery file did not answer its proof");
            if !alive {
                remove_stale(&path, &file);
                return Located::Absent;
            }
            silent(if e.is_timeout() {
                Silence::TimedOut
            } else {
                Silence::Closed
            })
        }
    }
}

/// When the discovery file was last written, in epoch milliseconds.
fn written_ms(path: &Path) -> Option<i64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let since_epoch = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(since_epoch.as_millis()).ok()
}

/// Whether the hub found earlier still runs there: its process is alive (Linux), else it
/// proves itself again. `capa mcp` forwarding asks before every request, since after the hub
/// stops anyone may take its port.
pub async fn still_running(paths: &HubPaths, hub: &FoundHub) -> bool {
    if cfg!(target_os = "linux") {
        return capa_core::process::alive(hub.pid);
    }
    find(paths).await.is_some_and(|now| now == *hub)
}

enum Proof {
    Proven,
    NobodyListens,
    Failed,
    Unanswered(reqwest::Error),
}

async fn prove(client: &reqwest::Client, file: &DiscoveryFile) -> Proof {
    let Some(challenge) = capa_core::digest::random_hex(KEY_BYTES) else {
        return Proof::Failed;
    };
    let response = client
        .get(format!("{}{PROVE_PATH}?challenge={challenge}", file.url))
        .timeout(PROVE_TIMEOUT)
        .send()
        .await;
    let response = match response {
        Ok(response) => response,
        Err(e) if e.is_connect() => return Proof::NobodyListens,
        Err(e) => return Proof::Unanswered(e),
    };
    let given = response
        .json::<serde_json::Value>()
        .await
        .ok()
        .and_then(|v| v["proof"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let key = decode_hex(&file.proof_key).unwrap_or_default();
    if key.len() >= KEY_BYTES && crate::token::matches(&answer(&key, &file.url, &challenge), &given)
    {
        Proof::Proven
    } else {
        Proof::Failed
    }
}

fn remove_stale(path: &Path, file: &DiscoveryFile) {
    tracing::info!(file = %path.display(), pid = file.pid, "removing a stale discovery file (its hub is gone)");
    // Only the file as read: a hub that started meanwhile has written a new one.
    if read(path).is_some_and(|now| now.pid == file.pid && now.proof_key == file.proof_key) {
        let _ = std::fs::remove_file(path);
    }
}

/// `http://127.0.0.1:<port>` or `http://[::1]:<port>`, and nothing else.
fn loopback_url(url: &str) -> bool {
    url.strip_prefix("http://")
        .and_then(|authority| authority.parse::<std::net::SocketAddr>().ok())
        .is_some_and(|addr| addr.ip().is_loopback())
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_depends_on_key_address_and_challenge() {
        let key = ProofKey::generate().expect("randomness");
        let other = ProofKey::generate().expect("randomness");
        let url = "http://127.0.0.1:4477";
        let challenge = "ab".repeat(32);
        let proof = key.answer(url, &challenge);
        assert_eq!(
            proof,
            answer(&decode_hex(&key.hex()).expect("hex"), url, &challenge)
        );
        assert_ne!(proof, other.answer(url, &challenge));
        assert_ne!(proof, key.answer("http://127.0.0.1:4478", &challenge));
        assert_ne!(proof, key.answer(url, &"cd".repeat(32)));
    }

    #[test]
    fn only_loopback_urls_and_hex_challenges_are_taken() {
        assert!(loopback_url("http://127.0.0.1:4477"));
        assert!(loopback_url("http://[::1]:4477"));
        assert!(!loopback_url("http://10.0.0.2:4477"));
        assert!(!loopback_url("https://127.0.0.1:4477"));
        assert!(!loopback_url("http://127.0.0.1:4477/x"));
        assert!(valid_challenge(&"a".repeat(64)));
        assert!(!valid_challenge(&"a".repeat(63)));
        assert!(!valid_challenge(&"g".repeat(64)));
        assert!(!valid_challenge(&"a".repeat(129)));
    }
}
