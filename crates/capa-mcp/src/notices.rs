//! What a front passes on to a client between answers (docs/relay.md): the sources' log
//! messages from the level the client set, changes of the resources it subscribed to, and
//! changes of the sources' prompt and resource lists. A session keeps its level and its
//! subscriptions here, and gives the subscriptions back when it ends.

#![expect(
    deprecated,
    reason = "log messages are deprecated by SEP-2577 (2026-07-28) but clients of the 2025 era still ask for them"
)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use capa_core::{Hub, Naming, Profile, SourceNotice, SourceNotices, Subscribed};
use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ResourceUpdatedNotificationParam,
};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::broadcast;

use crate::boxed::BoxFuture;

/// One thing to tell a client.
#[derive(Debug, Clone)]
pub enum Notice {
    /// A source's log message, its logger named after the source.
    Message(LoggingMessageNotificationParam),
    /// A subscribed resource changed.
    Updated(Subscribed),
    /// The sources' prompts or resources changed.
    ListsChanged,
}

/// The notices of one listener, in order.
pub trait Notices: Send {
    /// The next notice; `None` when no more can come.
    fn next(&mut self) -> BoxFuture<'_, Option<Notice>>;
}

/// No notices ever.
pub(crate) struct NoNotices;

impl Notices for NoNotices {
    fn next(&mut self) -> BoxFuture<'_, Option<Notice>> {
        Box::pin(std::future::pending())
    }
}

/// Notices of a channel, as they come (the bridge's, from the running hub).
impl Notices for broadcast::Receiver<Notice> {
    fn next(&mut self) -> BoxFuture<'_, Option<Notice>> {
        Box::pin(async move {
            loop {
                match self.recv().await {
                    Ok(notice) => return Some(notice),
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::debug!(missed, "a client fell behind the sources' notices");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
    }
}

/// The hub's notices as a client of `profile` may see them: of the sources it serves only.
pub(crate) struct HubNotices {
    pub(crate) hub: Arc<Hub>,
    pub(crate) profile: Option<Profile>,
    pub(crate) notices: SourceNotices,
}

impl HubNotices {
    fn admit(&self, notice: SourceNotice) -> Option<Notice> {
        match notice {
            SourceNotice::Message {
                source,
                mut message,
            } => {
                if !self.hub.relays_source_in(self.profile.as_ref(), &source) {
                    return None;
                }
                let naming = self.hub.naming_in(self.profile.as_ref());
                message.logger = match (message.logger.take(), &naming) {
                    (None, Naming::Bare(_)) => None,
                    (None, Naming::Namespaced) => Some(source),
                    (Some(logger), naming) => Some(naming.shown(&source, &logger)),
                };
                Some(Notice::Message(message))
            }
            SourceNotice::ResourceUpdated(key) => Some(Notice::Updated(key)),
            SourceNotice::ListsChanged { source } => self
                .hub
                .relays_source_in(self.profile.as_ref(), &source)
                .then_some(Notice::ListsChanged),
        }
    }
}

impl Notices for HubNotices {
    fn next(&mut self) -> BoxFuture<'_, Option<Notice>> {
        Box::pin(async move {
            loop {
                // Changes first: a flood of log messages must not hold them back.
                let received = tokio::select! {
                    biased;
                    change = self.notices.changes.recv() => change,
                    message = self.notices.messages.recv() => message,
                };
                match received {
                    Ok(notice) => {
                        if let Some(notice) = self.admit(notice) {
                            return Some(notice);
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::debug!(missed, "a client fell behind the sources' notices");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
    }
}

/// What one client session asked for: a log level, and resources by the URI it named them.
#[derive(Debug, Default)]
pub(crate) struct SessionWants {
    level: Mutex<Option<LoggingLevel>>,
    subscribed: Mutex<BTreeMap<String, Subscribed>>,
    /// The session ended: a subscription that completes now is given back at once.
    closed: std::sync::atomic::AtomicBool,
}

impl SessionWants {
    pub(crate) fn set_level(&self, level: LoggingLevel) {
        *self.level.lock().unwrap_or_else(PoisonError::into_inner) = Some(level);
    }

    /// Whether a message at `level` reaches the client: none until it set a level (sources
    /// can log a lot), then those at that level and above.
    fn wants(&self, level: LoggingLevel) -> bool {
        let set = *self.level.lock().unwrap_or_else(PoisonError::into_inner);
        set.is_some_and(|set| severity(level) >= severity(set))
    }

    /// Records a subscription; what to give back: the one it replaces (the client subscribed
    /// to `uri` before), or this one, when the session has ended meanwhile.
    pub(crate) fn subscribe(&self, uri: String, key: Subscribed) -> Option<Subscribed> {
        let mut subscribed = self.lock_subscribed();
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return Some(key);
        }
        subscribed.insert(uri, key)
    }

    pub(crate) fn holds(&self, uri: &str) -> bool {
        self.lock_subscribed().contains_key(uri)
    }

    pub(crate) fn unsubscribe(&self, uri: &str) -> Option<Subscribed> {
        self.lock_subscribed().remove(uri)
    }

    /// Every subscription, handed back when the session ends; any that completes later is
    /// handed back by [`SessionWants::subscribe`].
    pub(crate) fn take_all(&self) -> Vec<Subscribed> {
        let mut subscribed = self.lock_subscribed();
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        std::mem::take(&mut *subscribed).into_values().collect()
    }

    fn uris_of(&self, key: &Subscribed) -> Vec<String> {
        self.lock_subscribed()
            .iter()
            .filter(|(_, k)| *k == key)
            .map(|(uri, _)| uri.clone())
            .collect()
    }

    fn lock_subscribed(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Subscribed>> {
        self.subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells the session's client `notice`, if it wants it; `Err` once the client is gone.
    pub(crate) async fn deliver(&self, peer: &Peer<RoleServer>, notice: Notice) -> Result<(), ()> {
        let sent = match notice {
            Notice::Message(message) => {
                if !self.wants(message.level) {
                    return Ok(());
                }
                peer.notify_logging_message(message).await
            }
            Notice::Updated(key) => {
                for uri in self.uris_of(&key) {
                    let params = ResourceUpdatedNotificationParam::new(uri);
                    peer.notify_resource_updated(params).await.map_err(drop)?;
                }
                Ok(())
            }
            Notice::ListsChanged => match peer.notify_prompt_list_changed().await {
                Ok(()) => peer.notify_resource_list_changed().await,
                Err(e) => Err(e),
            },
        };
        sent.map_err(drop)
    }
}

/// Rank of a level, least severe first (RFC 5424's order, as MCP gives it).
fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
