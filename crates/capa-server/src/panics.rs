//! A panic inside the hub while it serves one request becomes that request's error answer. The
//! hub serves every client of a person from one process (the desktop app included), so a bug
//! met by one request must cost neither the others nor this client's answer: without this, a
//! panicking handler drops its connection with nothing said. The words and the log text are
//! the MCP front's own (`capa_mcp::panics`), so every channel says the same.

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use capa_mcp::panics::{PANIC_ANSWER, panic_text};
use futures::FutureExt;

/// Middleware: runs the rest of the stack and answers a panic in it with a 500 JSON error.
pub(crate) async fn contain(request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    match std::panic::AssertUnwindSafe(next.run(request))
        .catch_unwind()
        .await
    {
        Ok(response) => response,
        Err(panic) => {
            tracing::error!(path = %path, panic = %panic_text(panic.as_ref()), "an HTTP request failed inside the hub (a bug); answered with an error, the hub serves on");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                axum::Json(serde_json::json!({
                    "ok": false,
                    "error": {"code": "internal", "message": PANIC_ANSWER},
                })),
            )
                .into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use tower::ServiceExt;

    use super::*;

    async fn boom() -> &'static str {
        panic!("on purpose")
    }

    #[tokio::test]
    async fn a_handler_that_panics_gets_a_json_error_and_the_router_serves_on() {
        let router = Router::new()
            .route("/boom", get(boom))
            .route("/fine", get(|| async { "fine" }))
            .layer(axum::middleware::from_fn(contain));
        let request = |path: &str| Request::get(path).body(Body::empty()).expect("request");
        let answer = router
            .clone()
            .oneshot(request("/boom"))
            .await
            .expect("answer");
        assert_eq!(answer.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(answer.into_body(), 1 << 16)
            .await
            .expect("body");
        let body: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(body["error"]["code"], "internal");
        assert_eq!(body["error"]["message"], PANIC_ANSWER);
        let fine = router.oneshot(request("/fine")).await.expect("answer");
        assert_eq!(fine.status(), StatusCode::OK);
    }
}
