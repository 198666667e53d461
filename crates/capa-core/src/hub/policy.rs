//! The hub's policy: loaded from `policy.yaml` at start, re-read on request (after
//! `capa policy set` or a hand edit), edited by the hub itself ("always allow this tool"), and
//! the one place where a decision for a tool is made.
//!
//! Search marks and hidden counts are computed from the policy at query time, not stored in
//! the search index, so a change is seen by the next search without rebuilding anything.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime};

use capa_config::{ConfigError, load_policy_file};
use capa_store::Store;

use super::Hub;
use crate::catalog::CatalogTool;
use crate::policy::{Decision, Loosening, Policy, Rule};

/// The current policy, the file it comes from, and the rules a person last confirmed.
#[derive(Debug)]
pub(super) struct PolicyState {
    file: PathBuf,
    store: Arc<Store>,
    current: RwLock<Arc<Policy>>,
    /// Serialises read-modify-write edits of the file by this process.
    edits: Mutex<()>,
    /// The file as this process last saw it: another process (`capabilities hub approve
    /// --always` with no hub to tell) may change it.
    seen: Mutex<Seen>,
}

/// How long a look at the policy file's modification time holds. Every guest call takes a
/// snapshot of the policy, and a `stat` of the file (its path walked by the kernel) was about
/// 2 µs of a 20 µs call; an edit by another process is seen this much later at most, where the
/// hub's own edits and reloads are in force at once.
const LOOK_HOLDS: Duration = Duration::from_millis(25);

/// The policy file as last seen.
#[derive(Debug, Default)]
struct Seen {
    /// Its modification time when it was last read.
    modified: Option<SystemTime>,
    /// When that was last looked at.
    looked: Option<Instant>,
}

fn modified(file: &Path) -> Option<SystemTime> {
    std::fs::metadata(file).and_then(|m| m.modified()).ok()
}

/// Who made a change that loosens control (a policy rule, a source's command or URL): a person
/// (in the app's window, a form they answered, an interactive terminal) confirms it; anything
/// else may only tighten control at once, and its loosening waits for a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangedBy {
    Person,
    /// The API with the bearer token, a file edit: a loosening waits for a person.
    Unconfirmed,
}

/// The rules a person confirmed, as stored; `None` before the first start with confirmations.
fn stored_confirmation(store: &Store) -> Option<Vec<Rule>> {
    let text = store
        .confirmed_policy()
        .map_err(|e| tracing::warn!(error = %e, "could not read the confirmed policy"))
        .ok()??;
    serde_json::from_str(&text)
        .map_err(|e| tracing::warn!(error = %e, "the confirmed policy does not read; every rule counts as unconfirmed"))
        .ok()
        .or(Some(Vec::new()))
}

/// Records `rules` as what a person confirmed (the hub, and an interactive terminal with the
/// store open): `capa policy confirm`, the app's "Confirm".
pub fn confirm_policy_rules(store: &Store, rules: &[Rule]) -> Result<(), capa_store::StoreError> {
    let text = serde_json::to_string(rules).unwrap_or_else(|_| "[]".to_owned());
    store.set_confirmed_policy(&text, crate::clock::now_ms())
}

/// A person set one rule (an approval's "Always allow", the app, `capa policy set` at a
/// terminal): the confirmed rules get exactly that change, and nothing else the file may hold.
///
/// Before any hub started on this database there is nothing to change: the first start counts
/// the file as it is then (this change included) as confirmed.
pub fn confirm_policy_rule(store: &Store, rule: &Rule) -> Result<(), capa_store::StoreError> {
    let Some(mut rules) = stored_confirmation(store) else {
        return Ok(());
    };
    rules.retain(|r| !(r.pattern == rule.pattern && r.connection == rule.connection));
    rules.push(rule.clone());
    confirm_policy_rules(store, &rules)
}

/// A person removed one rule: so do the confirmed rules.
pub fn confirm_policy_rule_removed(
    store: &Store,
    pattern: &str,
    connection: Option<&str>,
) -> Result<(), capa_store::StoreError> {
    let Some(mut rules) = stored_confirmation(store) else {
        return Ok(());
    };
    rules.retain(|r| !(r.pattern == pattern && r.connection.as_deref() == connection));
    confirm_policy_rules(store, &rules)
}

impl PolicyState {
    /// Reads `file`; a missing file is no rules, a broken one an error naming its line. On the
    /// first start with confirmations the file as it is counts as confirmed. (No source has
    /// listed its tools yet: loosenings are judged by the rules alone until the first reload.)
    pub(super) fn load(file: PathBuf, store: Arc<Store>) -> Result<Self, ConfigError> {
        let rules = load_policy_file(&file)?;
        if stored_confirmation(&store).is_none()
            && let Err(e) = confirm_policy_rules(&store, &rules)
        {
            tracing::warn!(error = %e, "could not record the confirmed policy");
        }
        let state = Self {
            file,
            store,
            current: RwLock::new(Arc::new(Policy::default())),
            edits: Mutex::new(()),
            seen: Mutex::new(Seen::default()),
        };
        state.install(rules, &[]);
        state
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .modified = modified(&state.file);
        Ok(state)
    }

