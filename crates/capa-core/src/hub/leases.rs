//! The leases of this hub's attempts, renewed while they run, and the runs of hubs whose leases
//! ran out marked `interrupted` (capa-runner's ownership.rs says why leases exist: replicas of
//! a team hub on several machines). Holds the hub only weakly.

use std::sync::Weak;

use capa_domain::clock::now_ms;

use super::Hub;

pub(super) async fn renew_leases_regularly(hub: Weak<Hub>) {
    loop {
        tokio::time::sleep(capa_runner::LEASE_RENEW_EVERY).await;
        let Some(strong) = hub.upgrade() else { return };
        strong.renew_leases(now_ms());
    }
}

impl Hub {
    /// Renews the lease of every attempt this hub runs, then marks the runs whose holder is
    /// gone `interrupted` (a replica that died: its lease ran out). Returns the runs marked.
    pub fn renew_leases(&self, now_ms: i64) -> Vec<String> {
        let holder = self.slots.holder();
        let store = self.store.clone();
        if let Err(e) =
            store.renew_leases(holder.owner, holder.machine, holder.lease(now_ms).until_ms)
        {
            tracing::warn!(error = %e, "could not renew the leases of the runs this hub runs");
        }
        capa_runner::interrupt_orphans(&store, holder, now_ms)
    }
}
