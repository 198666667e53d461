//! The web UI's static files under `/app/`, from the first directory holding an `index.html`:
//! `CAPA_UI_DIR`, `<exe dir>/../../ui/dist` (the repository's `target/*` layout), the directory
//! the embedder gave (`ServeOptions::ui_dir`: the desktop app's bundled resources), `<exe dir>/ui`.
//! Unknown paths fall back to `index.html` (a single-page app).

use std::path::{Component, Path, PathBuf};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::UiState;

const CSP: &str = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'";

/// Where the UI's built files are, when they are anywhere: `CAPA_UI_DIR` (the person's explicit
/// choice), else the repository's `ui/dist` beside a `target/*` build (fresher than a copy a
/// bundle build left in `target/release/ui`), else `given`, else `<exe dir>/ui`. Looked up per
/// request, so a UI built while the hub runs is served at the next reload.
pub(crate) fn ui_dir(given: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CAPA_UI_DIR") {
        return Some(PathBuf::from(dir)).filter(|d| d.join("index.html").is_file());
    }
    let exe = std::env::current_exe().ok()?;
    let exe_dir = exe.parent()?;
    [
        Some(exe_dir.join("../../ui/dist")),
        given.map(Path::to_path_buf),
        Some(exe_dir.join("ui")),
    ]
    .into_iter()
    .flatten()
    .find(|d| d.join("index.html").is_file())
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
    let Some(dir) = ui_dir(state.ui_dir.as_deref()) else {
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
    let (file, is_index) = match file_for(&dir, path) {
        Some(file) => (file, false),
        None => (dir.join("index.html"), true),
    };
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
