//! `capa connections login <source>`: an OAuth sign-in from a terminal. The sign-in runs in
//! this process (its own loopback redirect), the tokens go to the OS keychain, and a running
//! hub is told to start the source again with them.

use std::process::ExitCode;

use anyhow::{Context, bail};
use capa_core::{ConnectionVault, DEFAULT_SIGN_IN_NAME, HubPaths, SIGN_IN_WAIT, sign_in_request};
use capa_oauth::OAUTH_FIELD;

use crate::cli::GlobalArgs;
use crate::setup;

pub(super) async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    connections: &ConnectionVault,
    source: &str,
    connection: Option<String>,
    no_browser: bool,
) -> anyhow::Result<ExitCode> {
    let files = setup::config_files(global, paths)?;
    let config = setup::load_config(&files, paths)?;
    let source_config = setup::configured_source(&config, source)?;
    let mut request = sign_in_request(source_config)?;
    let key = connections.key_of(source_config);
    let records = connections.list()?;
    let signed: Vec<_> = records
        .iter()
        .filter(|c| c.source == key && c.fields.iter().any(|f| f == OAUTH_FIELD))
        .collect();
    let name = connection.unwrap_or_else(|| {
        signed
            .iter()
            .find(|c| c.is_default)
            .map_or_else(|| DEFAULT_SIGN_IN_NAME.to_owned(), |c| c.name.clone())
    });
    if !capa_core::is_connection_name(&name) {
        bail!(
            "connection name {name:?} is not valid: use lower-case letters, digits, `-` and `_`, for example `personal` or `work`"
        );
    }
    capa_core::fill_client_secret(connections, source_config, &name, &mut request)?;
    let store = connections.token_store(&key, &name);
    let pending = capa_oauth::sign_in(request, store).await?;
    let url = pending.authorization_url().to_owned();
    if no_browser {
        eprintln!("Open this address in your browser to sign in to `{source}`:\n  {url}");
    } else {
        eprintln!(
            "Opening your browser to sign in to `{source}`… If it does not open, visit:\n  {url}"
        );
        let opened = {
            let url = url.clone();
            tokio::task::spawn_blocking(move || capa_server::open_in_browser(&url)).await
        };
        if !matches!(opened, Ok(Ok(()))) {
            eprintln!("(The browser did not start; open the address above yourself.)");
        }
    }
    eprintln!(
        "Waiting for the sign-in (up to {} min)…",
        SIGN_IN_WAIT.as_secs() / 60
    );
    let summary = pending.finish(SIGN_IN_WAIT).await?;
    let first = !signed.iter().any(|c| c.is_default);
    let record = connections
        .record_oauth(&key, &name, first)
        .context("recording the connection")?;
    let expiry = summary
        .expiry_text()
        .map(|t| format!("; {t}"))
        .unwrap_or_default();
    println!(
        "Signed in to `{source}` as connection `{}`{}{expiry}.",
        record.name,
        if record.is_default { " (default)" } else { "" }
    );
    super::reload_notice::notify_running_hub(paths).await;
    Ok(ExitCode::SUCCESS)
}
