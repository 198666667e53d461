//! One file's change: its text now, its text after install, and what that amounts to; and writing
//! it, atomically (a temporary file in the same directory, then a rename).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::client::{ClientFile, FileFormat, Scope};
use crate::entry::{CapaEntry, Edit, Intent};
use crate::error::InstallError;
use crate::{codex_toml, json_file};

/// What install does (or did) to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The file did not exist; it is written with capa's entry.
    Created,
    /// capa's entry is added or brought up to date.
    Updated,
    /// Nothing to change.
    UpToDate,
    /// capa's entry is taken out; the rest of the file stays.
    Removed,
    /// capa's entry was all the file held, so the file is deleted.
    Deleted,
}

impl Action {
    /// For people, once done: `created`, `up to date`, …
    pub fn done(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Updated => "updated",
            Self::UpToDate => "up to date",
            Self::Removed => "removed capa's entry",
            Self::Deleted => "removed capa's entry and the file, which held nothing else",
        }
    }

    /// For people, in a dry run.
    pub fn would(self) -> &'static str {
        match self {
            Self::Created => "would be created",
            Self::Updated => "would be updated",
            Self::UpToDate => "up to date",
            Self::Removed => "capa's entry would be removed",
            Self::Deleted => {
                "capa's entry and the file, which holds nothing else, would be removed"
            }
        }
    }
}

/// One file's planned change.
#[derive(Debug, Clone)]
pub struct FilePlan {
    pub file: ClientFile,
    /// The text now; `None` when the file does not exist.
    pub old: Option<String>,
    /// The text after install; `None` when the file goes (or stays absent).
    pub new: Option<String>,
    pub action: Action,
    /// Something worth saying about an unchanged file (a `capa` entry capa did not write).
    pub note: Option<String>,
}

impl FilePlan {
    /// Reads the file and works out the change. Writes nothing.
    pub fn new(file: ClientFile, intent: Intent, entry: &CapaEntry) -> Result<Self, InstallError> {
        let old = read(&file.path)?;
        let path = file.path.as_path();
        let edit = match (intent, file.format, old.as_deref()) {
            // A user-wide file serves every project: its `capa` entry (the global hub's, or
            // another project's) is never repointed at this project.
            (Intent::Register, FileFormat::CodexToml, Some(text))
                if file.scope == Scope::User && codex_toml::other_entry(text, &entry.args) =>
            {
                return Ok(Self {
                    old: old.clone(),
                    new: old,
                    action: Action::UpToDate,
                    note: Some(format!(
                        "its `capa` entry serves every project (the global hub's, or another project's), so capa does not repoint it at this one; install without --user-file to write {}",
                        Path::new(".codex").join("config.toml").display()
                    )),
                    file,
                });
            }
            (Intent::Register, FileFormat::Json { servers_key, typed }, old) => {
                json_file::register(path, old, servers_key, typed, entry)?
            }
            (Intent::Register, FileFormat::CodexToml, old) => {
                codex_toml::register(path, old, entry)?
            }
            (Intent::Unregister, _, None) => Edit::Unchanged,
            (Intent::Unregister, format, Some(old)) => {
                // A user-level file serves every project: take out only this project's entry.
                let only_args = (file.scope == Scope::User).then_some(entry.args.as_slice());
                match format {
                    FileFormat::Json { servers_key, .. } => {
                        json_file::unregister(path, old, servers_key, only_args)?
                    }
                    FileFormat::CodexToml => codex_toml::unregister(path, old, only_args)?,
                }
            }
        };
        let (new, action, note) = match edit {
            Edit::Unchanged => (old.clone(), Action::UpToDate, None),
            Edit::NotOurs => (
                old.clone(),
                Action::UpToDate,
                Some(if file.scope == Scope::User {
                    "its `capa` entry belongs to another project or was not written by capa; left as it is".to_owned()
                } else {
                    "its `capa` entry was not written by capa; left as it is".to_owned()
                }),
            ),
            Edit::Write(text) => {
                let action = match (intent, &old) {
                    (Intent::Register, None) => Action::Created,
                    (Intent::Register, Some(_)) => Action::Updated,
                    (Intent::Unregister, _) => Action::Removed,
                };
                (Some(text), action, None)
            }
            // The user's own Codex file is never deleted, only emptied of capa's entry.
            Edit::Emptied if file.scope == Scope::User => {
                (Some(String::new()), Action::Removed, None)
            }
            Edit::Emptied => (None, Action::Deleted, None),
        };
        Ok(Self {
            file,
            old,
            new,
            action,
            note,
        })
    }

