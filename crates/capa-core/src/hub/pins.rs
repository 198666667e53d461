//! Pinned tool definitions, the rug-pull guard (docs/pinning.md). The first time a source the
//! person confirmed lists its tools, each tool's definition (title, description, input and
//! output schema, annotations) is pinned in the store; a tool that appears later in that source
//! is pinned as first seen and listed as `new` for review. A later listing that changes a
//! pinned tool changes nothing the person approved: the policy judges the tool by the stricter
//! of its pinned and its new definition and asks a person at every call until the person
//! accepts the change (or blocks the tool). Sources only list tools once a person confirmed
//! them (a project's once trusted), so what is pinned first is what the person let in.

use std::collections::HashMap;

use capa_domain::{
    Catalog, ChangedTools, DefinitionChange, DefinitionPart, PinnedDefinition, ToolDefinition,
};
use capa_store::PinStatus;
use capa_upstream::LogLevel;
use serde::{Deserialize, Serialize};

use super::Hub;
use super::source_def::{Origin, SourceDef};
use crate::policy::Decision;

mod book;
mod pending;

pub(crate) use book::PinBook;
use book::{Pin, PinKey};

/// Where a tool stands against what the person approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeState {
    /// Its definition differs from the pinned one: every call asks until the person reviews it.
    Changed,
    /// It appeared after its source's first listing (pinned as first seen), for review.
    New,
    /// The person blocked it: denied until accepted.
    Blocked,
}

/// A tool whose definition waits for the person's review, with both definitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChange {
    pub address: String,
    pub source: String,
    pub state: ChangeState,
    /// The parts that differ (empty for a new tool, or a blocked one that did not change).
    pub parts: Vec<DefinitionPart>,
    /// What the person approved (pinned).
    pub approved: PinnedDefinition,
    /// What the source lists now.
    pub now: PinnedDefinition,
    /// What the policy says of the approved definition, and of the new one on its own (before
    /// the change itself is taken into account).
    pub approved_decision: Decision,
    pub now_decision: Decision,
    /// Whether the tool was blocked by the person.
    pub blocked: bool,
    /// Where the pin is kept, for a terminal that records the person's review in the store.
    pub pin: PinRef,
}

/// A pin's place in the store: the source's key and the tool's name at the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PinRef {
    pub source_key: String,
    pub tool: String,
}

/// Records that a person at a terminal accepted `change`: its new definition becomes the
/// pinned one (a running hub then re-reads the pins: [`Hub::reload_pins`]).
pub fn accept_in_store(
    store: &capa_store::Store,
    change: &ToolChange,
) -> Result<(), capa_store::StoreError> {
    store.pin_tool(
        &capa_store::PinnedTool {
            source: change.pin.source_key.clone(),
            tool: change.pin.tool.clone(),
            digest: digest(&change.now),
            definition: serde_json::to_string(&change.now).unwrap_or_default(),
            status: PinStatus::Approved,
        },
        crate::clock::now_ms(),
    )
}

/// Why a review of a tool's definition could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error(
        "no tool `{0}` in the catalog; `capa tools list` lists them (a source that is not running lists none)"
    )]
    UnknownTool(String),
    #[error("`{0}` has no change to review; `capa tools changes` lists the tools that have one")]
    NothingToReview(String),
}

/// The digest of a definition's pinned parts.
fn digest(definition: &PinnedDefinition) -> String {
    crate::digest::sha256_hex(definition.canonical_json().as_bytes())
}

/// The key a source's pins are kept under: its id, or for a project source one of the project
/// file, so that a project source with a global source's id never shares its pins.
fn pin_key(def: &SourceDef) -> String {
    match &def.origin {
        Origin::Config(config) if config.scope.is_project() => {
            crate::trust::project_connection_key(config)
        }
        _ => def.id.clone(),
    }
}

