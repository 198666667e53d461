//! What the sources say between answers, passed on to the hub's clients (docs/relay.md): their
//! log messages, changes of resources the clients subscribed to, and changes of their prompt
//! and resource lists. The hub holds one subscription per resource at its source, counted, so
//! any number of clients share it and the last one to leave ends it; when the source reconnects
//! (a restart, a crash), the hub subscribes again on the new connection.

#![expect(
    deprecated,
    reason = "log messages are deprecated by SEP-2577 (2026-07-28) but clients of the 2025 era still ask for them"
)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use capa_upstream::{
    LoggingLevel, LoggingMessageNotificationParam, Upstream, UpstreamEvent, UpstreamState,
};
use futures::future::join_all;
use tokio::sync::broadcast;

use super::relay::RelayError;
use super::{Hub, Profile, Sources, UpstreamKey};

/// Notices waiting for a slow client before it misses some (it is told it missed them).
const NOTICE_BACKLOG: usize = 1024;

/// One thing a source said that its clients may want.
#[derive(Debug, Clone)]
pub enum SourceNotice {
    /// A log message (`notifications/message`), every known secret redacted.
    Message {
        source: String,
        message: LoggingMessageNotificationParam,
    },
    /// A subscribed resource changed.
    ResourceUpdated(Subscribed),
    /// The source's prompts or resources changed.
    ListsChanged { source: String },
}

/// The receiving ends of the notices: log messages, and changes.
#[derive(Debug)]
pub struct SourceNotices {
    pub messages: broadcast::Receiver<SourceNotice>,
    pub changes: broadcast::Receiver<SourceNotice>,
}

/// A resource the hub subscribed to for its clients: its source, and the URI the source knows
/// it by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Subscribed {
    pub source: String,
    pub uri: String,
}

/// The notices' channel and the subscriptions held at the sources.
#[derive(Debug)]
pub(super) struct Notices {
    /// Log messages, which a source may send many of.
    messages: broadcast::Sender<SourceNotice>,
    /// Changes (of subscribed resources, of lists), on a queue of their own so that a flood of
    /// log messages cannot push them out.
    changes: broadcast::Sender<SourceNotice>,
    held: Mutex<BTreeMap<Subscribed, Hold>>,
    /// The log level last set at each source, and the connection it was set on.
    levels: Mutex<BTreeMap<String, (LoggingLevel, Connection)>>,
}

/// One subscription held at a source.
#[derive(Debug)]
struct Hold {
    /// How many clients hold it.
    clients: usize,
    /// The connection it was made on; another one has not heard of it.
    made_on: Connection,
}

/// One connection of an upstream: the upstream, and how many times it had reconnected.
#[derive(Debug, Clone)]
struct Connection {
    upstream: Weak<Upstream>,
    restarts: u32,
}

impl Connection {
    fn of(upstream: &Arc<Upstream>) -> Self {
        Self {
            upstream: Arc::downgrade(upstream),
            restarts: upstream.status().restarts,
        }
    }

    fn is(&self, upstream: &Arc<Upstream>) -> bool {
        Weak::ptr_eq(&self.upstream, &Arc::downgrade(upstream))
            && self.restarts == upstream.status().restarts
    }

    /// `source`'s default upstream among `upstreams` when it is ready on another connection
    /// than this one: what was set on this one is gone with it.
    fn replaced_in(
        &self,
        upstreams: &BTreeMap<UpstreamKey, Arc<Upstream>>,
        source: &str,
    ) -> Option<Arc<Upstream>> {
        let upstream = upstreams.get(&(source.to_owned(), None))?;
        let ready = upstream.status().state == UpstreamState::Ready;
        (ready && !self.is(upstream)).then(|| upstream.clone())
    }
}

impl Default for Notices {
    fn default() -> Self {
        Self {
            messages: broadcast::channel(NOTICE_BACKLOG).0,
            changes: broadcast::channel(NOTICE_BACKLOG).0,
            held: Mutex::new(BTreeMap::new()),
            levels: Mutex::new(BTreeMap::new()),
        }
    }
}

impl Hub {
    /// Passes on what an upstream said (anything but a change of its tools): only what the
    /// source's default upstream says; one started for a call under another connection, with
    /// other credentials, is that call's alone.
    pub(super) fn pass_on(&self, event: UpstreamEvent) {
        let (UpstreamEvent::Message {
            source_id,
            connection,
            ..
        }
        | UpstreamEvent::ResourceUpdated {
            source_id,
            connection,
            ..
        }
        | UpstreamEvent::ListsChanged {
            source_id,
            connection,
        }) = &event
        else {
            return;
        };
        let default = self
            .lock_upstreams()
            .get(&(source_id.clone(), None))
            .map(|u| u.spec().connection.clone());
        if default.as_ref() != Some(connection) {
            return;
        }
        let notice = match event {
            UpstreamEvent::Message {
                source_id,
                mut message,
                ..
            } => {
                self.redactor.redact_json(&mut message.data);
                if let Some(logger) = message.logger.as_mut() {
                    *logger = self.redactor.redact(logger);
                }
                SourceNotice::Message {
                    source: source_id,
                    message,
                }
            }
            UpstreamEvent::ResourceUpdated { source_id, uri, .. } => {
                SourceNotice::ResourceUpdated(Subscribed {
                    source: source_id,
                    uri,
                })
            }
            UpstreamEvent::ListsChanged { source_id, .. } => {
                SourceNotice::ListsChanged { source: source_id }
            }
            UpstreamEvent::Changed { .. } => return,
        };
        let queue = match notice {
            SourceNotice::Message { .. } => &self.notices.messages,
            _ => &self.notices.changes,
        };
        // No receiver means no client listens now: nothing to keep.
        let _ = queue.send(notice);
    }

