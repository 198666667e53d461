//! The demo's notes: a small key-value store, kept in memory and, when given a file, saved there
//! as JSON so that notes survive a restart of the hub.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Notes by title. Cloning shares the same store.
#[derive(Debug, Clone, Default)]
pub struct Notes {
    inner: Arc<Mutex<BTreeMap<String, String>>>,
    file: Option<PathBuf>,
}

/// Longest note text accepted, so a demo cannot fill the disk.
pub(crate) const MAX_NOTE_BYTES: usize = 64 * 1024;
/// Most notes kept.
pub(crate) const MAX_NOTES: usize = 1000;

impl Notes {
    /// Notes kept in memory only.
    pub fn in_memory() -> Self {
        Self::default()
    }

    /// Notes loaded from and saved to `file` (created on first write).
    pub fn persistent(file: PathBuf) -> Self {
        let loaded = std::fs::read_to_string(&file)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        Self {
            inner: Arc::new(Mutex::new(loaded)),
            file: Some(file),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut BTreeMap<String, String>) -> T) -> Result<T, String> {
        let mut map = self
            .inner
            .lock()
            .map_err(|_| "notes store is unavailable".to_owned())?;
        Ok(f(&mut map))
    }

    pub fn list(&self) -> Result<Vec<String>, String> {
        self.with(|m| m.keys().cloned().collect())
    }

    pub fn read(&self, title: &str) -> Result<Option<String>, String> {
        self.with(|m| m.get(title).cloned())
    }

    pub fn write(&self, title: &str, text: &str) -> Result<(), String> {
        if title.trim().is_empty() {
            return Err("title must not be empty".into());
        }
        if text.len() > MAX_NOTE_BYTES {
            return Err(format!(
                "text is {} bytes; the demo keeps at most {MAX_NOTE_BYTES}",
                text.len()
            ));
        }
        self.with(|m| {
            if m.len() >= MAX_NOTES && !m.contains_key(title) {
                return Err(format!(
                    "the demo keeps at most {MAX_NOTES} notes; delete one first"
                ));
            }
            m.insert(title.to_owned(), text.to_owned());
            Ok(())
        })??;
        self.save()
    }

    pub fn delete(&self, title: &str) -> Result<bool, String> {
        let removed = self.with(|m| m.remove(title).is_some())?;
        self.save()?;
        Ok(removed)
    }

    fn save(&self) -> Result<(), String> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let text = self
            .with(|m| serde_json::to_string_pretty(m))?
            .map_err(|e| e.to_string())?;
        let tmp = file.with_extension("json.tmp");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, file))
            .map_err(|e| format!("cannot save notes: {e}"))
    }
}