impl Hub {
    /// Pins what is new in `listed` (each started source's tools, as they entered the core) and
    /// finds the catalog's tools that differ from their pins: the policy then judges those by
    /// what the person approved. Called on every catalog build.
    pub(super) fn pin_listings(
        &self,
        listed: &[(&SourceDef, Vec<ToolDefinition>)],
        catalog: &Catalog,
    ) {
        let mut state = self.pins.lock();
        state.load(self.store());
        let live = pin_new_tools(&mut state, self.store(), listed);
        let found = compare_with_pins(&state, catalog, &live);
        let mut logs = Vec::new();
        for (key, digest, address, parts) in found.to_log {
            if state.logged.insert((key, digest)) {
                let parts: Vec<&str> = parts.iter().map(|p| p.words()).collect();
                logs.push((
                    address.namespace.clone(),
                    format!(
                        "the definition of {address} changed since you approved it ({}): each call asks a person until you review it (capa tools changes)",
                        parts.join(", ")
                    ),
                ));
            }
        }
        state.changes = found.changes;
        self.pins.set_changed(ChangedTools::new(found.changed));
        drop(state);
        for (source, line) in logs {
            tracing::warn!(source = %source, "{line}");
            self.log_source(&source, LogLevel::Warn, &line);
        }
    }

    /// The tools that wait for the person's review (changed, new or blocked), with both
    /// definitions and what the policy says of each.
    pub fn tool_changes(&self) -> Vec<ToolChange> {
        let policy = self.policy.snapshot(|| self.catalog());
        let catalog = self.catalog();
        let changes: Vec<ToolChange> = self
            .pins
            .lock()
            .changes
            .iter()
            .map(|(_, c)| c.clone())
            .collect();
        changes
            .into_iter()
            .map(|mut change| {
                if let Some(tool) = catalog.get(&change.address) {
                    let mut approved = tool.clone();
                    approved.definition = change.approved.applied_to(&tool.definition);
                    change.approved_decision = policy.verdict(&approved, None).decision;
                    change.now_decision = policy.verdict(tool, None).decision;
                }
                change
            })
            .collect()
    }

    /// The review state of the tool at `address`, when it has one (for listings' marks).
    pub fn tool_change_state(&self, address: &str) -> Option<ChangeState> {
        self.pins
            .lock()
            .changes
            .iter()
            .find(|(_, c)| c.address == address)
            .map(|(_, c)| c.state)
    }

    /// A person accepts the tool's definition as the source lists it now: it becomes the
    /// pinned one (a blocked tool is unblocked), and the policy judges it by it from now on.
    pub fn accept_tool_change(&self, address: &str) -> Result<ToolChange, PinError> {
        let accepted = {
            let mut state = self.pins.lock();
            let Some((key, change)) = state
                .changes
                .iter()
                .find(|(_, c)| c.address == address)
                .cloned()
            else {
                return Err(self.no_review(address));
            };
            let pin = Pin {
                digest: digest(&change.now),
                definition: change.now.clone(),
                status: PinStatus::Approved,
            };
            state.pin(self.store(), key, pin);
            change
        };
        tracing::info!(tool = %address, "a person accepted the tool's definition");
        self.rebuild_catalog();
        Ok(accepted)
    }

    /// A person blocks the tool: it is denied (hidden, every call refused) until they accept it.
    pub fn block_tool(&self, address: &str) -> Result<(), PinError> {
        let catalog = self.catalog();
        let tool = catalog
            .get(address)
            .ok_or_else(|| PinError::UnknownTool(address.to_owned()))?;
        let defs = self.source_defs();
        let def = defs
            .iter()
            .find(|d| d.id == tool.address.namespace)
            .ok_or_else(|| PinError::UnknownTool(address.to_owned()))?;
        {
            let mut state = self.pins.lock();
            let key = (pin_key(def), tool.remote_name.clone());
            let pin = state.pins.get(&key).map_or_else(
                || {
                    let definition = PinnedDefinition::of(&tool.definition);
                    Pin {
                        digest: digest(&definition),
                        definition,
                        status: PinStatus::Blocked,
                    }
                },
                |pin| Pin {
                    status: PinStatus::Blocked,
                    ..pin.clone()
                },
            );
            state.pin(self.store(), key, pin);
        }
        tracing::info!(tool = %address, "the tool was blocked");
        self.rebuild_catalog();
        Ok(())
    }

    /// Re-reads the pins from the store (after a terminal recorded a review there).
    pub fn reload_pins(&self) {
        self.pins.lock().forget();
        self.rebuild_catalog();
    }

