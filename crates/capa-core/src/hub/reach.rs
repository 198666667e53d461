//! Sources that can reach the hub's own files: a filesystem server rooted at (or above) the
//! config or data dir could read the token and state key (those are redacted on the way back)
//! and write `policy.yaml` or `capabilities.yaml` (a loosening policy change, or a new or
//! changed source, then waits for the person's confirmation). The person is warned at start, in
//! `capa config show`, the API and the log.

use std::path::{Path, PathBuf};

use capa_config::{SourceConfig, SourceTransport};

use crate::paths::HubPaths;

/// The directories a stdio source is given (its arguments and working directory that name an
/// existing directory), resolved.
fn directories(source: &SourceConfig) -> Vec<PathBuf> {
    let SourceTransport::Stdio { args, cwd, .. } = &source.transport else {
        return Vec::new();
    };
    let base = source
        .file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    args.iter()
        .map(PathBuf::from)
        .chain(cwd.iter().cloned())
        .map(|p| if p.is_absolute() { p } else { base.join(p) })
        .filter(|p| p.is_dir())
        .filter_map(|p| p.canonicalize().ok())
        .collect()
}

/// A warning for each source that is handed a directory holding the hub's config or data dir.
pub(super) fn warnings(sources: &[SourceConfig], paths: &HubPaths) -> Vec<String> {
    let own: Vec<(&str, PathBuf)> = [("config", &paths.config_dir), ("data", &paths.data_dir)]
        .into_iter()
        .filter_map(|(what, dir)| dir.canonicalize().ok().map(|d| (what, d)))
        .collect();
    let mut found = Vec::new();
    for source in sources {
        for dir in directories(source) {
            for (what, own_dir) in &own {
                if own_dir.starts_with(&dir) {
                    found.push(format!(
                        "source `{}` is given {}, which holds the hub's {what} dir ({}): it could read or change the hub's own files. Its answers never show the hub's token or keys, and policy changes it writes wait for your confirmation, but give it a narrower directory",
                        source.id,
                        dir.display(),
                        own_dir.display()
                    ));
                }
            }
        }
    }
    found
}
