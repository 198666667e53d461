//! Where the model's files are looked for, in order:
//!
//! 1. `CAPA_MODEL_DIR`, when set (development and tests: `scripts/setup` installs the files in
//!    the checkout's `models/all-MiniLM-L6-v2`, and `scripts/start` and `scripts/test` point
//!    the variable there);
//! 2. `<data dir>/models/all-MiniLM-L6-v2`, for a person who adds the model to a build that
//!    came without it;
//! 3. beside the app: `<exe dir>/models/all-MiniLM-L6-v2`, then the resources of the installed
//!    package (the .deb puts them in `/usr/lib/Capabilities/models/all-MiniLM-L6-v2`).
//!
//! A directory counts only when it holds every file of [`MODEL_FILES`].

use std::path::{Path, PathBuf};

use crate::{MODEL_FILES, MODEL_NAME};

/// The environment variable that names the model's directory.
pub const MODEL_DIR_ENV: &str = "CAPA_MODEL_DIR";

/// What [`locate`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    /// A directory with every model file.
    Found(PathBuf),
    /// None of the places held the model; they are listed in the order they were tried.
    Missing { searched: Vec<PathBuf> },
}

/// Looks for the model's files; `data_dir` is the hub's data directory, when it has one.
pub fn locate(data_dir: Option<&Path>) -> Located {
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os(MODEL_DIR_ENV).filter(|d| !d.is_empty()) {
        candidates.push(PathBuf::from(dir));
    }
    if let Some(data) = data_dir {
        candidates.push(data.join("models").join(MODEL_NAME));
    }
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_owned))
    {
        candidates.push(exe_dir.join("models").join(MODEL_NAME));
        candidates.push(exe_dir.join(PACKAGE_DIR).join("models").join(MODEL_NAME));
    }
    match candidates.iter().find(|dir| is_model_dir(dir)) {
        Some(dir) => Located::Found(dir.clone()),
        None => Located::Missing {
            searched: candidates,
        },
    }
}

/// The package's resources, relative to the folder of its executables: Tauri's bundler puts them
/// in `/usr/lib/<productName>` (docs/desktop.md), and both `capa` and the app are in `/usr/bin`.
const PACKAGE_DIR: &str = "../lib/Capabilities";

fn is_model_dir(dir: &Path) -> bool {
    MODEL_FILES.iter().all(|file| dir.join(file).is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_counts_only_with_every_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let model = dir.path().join("models").join(MODEL_NAME);
        std::fs::create_dir_all(&model).expect("create");
        for file in &MODEL_FILES[..2] {
            std::fs::write(model.join(file), "{}").expect("write");
        }
        assert!(!is_model_dir(&model));
        std::fs::write(model.join(MODEL_FILES[2]), "").expect("write");
        assert!(is_model_dir(&model));
    }
}
