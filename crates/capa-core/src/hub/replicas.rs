//! What replicas of a team hub share through their database (docs/team.md): the leases of this
//! hub's attempts, renewed while they run (and the runs of hubs whose leases ran out marked
//! `interrupted`; capa-runner's ownership.rs says why leases exist), the rotating keys that
//! sign `requestState`, and the bearer token every replica accepts. The renewal holds the hub
//! only weakly.

use std::sync::Weak;

use capa_domain::clock::now_ms;

use super::{Hub, Runs};

pub(super) async fn renew_leases_regularly(hub: Weak<Hub>) {
    loop {
        tokio::time::sleep(capa_runner::LEASE_RENEW_EVERY).await;
        let Some(strong) = hub.upgrade() else { return };
        strong.runs().renew_leases(now_ms());
        strong
            .runs()
            .rotate_state_keys(crate::state_keys::STATE_KEY_ROTATION);
    }
}

impl Runs<'_> {
    /// Reads the `requestState` keys the replicas share again, making the next generation
    /// when the newest is due under `rotation` (whichever replica looks first makes it; the
    /// others take it at their next look, within [`capa_runner::LEASE_RENEW_EVERY`], while the
    /// generation before still opens what it signed). Nothing on a person's hub.
    pub fn rotate_state_keys(&self, rotation: capa_store::Rotation) {
        for key in self.hub.state_keys.refresh(&self.hub.store, rotation) {
            self.hub.redactor.add_bytes(&key);
        }
    }

    /// Renews the lease of every attempt this hub runs, then marks the runs whose holder is
    /// gone `interrupted` (a replica that died: its lease ran out). Returns the runs marked.
    pub fn renew_leases(&self, now_ms: i64) -> Vec<String> {
        let holder = self.hub.slots.holder();
        let store = self.hub.store.clone();
        if let Err(e) =
            store.renew_leases(holder.owner, holder.machine, holder.lease(now_ms).until_ms)
        {
            // The database did not answer: another replica's leases may have run out only
            // because nobody could renew them; no run is taken from anyone until it answers.
            tracing::warn!(error = %e, "could not renew the leases of the runs this hub runs");
            return Vec::new();
        }
        capa_runner::interrupt_orphans(&store, holder, now_ms)
    }
}

/// Bytes of randomness in a token, as `capa-server`'s own.
const TOKEN_BYTES: usize = 32;

impl Hub {
    /// The bearer token every hub on this store accepts, where the store is shared by several
    /// hubs (PostgreSQL: the first replica's token stands, kept across restarts, so a client
    /// behind a load balancer is let in by whichever replica answers); `None` on SQLite, whose
    /// hub makes a new token at every start.
    pub fn shared_token(&self) -> Option<String> {
        let candidate = crate::digest::random_hex(TOKEN_BYTES)?;
        match self.store.shared_key("http_token", candidate.as_bytes()) {
            Ok(token) => token
                .and_then(|t| String::from_utf8(t).ok())
                .filter(|t| t.len() >= 2 * TOKEN_BYTES),
            Err(e) => {
                tracing::error!(error = %e, "could not read the token the store shares; this replica makes its own");
                None
            }
        }
    }
}
