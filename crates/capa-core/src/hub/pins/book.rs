//! The pins in memory: loaded from the store once, written through on every change, and the
//! changes the last listing found (for the policy and for a person's review).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use capa_domain::{ChangedTools, PinnedDefinition, Policy};
use capa_store::{PinStatus, PinnedTool, Store};

use super::ToolChange;

/// One pinned tool, read.
#[derive(Debug, Clone)]
pub(super) struct Pin {
    pub(super) digest: String,
    pub(super) definition: PinnedDefinition,
    pub(super) status: PinStatus,
}

/// `(source key, tool name at the source)`.
pub(super) type PinKey = (String, String);

#[derive(Debug, Default)]
pub(super) struct BookState {
    loaded: bool,
    pub(super) pins: HashMap<PinKey, Pin>,
    /// What the last listing found, in catalog order, with each change's pin key.
    pub(super) changes: Vec<(PinKey, ToolChange)>,
    /// Changes already logged (key and digest), so a change is logged once, not per rebuild.
    pub(super) logged: HashSet<(PinKey, String)>,
}

impl BookState {
    /// Reads the store's pins the first time (a damaged definition reads as an empty one, which
    /// differs from any live definition: the tool asks, nothing loosens).
    pub(super) fn load(&mut self, store: &Store) {
        if self.loaded {
            return;
        }
        match store.pinned_tools() {
            Ok(rows) => {
                for row in rows {
                    let definition = serde_json::from_str(&row.definition).unwrap_or_else(|_| {
                        PinnedDefinition {
                            title: None,
                            description: None,
                            input_schema: serde_json::Value::Null,
                            output_schema: None,
                            annotations: None,
                            other: capa_domain::JsonObject::new(),
                        }
                    });
                    self.pins.insert(
                        (row.source, row.tool),
                        Pin {
                            digest: row.digest,
                            definition,
                            status: row.status,
                        },
                    );
                }
                self.loaded = true;
            }
            Err(e) => tracing::warn!(error = %e, "could not read the pinned tool definitions"),
        }
    }

    /// Drops what was read, so that the next listing reads the store again.
    pub(super) fn forget(&mut self) {
        self.loaded = false;
        self.pins.clear();
    }

    /// Whether source `key` has any pin (it was listed before).
    pub(super) fn knows_source(&self, key: &str) -> bool {
        self.pins.keys().any(|(source, _)| source == key)
    }

    /// Records `pin` for `key` in the store and here.
    pub(super) fn pin(&mut self, store: &Store, key: PinKey, pin: Pin) {
        self.pin_all(store, vec![(key, pin)]);
    }

    /// Records every pin of `pins` in the store (one transaction) and here.
    pub(super) fn pin_all(&mut self, store: &Store, pins: Vec<(PinKey, Pin)>) {
        if pins.is_empty() {
            return;
        }
        let rows: Vec<PinnedTool> = pins
            .iter()
            .map(|(key, pin)| PinnedTool {
                source: key.0.clone(),
                tool: key.1.clone(),
                digest: pin.digest.clone(),
                definition: serde_json::to_string(&pin.definition).unwrap_or_default(),
                status: pin.status,
            })
            .collect();
        if let Err(e) = store.pin_tools(&rows, crate::clock::now_ms()) {
            tracing::warn!(error = %e, "could not store the pinned tool definitions; they are kept in memory until the hub stops");
        }
        self.pins.extend(pins);
    }
}

/// The pins and what differs from them now.
#[derive(Debug, Default)]
pub(crate) struct PinBook {
    state: Mutex<BookState>,
    changed: RwLock<Arc<ChangedTools>>,
}

impl PinBook {
    pub(super) fn lock(&self) -> MutexGuard<'_, BookState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn set_changed(&self, changed: ChangedTools) {
        *self.changed.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(changed);
    }

    /// `policy`, judging the tools that differ from their pins by what a person approved.
    pub(crate) fn applied_to(&self, policy: Arc<Policy>) -> Arc<Policy> {
        let changed = self
            .changed
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if changed.is_empty() {
            return policy;
        }
        Arc::new((*policy).clone().with_changed_tools(changed))
    }
}
