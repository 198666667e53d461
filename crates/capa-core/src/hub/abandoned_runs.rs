//! Paused runs whose client never came back end on their own ([`capa_runner::settle_abandoned`]):
//! looked for when the hub starts and every few minutes after, holding the hub only weakly.

use std::sync::Weak;
use std::time::Duration;

use capa_domain::clock::now_ms;
use capa_store::RunState;

use super::Hub;
use super::Runs;

/// How often the hub looks; a run ends at most this long after its resume window closed.
const EVERY: Duration = Duration::from_mins(5);

pub(super) async fn end_abandoned_runs_regularly(hub: Weak<Hub>) {
    loop {
        let Some(strong) = hub.upgrade() else { return };
        strong.runs().end_abandoned(now_ms());
        drop(strong);
        tokio::time::sleep(EVERY).await;
    }
}

impl Runs<'_> {
    /// Ends the paused runs whose inputs were all settled a resume window
    /// ([`capa_runner::RESUME_WINDOW_MS`]) before `now_ms` and that no client resumed: `denied`
    /// when a person denied one of their calls, `expired` otherwise. Returns each run ended.
    pub fn end_abandoned(&self, now_ms: i64) -> Vec<(String, RunState)> {
        capa_runner::settle_abandoned(&self.hub.store, now_ms, capa_runner::RESUME_WINDOW_MS)
    }
}
