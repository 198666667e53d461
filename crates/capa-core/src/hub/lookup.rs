//! The hub's `search` and `describe`: the index follows the catalog, rebuilt off the async
//! runtime whenever the catalog changed since it was built.

use std::collections::BTreeMap;
use std::sync::Arc;

use capa_domain::SharedCatalog;

use super::{Hub, Profile};
use crate::lookup::{self, LookupError, SearchRequest, ToolIndex};

impl Hub {
    /// Answers `search` (and the sandbox's `hub.search`).
    pub async fn search(&self, request: &SearchRequest) -> Result<String, LookupError> {
        self.search_in(request, None).await
    }

    /// [`Hub::search`] for a client of `profile`.
    pub async fn search_in(
        &self,
        request: &SearchRequest,
        profile: Option<&Profile>,
    ) -> Result<String, LookupError> {
        let index = self.tool_index().await?;
        let connections = self.connection_labels();
        let descriptions: BTreeMap<String, String> = self
            .source_defs()
            .iter()
            .filter_map(|s| Some((s.id.clone(), s.description.clone()?)))
            .collect();
        let policy = self.policy_in(profile);
        let waiting = self.waiting_for_first_connection(&policy);
        if let Some(namespace) = request.namespace.as_deref().map(str::trim)
            && let Some(line) = waiting.iter().find(|(id, _)| id == namespace)
        {
            return Ok(line.1.clone());
        }
        let one_namespace = request
            .namespace
            .as_deref()
            .is_some_and(|n| !n.trim().is_empty());
        let request = request.clone();
        // Embedding the query is CPU work (milliseconds), and the first search after an idle
        // spell loads the model first (about 0.2 s, 90 MB read): off the async runtime.
        // Only for a query `search` takes: its length is checked there.
        let skills = if request.namespace.is_none()
            && request.query.chars().count() <= lookup::MAX_QUERY_CHARS
        {
            self.skills_for_query(&request.query, profile)
        } else {
            None
        };
        let tools = tokio::task::spawn_blocking(move || {
            lookup::search(&index, &policy, &connections, &descriptions, &request)
        })
        .await
        .map_err(|e| LookupError::Index(e.to_string()))??;
        let tools = if waiting.is_empty() || one_namespace {
            tools
        } else {
            let lines: String = waiting.into_iter().map(|(_, line)| line).collect();
            format!("{tools}{lines}")
        };
        // The skills a query names follow its tools: the tools stay the answer's first lines.
        Ok(match skills {
            Some(skills) => format!(
                "{}
{skills}",
                tools.trim_end()
            ),
            None => tools,
        })
    }

    /// The tools `query` matches, best first, whatever the policy says of them: the Tools
    /// page's filter (a person finds a tool they turned off too).
    pub async fn matching_tools(&self, query: &str) -> Result<Vec<lookup::ToolMatch>, LookupError> {
        let index = self.tool_index().await?;
        let query = query.to_owned();
        // Embedding the query is CPU work: off the async runtime, as `search` does.
        tokio::task::spawn_blocking(move || lookup::matching_tools(&index, &query))
            .await
            .map_err(|e| LookupError::Index(e.to_string()))?
    }

    /// Answers `describe` (and the sandbox's `hub.describe`): `skill:<name>` targets give that
    /// skill's instructions and tools, the others declarations.
    pub async fn describe(&self, targets: &[String]) -> Result<String, LookupError> {
        self.describe_in(targets, None).await
    }

    /// [`Hub::describe`] for a client of `profile`.
    pub async fn describe_in(
        &self,
        targets: &[String],
        profile: Option<&Profile>,
    ) -> Result<String, LookupError> {
        let (skills, tools): (Vec<&String>, Vec<&String>) = targets.iter().partition(|t| {
            t.trim()
                .starts_with(super::skill_files::SKILL_TARGET_PREFIX)
        });
        if skills.is_empty() {
            return self.describe_tools(targets, profile).await;
        }
        if targets.len() > lookup::MAX_TARGETS {
            // Too many: describe answers why.
            return self.describe_tools(targets, profile).await;
        }
        let mut parts = Vec::new();
        let mut described: Vec<&str> = Vec::new();
        for skill in skills {
            let name = skill.trim()[super::skill_files::SKILL_TARGET_PREFIX.len()..].trim();
            if name.chars().count() > super::skill_files::MAX_SKILL_NAME_CHARS {
                return Err(LookupError::InvalidArguments(format!(
                    "`skill:<name>` names a skill of at most {} characters",
                    super::skill_files::MAX_SKILL_NAME_CHARS
                )));
            }
            if described.contains(&name) {
                continue;
            }
            described.push(name);
            parts.push(self.describe_skill(name, profile).await?);
        }
        if !tools.is_empty() {
            let tools: Vec<String> = tools.into_iter().cloned().collect();
            parts.push(self.describe_tools(&tools, profile).await?);
        }
        Ok(parts.join(
            "
",
        ))
    }

    /// Declarations of tools, namespaces and named types (no skills).
    pub(super) async fn describe_tools(
        &self,
        targets: &[String],
        profile: Option<&Profile>,
    ) -> Result<String, LookupError> {
        let index = self.tool_index().await?;
        let policy = self.policy_in(profile);
        // A source that waits for its first connection has no declarations yet: a target of
        // it (`notes`, `notes.create_note`) is answered with what it waits for, as `search`
        // lists it, rather than "unknown".
        let waiting = self.waiting_for_first_connection(&policy);
        let of_waiting = |target: &str| {
            let target = target.trim();
            let source = target.split_once('.').map_or(target, |(source, _)| source);
            waiting.iter().find(|(id, _)| id == source)
        };
        let (asked_of_waiting, others): (Vec<&String>, Vec<&String>) =
            targets.iter().partition(|t| of_waiting(t).is_some());
        if asked_of_waiting.is_empty() {
            return lookup::describe(&index, &policy, targets);
        }
        let mut lines: Vec<&str> = Vec::new();
        for target in asked_of_waiting {
            if let Some((_, line)) = of_waiting(target)
                && !lines.contains(&line.as_str())
            {
                lines.push(line);
            }
        }
        let others: Vec<String> = others.into_iter().cloned().collect();
        let described = if others.is_empty() {
            String::new()
        } else {
            lookup::describe(&index, &policy, &others)?
        };
        Ok(format!("{described}{}", lines.concat()))
    }