    /// Whether applying the plan changes anything on disk.
    pub fn changes(&self) -> bool {
        self.action != Action::UpToDate
    }

    /// Writes the new text (or deletes the file). Does nothing for an unchanged file.
    pub fn apply(&self) -> Result<(), InstallError> {
        if !self.changes() {
            return Ok(());
        }
        let path = &self.file.path;
        let result = match &self.new {
            Some(text) => write_atomically(path, text),
            None => std::fs::remove_file(path),
        };
        result.map_err(|source| InstallError::Write {
            path: path.clone(),
            source,
        })
    }
}

fn read(path: &Path) -> Result<Option<String>, InstallError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(InstallError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Writes `text` to a temporary file beside the target and renames it over the target, so that
/// a client never reads half a file. Keeps the old file's permissions; a symlinked file is
/// written where the link points.
pub(crate) fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let target: PathBuf = if path.is_symlink() {
        std::fs::canonicalize(path)?
    } else {
        path.to_path_buf()
    };
    let dir = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.capa-{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        if let Ok(meta) = std::fs::metadata(&target) {
            std::fs::set_permissions(&temp, meta.permissions())?;
        }
        std::fs::rename(&temp, &target)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Client, Locations};

    fn entry(project: &Path) -> CapaEntry {
        CapaEntry::for_project(Path::new("/bin/capa"), project)
    }

    #[test]
    fn a_plan_writes_creates_and_deletes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let locations = Locations {
            project_dir: dir.path().to_path_buf(),
            codex_home: None,
            codex_user_file: false,
        };
        let file = locations.file(Client::Cursor).expect("file");
        let plan = FilePlan::new(file.clone(), Intent::Register, &entry(dir.path())).expect("plan");
        assert_eq!(plan.action, Action::Created);
        plan.apply().expect("apply");
        let again =
            FilePlan::new(file.clone(), Intent::Register, &entry(dir.path())).expect("plan");
        assert_eq!(again.action, Action::UpToDate);
        let remove =
            FilePlan::new(file.clone(), Intent::Unregister, &entry(dir.path())).expect("plan");
        assert_eq!(remove.action, Action::Deleted);
        remove.apply().expect("apply");
        assert!(!file.path.exists());
        assert!(dir.path().join(".cursor").is_dir(), "directories stay");
        let nothing = FilePlan::new(file, Intent::Unregister, &entry(dir.path())).expect("plan");
        assert_eq!(nothing.action, Action::UpToDate);
    }

    #[test]
    fn a_project_install_never_repoints_the_user_codex_entry() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("codex");
        std::fs::create_dir_all(&home).expect("mkdir");
        let global = "[mcp_servers.capa]\ncommand = \"/bin/capa\"\nargs = [\"mcp\"]\n";
        std::fs::write(home.join("config.toml"), global).expect("write");
        let project = dir.path().join("project");
        let default = Locations {
            project_dir: project.clone(),
            codex_home: Some(home.clone()),
            codex_user_file: false,
        };
        let file = default.file(Client::Codex).expect("file");
        assert_eq!(file.path, project.join(".codex/config.toml"));
        let user = Locations {
            codex_user_file: true,
            ..default
        };
        let file = user.file(Client::Codex).expect("file");
        assert_eq!(file.scope, Scope::User);
        let plan = FilePlan::new(file, Intent::Register, &entry(&project)).expect("plan");
        assert_eq!(plan.action, Action::UpToDate);
        assert!(
            plan.note
                .as_deref()
                .is_some_and(|n| n.contains("does not repoint"))
        );
        plan.apply().expect("apply");
        assert_eq!(
            std::fs::read_to_string(home.join("config.toml")).expect("read"),
            global
        );
    }

    #[test]
    fn the_user_codex_file_is_emptied_never_deleted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("codex");
        let locations = Locations {
            project_dir: dir.path().join("project"),
            codex_home: Some(home.clone()),
            codex_user_file: true,
        };
        let file = locations.file(Client::Codex).expect("file");
        let entry = entry(&locations.project_dir);
        FilePlan::new(file.clone(), Intent::Register, &entry)
            .expect("plan")
            .apply()
            .expect("apply");
        let remove = FilePlan::new(file, Intent::Unregister, &entry).expect("plan");
        assert_eq!(remove.action, Action::Removed);
        remove.apply().expect("apply");
        assert_eq!(
            std::fs::read_to_string(home.join("config.toml")).expect("read"),
            ""
        );
    }
}
