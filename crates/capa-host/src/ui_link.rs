//! Login links to the running hub's web UI for `capa ui`. The hub opens a one-time link in the
//! browser itself; a link for a person to open is made here and handed to the hub through a
//! private file in the data dir (capa-server's `ui::handoff`), so the link never passes
//! through the API, where any process that holds the token could ask for one.

use anyhow::{Context, bail};
use capa_core::HubPaths;

use crate::api::UiLinkRequest;
use crate::client::RemoteHub;

/// Asks the running hub to open a login link in the browser.
pub async fn open_in_browser(hub: &RemoteHub) -> anyhow::Result<()> {
    let answer = hub
        .ui_link(&UiLinkRequest::default())
        .await
        .context("asking the running hub to open its UI")?;
    if !answer.ok {
        let message = answer
            .error
            .map_or_else(|| "the hub could not open its UI".to_owned(), |e| e.message);
        bail!("{message}");
    }
    Ok(())
}

/// A login link whose secret this process made and handed to the hub. The caller makes sure a
/// person reads it (it works once, for ten minutes).
pub async fn handed_over_link(paths: &HubPaths, hub: &RemoteHub) -> anyhow::Result<String> {
    let secret = random_hex(32)?;
    let name = random_hex(16)?;
    let dir = capa_server::ui::handoff::dir(&paths.data_dir);
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(&dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join(&name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    std::io::Write::write_all(
        &mut options
            .open(&file)
            .with_context(|| format!("writing {}", file.display()))?,
        secret.as_bytes(),
    )?;
    let answer = hub
        .ui_link(&UiLinkRequest {
            handoff: Some(name),
        })
        .await;
    let _ = std::fs::remove_file(&file);
    let answer = answer.context("handing the login link to the running hub")?;
    if !answer.ok {
        bail!(
            "the running hub did not take the login link: {}",
            serde_json::to_string(&answer).unwrap_or_default()
        );
    }
    Ok(format!("{}/app/login/{secret}", hub.running().base_url))
}

fn random_hex(bytes: usize) -> anyhow::Result<String> {
    capa_core::digest::random_hex(bytes)
        .ok_or_else(|| anyhow::anyhow!("the system gave no randomness for a login link"))
}
