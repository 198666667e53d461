//! The guest's clock: guest time is counted only inside [`Meter::segment`], and QuickJS's
//! interrupt handler stops the guest once it used `compute_ms` or the wall deadline passed (or
//! the client cancelled, or the hub stopped the run).

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::RunError;

/// The error code of a run its client cancelled.
pub(crate) const CANCELLED: &str = "cancelled";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trip {
    Compute,
    Wall,
    Cancelled,
    /// A host call stopped the run (see `State::stop`).
    Stopped,
}

/// Guest time and the deadlines; shared with the interrupt handler.
pub(crate) struct Meter {
    pub(crate) compute: Duration,
    pub(crate) wall_deadline: Instant,
    pub(crate) cancel: Arc<AtomicBool>,
    pub(crate) used: Cell<Duration>,
    pub(crate) segment_start: Cell<Option<Instant>>,
    pub(crate) tripped: Cell<Option<Trip>>,
}

impl Meter {
    /// Called by QuickJS every few thousand instructions: true stops the guest with an
    /// uncatchable error.
    pub(crate) fn interrupt(&self) -> bool {
        if self.tripped.get().is_some() {
            return true;
        }
        let now = Instant::now();
        let in_segment = self
            .segment_start
            .get()
            .map_or(Duration::ZERO, |s| now.duration_since(s));
        let trip = if self.cancel.load(Ordering::Relaxed) {
            Some(Trip::Cancelled)
        } else if now >= self.wall_deadline {
            Some(Trip::Wall)
        } else if self.used.get() + in_segment >= self.compute {
            Some(Trip::Compute)
        } else {
            None
        };
        self.tripped.set(trip);
        trip.is_some()
    }

    pub(crate) fn segment<R>(&self, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        self.segment_start.set(Some(start));
        let r = f();
        self.used.set(self.used.get() + start.elapsed());
        self.segment_start.set(None);
        r
    }

    pub(crate) fn trip(&self, t: Trip) {
        if self.tripped.get().is_none() {
            self.tripped.set(Some(t));
        }
    }

    /// Checks between segments (a guest can burn time outside the handler's reach, e.g. in a
    /// long chain of tiny timer callbacks).
    pub(crate) fn over(&self) -> bool {
        self.interrupt()
    }

    pub(crate) fn error(&self, limits: &crate::Limits) -> Option<RunError> {
        Some(match self.tripped.get()? {
            Trip::Compute => RunError {
                code: "compute_limit".into(),
                message: format!(
                    "the code ran for more than {} ms of compute time",
                    limits.compute_ms
                ),
                hint: Some(
                    "Look for an endless loop, or do less work in code (time spent waiting for \
                     tool calls does not count)."
                        .into(),
                ),
            },
            Trip::Stopped => RunError {
                code: "internal".into(),
                message: "the run was stopped by the hub".into(),
                hint: None,
            },
            Trip::Cancelled => RunError {
                code: CANCELLED.into(),
                message: "the client cancelled the run (or went away); nothing after that ran"
                    .into(),
                hint: Some("Start a new run with execute({ code }) if it is still wanted.".into()),
            },
            Trip::Wall => RunError {
                code: "wall_limit".into(),
                message: format!("the run took longer than {} ms", limits.wall_ms),
                hint: Some("Make fewer or faster tool calls per run.".into()),
            },
        })
    }
}
