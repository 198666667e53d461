//! How long the supervisor waits: between reconnects, before a connection counts as healthy, and
//! for a tool listing. The hub uses the defaults; tests pass their own, so that the supervisor's
//! behaviour can be checked on tokio's paused clock instead of the wall clock.

use std::time::Duration;

/// The supervisor's waits. [`Default`] is what the hub runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SupervisorTimings {
    /// First wait before reconnecting; each failure in a row doubles it up to `max_backoff`.
    pub min_backoff: Duration,
    /// The longest wait before reconnecting.
    pub max_backoff: Duration,
    /// A connection that lived longer than this resets the wait to `min_backoff`.
    pub healthy_after: Duration,
    /// Bound on listing tools after connecting or on a change notification.
    pub list_timeout: Duration,
    /// Failures in a row (a start that failed, or a connection that ended before
    /// `healthy_after`) after which the supervisor stops starting a local command again: one
    /// that failed this often will not mend itself, and a person fixes it and restarts it. A
    /// remote source is still tried, every `long_backoff`: the network may come back.
    pub give_up_after: u32,
    /// The wait between tries of a remote source past `give_up_after` failures in a row.
    pub long_backoff: Duration,
}

impl Default for SupervisorTimings {
    fn default() -> Self {
        Self {
            min_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(30),
            healthy_after: Duration::from_mins(1),
            list_timeout: Duration::from_secs(30),
            // 0.25 + 0.5 + 1 + 2 + 4 + 8 + 16 + 30 s: about a minute of trying.
            give_up_after: 8,
            long_backoff: Duration::from_mins(5),
        }
    }
}
