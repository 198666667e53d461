//! Ids of runs and of the inputs they wait for: a prefix and 16 random hex digits. The system's
//! randomness is read here and for a run's seed, nowhere else in the runner: what a run computes
//! must come from its recorded seed and clock, so that a replay is the same run.

use capa_domain::clock::now_ms;

/// 64 random bits; the clock when the system gives no randomness (an id must exist; it is not a
/// secret).
#[expect(
    clippy::disallowed_methods,
    reason = "the one place the runner reads system randomness: ids, and the seed the run records"
)]
fn random_u64() -> u64 {
    getrandom::u64().unwrap_or_else(|_| now_ms().unsigned_abs())
}

/// `run_` and 16 random hex digits.
pub(crate) fn new_run_id() -> String {
    format!("run_{:016x}", random_u64())
}

/// `apr_` and 16 random hex digits.
pub fn new_approval_id() -> String {
    format!("apr_{:016x}", random_u64())
}

/// `h_` and 32 random hex digits: a handle of a kept result, 128 bits that a run of another
/// client cannot guess. `None` when the system gives no randomness: unlike a run id, a handle
/// is what guards the result, so it never falls back to the clock.
#[expect(
    clippy::disallowed_methods,
    reason = "a handle is a bearer name: it must be random, not the run's seeded randomness"
)]
pub(crate) fn new_handle_id() -> Option<String> {
    let mut bits = [0u8; 16];
    getrandom::fill(&mut bits).ok()?;
    Some(format!("h_{:032x}", u128::from_be_bytes(bits)))
}

/// A fresh run's seed for its guest `Math.random`.
pub(crate) fn new_seed() -> u64 {
    random_u64()
}
