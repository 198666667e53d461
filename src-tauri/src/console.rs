//! Windows: release builds of the app are GUI programs (no console window opens with the app),
//! so run as the command line (`capa …` from a terminal) they have no console to print to.
//! Attaching to the console of the process that started them (the terminal's) gives them one.
//! A process started with its standard handles set (an MCP client running `capa mcp` over
//! pipes) keeps those: attaching only fills handles that are unset.
//!
//! Not built or run by this project's CI (Linux only; docs/desktop.md, "macOS and Windows").
#![allow(
    unsafe_code,
    reason = "one call into the Windows API, which takes a process id and touches no memory of ours"
)]

use windows_sys::Win32::System::Console::{ATTACH_PARENT_PROCESS, AttachConsole};

/// Attaches to the parent's console when it has one; otherwise (started from Explorer, or by a
/// client) nothing changes.
pub(crate) fn attach_to_parent() {
    // SAFETY: `AttachConsole` reads only its argument; on failure it changes nothing.
    unsafe {
        AttachConsole(ATTACH_PARENT_PROCESS);
    }
}
