//! Which channel asks a person about a pending input right now, so that exactly one does.
//!
//! A client that shows its own form (2025 `elicitation/create`, 2026-07-28 `input_required`)
//! claims the input while the form is up; the desktop popup and the approval page stay closed for
//! it (the tray says "answer in <client>") and open when the claim ends: the form was declined,
//! cancelled or timed out. A decision from any channel ends the input, and with it every claim.
//!
//! Claims live in memory and are mirrored in the store (`input_claims`), because several hubs may
//! share one data dir: the desktop app's popup must also wait while a project hub's client shows
//! its form. Another process's claim counts while that process is alive.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use capa_store::{InputClaim, RunOwner, Store};
use tokio::sync::watch;

pub use capa_domain::AskingChannel;

#[derive(Debug)]
struct Claim {
    channel: AskingChannel,
    /// Distinguishes claims of the same input, so an old claim's drop does not end a new one.
    serial: u64,
    until: Option<Instant>,
}

/// The claims in force, by approval id.
#[derive(Debug)]
pub(crate) struct AskingRegistry {
    claims: Mutex<HashMap<String, Claim>>,
    serial: Mutex<u64>,
    changed: watch::Sender<u64>,
    /// Where the claims are mirrored for other hubs, as this process.
    store: Arc<Store>,
    owner: RunOwner,
}

impl AskingRegistry {
    pub(crate) fn new(store: Arc<Store>, owner: RunOwner) -> Self {
        Self {
            claims: Mutex::new(HashMap::new()),
            serial: Mutex::new(0),
            changed: watch::channel(0).0,
            store,
            owner,
        }
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The record other hubs read of a claim of `approval_id` (see [`Self::mirror`]).
    fn mirrored(
        &self,
        approval_id: &str,
        channel: &AskingChannel,
        until: Option<Duration>,
    ) -> InputClaim {
        InputClaim {
            approval_id: approval_id.to_owned(),
            owner: self.owner,
            channel: serde_json::to_string(channel).unwrap_or_default(),
            until_ms: until.map(|u| {
                crate::clock::now_ms()
                    .saturating_add(i64::try_from(u.as_millis()).unwrap_or(i64::MAX))
            }),
        }
    }

    /// Records a claim for other hubs, after it is in this hub's memory: an older claim's drop
    /// in between then finds its serial replaced and leaves the record alone.
    fn mirror(&self, claim: &InputClaim) {
        let approval_id = &claim.approval_id;
        if let Err(e) = self.store.put_input_claim(claim) {
            tracing::warn!(error = %e, approval = approval_id, "could not record a form's claim for other hubs");
        }
    }

    fn unmirror(&self, approval_id: &str) {
        if let Err(e) = self.store.drop_input_claim(approval_id, self.owner) {
            tracing::warn!(error = %e, approval = approval_id, "could not end a form's claim for other hubs");
        }
    }

    /// The claim another live hub process holds on `approval_id`, if any.
    fn elsewhere(&self, approval_id: &str) -> Option<AskingChannel> {
        let claim = self
            .store
            .input_claim(approval_id, crate::clock::now_ms())
            .ok()
            .flatten()?;
        // A claim has no lease: its process is looked for on this machine (docs/team.md).
        let own = capa_runner::Holder {
            owner: self.owner,
            machine: 0,
        };
        if claim.owner == self.owner
            || capa_runner::progress(Some(claim.owner), None, own, 0)
                == capa_runner::Progress::Orphaned
        {
            return None;
        }
        serde_json::from_str(&claim.channel).ok()
    }

    fn current(&self, approval_id: &str) -> Option<AskingChannel> {
        let mut claims = self.claims.lock().unwrap_or_else(PoisonError::into_inner);
        let expired = claims
            .get(approval_id)
            .is_some_and(|c| c.until.is_some_and(|u| u <= Instant::now()));
        if expired {
            claims.remove(approval_id);
            return None;
        }
        claims.get(approval_id).map(|c| c.channel.clone())
    }

    fn release(&self, approval_id: &str, serial: u64) {
        let removed = {
            let mut claims = self.claims.lock().unwrap_or_else(PoisonError::into_inner);
            if claims.get(approval_id).is_some_and(|c| c.serial == serial) {
                claims.remove(approval_id);
                true
            } else {
                false
            }
        };
        if removed {
            self.unmirror(approval_id);
            self.bump();
        }
    }
}

/// A channel's claim on an input; ends when dropped (or at its deadline).
#[derive(Debug)]
pub struct AskingClaim {
    registry: Arc<AskingRegistry>,
    approval_id: String,
    serial: u64,
    /// A claim that outlives its holder (a 2026-07-28 form, answered in a later request) is
    /// kept until its deadline instead of ending on drop.
    keep: bool,
}

impl AskingClaim {
    /// Keeps the claim after this value is dropped, until its deadline.
    pub fn keep_until_deadline(mut self) {
        self.keep = true;
    }
}

impl Drop for AskingClaim {
    fn drop(&mut self) {
        if !self.keep {
            self.registry.release(&self.approval_id, self.serial);
        }
    }
}

impl AskingRegistry {
    /// Claims `approval_id` for `channel`, for at most `limit` (`None`: until released). `None`
    /// when another channel asks already.
    pub(crate) fn claim(
        self: &Arc<Self>,
        approval_id: &str,
        channel: AskingChannel,
        limit: Option<Duration>,
    ) -> Option<AskingClaim> {
        let registry = self;
        let current = registry
            .current(approval_id)
            .or_else(|| registry.elsewhere(approval_id));
        if current.is_some_and(|current| current != channel) {
            return None;
        }
        let serial = {
            let mut serial = registry
                .serial
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            *serial += 1;
            *serial
        };
        let mirrored = registry.mirrored(approval_id, &channel, limit);
        registry
            .claims
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                approval_id.to_owned(),
                Claim {
                    channel,
                    serial,
                    until: limit.map(|l| Instant::now() + l),
                },
            );
        registry.mirror(&mirrored);
        registry.bump();
        Some(AskingClaim {
            registry: registry.clone(),
            approval_id: approval_id.to_owned(),
            serial,
            keep: false,
        })
    }

