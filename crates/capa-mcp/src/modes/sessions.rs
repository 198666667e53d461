//! Per-session state of the meta modes: which tools a session may call. Kept in memory, keyed
//! by `Asking::session`, and forgotten after a day without use (a client that comes back
//! searches again).

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long an unused session's state is kept.
const IDLE_LIMIT: Duration = Duration::from_hours(24);
/// Most sessions kept at once; the least recently used goes first.
const MAX_SESSIONS: usize = 1024;

#[derive(Debug, Default)]
pub(crate) struct Sessions {
    states: Mutex<HashMap<String, (Instant, BTreeSet<String>)>>,
}

impl Sessions {
    /// Makes `addresses` callable in `session`.
    pub(crate) fn allow(&self, session: &str, addresses: impl IntoIterator<Item = String>) {
        let Ok(mut states) = self.states.lock() else {
            return;
        };
        let now = Instant::now();
        states.retain(|_, (used, _)| now.duration_since(*used) < IDLE_LIMIT);
        if states.len() >= MAX_SESSIONS
            && !states.contains_key(session)
            && let Some(oldest) = states
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(key, _)| key.clone())
        {
            states.remove(&oldest);
        }
        let entry = states
            .entry(session.to_owned())
            .or_insert_with(|| (now, BTreeSet::new()));
        entry.0 = now;
        entry.1.extend(addresses);
    }

    /// Whether `session` may call `address`.
    pub(crate) fn allows(&self, session: &str, address: &str) -> bool {
        let Ok(mut states) = self.states.lock() else {
            return false;
        };
        match states.get_mut(session) {
            Some((used, callable)) if callable.contains(address) => {
                *used = Instant::now();
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_accumulate_and_stay_apart() {
        let sessions = Sessions::default();
        sessions.allow("a", ["demo.add".to_owned()]);
        sessions.allow("a", ["demo.echo".to_owned()]);
        sessions.allow("b", ["demo.divide".to_owned()]);
        assert!(sessions.allows("a", "demo.add"));
        assert!(sessions.allows("a", "demo.echo"));
        assert!(!sessions.allows("a", "demo.divide"));
        assert!(!sessions.allows("c", "demo.add"));
    }
}
