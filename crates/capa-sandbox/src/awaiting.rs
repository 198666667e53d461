//! How the sandbox's thread waits for the host's answers: a short spin before it sleeps.
//!
//! A call to an upstream (a child over stdio, a server over HTTP) is answered on one of the
//! hub's runtime threads, which then wakes this thread. On a virtual machine, a thread asleep on
//! an idle virtual CPU takes tens of microseconds to wake (the CPU halted, and its wake-up goes
//! through the hypervisor): more than half of what the hub added to a call to a stdio upstream
//! (docs/benchmarks.md, "Where the time goes"). While calls are out, the thread first looks for
//! the answer for a while, giving its CPU to any other runnable thread between looks
//! (`sched_yield`), so a busy machine loses little to it; then it sleeps as before.
//!
//! How long it looks follows the run's upstreams: up to [`FULL_SPIN`] while answers come that
//! soon, [`SHORT_SPIN`] after a wait that outlasted it (a slow upstream's answers would only burn
//! a core for nothing), and the full spin again once an answer comes within it.

use std::cell::Cell;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use crate::events::Event;

/// The longest look before sleeping: a call to a stdio upstream on the same machine is answered
/// in 0.2-0.5 ms.
const FULL_SPIN: Duration = Duration::from_millis(1);
/// The look after a wait that outlasted the full spin.
const SHORT_SPIN: Duration = Duration::from_micros(100);

/// One run's waits for its calls' answers.
#[derive(Debug, Default)]
pub(crate) struct Awaiting {
    /// The last wait outlasted the full spin: look briefly next time.
    slow: Cell<bool>,
}

impl Awaiting {
    /// The next event, by `deadline`: looked for first (while `calls_out`), then waited for
    /// asleep.
    pub(crate) fn next_event(
        &self,
        events: &Receiver<Event>,
        deadline: Instant,
        calls_out: bool,
    ) -> Result<Event, RecvTimeoutError> {
        if let Some(found) = taken(events) {
            return found;
        }
        let spin = match (calls_out, self.slow.get()) {
            (false, _) => Duration::ZERO,
            (true, true) => SHORT_SPIN,
            (true, false) => FULL_SPIN,
        };
        let started = Instant::now();
        let looked = look(events, deadline.min(started + spin));
        if let Some(found) = looked {
            self.slow.set(false);
            return found;
        }
        // With no time left this still takes an event that is there (`recv_timeout` looks
        // before it checks its deadline).
        let found = events.recv_timeout(deadline.saturating_duration_since(Instant::now()));
        if calls_out {
            self.slow.set(started.elapsed() > FULL_SPIN);
        }
        found
    }
}

/// Looks for an event until `until`, yielding the CPU between looks; `None` when none came.
fn look(events: &Receiver<Event>, until: Instant) -> Option<Result<Event, RecvTimeoutError>> {
    while Instant::now() < until {
        std::thread::yield_now();
        if let Some(found) = taken(events) {
            return Some(found);
        }
    }
    None
}

/// An event already there (or the channel's end); `None` when it is empty.
fn taken(events: &Receiver<Event>) -> Option<Result<Event, RecvTimeoutError>> {
    match events.try_recv() {
        Ok(event) => Some(Ok(event)),
        Err(TryRecvError::Disconnected) => Some(Err(RecvTimeoutError::Disconnected)),
        Err(TryRecvError::Empty) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_sent_during_the_spin_or_after_it_arrive_and_the_deadline_holds() {
        let (tx, rx) = std::sync::mpsc::channel();
        let far = Instant::now() + Duration::from_secs(5);
        let awaiting = Awaiting::default();
        let sender = std::thread::spawn(move || {
            tx.send(Event::Cancel).expect("the receiver waits");
            // Past the full spin: the thread sleeps, and still gets it.
            std::thread::sleep(Duration::from_millis(30));
            tx.send(Event::Cancel).expect("the receiver waits");
            tx
        });
        assert!(matches!(
            awaiting.next_event(&rx, far, true),
            Ok(Event::Cancel)
        ));
        assert!(matches!(
            awaiting.next_event(&rx, far, true),
            Ok(Event::Cancel)
        ));
        assert!(
            awaiting.slow.get(),
            "a wait past the full spin makes the next look short"
        );
        let _tx = sender.join().expect("the sender ends");
        let started = Instant::now();
        let soon = started + Duration::from_millis(10);
        assert!(matches!(
            awaiting.next_event(&rx, soon, true),
            Err(RecvTimeoutError::Timeout)
        ));
        assert!(
            started.elapsed() < Duration::from_millis(500),
            "the deadline holds"
        );
    }

    #[test]
    fn an_answer_within_the_spin_restores_the_full_look() {
        let (tx, rx) = std::sync::mpsc::channel();
        let awaiting = Awaiting {
            slow: Cell::new(true),
        };
        tx.send(Event::Cancel).expect("the receiver waits");
        let far = Instant::now() + Duration::from_secs(5);
        assert!(matches!(
            awaiting.next_event(&rx, far, true),
            Ok(Event::Cancel)
        ));
        assert!(
            awaiting.slow.get(),
            "an event already there says nothing of the upstream"
        );
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_micros(20));
            tx.send(Event::Cancel).expect("the receiver waits");
        });
        assert!(matches!(
            awaiting.next_event(&rx, far, true),
            Ok(Event::Cancel)
        ));
        sender.join().expect("the sender ends");
    }
}
