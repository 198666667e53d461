//! Why one client file could not be planned or written.

use std::path::PathBuf;

/// A problem with one client's configuration file. The other files are still handled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    /// The file exists but could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The new text could not be written (or the file removed).
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON capa can rewrite (for example JSON with comments, which VS Code
    /// accepts); rewriting it would lose what capa cannot parse.
    #[error(
        "{} is not plain JSON ({detail}); capa does not rewrite it, so nothing of yours is lost. {hint}",
        path.display()
    )]
    NotJson {
        path: PathBuf,
        detail: String,
        /// What to do instead, for example the entry to add by hand.
        hint: String,
    },
    /// The file is not TOML.
    #[error("{} is not valid TOML ({detail}); capa does not rewrite it", path.display())]
    NotToml { path: PathBuf, detail: String },
    /// The file parses, but not into the shape the client reads (for example `mcpServers` is a
    /// list).
    #[error("{}: {message}", path.display())]
    Shape { path: PathBuf, message: String },
    /// Neither `CODEX_HOME` nor a home directory is known, so the user-level Codex file cannot be
    /// found.
    #[error("cannot find Codex's user configuration: no home directory and CODEX_HOME is not set")]
    NoCodexHome,
    /// The file changed on disk after its change was shown, so the shown change is stale.
    #[error("{} changed since the change was shown; look at the new change and apply that", path.display())]
    Changed { path: PathBuf },
    /// The file is larger than capa reads.
    #[error("{} is larger than {limit} bytes; capa does not rewrite it", path.display())]
    TooLarge { path: PathBuf, limit: u64 },
    /// A user-wide file's `capa` entry is not one this request may change.
    #[error("{}: {message}", path.display())]
    Refused { path: PathBuf, message: String },
}
