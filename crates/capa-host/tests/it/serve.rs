//! `capa_host::serve`: what both shells start and stop.

use std::net::SocketAddr;

use capa_core::Redactor;
use capa_host::HostError;

use crate::{host, options, place};

#[tokio::test]
async fn a_hosted_hub_is_published_and_a_second_one_for_the_same_data_dir_is_refused() {
    let place = place();
    let hosted = host(&place).await;
    assert!(hosted.mcp_url.starts_with(&hosted.base_url));
    assert!(hosted.mcp_url.ends_with("/mcp"));
    assert_eq!(hosted.files(), vec![place.file.clone()]);
    assert!(place.paths.discovery().exists(), "hub.json is written");
    let token = std::fs::read_to_string(&hosted.token_file).expect("token");
    assert!(!token.trim().is_empty());

    let any: SocketAddr = "127.0.0.1:0".parse().expect("addr");
    match capa_host::serve(options(&place, any), Redactor::new()).await {
        Err(HostError::AlreadyRunning { url, data_dir, pid }) => {
            assert_eq!(url, hosted.base_url);
            assert_eq!(data_dir, place.paths.data_dir);
            assert_eq!(pid, std::process::id());
        }
        other => panic!("a second hub started: {other:?}"),
    }

    hosted.shutdown().await;
    assert!(!place.paths.discovery().exists(), "hub.json is removed");
    // A second stop does nothing.
    hosted.shutdown().await;
}

#[tokio::test]
async fn a_taken_port_is_reported_before_the_hub_starts_when_asked() {
    let place = place();
    let squatter = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let taken = squatter.local_addr().expect("addr");
    let mut asked = options(&place, taken);
    asked.check_port_first = true;
    match capa_host::serve(asked, Redactor::new()).await {
        Err(HostError::Bind { addr, source }) => {
            assert_eq!(addr, taken);
            assert_eq!(source.kind(), std::io::ErrorKind::AddrInUse);
        }
        other => panic!("expected the port check to fail: {other:?}"),
    }
    // The hub never started, so its database was never made.
    assert!(!place.paths.database().exists());
    assert!(!place.paths.discovery().exists());
}

#[tokio::test]
async fn a_broken_capabilities_file_is_an_invalid_configuration() {
    let place = place();
    std::fs::write(&place.file, "options: [").expect("write");
    let any: SocketAddr = "127.0.0.1:0".parse().expect("addr");
    let error = capa_host::serve(options(&place, any), Redactor::new())
        .await
        .expect_err("an invalid file does not start");
    assert!(
        error.to_string().starts_with("invalid configuration:\n"),
        "{error}"
    );
    assert!(!place.paths.discovery().exists());
}
