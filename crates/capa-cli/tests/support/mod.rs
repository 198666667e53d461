//! Helpers shared by the CLI's test binaries.

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs capa on a pseudo-terminal (util-linux `script`), as a person at a terminal does, with
/// `input` typed in. Output is the terminal's (stdout and stderr together).
pub fn at_terminal(dir: &Path, args: &[&str], input: &str) -> Output {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let line = std::iter::once(env!("CARGO_BIN_EXE_capa"))
        .chain(args.iter().copied())
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ");
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .current_dir(dir)
        .env("CAPA_DATA_DIR", dir.join("data"))
        .env("CAPA_CONFIG_DIR", dir.join("config"))
        .env("CAPA_NO_BROWSER", "1")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script runs");
    if let Some(mut stdin) = child.stdin.take() {
        // The prompt reads a line once it is up; typed-ahead input waits in the terminal.
        std::io::Write::write_all(&mut stdin, input.as_bytes()).expect("type");
    }
    child.wait_with_output().expect("script ends")
}
