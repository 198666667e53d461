//! Progress of long upstream calls, relayed to whoever asked for it.
//!
//! rmcp gives every request a progress token of its own (in the request's `_meta`). A call that
//! wants progress registers a sink under that token; the connection's handler routes each
//! `notifications/progress` with it to the sink. The registration ends with the call, so late
//! notifications are dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio::sync::mpsc;

/// One progress report of an upstream call.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Where a call's progress goes.
pub type ProgressSink = mpsc::UnboundedSender<Progress>;

/// Sinks by progress token, shared by an upstream and its connections' handlers.
#[derive(Clone, Default)]
pub(crate) struct ProgressRoutes {
    sinks: Arc<Mutex<HashMap<ProgressToken, ProgressSink>>>,
}

/// A registered sink; dropping it ends the route.
pub(crate) struct Registration {
    routes: ProgressRoutes,
    token: ProgressToken,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Ok(mut sinks) = self.routes.sinks.lock() {
            sinks.remove(&self.token);
        }
    }
}

impl ProgressRoutes {
    pub(crate) fn register(&self, token: ProgressToken, sink: ProgressSink) -> Registration {
        if let Ok(mut sinks) = self.sinks.lock() {
            sinks.insert(token.clone(), sink);
        }
        Registration {
            routes: self.clone(),
            token,
        }
    }

    pub(crate) fn deliver(&self, params: ProgressNotificationParam) {
        let sink = self
            .sinks
            .lock()
            .ok()
            .and_then(|s| s.get(&params.progress_token).cloned());
        if let Some(sink) = sink {
            let _ = sink.send(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }
}