    /// Ends any claim on `approval_id` (its answer came, in whatever channel).
    pub(crate) fn release_all(&self, approval_id: &str) {
        let registry = self;
        let removed = registry
            .claims
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(approval_id)
            .is_some();
        if removed {
            registry.unmirror(approval_id);
            registry.bump();
        }
    }

    /// The channel that asks about `approval_id` now, if any: the popup and the page wait
    /// while a client's form is up.
    pub(crate) fn channel(&self, approval_id: &str) -> Option<AskingChannel> {
        let registry = self;
        registry
            .current(approval_id)
            .or_else(|| registry.elsewhere(approval_id))
    }

    /// Changes whenever a claim starts or ends.
    pub(crate) fn watch(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(pid: u32) -> RunOwner {
        RunOwner {
            pid,
            started_ms: crate::clock::now_ms(),
        }
    }

    /// Two hubs on one store: one's client form claims an input; the other sees the claim while
    /// that hub's process runs, and not once it is gone or the claim is released.
    #[test]
    fn another_live_hubs_claim_is_seen_and_a_dead_ones_is_not() {
        let store = Arc::new(Store::in_memory().expect("store"));
        let mut other_process = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("spawn");
        let theirs = AskingRegistry::new(store.clone(), owner(other_process.id()));
        let ours = AskingRegistry::new(store, owner(std::process::id()));
        let form = AskingChannel::client_form(Some("Claude Code"));

        theirs.mirror(&theirs.mirrored("apr_1", &form, Some(Duration::from_mins(1))));
        assert_eq!(ours.elsewhere("apr_1"), Some(form.clone()));
        assert_eq!(
            theirs.elsewhere("apr_1"),
            None,
            "its own claim is in memory"
        );
        theirs.unmirror("apr_1");
        assert_eq!(ours.elsewhere("apr_1"), None, "released");

        theirs.mirror(&theirs.mirrored("apr_2", &form, None));
        assert_eq!(ours.elsewhere("apr_2"), Some(form));
        other_process.kill().expect("kill");
        other_process.wait().expect("reap");
        assert_eq!(ours.elsewhere("apr_2"), None, "its hub is gone");
    }
}
