//! Reading YAML files (capabilities and policy files) into their types with every problem
//! reported at once, each with its position and a fix in the project's words, and with bounds on
//! depth and size so that no input can take the stack or the memory.
//!
//! `build` turns the parser's events into a positioned tree (iteratively, limits counted as it
//! goes); `de` reads the tree into the file's serde types without stopping at a problem; `read`
//! runs the passes and turns the problems into [`crate::ConfigIssue`]s.

mod build;
pub(crate) mod de;
mod fatal;
pub(crate) mod limits;
mod problem;
mod read;
mod tree;

pub(crate) use read::{read, settle};

/// The text of `file`, read up to one byte past [`limits::MAX_TEXT_BYTES`] so that a huge file
/// (or a device that never ends) is refused by [`read`] as too large instead of filling memory.
pub(crate) fn read_text(file: &std::path::Path) -> std::io::Result<String> {
    let bytes = read_capped(file, limits::MAX_TEXT_BYTES)?;
    if bytes.len() > limits::MAX_TEXT_BYTES {
        // Cut anywhere, maybe inside a character; only its length matters now.
        return Ok(String::from_utf8_lossy(&bytes).into_owned());
    }
    String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// The bytes of `file`, at most `limit + 1`: one past the limit says it is larger.
pub(crate) fn read_capped(file: &std::path::Path, limit: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(file)?
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}
