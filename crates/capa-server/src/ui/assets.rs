//! The web UI's static files under `/app/`, from one directory chosen when the server starts:
//! `CAPA_UI_DIR` (a person's explicit choice, for development), else the directory the embedder
//! gave (`ServeOptions::ui_dir`: the desktop app's bundled resources), else the package layout
//! beside the binary (Unix: `<exe dir>/ui`, `<exe dir>/../lib/Capabilities/ui`), else — in debug
//! builds only — the `ui/dist` of the checkout the binary was built from. A planted
//! `index.html` would run with the UI's full access, so a directory is served only when it and
//! every directory above it belong to this user or root and nobody else may write to them, and
//! each file served is checked the same way.
//! Unknown paths fall back to `index.html` (a single-page app).

use std::path::{Component, Path, PathBuf};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::UiState;

const CSP: &str = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'";

/// Where the UI's built files are, chosen once at start (see the module's comment). The files
/// themselves are read per request, so a UI rebuilt while the hub runs is served at the next
/// reload.
pub(crate) fn ui_dir(given: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CAPA_UI_DIR") {
        return Some(PathBuf::from(dir)).filter(|d| servable(d));
    }
    let checkout =
        cfg!(debug_assertions).then(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/dist"));
    given
        .map(Path::to_path_buf)
        .into_iter()
        .chain(packaged_dirs())
        .chain(checkout)
        .find(|d| servable(d))
}

/// The package layout beside the binary (`<exe dir>/ui`, and `<exe dir>/../lib/Capabilities/ui`
/// for the .deb's `/usr/bin/capa`). Unix only: there [`servable`] checks who owns every
/// directory on the way; Windows has no such check here, so only `CAPA_UI_DIR` and the app's
/// bundled resources are served there.
fn packaged_dirs() -> Vec<PathBuf> {
    if !cfg!(unix) {
        return Vec::new();
    }
    let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    else {
        return Vec::new();
    };
    vec![exe_dir.join("ui"), exe_dir.join("../lib/Capabilities/ui")]
}

/// A directory with an `index.html` that nobody but this user (or root) can change: the file,
/// the directory and every directory above it are owned by this user or root and writable by
/// their owner only (a root-owned sticky directory such as `/tmp` may be on the way; what is in
/// it must still be ours). Anyone else who could write there could serve their own page from
/// the hub's origin.
fn servable(dir: &Path) -> bool {
    let index = dir.join("index.html");
    if !index.is_file() {
        return false;
    }
    let trusted = dir.canonicalize().is_ok_and(|dir| {
        ownership::trusted_file(&index)
            && dir
                .ancestors()
                .enumerate()
                .all(|(depth, d)| ownership::trusted_dir(d, depth > 0))
    });
    if !trusted {
        tracing::warn!(dir = %dir.display(), "not serving the web UI from a directory that someone else owns or may write to; make it yours and writable by you only (chmod go-w), or set CAPA_UI_DIR");
    }
    trusted
}

#[cfg(unix)]
mod ownership {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::path::Path;

    fn euid() -> u32 {
        #[expect(
            unsafe_code,
            reason = "geteuid(2) cannot fail and has no safe wrapper in std"
        )]
        unsafe {
            libc::geteuid()
        }
    }

    fn ours(meta: &std::fs::Metadata) -> bool {
        meta.uid() == 0 || meta.uid() == euid()
    }

    /// Owned by this user or root, writable by its owner only.
    pub(super) fn trusted_file(path: &Path) -> bool {
        std::fs::metadata(path)
            .is_ok_and(|meta| ours(&meta) && meta.permissions().mode() & 0o022 == 0)
    }

    /// As [`trusted_file`]; above the UI's own directory (`above`) also a root-owned sticky
    /// directory, in which nobody can replace what another user made.
    pub(super) fn trusted_dir(path: &Path, above: bool) -> bool {
        std::fs::metadata(path).is_ok_and(|meta| {
            let mode = meta.permissions().mode();
            let sticky_root = above && meta.uid() == 0 && mode & 0o1000 != 0;
            ours(&meta) && (mode & 0o022 == 0 || sticky_root)
        })
    }
}

#[cfg(not(unix))]
mod ownership {
    use std::path::Path;

    // Windows has no mode bits and its ACLs are not read here: only directories the person or
    // the installer chose are candidates there (see `packaged_dirs`).
    pub(super) fn trusted_file(_path: &Path) -> bool {
        true
    }

    pub(super) fn trusted_dir(_path: &Path, _above: bool) -> bool {
        true
    }
}

fn secure(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    response
}

/// An HTML response with the UI's security headers and `no-store`.
pub(crate) fn html(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    secure(response)
}

fn content_type(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
    {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// The file under `dir` a request path names, when it names one (no `..`, no absolute parts).
fn file_for(dir: &Path, request_path: &str) -> Option<PathBuf> {
    let relative = request_path
        .strip_prefix("/app")
        .unwrap_or_default()
        .trim_start_matches('/');
    if relative.is_empty() {
        return None;
    }
    let relative = Path::new(relative);
    if !relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
    {
        return None;
    }
    let file = dir.join(relative);
    file.is_file().then_some(file)
}

fn missing() -> Response {
    html(
        StatusCode::SERVICE_UNAVAILABLE,
        crate::approval_page::message_page(
            "The Capabilities UI is not built",
            &[
                "The hub found no built UI. In the repository, run `npm run build:ui` and reload this page.",
                "Set CAPA_UI_DIR to the directory holding index.html to serve it from elsewhere.",
            ],
        ),
    )
}

/// `GET /app/…`: a file of the UI, else its `index.html`.
pub(crate) async fn serve(State(state): State<UiState>, request: Request) -> Response {
    let Some(dir) = state.ui_dir.as_deref() else {
        return missing();
    };
    let path = request.uri().path();
    if path == "/app" {
        let mut response = html(StatusCode::PERMANENT_REDIRECT, String::new());
        response
            .headers_mut()
            .insert(header::LOCATION, HeaderValue::from_static("/app/"));
        return response;
    }
    let (file, is_index) = match file_for(dir, path) {
        Some(file) => (file, false),
        None => (dir.join("index.html"), true),
    };
    // Each file as well as the directory: one that someone else owns or may write is not ours.
    if !ownership::trusted_file(&file) {
        tracing::warn!(file = %file.display(), "not serving a UI file that someone else owns or may write to");
        return missing();
    }
    match tokio::fs::read(&file).await {
        Ok(bytes) => {
            let mut response = (StatusCode::OK, bytes).into_response();
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(content_type(&file)),
            );
            // Vite names built assets by content hash; the page itself must be fresh.
            let cache = if is_index || file.ends_with("index.html") {
                "no-store"
            } else {
                "no-cache"
            };
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
            secure(response)
        }
        Err(e) => {
            tracing::warn!(file = %file.display(), error = %e, "could not read a UI file");
            missing()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_name_files() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("a.js"), "x").expect("write");
        assert!(file_for(dir.path(), "/app/a.js").is_some());
        assert!(file_for(dir.path(), "/app/../a.js").is_none());
        assert!(file_for(dir.path(), "/app//etc/passwd").is_none());
        assert!(file_for(dir.path(), "/app/").is_none());
        assert!(file_for(dir.path(), "/app/settings/sources").is_none());
    }
}