    pub(super) fn snapshot(&self, tools: impl FnOnce() -> crate::SharedCatalog) -> Arc<Policy> {
        self.pick_up_outside_edits(tools);
        self.current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Re-reads the file when it changed since it was last read (one `stat`, a microsecond or
    /// two, at most once per [`LOOK_HOLDS`]). A broken edit keeps the policy in force, with a
    /// warning.
    fn pick_up_outside_edits(&self, tools: impl FnOnce() -> crate::SharedCatalog) {
        {
            let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
            let now = Instant::now();
            if seen
                .looked
                .is_some_and(|looked| now.duration_since(looked) < LOOK_HOLDS)
            {
                return;
            }
            seen.looked = Some(now);
        }
        let now = modified(&self.file);
        {
            let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
            if now == seen.modified {
                return;
            }
            seen.modified = now;
        }
        if let Err(e) = self.reload(tools().tools()) {
            tracing::warn!(error = %e, "the policy file changed but does not read; the previous policy stays in force");
        }
    }

    fn reload(&self, tools: &[CatalogTool]) -> Result<(), ConfigError> {
        let rules = load_policy_file(&self.file)?;
        self.install(rules, tools);
        Ok(())
    }

    /// Puts `rules` in force, held back by the confirmed rules when they differ from them: a
    /// change that only tightens the policy is in force at once (the stricter verdict is the
    /// file's), one that loosens it waits for a person's confirmation.
    fn install(&self, rules: Vec<Rule>, tools: &[CatalogTool]) {
        let confirmed = Policy::new(stored_confirmation(&self.store).unwrap_or_default());
        let file = Policy::new(rules);
        let policy = if file.rules() == confirmed.rules() {
            file
        } else {
            let loosened = file.loosenings(&confirmed, tools);
            if !loosened.is_empty() {
                tracing::warn!(
                    changes = %loosened.iter().map(Loosening::describe).collect::<Vec<_>>().join("; "),
                    "the policy file loosens the policy outside the app; held back until you confirm it in Capabilities or with `capa policy confirm`"
                );
            }
            file.held_back_by(confirmed)
        };
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(policy);
    }
}

impl Hub {
    /// The policy file this hub reads (`<config dir>/policy.yaml`).
    pub fn policy_file(&self) -> &Path {
        &self.policy.file
    }

    /// Re-reads the policy file (and the confirmed rules). On error the previous policy stays
    /// in force.
    pub fn reload_policy(&self) -> Result<(), ConfigError> {
        let _edit = self
            .policy
            .edits
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.policy.reload(self.catalog().tools())
    }

    /// Sets the decision for `pattern` (and `connection`) in the policy file, for example
    /// "always allow this tool" from an approval. A person's edit is in force at once; any
    /// other that loosens the policy waits for a person's confirmation.
    pub fn set_policy_rule(
        &self,
        pattern: &str,
        connection: Option<&str>,
        decision: Decision,
        by: ChangedBy,
    ) -> Result<(), ConfigError> {
        let _edit = self
            .policy
            .edits
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let rule = Rule {
            pattern: pattern.to_owned(),
            connection: connection.map(str::to_owned),
            decision,
        };
        capa_config::set_policy_rule(&self.policy.file, rule.clone())?;
        if by == ChangedBy::Person {
            Self::keep_confirmed(confirm_policy_rule(&self.policy.store, &rule));
        }
        self.policy.reload(self.catalog().tools())
    }

    /// Removes the rule for `pattern` (and `connection`); `false` when there was none.
    pub fn reset_policy_rule(
        &self,
        pattern: &str,
        connection: Option<&str>,
        by: ChangedBy,
    ) -> Result<bool, ConfigError> {
        let _edit = self
            .policy
            .edits
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let removed = capa_config::reset_policy_rule(&self.policy.file, pattern, connection)?;
        if by == ChangedBy::Person {
            Self::keep_confirmed(confirm_policy_rule_removed(
                &self.policy.store,
                pattern,
                connection,
            ));
        }
        self.policy.reload(self.catalog().tools())?;
        Ok(removed)
    }

    /// A person confirms the policy file as it is now (the app's window, an interactive
    /// terminal): changes held back take effect.
    pub fn confirm_policy(&self) -> Result<(), ConfigError> {
        let _edit = self
            .policy
            .edits
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let rules = load_policy_file(&self.policy.file)?;
        Self::keep_confirmed(confirm_policy_rules(&self.policy.store, &rules));
        self.policy.reload(self.catalog().tools())
    }

    /// What the policy file changes that waits for a person's confirmation (empty: nothing).
    pub fn held_policy_changes(&self) -> Vec<Loosening> {
        let policy = self.policy();
        let Some(confirmed) = policy.confirmed() else {
            return Vec::new();
        };
        policy.loosenings(confirmed, self.catalog().tools())
    }

    fn keep_confirmed(stored: Result<(), capa_store::StoreError>) {
        if let Err(e) = stored {
            tracing::warn!(error = %e, "could not record the confirmed policy");
        }
    }

    /// The connection a call of `tool` uses, for connection rules: the requested one, else the
    /// source's default. Only looked up when some rule names a connection.
    pub(crate) fn connection_for_policy(
        &self,
        tool: &CatalogTool,
        requested: Option<&str>,
    ) -> Option<String> {
        if let Some(requested) = requested {
            return Some(requested.to_owned());
        }
        if !self.policy().has_connection_rules() {
            return None;
        }
        self.default_connection_name(&tool.address.namespace)
    }
}
