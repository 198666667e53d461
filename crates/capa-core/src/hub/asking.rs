//! Which channel asks a person about a pending input: the hub's face of the
//! [`AskingRegistry`](crate::approval::asking::AskingRegistry).

use std::time::Duration;

use tokio::sync::watch;

use crate::approval::Approvals;
use crate::approval::asking::{AskingChannel, AskingClaim};

impl Approvals<'_> {
    /// Claims `approval_id` for `channel`, for at most `limit` (`None`: until released). `None`
    /// when another channel asks already.
    pub fn claim(
        &self,
        approval_id: &str,
        channel: AskingChannel,
        limit: Option<Duration>,
    ) -> Option<AskingClaim> {
        self.hub.asking.claim(approval_id, channel, limit)
    }

    /// Ends any claim on `approval_id` (its answer came, in whatever channel).
    pub fn release(&self, approval_id: &str) {
        self.hub.asking.release_all(approval_id);
    }

    /// The channel that asks about `approval_id` now, if any: the popup and the page wait
    /// while a client's form is up.
    pub fn channel(&self, approval_id: &str) -> Option<AskingChannel> {
        self.hub.asking.channel(approval_id)
    }

    /// Changes whenever a claim starts or ends.
    pub fn watch_claims(&self) -> watch::Receiver<u64> {
        self.hub.asking.watch()
    }
}
