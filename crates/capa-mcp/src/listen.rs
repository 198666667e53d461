//! The resources a 2026-07-28 client names on a `subscriptions/listen` stream (it has no
//! `resources/subscribe`), subscribed through the relay while the stream is open
//! (docs/relay.md, "Resource subscriptions").

use capa_core::Subscribed;
use rmcp::service::SubscriptionSink;

use crate::notices::{NoNotices, Notice, Notices};
use crate::relay::Relay;

/// Which list changes a stream asked to hear of, besides the tools'.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lists {
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
}

/// The resources one `subscriptions/listen` stream of a 2026-07-28 client asked to hear of,
/// subscribed through the relay while the stream is open.
pub(crate) struct StreamSubscriptions {
    held: Vec<(String, Subscribed)>,
}

impl StreamSubscriptions {
    /// Subscribes to each of `uris`; one that cannot be (no source offers it, or its source
    /// takes no subscriptions) is left out and logged.
    pub(crate) async fn subscribe(relay: &dyn Relay, uris: Vec<String>) -> Self {
        let mut held = Vec::new();
        for uri in uris {
            match relay.subscribe(uri.clone()).await {
                Ok(key) => held.push((uri, key)),
                Err(e) => {
                    tracing::debug!(%uri, error = %e.message, "a listen stream asked for a resource no source lets the hub subscribe to");
                }
            }
        }
        Self { held }
    }

    /// The notices to watch: none when nothing is held and the stream does not hear of the
    /// sources' own list changes.
    pub(crate) fn notices(&self, relay: &dyn Relay, lists: Lists) -> Box<dyn Notices> {
        if self.held.is_empty() && !lists.prompts && !lists.resources {
            Box::new(NoNotices)
        } else {
            relay.notices()
        }
    }

    /// Reports on the stream a changed resource held here, or a source's changed prompt or
    /// resource list it asked to hear of; `false` once the stream is gone or no notice can come
    /// any more.
    pub(crate) async fn tell(
        &self,
        sink: &SubscriptionSink,
        notice: Option<Notice>,
        lists: Lists,
    ) -> bool {
        match notice {
            None => false,
            Some(Notice::Updated(key)) => {
                for (uri, _) in self.held.iter().filter(|(_, k)| *k == key) {
                    if sink.notify_resource_updated(uri.clone()).await.is_err() {
                        return false;
                    }
                }
                true
            }
            Some(Notice::ListsChanged) => {
                !(lists.prompts && sink.notify_prompt_list_changed().await.is_err()
                    || lists.resources && sink.notify_resource_list_changed().await.is_err())
            }
            Some(_) => true,
        }
    }

    /// Lets go of every subscription of the stream.
    pub(crate) async fn release(self, relay: &dyn Relay) {
        for (_, key) in self.held {
            relay.unsubscribe(key).await;
        }
    }
}
