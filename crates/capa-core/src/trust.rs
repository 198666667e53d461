//! What a person trusted: the digest of how a source starts, what a found project file brings
//! besides sources of its own (capa-config's project settings), and the key a source's
//! connections are stored under (a project source's own, unless the person let it use the
//! global source's). See [`crate::hub`]'s source confirmation for when a source waits for a
//! person.

use std::path::{Path, PathBuf};

use capa_config::{
    ConfigFiles, HubConfig, ProjectConnections, ProjectSettings, SourceConfig, SourceTransport,
};
use capa_store::{Store, StoreError, TrustedProjectSource};

/// SHA-256 of how `source` starts.
pub fn source_digest(source: &SourceConfig) -> String {
    let text = match &source.transport {
        SourceTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => format!(
            "stdio\n{command}\n{}\n{}\n{}",
            args.join("\u{0}"),
            env.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("\u{0}"),
            cwd.as_ref()
                .map(|c| c.display().to_string())
                .unwrap_or_default()
        ),
        SourceTransport::Http {
            url,
            headers,
            oauth,
        } => {
            let mut text = format!(
                "http\n{url}\n{}",
                headers
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join("\u{0}")
            );
            // Only when declared, so that the digests of sources without it stay as they were.
            if let Some(oauth) = oauth {
                text.push_str(&format!(
                    "\noauth\n{}\n{}",
                    oauth.client_id.as_deref().unwrap_or_default(),
                    oauth.scopes.join(" ")
                ));
            }
            text
        }
        SourceTransport::OpenApi {
            spec,
            base_url,
            headers,
            auth,
        } => {
            let pairs = |values: &std::collections::BTreeMap<String, String>| {
                values
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join("\u{0}")
            };
            format!(
                "openapi\n{spec}\n{}\n{}\n{}",
                base_url.as_deref().unwrap_or_default(),
                pairs(headers),
                pairs(auth)
            )
        }
    };
    crate::digest::sha256_hex(text.as_bytes())
}

/// How a project file is named in the trust records: its canonical path (symlinks resolved), so
/// that the same file reached another way is the same file.
pub(crate) fn trust_file(file: &Path) -> String {
    std::fs::canonicalize(file)
        .unwrap_or_else(|_| file.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// What a person trusted of project source `source` (any digest), when readable.
pub(crate) fn trusted_record(store: &Store, source: &SourceConfig) -> Option<TrustedProjectSource> {
    store
        .trusted_project_source(&trust_file(&source.file), &source.id)
        .map_err(|e| tracing::warn!(error = %e, source = %source.id, "could not read the trusted project sources; counting it as not trusted"))
        .ok()
        .flatten()
}

/// The key a project source's own connections are stored under (database and keychain):
/// `<id>@<first 12 hex digits of the SHA-256 of the file's canonical path>`. No source of the
/// person's own files has an `@` in its id, so none shares it.
pub(crate) fn project_connection_key(source: &SourceConfig) -> String {
    let digest = crate::digest::sha256_hex(trust_file(&source.file).as_bytes());
    format!("{}@{}", source.id, &digest[..12])
}

/// Whether the person let project source `source`, as it is configured now, use the connections
/// of the global source with its id.
pub(crate) fn uses_global_connections(store: &Store, source: &SourceConfig) -> bool {
    trusted_record(store, source)
        .is_some_and(|t| t.global_connections && t.digest == source_digest(source))
}

/// The key `source`'s connections are stored under, in the database and the keychain: the
/// source's id for the person's own files (as it always was), and for a project file's source
/// a key of that file ([`project_connection_key`]) unless the person let it use the
/// connections of the global source with its id.
pub(crate) fn connection_key(store: &Store, source: &SourceConfig) -> String {
    if source.scope.is_project() && !uses_global_connections(store, source) {
        project_connection_key(source)
    } else {
        source.id.clone()
    }
}

/// The digest of the project settings a person trusted for the project file of `files` (found
/// from the working directory up), for [`capa_config::load`]; `None` for none, for a file named
/// with `--config` (the person's own), or when the store cannot say (counted as not trusted).
pub fn trusted_project_settings(store: &Store, files: &ConfigFiles) -> Option<String> {
    let file = files.found_project()?;
    store
        .trusted_project_settings(&trust_file(file))
        .map_err(|e| tracing::warn!(error = %e, "could not read the trusted project settings; counting them as not trusted"))
        .ok()
        .flatten()
}

/// A project source waiting for a person's trust.
#[derive(Debug, Clone)]
pub struct UntrustedSource {
    pub source: SourceConfig,
    /// What was trusted before, when the file changed how the source starts since.
    pub before: Option<TrustedProjectSource>,
}

impl UntrustedSource {
    /// Whether the person may grant it the connections of the global source it replaces: it
    /// replaces one and refers to secrets.
    pub fn may_use_global_connections(&self) -> bool {
        self.source.scope.replaces_global() && !self.source.secret_names().is_empty()
    }
}

/// Everything of a found project file that waits for the person's trust, asked in one
/// question: its settings (skills, profiles, options, sources replacing global ones) when not
/// trusted as they are, and its sources that are new or changed since they were trusted.
#[derive(Debug, Clone)]
pub struct ProjectTrustQuestion {
    pub file: PathBuf,
    pub settings: Option<ProjectSettings>,
    pub sources: Vec<UntrustedSource>,
}

/// What of `config`'s project file waits for the person's trust; `None` when nothing does.
pub fn project_trust_question(store: &Store, config: &HubConfig) -> Option<ProjectTrustQuestion> {
    let settings = config.project.clone().filter(|s| !s.trusted);
    let replacing = settings.iter().flat_map(|s| s.replacing.iter());
    let sources: Vec<UntrustedSource> = config
        .sources
        .iter()
        .filter(|s| s.scope.is_project())
        .chain(replacing)
        .filter_map(|source| {
            let before = trusted_record(store, source);
            let trusted = before
                .as_ref()
                .is_some_and(|t| t.digest == source_digest(source));
            (!trusted).then(|| UntrustedSource {
                source: source.clone(),
                before,
            })
        })
        .collect();
    let file = settings
        .as_ref()
        .map(|s| s.file.clone())
        .or_else(|| sources.first().map(|s| s.source.file.clone()))?;
    Some(ProjectTrustQuestion {
        file,
        settings,
        sources,
    })
}

/// Records a person's yes to `question`: each source as it starts now, with the connections
/// `grants` names for it (its own when not named), and the settings' digest.
pub fn record_project_trust(
    store: &Store,
    question: &ProjectTrustQuestion,
    grants: &[(String, ProjectConnections)],
) -> Result<(), StoreError> {
    for untrusted in &question.sources {
        let connections = grants
            .iter()
            .find(|(id, _)| id == &untrusted.source.id)
            .map_or(ProjectConnections::Own, |(_, c)| *c);
        crate::Hub::record_confirmation(store, &untrusted.source, connections)?;
    }
    if let Some(settings) = &question.settings {
        store.trust_project_settings(
            &trust_file(&settings.file),
            &settings.digest,
            crate::clock::now_ms(),
        )?;
    }
    Ok(())
}
