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
        candidates.extend(packaged_candidates(&exe_dir, std::env::consts::OS));
    }
    match candidates.iter().find(|dir| is_model_dir(dir)) {
        Some(dir) => Located::Found(dir.clone()),
        None => Located::Missing {
            searched: candidates,
        },
    }
}

/// Where a package puts the model, from the folder of its program and the OS it runs on (`os` as
/// `std::env::consts::OS`): Tauri's bundler puts the resources beside the program on Windows
/// (and after a bundle build, in `target/dist`), in `<exe dir>/../lib/<productName>` on Linux
/// (`/usr/lib/Capabilities`, with the program in `/usr/bin`), and in the bundle's
/// `Contents/Resources` on macOS (the program is in `Contents/MacOS`). docs/desktop.md.
fn packaged_candidates(exe_dir: &Path, os: &str) -> Vec<PathBuf> {
    let resources = match os {
        "linux" => Some(exe_dir.join("../lib/Capabilities")),
        "macos" => Some(exe_dir.join("../Resources")),
        _ => None,
    };
    std::iter::once(exe_dir.to_owned())
        .chain(resources)
        .map(|dir| dir.join("models").join(MODEL_NAME))
        .collect()
}

fn is_model_dir(dir: &Path) -> bool {
    MODEL_FILES.iter().all(|file| dir.join(file).is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_os_looks_where_its_package_puts_resources() {
        let model = |dir: &str| Path::new(dir).join("models").join(MODEL_NAME);
        assert_eq!(
            packaged_candidates(Path::new("/usr/bin"), "linux"),
            [model("/usr/bin"), model("/usr/bin/../lib/Capabilities")]
        );
        assert_eq!(
            packaged_candidates(
                Path::new("/Applications/Capabilities.app/Contents/MacOS"),
                "macos"
            ),
            [
                model("/Applications/Capabilities.app/Contents/MacOS"),
                model("/Applications/Capabilities.app/Contents/MacOS/../Resources"),
            ]
        );
        assert_eq!(
            packaged_candidates(Path::new("C:/Program Files/Capabilities"), "windows"),
            [model("C:/Program Files/Capabilities")]
        );
    }

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
