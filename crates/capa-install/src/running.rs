//! Which of the two faces of the one program a process is: the `capa` command line or the
//! desktop app (issue 40: one binary answers as both). The app asks it of itself at start, and
//! of the process that already serves the data dir, so a second launch can say "the app is
//! already running" rather than blame a `capa hub serve` that is not there.

use std::ffi::OsString;
use std::path::Path;

use crate::program::is_cli_name;

/// Whether a program started with `args` (`argv`, at least its first two) is the command line
/// rather than the app: run under one of the command line's names (the package's `/usr/bin/capa`
/// passes its own), or with a subcommand (`capabilities-desktop mcp`: the app itself takes
/// options only).
pub fn runs_as_cli(args: &[OsString]) -> bool {
    let named = args
        .first()
        .is_some_and(|program| is_cli_name(Path::new(program)));
    let subcommand = args
        .get(1)
        .is_some_and(|first| !first.to_string_lossy().starts_with('-'));
    named || subcommand
}

/// What another process of this program is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunningProgram {
    /// The desktop app (in the tray, or with its window).
    App,
    /// The command line (`capa hub serve`, a client's `capa mcp`).
    CommandLine,
}

/// What `pid` is, from its command line (`/proc/<pid>/cmdline`); `None` where that cannot be
/// read (other systems, another user's process, a process that ended).
pub fn running_program(pid: u32) -> Option<RunningProgram> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    program_of_cmdline(&cmdline)
}

/// What a process is, from its NUL-separated command line; `None` for an empty one (a kernel
/// thread, a zombie).
fn program_of_cmdline(cmdline: &[u8]) -> Option<RunningProgram> {
    let args: Vec<OsString> = cmdline
        .split(|b| *b == 0)
        .filter(|arg| !arg.is_empty())
        .take(2)
        .map(|arg| OsString::from(String::from_utf8_lossy(arg).into_owned()))
        .collect();
    if args.is_empty() {
        return None;
    }
    Some(if runs_as_cli(&args) {
        RunningProgram::CommandLine
    } else {
        RunningProgram::App
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_binary_is_the_command_line_under_its_names_or_with_a_subcommand() {
        assert!(runs_as_cli(&args(&["/usr/bin/capa", "mcp"])));
        assert!(runs_as_cli(&args(&["/usr/bin/capabilities"])));
        assert!(runs_as_cli(&args(&["capa", "--version"])));
        assert!(runs_as_cli(&args(&[
            "/usr/bin/capabilities-desktop",
            "mcp"
        ])));
        assert!(!runs_as_cli(&args(&["/usr/bin/capabilities-desktop"])));
        assert!(!runs_as_cli(&args(&[
            "/usr/bin/capabilities-desktop",
            "--background"
        ])));
        assert!(!runs_as_cli(&args(&[])));
    }

    #[test]
    fn a_process_is_told_apart_by_its_command_line() {
        let app = b"/usr/bin/capabilities-desktop\0--background\0";
        assert_eq!(program_of_cmdline(app), Some(RunningProgram::App));
        let serve = b"/usr/bin/capabilities-desktop\0hub\0serve\0";
        assert_eq!(program_of_cmdline(serve), Some(RunningProgram::CommandLine));
        let capa = b"/home/me/.cargo/bin/capa\0hub\0serve\0";
        assert_eq!(program_of_cmdline(capa), Some(RunningProgram::CommandLine));
        assert_eq!(program_of_cmdline(b""), None);
    }

    #[test]
    fn this_test_process_reads_as_some_program() {
        // A test binary run with filters reads as the command line (it has arguments), without
        // as the app; either way its own command line is readable on Linux.
        let found = running_program(std::process::id());
        assert_eq!(found.is_some(), cfg!(target_os = "linux"));
    }
}
