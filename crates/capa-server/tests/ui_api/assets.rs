//! The UI's built files: served with strict headers, or a clear error when not built.

use reqwest::StatusCode;

use crate::harness::{ALL, required_by, serve_ui};

#[tokio::test]
async fn the_ui_is_served_with_strict_headers_or_a_clear_error_when_not_built() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let response = ui
        .client
        .get(format!("{}/app/settings/sources", ui.base))
        .send()
        .await
        .expect("app");
    let headers = response.headers().clone();
    assert!(
        headers["content-security-policy"]
            .to_str()
            .expect("csp")
            .starts_with("default-src 'self'; style-src 'self' 'unsafe-inline'"),
        "{headers:?}"
    );
    assert_eq!(headers["x-frame-options"], "DENY");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    let status = response.status();
    let body = response.text().await.expect("body");
    match status {
        // Built (CAPA_UI_DIR or the repository's layout): the single-page app's index.
        StatusCode::OK => assert!(
            body.contains("<html") || body.contains("<!doctype"),
            "{body}"
        ),
        StatusCode::SERVICE_UNAVAILABLE => {
            assert!(body.contains("npm run build:ui"), "{body}");
            if let Some(by) = required_by(ALL) {
                panic!("{by} is set, so the UI must be served: build it with `npm run build:ui`");
            }
        }
        other => panic!("unexpected {other}: {body}"),
    }
    ui.server.shutdown().await;
}
