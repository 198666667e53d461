//! OpenAPI sources (`type: openapi`): the document read and served by an in-process MCP
//! server (crate `capa-openapi`) each time the source starts, so an edited document or a
//! server that came back is picked up by a restart.

use std::sync::Arc;

use capa_upstream::UpstreamTransport;

/// The transport of an OpenAPI source: a fresh load of its document per start.
pub(super) fn transport(source_id: &str, settings: capa_openapi::Settings) -> UpstreamTransport {
    let source_id = source_id.to_owned();
    let name = format!("OpenAPI {}", settings.location);
    UpstreamTransport::InProcess {
        name,
        connect: Arc::new(move || {
            let settings = settings.clone();
            let source_id = source_id.clone();
            Box::pin(async move {
                let api = capa_openapi::Api::load(&settings)
                    .await
                    .map_err(|e| e.to_string())?;
                tracing::info!(
                    source = %source_id,
                    tools = api.tools().len(),
                    version = %api.version,
                    base_url = %api.base_url(),
                    "read the OpenAPI document {}",
                    settings.location
                );
                for note in &api.notes {
                    tracing::warn!(source = %source_id, "{note}");
                }
                Ok(capa_openapi::serve_in_process(Arc::new(api)))
            })
        }),
    }
}
