//! Which hub process runs an attempt: every attempt names its process ([`RunOwner`]), so a hub
//! tells a run it is running from one another live hub runs, and from one whose process died
//! mid-attempt (`interrupted` at the next start).

use capa_store::{RunOwner, Store};

/// Where a recorded `running` run stands, seen from this hub.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// This hub runs the attempt (or ran it and is about to record its end).
    Here,
    /// Another live hub process runs it.
    Elsewhere(RunOwner),
    /// The process that ran it ended before the attempt did.
    Orphaned,
}

/// Whether `owner` (the process recorded for an attempt) still runs it, seen from `own`.
pub fn progress(owner: Option<RunOwner>, own: RunOwner) -> Progress {
    match owner {
        Some(owner) if owner == own => Progress::Here,
        // The same pid with another start time is an earlier hub whose pid was reused by us.
        Some(owner) if owner.pid == own.pid => Progress::Orphaned,
        // Alive and started by the time it recorded itself: a pid reused since is not it.
        Some(owner) if crate::process::alive_since(owner.pid, owner.started_ms) => {
            Progress::Elsewhere(owner)
        }
        _ => Progress::Orphaned,
    }
}

/// Marks every run whose process died mid-attempt `interrupted` (at a hub's start). Returns
/// their ids.
pub fn interrupt_orphans(store: &Store, own: RunOwner, now_ms: i64) -> Vec<String> {
    let running = match store.runs_in_progress() {
        Ok(running) => running,
        Err(e) => {
            tracing::error!(error = %e, "could not look for runs interrupted by a stop of the hub");
            return Vec::new();
        }
    };
    let mut interrupted = Vec::new();
    for (id, owner) in running {
        if progress(owner, own) != Progress::Orphaned {
            continue;
        }
        match store.interrupt_run(&id, now_ms) {
            Ok(true) => interrupted.push(id),
            Ok(false) => {}
            Err(e) => tracing::error!(error = %e, run = %id, "could not mark a run interrupted"),
        }
    }
    if !interrupted.is_empty() {
        tracing::info!(
            runs = interrupted.len(),
            "runs were interrupted by a stop of the hub mid-attempt; execute({{ resume }}) goes on with each"
        );
    }
    interrupted
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: RunOwner = RunOwner {
        pid: 4242,
        started_ms: 10,
    };

    #[test]
    fn a_run_is_ours_another_live_hubs_or_orphaned() {
        assert_eq!(progress(Some(OWN), OWN), Progress::Here);
        let earlier_self = RunOwner {
            started_ms: 3,
            ..OWN
        };
        assert_eq!(progress(Some(earlier_self), OWN), Progress::Orphaned);
        let other = RunOwner {
            pid: std::process::id(),
            started_ms: capa_domain::clock::now_ms(),
        };
        assert_eq!(progress(Some(other), OWN), Progress::Elsewhere(other));
        // The same live pid, recorded long before this process started: a reused pid.
        let reused = RunOwner {
            pid: std::process::id(),
            started_ms: 1,
        };
        if cfg!(target_os = "linux") {
            assert_eq!(progress(Some(reused), OWN), Progress::Orphaned);
        }
        assert_eq!(
            progress(None, OWN),
            Progress::Orphaned,
            "recorded before owners"
        );
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let dead = child.id();
        child.wait().expect("wait");
        let gone = RunOwner {
            pid: dead,
            started_ms: 1,
        };
        assert_eq!(progress(Some(gone), OWN), Progress::Orphaned);
    }
}
