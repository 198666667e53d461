//! The bearer token of the hub's HTTP endpoint: 32 random bytes, hex, made anew on every start
//! and kept in the data dir with mode 0600. A new token per start means a token that leaked
//! (copied into a config file, read by a process that should not have) stops working at the next
//! start; clients read the file when they connect (`capa mcp`, the CLI, the tests).

use std::path::Path;

/// Bytes of randomness in a token.
const TOKEN_BYTES: usize = 32;

/// Makes a fresh token and writes it to `path` (mode 0600, replacing the old one in one step).
/// Fails without system randomness rather than make a guessable token.
pub fn rotate(path: &Path) -> std::io::Result<String> {
    let token = capa_core::digest::random_hex(TOKEN_BYTES)
        .ok_or_else(|| std::io::Error::other("the system gave no randomness for a token"))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    capa_core::write_private_file(path, token.as_bytes())?;
    Ok(token)
}

/// Compares in time independent of where the strings differ.
pub fn matches(expected: &str, given: &str) -> bool {
    expected.len() == given.len()
        && expected
            .bytes()
            .zip(given.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_start_makes_a_new_private_token() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/token");
        let first = rotate(&path).expect("create");
        assert_eq!(first.len(), 64);
        let second = rotate(&path).expect("rotate");
        assert_ne!(second, first);
        assert_eq!(std::fs::read_to_string(&path).expect("read"), second);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Even when someone loosened the old file: the new one is made 0600.
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
            rotate(&path).expect("rotate");
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }

    #[test]
    fn comparison_needs_the_whole_token() {
        assert!(matches("abcd", "abcd"));
        assert!(!matches("abcd", "abce"));
        assert!(!matches("abcd", "abc"));
    }
}