    /// Asks every source `profile` serves that logs for messages from `level` up. Sources are
    /// shared: the last level any client set is the one they log at.
    pub async fn set_log_level_in(&self, profile: Option<&Profile>, level: LoggingLevel) {
        let policy = self.policy_in(profile);
        let asked = self.relayed(&policy).into_iter().map(|(id, upstream)| {
            let connection = Connection::of(&upstream);
            let set = async move { upstream.set_log_level(level).await };
            async move { (id, connection, set.await) }
        });
        for (id, connection, set) in join_all(asked).await {
            match set {
                Ok(()) => {
                    self.lock_levels().insert(id, (level, connection));
                }
                Err(e) => self.log_relay_failure(&id, "logging/setLevel", &e),
            }
        }
    }

    fn lock_levels(
        &self,
    ) -> std::sync::MutexGuard<'_, BTreeMap<String, (LoggingLevel, Connection)>> {
        self.notices
            .levels
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Subscribes to the resource a client of `profile` names `uri` (as `resources/read`
    /// finds it), at its source unless some client already did.
    pub async fn subscribe_in(
        &self,
        profile: Option<&Profile>,
        uri: &str,
    ) -> Result<Subscribed, RelayError> {
        let home = self.resource_home(profile, uri).await?;
        if !home.upstream.offers().subscribe {
            return Err(RelayError::NoSubscriptions(home.source));
        }
        let key = Subscribed {
            source: home.source,
            uri: home.uri,
        };
        // Counted at once, under one lock, so that a last client leaving meanwhile cannot end
        // the subscription this one counts on; the first asks the source, and takes its count
        // back if the source refuses.
        let mut first = false;
        self.lock_held()
            .entry(key.clone())
            .and_modify(|hold| hold.clients += 1)
            .or_insert_with(|| {
                first = true;
                Hold {
                    clients: 1,
                    made_on: Connection::of(&home.upstream),
                }
            });
        if first {
            let asked = home.upstream.subscribe(&key.uri).await;
            if asked.is_err() {
                self.release(&key);
            }
            self.relay_result(asked)?;
        }
        Ok(key)
    }

    /// Lets go of one client's hold on `key`; the last one ends the subscription at its source.
    pub async fn unsubscribe(&self, key: &Subscribed) {
        if !self.release(key) {
            return;
        }
        let upstream = self
            .lock_upstreams()
            .get(&(key.source.clone(), None))
            .cloned();
        if let Some(upstream) = upstream
            && let Err(e) = upstream.unsubscribe(&key.uri).await
        {
            self.log_relay_failure(&key.source, "resources/unsubscribe", &e);
        }
    }

    /// Takes one client's count off `key`; whether it was the last.
    fn release(&self, key: &Subscribed) -> bool {
        let mut held = self.lock_held();
        match held.get_mut(key) {
            Some(hold) if hold.clients > 1 => {
                hold.clients -= 1;
                false
            }
            Some(_) => {
                held.remove(key);
                true
            }
            None => false,
        }
    }

    /// Sets the log level again, and subscribes again, on its new connection, wherever a
    /// source reconnected: a server forgets both with its session.
    pub(super) async fn renew_at_sources(&self) {
        let upstreams = self.lock_upstreams().clone();
        let relevel: Vec<(String, LoggingLevel, Arc<Upstream>)> = self
            .lock_levels()
            .iter()
            .filter_map(|(id, (level, made_on))| {
                let upstream = made_on.replaced_in(&upstreams, id)?;
                Some((id.clone(), *level, upstream))
            })
            .collect();
        for (id, level, upstream) in relevel {
            match upstream.set_log_level(level).await {
                Ok(()) => {
                    self.lock_levels()
                        .insert(id, (level, Connection::of(&upstream)));
                }
                Err(e) => self.log_relay_failure(&id, "logging/setLevel", &e),
            }
        }
        let stale: Vec<(Subscribed, Arc<Upstream>)> = self
            .lock_held()
            .iter()
            .filter_map(|(key, hold)| {
                let upstream = hold.made_on.replaced_in(&upstreams, &key.source)?;
                Some((key.clone(), upstream))
            })
            .collect();
        for (key, upstream) in stale {
            match upstream.subscribe(&key.uri).await {
                Ok(()) => {
                    if let Some(hold) = self.lock_held().get_mut(&key) {
                        hold.made_on = Connection::of(&upstream);
                    }
                }
                Err(e) => self.log_relay_failure(&key.source, "resources/subscribe", &e),
            }
        }
    }

    /// Whether a source holds anything of the clients' now (a log level, a subscription).
    pub(super) fn holds_anything_at_sources(&self) -> bool {
        !self.lock_held().is_empty() || !self.lock_levels().is_empty()
    }

    fn lock_held(&self) -> std::sync::MutexGuard<'_, BTreeMap<Subscribed, Hold>> {
        self.notices
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Sources<'_> {
    /// Every notice from now on: log messages, and changes (of subscribed resources and of
    /// lists), each on a queue of 1,024 of its own; a receiver that falls further behind on one
    /// misses its oldest (the hub logs that it did).
    pub fn notices(&self) -> SourceNotices {
        SourceNotices {
            messages: self.hub.notices.messages.subscribe(),
            changes: self.hub.notices.changes.subscribe(),
        }
    }
}
