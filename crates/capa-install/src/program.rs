//! Which program MCP clients should run to reach the hub (`capa mcp`): the command line's own
//! program, under the name a person types. In the package it is the app's binary, which answers
//! as the command line when run as `capa` or `capabilities` (issue 40: one program); the package's
//! `/usr/bin/capa` runs it under that name.

use std::path::{Path, PathBuf};

/// The names under which the program is the command line.
pub const CLI_NAMES: [&str; 2] = ["capa", "capabilities"];

/// Whether `path` names the command line (`capa`, `capabilities`, with or without `.exe`).
pub fn is_cli_name(path: &Path) -> bool {
    path.file_stem()
        .is_some_and(|stem| CLI_NAMES.iter().any(|name| stem == *name))
}

/// The `capa` program clients should run, from how this process was started: `invoked_as`
/// (its `argv[0]`) when that is an absolute path named like the command line (the package's
/// wrapper passes its own path), else `exe` (the running binary) when it is named so, else a
/// `capa` beside `exe`, else the Linux package's `/usr/bin/capa`, else `exe` when it is the app
/// (its packages for macOS and Windows have no `capa` of their own, and the app's binary is the
/// command line when given a subcommand: `capabilities-desktop mcp`); `None` when none exists.
/// `is_file` says whether a path is a file.
pub fn capa_program(
    invoked_as: Option<&Path>,
    exe: &Path,
    is_file: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    if let Some(invoked) = invoked_as.filter(|p| p.is_absolute() && is_cli_name(p) && is_file(p)) {
        return Some(invoked.to_path_buf());
    }
    if is_cli_name(exe) {
        return Some(exe.to_path_buf());
    }
    let beside = exe.with_file_name(format!("capa{}", std::env::consts::EXE_SUFFIX));
    if is_file(&beside) {
        return Some(beside);
    }
    let packaged = Path::new("/usr/bin/capa");
    if cfg!(unix) && is_file(packaged) {
        return Some(packaged.to_path_buf());
    }
    (is_app_name(exe) && is_file(exe)).then(|| exe.to_path_buf())
}

/// The app's binary (`mainBinaryName` in src-tauri/tauri.conf.json), with or without `.exe`.
pub const APP_NAME: &str = "capabilities-desktop";

fn is_app_name(path: &Path) -> bool {
    path.file_stem().is_some_and(|stem| stem == APP_NAME)
}

/// [`capa_program`] for this process (its `argv[0]` and `current_exe`, files on disk). The name
/// it was run by is resolved as `current_exe` is (symbolic links followed), so a `capa` reached
/// through a linked directory is named by its real path; the package's wrapper is a file of
/// its own, and stays itself.
pub fn this_capa_program() -> Option<PathBuf> {
    let invoked = std::env::args_os()
        .next()
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .and_then(|p| p.canonicalize().ok());
    let exe = std::env::current_exe().ok()?;
    capa_program(invoked.as_deref(), &exe, Path::is_file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(present: &'static [&'static str]) -> impl Fn(&Path) -> bool {
        move |p| present.iter().any(|f| Path::new(f) == p)
    }

    #[test]
    fn the_packaged_wrapper_is_named_not_the_app_binary_it_runs() {
        let found = capa_program(
            Some(Path::new("/usr/bin/capa")),
            Path::new("/usr/bin/capabilities-desktop"),
            files(&["/usr/bin/capa", "/usr/bin/capabilities-desktop"]),
        );
        assert_eq!(found.as_deref(), Some(Path::new("/usr/bin/capa")));
    }

    #[test]
    fn the_app_without_a_capa_of_its_own_is_the_program_clients_run() {
        for exe in [
            "/Applications/Capabilities.app/Contents/MacOS/capabilities-desktop",
            "C:/Program Files/Capabilities/capabilities-desktop.exe",
        ] {
            let found = capa_program(None, Path::new(exe), |p| p == Path::new(exe));
            assert_eq!(found.as_deref(), Some(Path::new(exe)));
        }
        // Any other program (a test binary, the benchmarks) is not the command line.
        let other = "/src/target/debug/deps/capa_install-0123";
        let found = capa_program(None, Path::new(other), |p| p == Path::new(other));
        assert_eq!(found, None);
    }

    #[test]
    fn a_cargo_built_capa_is_itself() {
        let found = capa_program(
            Some(Path::new("target/debug/capa")),
            Path::new("/src/target/debug/capa"),
            files(&[]),
        );
        assert_eq!(found.as_deref(), Some(Path::new("/src/target/debug/capa")));
    }

    #[test]
    fn the_app_finds_the_capa_beside_it_then_the_packaged_one() {
        let app = Path::new("/opt/x/capabilities-desktop");
        let beside = capa_program(Some(app), app, files(&["/opt/x/capa"]));
        assert_eq!(beside.as_deref(), Some(Path::new("/opt/x/capa")));
        let packaged = capa_program(Some(app), app, files(&["/usr/bin/capa"]));
        assert_eq!(
            packaged.as_deref(),
            cfg!(unix).then_some(Path::new("/usr/bin/capa"))
        );
        // Without a capa, the app itself, which is the command line given a subcommand.
        let itself = capa_program(Some(app), app, files(&["/opt/x/capabilities-desktop"]));
        assert_eq!(itself.as_deref(), Some(app));
        assert_eq!(capa_program(Some(app), app, files(&[])), None);
    }

    #[test]
    fn a_relative_or_missing_invocation_name_is_not_taken() {
        let app = Path::new("/usr/bin/capabilities-desktop");
        let relative = capa_program(Some(Path::new("capa")), app, files(&["capa"]));
        assert_eq!(relative, None);
        assert!(is_cli_name(Path::new("capabilities.exe")));
        assert!(!is_cli_name(Path::new("capabilities-desktop")));
    }
}
