//! `GET /api/events`: Server-Sent Events for the tray and the UI. One `data:` line with
//! `{"pending": N, "paused": bool, "sources": {"ready": R, "failed": F}}` at connect and whenever
//! it changes; a comment line every 15 s keeps the connection open. The stream ends when the
//! server shuts down.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use capa_core::Hub;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::UiState;

/// How often source states are looked at besides the change signals (a source that goes down
/// without changing the catalog).
const POLL: Duration = Duration::from_secs(2);
const KEEP_ALIVE: Duration = Duration::from_secs(15);

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct SourceCounts {
    ready: usize,
    failed: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Snapshot {
    pending: u64,
    paused: bool,
    sources: SourceCounts,
}

fn snapshot(hub: &Hub) -> Snapshot {
    let pending = hub.approvals().pending().map_or_else(
        |_| *hub.approvals().watch_pending().borrow(),
        |p| p.len() as u64,
    );
    let sources = hub.sources().list();
    Snapshot {
        pending,
        paused: hub.approvals().paused(),
        sources: SourceCounts {
            ready: sources
                .iter()
                .filter(|s| s.state == capa_core::SourceState::Ready)
                .count(),
            failed: sources.iter().filter(|s| s.state.is_trouble()).count(),
        },
    }
}

struct Watching {
    hub: Arc<Hub>,
    cancel: CancellationToken,
    pending: tokio::sync::watch::Receiver<u64>,
    paused: tokio::sync::watch::Receiver<bool>,
    decisions: tokio::sync::watch::Receiver<u64>,
    catalog: tokio::sync::watch::Receiver<capa_core::SharedCatalog>,
    last: Option<Snapshot>,
}

impl Watching {
    /// The next snapshot that differs from the last one sent; `None` at shutdown.
    async fn next(&mut self) -> Option<Snapshot> {
        loop {
            if self.last.is_some() {
                tokio::select! {
                    () = self.cancel.cancelled() => return None,
                    _ = self.pending.changed() => {}
                    _ = self.paused.changed() => {}
                    _ = self.decisions.changed() => {}
                    _ = self.catalog.changed() => {}
                    () = tokio::time::sleep(POLL) => {}
                }
            }
            let now = snapshot(&self.hub);
            if self.last.as_ref() != Some(&now) {
                self.last = Some(now.clone());
                return Some(now);
            }
        }
    }
}

pub(crate) async fn stream(State(state): State<UiState>) -> Response {
    let hub = state.hub.clone();
    let watching = Watching {
        pending: hub.approvals().watch_pending(),
        paused: hub.approvals().watch_paused(),
        decisions: hub.approvals().watch_decisions(),
        catalog: hub.watch_catalog(),
        cancel: state.cancel.clone(),
        hub,
        last: None,
    };
    let events = futures::stream::unfold(watching, |mut watching| async move {
        let snapshot = watching.next().await?;
        let event = Event::default()
            .json_data(&snapshot)
            .unwrap_or_else(|_| Event::default().comment("unserialisable"));
        Some((Ok::<Event, Infallible>(event), watching))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response()
}
