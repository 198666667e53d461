//! Login links for a person at a terminal, handed over through the data dir.
//!
//! `POST /api/ui/link` with the bearer token alone never returns a login link: any local process
//! that reads the token file holds the token, and a UI session can approve calls. The hub opens
//! the link in the browser itself instead. A person who wants the link printed (`capa ui
//! --print`, over SSH) runs it at an interactive terminal, which makes the link's secret itself,
//! writes it to a private file under `<data dir>/ui-handoff/`, and names the file in the
//! request; the hub takes the file (once, while fresh) and accepts that secret as a link.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Where terminals leave link secrets for the hub.
pub fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join("ui-handoff")
}

/// How long a handed-over secret may wait for the hub.
const FRESH: Duration = Duration::from_mins(1);

fn is_hex(text: &str, min: usize) -> bool {
    text.len() >= min && text.len() <= 128 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Takes the handed-over secret named `name`: a regular private file (not a link), fresh,
/// holding hex; it is removed whatever its content.
pub(crate) fn take(data_dir: &Path, name: &str) -> Result<String, &'static str> {
    if !is_hex(name, 32) {
        return Err("a handoff name is 32 or more hex digits");
    }
    let path = dir(data_dir).join(name);
    let meta = std::fs::symlink_metadata(&path).map_err(|_| "no such handoff")?;
    let content = std::fs::read_to_string(&path);
    let _ = std::fs::remove_file(&path);
    if !meta.file_type().is_file() {
        return Err("the handoff is not a regular file");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            return Err("the handoff file is readable by others");
        }
    }
    let age = meta
        .modified()
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .unwrap_or(Duration::MAX);
    if age > FRESH {
        return Err("the handoff is stale");
    }
    let token = content.map_err(|_| "the handoff does not read")?;
    let token = token.trim();
    if !is_hex(token, 64) {
        return Err("the handoff holds no link secret");
    }
    Ok(token.to_owned())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_private_fresh_handoff_is_taken_once() {
        let data = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir(data.path())).expect("dir");
        let name = "ab".repeat(16);
        let file = dir(data.path()).join(&name);
        let secret = "cd".repeat(32);
        std::fs::write(&file, &secret).expect("write");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        assert_eq!(
            take(data.path(), &name),
            Err("the handoff file is readable by others")
        );
        assert!(!file.exists(), "removed whatever its content");
        std::fs::write(&file, &secret).expect("write");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        assert_eq!(take(data.path(), &name), Ok(secret));
        assert_eq!(take(data.path(), &name), Err("no such handoff"));
        assert!(take(data.path(), "../token").is_err());
    }
}
