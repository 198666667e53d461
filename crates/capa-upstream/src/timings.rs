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
}

impl Default for SupervisorTimings {
    fn default() -> Self {
        Self {
            min_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(30),
            healthy_after: Duration::from_mins(1),
            list_timeout: Duration::from_secs(30),
        }
    }
}