    /// The index of the current catalog, built now if the catalog changed since the last one.
    /// Waits for sources still starting (once), like a first `tools/list`.
    pub async fn tool_index(&self) -> Result<Arc<ToolIndex>, LookupError> {
        self.startup_done().await;
        let mut slot = self.tool_index.lock().await;
        let catalog = self.catalog();
        if let Some(index) = slot.as_ref().filter(|i| Arc::ptr_eq(i.catalog(), &catalog)) {
            return Ok(index.clone());
        }
        let index = self.build_index(catalog).await?;
        *slot = Some(index.clone());
        self.semantic.index_in_use(&index);
        Ok(index)
    }

    /// Builds the index of `catalog` off the async runtime, with the vectors the store has.
    async fn build_index(&self, catalog: SharedCatalog) -> Result<Arc<ToolIndex>, LookupError> {
        let semantic = self.semantic.clone();
        let store = self.store.clone();
        let index = tokio::task::spawn_blocking(move || {
            ToolIndex::build_with(catalog, |docs| semantic.attach(&store, docs))
        })
        .await
        .map_err(|e| LookupError::Index(e.to_string()))??;
        Ok(Arc::new(index))
    }

    /// After a background pass embedded `catalog`'s tools: builds its index again with every
    /// vector, then swaps it in, unless the catalog changed meanwhile. Searches keep the old
    /// index while this builds.
    pub(super) async fn refresh_index(&self, catalog: SharedCatalog) {
        let index = match self.build_index(catalog.clone()).await {
            Ok(index) => index,
            Err(e) => {
                tracing::warn!(error = %e, "could not build the search index");
                return;
            }
        };
        let mut slot = self.tool_index.lock().await;
        if Arc::ptr_eq(&self.catalog(), &catalog) {
            self.semantic.index_in_use(&index);
            *slot = Some(index);
        }
    }

    /// The sources `policy` serves that list no tools because they wait for a person to connect
    /// them (a first sign-in, a secret), each with the line `search` says of it: the model
    /// learns the source is there, and that code calling it pauses for the person.
    fn waiting_for_first_connection(
        &self,
        policy: &crate::policy::Policy,
    ) -> Vec<(String, String)> {
        // Every search and describe asks: the sources' statuses (the store's connections
        // among them) are read only when a source the client is served lists no tools.
        let catalog = self.catalog();
        let any_without_tools = self.source_ids().iter().any(|id| {
            policy.serves_source(id) && !catalog.tools().iter().any(|t| &t.address.namespace == id)
        });
        if !any_without_tools {
            return Vec::new();
        }
        self.sources().list()
            .into_iter()
            .filter(|s| {
                s.state == capa_domain::SourceState::NeedsConnection
                    && s.tools == 0
                    && policy.serves_source(&s.id)
            })
            .map(|s| {
                let (needs, person_does) = if s.oauth.is_some() {
                    ("needs a sign-in", "signs in")
                } else {
                    ("needs a connection", "adds it")
                };
                let global = capa_typegen::member_names(&[s.id.as_str()])
                    .pop()
                    .unwrap_or_else(|| s.id.clone());
                let line = format!(
                    "{id}  ({needs}; its tools are listed once the user {person_does}. A call such as {global}.some_tool() in execute pauses the run until then.)\n",
                    id = s.id
                );
                (s.id, line)
            })
            .collect()
    }

    /// Connection names per source, the default marked `*`, for search's namespace lines.
    fn connection_labels(&self) -> BTreeMap<String, Vec<String>> {
        let mut labels: BTreeMap<String, Vec<String>> = BTreeMap::new();
        match self.connections.list() {
            Ok(records) => {
                // Records are stored under connection keys (a project source's differ from its id).
                let sources: BTreeMap<String, String> = self
                    .source_defs()
                    .into_iter()
                    .map(|d| (self.connection_key(&d.id), d.id))
                    .collect();
                for record in records {
                    let Some(source) = sources.get(&record.source) else {
                        continue;
                    };
                    let star = if record.is_default { "*" } else { "" };
                    labels
                        .entry(source.clone())
                        .or_default()
                        .push(format!("{}{star}", record.name));
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not list connections for search"),
        }
        labels
    }
}

/// Keeps the index warm in code mode: after each catalog change, build the next index in the
/// background so that the next `search` does not wait for it, and embed the tools the model
/// has not seen.
pub(super) async fn keep_index_warm(hub: std::sync::Weak<Hub>) {
    let Some(mut changes) = hub.upgrade().map(|h| h.watch_catalog()) else {
        return;
    };
    loop {
        let Some(strong) = hub.upgrade() else { return };
        let built = strong.tool_index().await;
        drop(strong);
        match built {
            // Tools new to the model are embedded now (holding the hub only weakly, so that a
            // hub shut down meanwhile goes), then the index is built again with them.
            Ok(index) => {
                if super::semantic::embed_missing(&hub, &index).await
                    && let Some(strong) = hub.upgrade()
                {
                    strong.refresh_index(index.catalog().clone()).await;
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not build the search index"),
        }
        if changes.changed().await.is_err() {
            return;
        }
    }
}
