//! The typed client: the hub in this process and the running hub over HTTP give the same
//! answers, and the types read back exactly what the API sends (so `--json` prints the API's
//! own answer).

use capa_host::api::{CallRequest, SearchApiRequest};
use capa_host::{HubClient, LocalHub, RemoteHub, RunningHub};

use crate::{host, place};

#[tokio::test]
async fn in_process_and_over_http_the_answers_are_the_same() {
    let place = place();
    let hosted = host(&place).await;
    hosted.hub.startup_done().await;
    let local = LocalHub::new(hosted.hub.clone());
    let remote = RemoteHub::new(
        RunningHub::find(&place.paths)
            .await
            .expect("the hosted hub is found"),
    );

    let sources = local.sources().await.expect("sources");
    assert_eq!(
        serde_json::to_value(&sources).expect("json"),
        serde_json::to_value(hosted.hub.sources().list()).expect("json"),
        "the typed sources are the hub's, field for field"
    );
    assert_eq!(
        serde_json::to_value(remote.sources().await.expect("sources")).expect("json"),
        serde_json::to_value(&sources).expect("json")
    );
    assert!(
        sources
            .iter()
            .any(|s| s.id == "demo" && s.state == capa_core::SourceState::Ready)
    );

    let tools = local.tools().await.expect("tools");
    let remote_tools = remote.tools().await.expect("tools");
    assert_eq!(
        tools.iter().map(|t| &t.address).collect::<Vec<_>>(),
        remote_tools.iter().map(|t| &t.address).collect::<Vec<_>>()
    );

    let search = || SearchApiRequest {
        query: "notes".to_owned(),
        namespace: None,
        limit: None,
    };
    let found = local.search(search()).await.expect("search");
    assert!(found.ok, "{found:?}");
    assert_eq!(
        found.text,
        remote.search(search()).await.expect("search").text
    );

    let config = remote.config().await.expect("config");
    assert_eq!(config.files, vec![place.file.clone()]);
    assert_eq!(config.tool_exposure, "code");

    hosted.shutdown().await;
}

#[tokio::test]
async fn a_call_that_needs_a_person_reads_back_as_the_api_sent_it() {
    let place = place();
    let hosted = host(&place).await;
    hosted.hub.startup_done().await;
    let local = LocalHub::new(hosted.hub.clone());
    let request = || CallRequest {
        address: "demo.delete_note".to_owned(),
        arguments: Some(serde_json::Map::from_iter([(
            "title".to_owned(),
            serde_json::Value::from("x"),
        )])),
        ..CallRequest::default()
    };
    let sent = capa_server::http::call_json(&hosted.hub, request(), "test").await;
    let typed: capa_host::api::CallAnswer =
        serde_json::from_value(sent.clone()).expect("a call answer");
    assert_eq!(serde_json::to_value(&typed).expect("json"), sent);
    assert_eq!(typed.error_code(), Some("approval_required"));
    let approval = typed.approval.expect("the pending approval");
    assert_eq!(approval.address, "demo.delete_note");

    // Asked again through the client, the same call is waiting (a new pending input).
    let again = local.call(request()).await.expect("call");
    assert_eq!(again.error_code(), Some("approval_required"));

    let pending = capa_host::approvals::pending(&place.paths)
        .await
        .expect("pending");
    assert_eq!(pending.len(), 2, "{pending:?}");
    assert!(pending.iter().any(|p| p.id == approval.id));
    hosted.shutdown().await;
}
