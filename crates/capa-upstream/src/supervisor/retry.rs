//! When the supervisor tries a source again after an attempt ended: the wait doubles from
//! `min_backoff` up to `max_backoff` and starts over after a healthy run; past `give_up_after`
//! failures in a row a local command is not tried again, and a remote source is tried every
//! `long_backoff`. Pure, so the schedule is unit-tested apart from any server.

use std::time::Duration;

use crate::timings::SupervisorTimings;

/// What to do after an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// Try again after this wait.
    Wait(Duration),
    /// Stop trying: this many failures in a row.
    GiveUp(u32),
}

pub(super) struct Retry {
    timings: SupervisorTimings,
    backoff: Duration,
    failures_in_a_row: u32,
}

impl Retry {
    pub(super) fn new(timings: SupervisorTimings) -> Self {
        Self {
            timings,
            backoff: timings.min_backoff,
            failures_in_a_row: 0,
        }
    }

    /// An attempt that ran for `ran_for` has ended; `local`: the source is a command on this
    /// machine.
    pub(super) fn after_attempt(&mut self, ran_for: Duration, local: bool) -> Next {
        if ran_for > self.timings.healthy_after {
            self.backoff = self.timings.min_backoff;
            self.failures_in_a_row = 0;
        }
        self.failures_in_a_row = self.failures_in_a_row.saturating_add(1);
        let mut wait = self.backoff;
        if self.failures_in_a_row >= self.timings.give_up_after {
            if local {
                return Next::GiveUp(self.failures_in_a_row);
            }
            wait = wait.max(self.timings.long_backoff);
        }
        self.backoff = (wait * 2).min(self.timings.max_backoff.max(wait));
        Next::Wait(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMINGS: SupervisorTimings = SupervisorTimings {
        min_backoff: Duration::from_secs(1),
        max_backoff: Duration::from_secs(4),
        healthy_after: Duration::from_mins(1),
        list_timeout: Duration::from_secs(30),
        give_up_after: 4,
        long_backoff: Duration::from_mins(5),
    };

    fn schedule(local: bool, runs: &[u64]) -> Vec<Next> {
        let mut retry = Retry::new(TIMINGS);
        runs.iter()
            .map(|&secs| retry.after_attempt(Duration::from_secs(secs), local))
            .collect()
    }

    #[test]
    fn the_wait_doubles_to_the_cap_and_a_local_command_is_given_up() {
        let s = Duration::from_secs;
        assert_eq!(
            schedule(true, &[0, 0, 0, 0]),
            [
                Next::Wait(s(1)),
                Next::Wait(s(2)),
                Next::Wait(s(4)),
                Next::GiveUp(4)
            ]
        );
    }

    #[test]
    fn a_healthy_run_starts_the_count_over() {
        let s = Duration::from_secs;
        assert_eq!(
            schedule(true, &[0, 0, 0, 120, 0, 0]),
            [
                Next::Wait(s(1)),
                Next::Wait(s(2)),
                Next::Wait(s(4)),
                Next::Wait(s(1)),
                Next::Wait(s(2)),
                Next::Wait(s(4)),
            ]
        );
    }

    #[test]
    fn a_remote_source_slows_down_instead() {
        let s = Duration::from_secs;
        assert_eq!(
            schedule(false, &[0, 0, 0, 0, 0]),
            [
                Next::Wait(s(1)),
                Next::Wait(s(2)),
                Next::Wait(s(4)),
                Next::Wait(s(300)),
                Next::Wait(s(300)),
            ]
        );
    }
}
