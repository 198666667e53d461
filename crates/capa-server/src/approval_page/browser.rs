//! Opening a URL in the user's browser: the command in `CAPA_BROWSER`, else `$BROWSER`, else the
//! platform's opener. The browser is started detached and never waited for.

use std::path::Path;
use std::process::{Command, Stdio};

/// `<command> <url>` from a user's setting: a whole value that names a file is the program
/// (paths with spaces), otherwise it splits on whitespace; `%s` marks where the URL goes.
fn user_command(value: &str, url: &str) -> Option<Vec<String>> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = if Path::new(value).is_file() {
        vec![value.to_owned()]
    } else {
        value.split_whitespace().map(str::to_owned).collect()
    };
    if parts.iter().any(|p| p.contains("%s")) {
        for part in &mut parts {
            *part = part.replace("%s", url);
        }
    } else {
        parts.push(url.to_owned());
    }
    Some(parts)
}

fn platform_command(url: &str) -> Vec<String> {
    let parts: &[&str] = if cfg!(windows) {
        &["cmd", "/c", "start", ""]
    } else if cfg!(target_os = "macos") {
        &["open"]
    } else {
        &["xdg-open"]
    };
    parts
        .iter()
        .map(|p| (*p).to_owned())
        .chain([url.to_owned()])
        .collect()
}

/// The program and arguments that open `url`, given `CAPA_BROWSER` and `BROWSER`.
fn command_line(url: &str, capa_browser: Option<&str>, browser: Option<&str>) -> Vec<String> {
    if let Some(parts) = capa_browser.and_then(|c| user_command(c, url)) {
        return parts;
    }
    // `$BROWSER` may list several commands separated by `:` (as Python's webbrowser reads it).
    let first_browser = browser.and_then(|b| {
        if cfg!(windows) {
            Some(b)
        } else {
            b.split(':').find(|c| !c.trim().is_empty())
        }
    });
    if let Some(parts) = first_browser.and_then(|b| user_command(b, url)) {
        return parts;
    }
    platform_command(url)
}

/// Starts the browser on `url`. Ok when the command started; what it then does is its business.
pub fn open(url: &str) -> std::io::Result<()> {
    let capa_browser = std::env::var("CAPA_BROWSER").ok();
    let browser = std::env::var("BROWSER").ok();
    let parts = command_line(url, capa_browser.as_deref(), browser.as_deref());
    let Some((program, args)) = parts.split_first() else {
        return Err(std::io::Error::other("no browser command"));
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        // Its own process group: a Ctrl-C meant for the hub does not reach the browser.
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = command.spawn()?;
    // Reaped on a side thread when it exits, so it never lingers as a zombie; nobody waits here.
    let _ = std::thread::Builder::new()
        .name("capa-browser".to_owned())
        .spawn(move || {
            let _ = child.wait();
        });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://127.0.0.1:4477/approve/abc";

    #[test]
    fn capa_browser_comes_first_then_browser_then_the_platform() {
        assert_eq!(
            command_line(URL, Some("my-open --new-tab"), Some("firefox")),
            ["my-open", "--new-tab", URL]
        );
        assert_eq!(
            command_line(URL, Some("  "), Some(":firefox %s:chromium")),
            ["firefox", URL]
        );
        let fallback = command_line(URL, None, None);
        assert_eq!(fallback.last().map(String::as_str), Some(URL));
        if cfg!(target_os = "linux") {
            assert_eq!(fallback[0], "xdg-open");
        }
    }

    #[test]
    fn a_program_path_with_spaces_stays_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let program = dir.path().join("my browser");
        std::fs::write(&program, "").expect("write");
        let program = program.to_string_lossy().into_owned();
        assert_eq!(
            command_line(URL, Some(&program), None),
            [program.as_str(), URL]
        );
    }
}
