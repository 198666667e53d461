//! Which hub process runs an attempt: every attempt names its process ([`RunOwner`]) and
//! holds a lease on its run ([`Lease`]: its machine, and until when it counts as alive), so a
//! hub tells a run it is running from one another live hub runs, and from one whose process
//! died mid-attempt (`interrupted`, and resumed by replay).
//!
//! On one machine (a person's desktop: the app's hub and a project's, on one data dir) the
//! process table answers at once whether the owner lives. Replicas of a team hub on several
//! machines share one database (docs/team.md) and cannot see each other's processes: there the
//! lease answers, renewed by its process every [`LEASE_RENEW_EVERY`] while the attempt runs
//! and lasting [`LEASE_MS`], so a replica that dies leaves its runs to the others within that
//! time. Machines' clocks must agree to well within the lease (NTP).

use std::time::Duration;

use capa_store::{Lease, RunOwner, Store};

/// How long an attempt's lease lasts without renewal.
pub const LEASE_MS: i64 = 30_000;

/// How often a hub renews the leases of the attempts it runs: three times a lease, so that one
/// late or failed renewal does not give a live attempt away.
pub const LEASE_RENEW_EVERY: Duration = Duration::from_secs(10);

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

/// This hub as an attempt's holder: its process, its machine and the lease it renews.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holder {
    pub owner: RunOwner,
    pub machine: u64,
}

impl Holder {
    /// The lease an attempt of this hub holds from `now_ms`.
    pub fn lease(&self, now_ms: i64) -> Lease {
        Lease {
            machine: self.machine,
            until_ms: now_ms.saturating_add(LEASE_MS),
        }
    }
}

/// Whether the attempt recorded with `owner` and `lease` still runs, seen from `own` at
/// `now_ms`: by the process table on the owner's own machine (or for runs recorded before
/// leases), by the lease elsewhere.
pub fn progress(
    owner: Option<RunOwner>,
    lease: Option<Lease>,
    own: Holder,
    now_ms: i64,
) -> Progress {
    match lease {
        Some(lease) if lease.machine != own.machine => match owner {
            Some(owner) if lease.until_ms > now_ms => Progress::Elsewhere(owner),
            _ => Progress::Orphaned,
        },
        _ => on_this_machine(owner, own.owner),
    }
}

/// [`progress`] for an owner on this machine: its process lives or not.
fn on_this_machine(owner: Option<RunOwner>, own: RunOwner) -> Progress {
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

/// Marks every run whose process died mid-attempt `interrupted` (at a hub's start, and with
/// each renewal of leases). Returns their ids.
pub fn interrupt_orphans(store: &Store, own: Holder, now_ms: i64) -> Vec<String> {
    let running = match store.runs_in_progress() {
        Ok(running) => running,
        Err(e) => {
            tracing::error!(error = %e, "could not look for runs interrupted by a stop of the hub");
            return Vec::new();
        }
    };
    let mut interrupted = Vec::new();
    for run in running {
        if progress(run.owner, run.lease, own, now_ms) != Progress::Orphaned {
            continue;
        }
        let id = run.id;
        match store.interrupt_run(&id, run.attempts, now_ms) {
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
    const HERE: Holder = Holder {
        owner: OWN,
        machine: 7,
    };

    /// As seen on this machine: a lease of this machine, or none (runs before leases).
    fn seen(owner: Option<RunOwner>) -> Progress {
        let unleased = progress(owner, None, HERE, 0);
        let leased = progress(owner, Some(HERE.lease(0)), HERE, 0);
        assert_eq!(unleased, leased, "a lease of this machine changes nothing");
        unleased
    }

    #[test]
    fn a_run_is_ours_another_live_hubs_or_orphaned() {
        assert_eq!(seen(Some(OWN)), Progress::Here);
        let earlier_self = RunOwner {
            started_ms: 3,
            ..OWN
        };
        assert_eq!(seen(Some(earlier_self)), Progress::Orphaned);
        let other = RunOwner {
            pid: std::process::id(),
            started_ms: capa_domain::clock::now_ms(),
        };
        assert_eq!(seen(Some(other)), Progress::Elsewhere(other));
        // The same live pid, recorded long before this process started: a reused pid.
        let reused = RunOwner {
            pid: std::process::id(),
            started_ms: 1,
        };
        if cfg!(target_os = "linux") {
            assert_eq!(seen(Some(reused)), Progress::Orphaned);
        }
        assert_eq!(seen(None), Progress::Orphaned, "recorded before owners");
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let dead = child.id();
        child.wait().expect("wait");
        let gone = RunOwner {
            pid: dead,
            started_ms: 1,
        };
        assert_eq!(seen(Some(gone)), Progress::Orphaned);
    }

    #[test]
    fn a_run_of_another_machine_lives_while_its_lease_does() {
        // A pid that is dead here, or alive here: neither says anything about another machine.
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let dead = child.id();
        child.wait().expect("wait");
        for pid in [dead, std::process::id()] {
            let theirs = RunOwner { pid, started_ms: 1 };
            let lease = Lease {
                machine: 8,
                until_ms: 1_000,
            };
            assert_eq!(
                progress(Some(theirs), Some(lease), HERE, 999),
                Progress::Elsewhere(theirs)
            );
            assert_eq!(
                progress(Some(theirs), Some(lease), HERE, 1_000),
                Progress::Orphaned,
                "a lease that ran out"
            );
        }
        assert_eq!(
            progress(
                None,
                Some(Lease {
                    machine: 8,
                    until_ms: 1_000
                }),
                HERE,
                0
            ),
            Progress::Orphaned,
            "a lease without its owner"
        );
        assert_eq!(HERE.lease(5).until_ms, 5 + LEASE_MS);
    }
}