    fn no_review(&self, address: &str) -> PinError {
        if self.catalog().get(address).is_none() {
            PinError::UnknownTool(address.to_owned())
        } else {
            PinError::NothingToReview(address.to_owned())
        }
    }

    /// The digest of the definition `address` is listed with now (kept with a pending input,
    /// so that a later change shows beside it).
    pub fn definition_digest(&self, address: &str) -> Option<String> {
        let catalog = self.catalog();
        catalog
            .get(address)
            .map(|t| digest(&PinnedDefinition::of(&t.definition)))
    }
}

/// What each listed tool is now, by pin key, and each source's key by its id.
struct Live {
    tools: HashMap<PinKey, (PinnedDefinition, String)>,
    source_keys: HashMap<String, String>,
}

/// Pins every tool of `listed` that has no pin yet: approved on its source's first listing,
/// `new` after it.
fn pin_new_tools(
    state: &mut book::BookState,
    store: &capa_store::Store,
    listed: &[(&SourceDef, Vec<ToolDefinition>)],
) -> Live {
    let mut live = Live {
        tools: HashMap::new(),
        source_keys: HashMap::new(),
    };
    let mut new_pins = Vec::new();
    for (def, tools) in listed {
        let key = pin_key(def);
        live.source_keys.insert(def.id.clone(), key.clone());
        let first_listing = !state.knows_source(&key);
        for tool in tools {
            let now = PinnedDefinition::of(tool);
            let now_digest = digest(&now);
            let tool_key = (key.clone(), tool.name.clone());
            if !state.pins.contains_key(&tool_key) {
                let status = if first_listing {
                    PinStatus::Approved
                } else {
                    PinStatus::New
                };
                let pin = Pin {
                    digest: now_digest.clone(),
                    definition: now.clone(),
                    status,
                };
                new_pins.push((tool_key.clone(), pin));
            }
            live.tools.insert(tool_key, (now, now_digest));
        }
    }
    state.pin_all(store, new_pins);
    live
}

/// What a comparison of the catalog with the pins found.
struct Found {
    /// For the policy: the tools that differ from their pins, or are blocked.
    changed: HashMap<String, DefinitionChange>,
    /// For the person's review.
    changes: Vec<(PinKey, ToolChange)>,
    /// Changes to log: key, new digest, address, parts.
    to_log: Vec<(
        PinKey,
        String,
        capa_domain::ToolAddress,
        Vec<DefinitionPart>,
    )>,
}

fn compare_with_pins(state: &book::BookState, catalog: &Catalog, live: &Live) -> Found {
    let mut found = Found {
        changed: HashMap::new(),
        changes: Vec::new(),
        to_log: Vec::new(),
    };
    for tool in catalog.tools() {
        let Some(key) = live.source_keys.get(&tool.address.namespace) else {
            continue;
        };
        let tool_key = (key.clone(), tool.remote_name.clone());
        let (Some(pin), Some((now, now_digest))) =
            (state.pins.get(&tool_key), live.tools.get(&tool_key))
        else {
            continue;
        };
        let differs = pin.digest != *now_digest;
        let parts = if differs {
            pin.definition.differences(now)
        } else {
            Vec::new()
        };
        let blocked = pin.status == PinStatus::Blocked;
        let change_state = match (blocked, differs, pin.status) {
            (true, _, _) => ChangeState::Blocked,
            (false, true, _) => ChangeState::Changed,
            (false, false, PinStatus::New) => ChangeState::New,
            _ => continue,
        };
        if differs || blocked {
            found.changed.insert(
                tool.address.to_string(),
                DefinitionChange {
                    pinned: pin.definition.clone(),
                    parts: parts.clone(),
                    blocked,
                },
            );
        }
        if differs {
            found.to_log.push((
                tool_key.clone(),
                now_digest.clone(),
                tool.address.clone(),
                parts.clone(),
            ));
        }
        found.changes.push((
            tool_key.clone(),
            ToolChange {
                address: tool.address.to_string(),
                source: tool.address.namespace.clone(),
                state: change_state,
                parts,
                approved: pin.definition.clone(),
                now: now.clone(),
                approved_decision: Decision::Allow,
                now_decision: Decision::Allow,
                blocked,
                pin: PinRef {
                    source_key: tool_key.0,
                    tool: tool_key.1,
                },
            },
        ));
    }
    found
}
