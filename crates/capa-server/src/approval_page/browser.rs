//! Opening a URL in the user's browser: the command in `CAPA_BROWSER`, else `$BROWSER`, else the
//! platform's opener, started directly (never through a shell, where `&` in a URL would start a
//! second command), detached and never waited for.
//!
//! The URLs opened here carry one-time secrets (login and approval links), and a process's
//! arguments are readable by every local user (`/proc/<pid>/cmdline`, `ps`). So the browser is
//! given a `file://` URL of a page that only this user can read (0600, in a fresh 0700 directory
//! under `$XDG_RUNTIME_DIR`, else the temporary directory) and that sends the browser on to the
//! link; the page is removed after [`PAGE_LINGER`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long the forwarding page stays: long enough for a browser that starts cold.
const PAGE_LINGER: Duration = Duration::from_mins(2);

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
        // The URL handler itself, not `cmd /c start`: no shell parses the URL.
        &["rundll32", "url.dll,FileProtocolHandler"]
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

/// A private page that forwards the browser to a link, so the link stays out of argv.
struct ForwardingPage {
    dir: PathBuf,
    file: PathBuf,
}

impl ForwardingPage {
    fn write(url: &str) -> std::io::Result<Self> {
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|d| d.is_absolute() && d.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let name = capa_core::digest::random_hex(16)
            .ok_or_else(|| std::io::Error::other("the system gave no randomness"))?;
        let dir = base.join(format!("capa-open-{name}"));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        // A fresh name, created here: never a directory someone else prepared.
        builder.create(&dir)?;
        let file = dir.join("open.html");
        let page = Self { dir, file };
        if let Err(e) = capa_core::write_private_file(&page.file, forwarding_html(url).as_bytes()) {
            page.remove();
            return Err(e);
        }
        Ok(page)
    }

    fn url(&self) -> String {
        file_url(&self.file)
    }

    fn remove(&self) {
        let _ = std::fs::remove_file(&self.file);
        let _ = std::fs::remove_dir(&self.dir);
    }

    /// Removed on a side thread after [`PAGE_LINGER`] (a hub that stops sooner leaves it behind;
    /// its link then is used or expires within ten minutes).
    fn remove_later(self) {
        let spawned = std::thread::Builder::new()
            .name("capa-browser-page".to_owned())
            .spawn(move || {
                std::thread::sleep(PAGE_LINGER);
                self.remove();
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot schedule the removal of the browser's forwarding page");
        }
    }
}

/// The page: a refresh to `url` at once, and a link for a browser that does not follow it.
fn forwarding_html(url: &str) -> String {
    let url = escape_attribute(url);
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><meta name=\"referrer\" content=\"no-referrer\">\n<meta http-equiv=\"refresh\" content=\"0;url={url}\">\n<title>Opening Capabilities</title></head>\n<body><p><a id=\"target\" href=\"{url}\">Continue to Capabilities</a></p></body></html>\n"
    )
}

fn escape_attribute(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `file:///…` for an absolute path, each byte outside the unreserved set percent-encoded.
fn file_url(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut url = String::from("file://");
    if !text.starts_with('/') {
        url.push('/'); // `C:/…` on Windows
    }
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~:".contains(&byte) {
            url.push(char::from(byte));
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

/// Starts the browser on `url` through a private forwarding page. Ok when the command started;
/// what it then does is its business.
pub fn open(url: &str) -> std::io::Result<()> {
    open_and_watch(url, Duration::ZERO)
}

/// How long [`open_for_person`] watches the opener for a failure. `xdg-open` without a display
/// (or a desktop with no browser set) gives up well within this; an opener that still runs after
/// it is taken as a browser that opened.
const CONFIRM_WAIT: Duration = Duration::from_millis(1500);

/// As [`open`], then watches the opener for [`CONFIRM_WAIT`]: an opener that exits with a
/// failure in that time (no display, a desktop whose `xdg-open` finds no browser) is an error, so
/// that a person waiting for the page (`capa ui`, a sign-in) is told and shown the address rather
/// than waiting for a page that never comes. Blocks that long: call it off a runtime's workers.
pub fn open_for_person(url: &str) -> std::io::Result<()> {
    open_and_watch(url, CONFIRM_WAIT)
}

fn open_and_watch(url: &str, wait: Duration) -> std::io::Result<()> {
    let page = ForwardingPage::write(url)?;
    let started = start_browser(&page.url(), wait);
    match started {
        Ok(()) => page.remove_later(),
        Err(_) => page.remove(),
    }
    started
}

fn start_browser(url: &str, wait: Duration) -> std::io::Result<()> {
    let capa_browser = std::env::var("CAPA_BROWSER").ok();
    let browser = std::env::var("BROWSER").ok();
    spawn_watched(
        &command_line(url, capa_browser.as_deref(), browser.as_deref()),
        wait,
    )
}

/// Starts `parts` detached; an exit with a failure within `wait` is an error.
fn spawn_watched(parts: &[String], wait: Duration) -> std::io::Result<()> {
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
    let deadline = std::time::Instant::now() + wait;
    while std::time::Instant::now() < deadline {
        match child.try_wait()? {
            Some(status) if status.success() => return Ok(()),
            Some(status) => {
                return Err(std::io::Error::other(format!(
                    "the browser command `{program}` failed ({status})"
                )));
            }
            None => std::thread::sleep(Duration::from_millis(25)),
        }
    }
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

    #[cfg(unix)]
    #[test]
    fn a_watched_opener_that_fails_is_an_error_and_one_that_runs_or_succeeds_is_not() {
        let parts = |p: &[&str]| p.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let wait = Duration::from_secs(5);
        let failed = spawn_watched(&parts(&["sh", "-c", "exit 3"]), wait).expect_err("failed");
        assert!(failed.to_string().contains("`sh` failed"), "{failed}");
        spawn_watched(&parts(&["true"]), wait).expect("exit 0 is opened");
        let started = std::time::Instant::now();
        spawn_watched(&parts(&["sleep", "30"]), Duration::from_millis(200)).expect("still running");
        assert!(started.elapsed() < Duration::from_secs(5));
        // Unwatched, a failing opener is not waited for.
        spawn_watched(&parts(&["false"]), Duration::ZERO).expect("not watched");
    }

    #[test]
    fn the_forwarding_page_is_private_and_escapes_the_link() {
        let page =
            ForwardingPage::write("http://127.0.0.1:1/app/login/abc?x=\"><script>").expect("page");
        let html = std::fs::read_to_string(&page.file).expect("read");
        assert!(
            html.contains("http://127.0.0.1:1/app/login/abc?x=&quot;&gt;&lt;script&gt;"),
            "{html}"
        );
        assert!(!html.contains("<script>"), "{html}");
        assert!(page.url().starts_with("file:///"), "{}", page.url());
        assert!(!page.url().contains("login"), "{}", page.url());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
            assert_eq!(mode(&page.file), 0o600);
            assert_eq!(mode(&page.dir), 0o700);
        }
        page.remove();
        assert!(!page.dir.exists());
    }

    #[test]
    fn file_urls_encode_what_a_url_cannot_hold() {
        assert_eq!(
            file_url(Path::new("/run/user/1000/capa-open-ab/open.html")),
            "file:///run/user/1000/capa-open-ab/open.html"
        );
        assert_eq!(
            file_url(Path::new("/tmp/a b/#?.html")),
            "file:///tmp/a%20b/%23%3F.html"
        );
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
