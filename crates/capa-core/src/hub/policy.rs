//! The hub's policy: loaded from `policy.yaml` at start, re-read on request (after
//! `capa policy set` or a hand edit), edited by the hub itself ("always allow this tool"), and
//! the one place where a decision for a tool is made.
//!
//! Search marks and hidden counts are computed from the policy at query time, not stored in
//! the search index, so a change is seen by the next search without rebuilding anything.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::SystemTime;

use capa_config::{ConfigError, load_policy_file};

use super::Hub;
use crate::catalog::CatalogTool;
use crate::policy::{Decision, Policy, Rule};

/// The current policy and the file it comes from.
#[derive(Debug)]
pub(super) struct PolicyState {
    file: PathBuf,
    current: RwLock<Arc<Policy>>,
    /// Serialises read-modify-write edits of the file by this process.
    edits: Mutex<()>,
    /// The file's modification time when it was last read: another process
    /// (`capabilities hub approve --always` with no hub to tell) may change it.
    seen: Mutex<Option<SystemTime>>,
}

fn modified(file: &Path) -> Option<SystemTime> {
    std::fs::metadata(file).and_then(|m| m.modified()).ok()
}

impl PolicyState {
    /// Reads `file`; a missing file is no rules, a broken one an error naming its line.
    pub(super) fn load(file: PathBuf) -> Result<Self, ConfigError> {
        let rules = load_policy_file(&file)?;
        let seen = modified(&file);
        Ok(Self {
            file,
            current: RwLock::new(Arc::new(Policy::new(rules))),
            edits: Mutex::new(()),
            seen: Mutex::new(seen),
        })
    }

    pub(super) fn snapshot(&self) -> Arc<Policy> {
        self.pick_up_outside_edits();
        self.current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Re-reads the file when it changed since it was last read (one `stat`, a microsecond or
    /// two, per snapshot). A broken edit keeps the policy in force, with a warning.
    fn pick_up_outside_edits(&self) {
        let now = modified(&self.file);
        {
            let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
            if now == *seen {
                return;
            }
            *seen = now;
        }
        if let Err(e) = self.reload() {
            tracing::warn!(error = %e, "the policy file changed but does not read; the previous policy stays in force");
        }
    }

    fn reload(&self) -> Result<(), ConfigError> {
        let rules = load_policy_file(&self.file)?;
        *self.current.write().unwrap_or_else(PoisonError::into_inner) =
            Arc::new(Policy::new(rules));
        Ok(())
    }
}

impl Hub {
    /// The policy file this hub reads (`<config dir>/policy.yaml`).
    pub fn policy_file(&self) -> &Path {
        &self.policy.file
    }

    /// Re-reads the policy file. On error the previous policy stays in force.
    pub fn reload_policy(&self) -> Result<(), ConfigError> {
        let _edit = self
            .policy
            .edits
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.policy.reload()
    }

    /// Sets the decision for `pattern` (and `connection`) in the policy file and in force now,
    /// for example "always allow this tool" from an approval.
    pub fn set_policy_rule(
        &self,
        pattern: &str,
        connection: Option<&str>,
        decision: Decision,
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
        capa_config::set_policy_rule(&self.policy.file, rule)?;
        self.policy.reload()
    }

    /// Removes the rule for `pattern` (and `connection`); `false` when there was none.
    pub fn reset_policy_rule(
        &self,
        pattern: &str,
        connection: Option<&str>,
    ) -> Result<bool, ConfigError> {
        let _edit = self
            .policy
            .edits
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let removed = capa_config::reset_policy_rule(&self.policy.file, pattern, connection)?;
        self.policy.reload()?;
        Ok(removed)
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
