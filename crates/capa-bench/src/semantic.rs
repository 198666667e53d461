//! Search by meaning (issue 20), measured in process with the real sentence model: quality by
//! query kind of BM25F alone, embeddings alone and the hybrid; the latency of a hybrid `rank`
//! (query embedding included) against BM25F alone over 1,400 and 7,400 tools; the first-time
//! embedding of 1,400 tools; an index build from vectors cached in a real store file; and the
//! bench process's RSS growth for the loaded model. The hub's own RSS with the model is in
//! `semantic_hub.rs`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, bail};
use capa_core::lookup::ToolIndex;
use capa_embed::{DIMENSIONS, Embedder, Located, MODEL_ID};
use capa_search::eval::{
    LabelledQuery, Quality, QueryKind, evaluate, evaluate_by_kind, parse_queries,
};
use capa_search::{QueryEmbedder, Ranker, SearchIndex, Semantic, ToolDoc, embedding_text};
use capa_store::Store;
use sha2::{Digest, Sha256};

use crate::calls::Samples;
use crate::lookup::{MEANING_QUERIES, QUERIES, catalog_of};
use crate::memory::own_rss_kib;

/// The catalogs quality is measured over (1,399 tools), and all four (7,443).
const THREE: [&str; 3] = ["github", "docker-registry", "livemcpbench"];
const FOUR: [&str; 4] = ["github", "livemcpbench", "docker-registry", "toucan-live"];
/// Tools embedded per step, as the hub's background pass does (capa-core hub/semantic.rs).
pub(crate) const STEP: usize = 128;
/// Past this projected time, the tools beyond the three catalogs get synthetic vectors: the
/// latency of a cosine scan does not depend on what the vectors hold.
const REAL_EMBED_LIMIT_S: f64 = 180.0;
/// Rounds of the warm-cache index build.
const BUILD_ROUNDS: usize = 7;

/// The model as the index asks it for a query's vector; while `remember` is set it answers a
/// query it has seen from memory (quality runs ask the same queries once per ranker, and the
/// "vector given" latency leaves the embedding out).
struct BenchModel {
    model: Arc<Embedder>,
    seen: Mutex<HashMap<String, Vec<f32>>>,
    remember: AtomicBool,
}

impl QueryEmbedder for BenchModel {
    fn embed_query(&self, query: &str) -> Option<Vec<f32>> {
        let remember = self.remember.load(Ordering::Relaxed);
        if remember && let Some(v) = self.seen.lock().ok()?.get(query) {
            return Some(v.clone());
        }
        let v = self.model.embed_one(query).ok()?;
        if remember {
            self.seen.lock().ok()?.insert(query.to_owned(), v.clone());
        }
        Some(v)
    }
}

/// One ranker's quality by kind and over every query.
#[derive(Debug)]
pub(crate) struct QualityRow {
    pub ranker: &'static str,
    pub kinds: Vec<(QueryKind, Quality)>,
    pub overall: Quality,
}

/// Latency of one catalog's ranking, µs per query, measured interleaved.
#[derive(Debug)]
pub(crate) struct LatencyRow {
    pub tools: usize,
    /// Tools whose vector the model computed; the rest have synthetic ones.
    pub real_vectors: usize,
    pub synthetic_vectors: usize,
    /// `rank(Hybrid, q)`, the query embedded inside.
    pub hybrid_us: Samples,
    /// The same with the query's vector already computed: BM25F + cosine scan + fusion.
    pub given_vector_us: Samples,
    pub bm25f_us: Samples,
}

/// The first embedding of a catalog's tools, as the hub's background pass does it.
#[derive(Debug)]
pub(crate) struct FirstEmbed {
    pub tools: usize,
    pub secs: f64,
}

impl FirstEmbed {
    pub(crate) fn per_second(&self) -> f64 {
        self.tools as f64 / self.secs
    }
}

/// An index built from vectors in a store file (the hub's start with a warm cache), ms.
#[derive(Debug)]
pub(crate) struct WarmBuild {
    pub tools: usize,
    /// Hashing the tools' texts and reading their vectors from SQLite.
    pub read_ms: Samples,
    /// Reading plus building the hybrid `ToolIndex`.
    pub total_ms: Samples,
    /// The BM25F-only `ToolIndex` of the same catalog, interleaved: the baseline.
    pub bm25f_ms: Samples,
}

#[derive(Debug)]
pub(crate) struct SemanticReport {
    pub model_dir: PathBuf,
    /// `/proc/loadavg`'s first figure when the section started: other work on the machine.
    pub load_average: Option<f64>,
    pub load_ms: f64,
    /// Growth of the bench process's RSS over `Embedder::load` and one embedding.
    pub model_rss_kib: u64,
    pub quality: Vec<QualityRow>,
    pub first_embed: FirstEmbed,
    /// The 7,400 tools' extra vectors: the time embedding them took, or would have taken at
    /// the measured rate when it was over [`REAL_EMBED_LIMIT_S`].
    pub extra_embed_secs: f64,
    pub extra_embedded: bool,
    pub warm: WarmBuild,
    pub latency: Vec<LatencyRow>,
    /// `embed_one` of each query, alone.
    pub query_embed_us: Samples,
}

/// Where the model is: `CAPA_MODEL_DIR`, else the checkout's `models/` (scripts/setup puts it
/// there; the bench runs from the repository root).
pub(crate) fn model_dir() -> Option<PathBuf> {
    match capa_embed::locate(None) {
        Located::Found(dir) => Some(dir),
        Located::Missing { .. } => {
            let checkout = std::env::current_dir()
                .ok()?
                .join("models")
                .join(capa_embed::MODEL_NAME);
            checkout
                .join("model.safetensors")
                .is_file()
                .then_some(checkout)
        }
    }
}

fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

fn us_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e6
}

fn text_hash(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// Every text's vector, `STEP` at a time in catalog order (as the hub embeds), with a progress
/// line on stderr at every tenth.
fn embed_with_progress(
    model: &Embedder,
    label: &str,
    texts: &[String],
) -> anyhow::Result<(Vec<Vec<f32>>, f64)> {
    let started = Instant::now();
    let mut vectors = Vec::with_capacity(texts.len());
    let mut next_tenth = 1;
    for step in texts.chunks(STEP) {
        let refs: Vec<&str> = step.iter().map(String::as_str).collect();
        vectors.extend(model.embed(&refs).context("embedding tools")?);
        while next_tenth <= 10 && vectors.len() * 10 >= texts.len() * next_tenth {
            eprintln!(
                "capa-bench: embedding {label}: {} of {} tools ({}%) in {:.1} s",
                vectors.len(),
                texts.len(),
                next_tenth * 10,
                started.elapsed().as_secs_f64()
            );
            next_tenth += 1;
        }
    }
    Ok((vectors, started.elapsed().as_secs_f64()))
}

/// Seeded random unit vectors (xorshift64*): the same every run, no structure to exploit.
fn synthetic_vectors(n: usize) -> Vec<Vec<f32>> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let bits = state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
        (bits as f32 / (1u64 << 24) as f32).mul_add(2.0, -1.0)
    };
    (0..n)
        .map(|_| {
            let v: Vec<f32> = (0..DIMENSIONS).map(|_| next()).collect();
            let norm = v
                .iter()
                .map(|x| x * x)
                .sum::<f32>()
                .sqrt()
                .max(f32::MIN_POSITIVE);
            v.into_iter().map(|x| x / norm).collect()
        })
        .collect()
}

/// `rank` of every query with BM25F, the hybrid with its query embedding, and the hybrid with
/// the vector given, interleaved per query.
fn latency(
    index: &SearchIndex,
    model: &BenchModel,
    queries: &[LabelledQuery],
    real_vectors: usize,
) -> anyhow::Result<LatencyRow> {
    let (mut hybrid, mut given, mut bm25f) = (Vec::new(), Vec::new(), Vec::new());
    for q in queries {
        let t = Instant::now();
        index.rank(Ranker::Bm25f, &q.query)?;
        bm25f.push(us_since(t));
        model.remember.store(false, Ordering::Relaxed);
        let t = Instant::now();
        index.rank(Ranker::Hybrid, &q.query)?;
        hybrid.push(us_since(t));
        model.remember.store(true, Ordering::Relaxed);
        model.embed_query(&q.query);
        let t = Instant::now();
        index.rank(Ranker::Hybrid, &q.query)?;
        given.push(us_since(t));
    }
    let tools = index.docs().len();
    Ok(LatencyRow {
        tools,
        real_vectors,
        synthetic_vectors: tools - real_vectors,
        hybrid_us: Samples(hybrid),
        given_vector_us: Samples(given),
        bm25f_us: Samples(bm25f),
    })
}

/// The hub's start with a warm cache: vectors written to a store file, then read back by the
/// hashes of the tools' texts and the hybrid index built, as `SemanticState::attach` does.
fn warm_build(
    catalog: &capa_core::SharedCatalog,
    vectors: &[Vec<f32>],
    texts: &[String],
    embedder: &Arc<BenchModel>,
) -> anyhow::Result<(WarmBuild, ToolIndex)> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(&dir.path().join("hub.db"))?;
    let rows: Vec<([u8; 32], Vec<f32>)> = texts
        .iter()
        .map(|t| text_hash(t))
        .zip(vectors.iter().cloned())
        .collect();
    store.put_embeddings(MODEL_ID, &rows)?;
    let (mut read_ms, mut total_ms, mut bm25f_ms) = (Vec::new(), Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..BUILD_ROUNDS {
        let t = Instant::now();
        drop(ToolIndex::build(catalog.clone()).map_err(anyhow::Error::msg)?);
        bm25f_ms.push(ms_since(t));
        let read = Mutex::new(Ok((0.0, 0)));
        let t = Instant::now();
        let index = ToolIndex::build_with(catalog.clone(), |docs: &[ToolDoc]| {
            let t = Instant::now();
            let hashes: Vec<[u8; 32]> =
                docs.iter().map(|d| text_hash(&embedding_text(d))).collect();
            let found = store.embeddings(MODEL_ID, &hashes);
            let outcome = found.map(|found| {
                let vectors: Vec<Option<Vec<f32>>> = found
                    .into_iter()
                    .map(|v| v.filter(|v| v.len() == DIMENSIONS))
                    .collect();
                let hits = vectors.iter().filter(|v| v.is_some()).count();
                (vectors, hits)
            });
            let (semantic, result) = match outcome {
                Ok((vectors, hits)) => (
                    Some(Semantic {
                        vectors,
                        embedder: embedder.clone(),
                    }),
                    Ok((ms_since(t), hits)),
                ),
                Err(e) => (None, Err(e)),
            };
            if let Ok(mut slot) = read.lock() {
                *slot = result;
            }
            semantic
        })
        .map_err(anyhow::Error::msg)?;
        total_ms.push(ms_since(t));
        let (ms, hits) = read
            .into_inner()
            .map_err(|_| anyhow::anyhow!("lock poisoned"))??;
        if hits != texts.len() {
            bail!(
                "the store returned {hits} of {} cached vectors",
                texts.len()
            );
        }
        read_ms.push(ms);
        last = Some(index);
    }
    let index = last.context("no build round")?;
    Ok((
        WarmBuild {
            tools: texts.len(),
            read_ms: Samples(read_ms),
            total_ms: Samples(total_ms),
            bm25f_ms: Samples(bm25f_ms),
        },
        index,
    ))
}

fn quality(index: &SearchIndex, queries: &[LabelledQuery]) -> anyhow::Result<Vec<QualityRow>> {
    let mut rows = Vec::new();
    for (ranker, which) in [
        ("BM25F alone", Ranker::Bm25f),
        ("embeddings alone", Ranker::Semantic),
        ("hybrid (RRF)", Ranker::Hybrid),
    ] {
        rows.push(QualityRow {
            ranker,
            kinds: evaluate_by_kind(index, which, queries)?,
            overall: evaluate(index, which, queries)?,
        });
    }
    Ok(rows)
}

/// Everything but the hub's RSS; `None` when the model is not installed.
pub(crate) fn measure() -> anyhow::Result<Option<SemanticReport>> {
    let Some(model_dir) = model_dir() else {
        if std::env::var_os("CAPA_REQUIRE_ALL").is_some() {
            bail!(
                "CAPA_REQUIRE_ALL is set but the search model is not installed; run scripts/setup --model"
            );
        }
        eprintln!(
            "capa-bench: no search model (scripts/setup --model installs it); search by meaning not measured"
        );
        return Ok(None);
    };
    eprintln!(
        "capa-bench: search by meaning, model {}…",
        model_dir.display()
    );
    let load_average = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next()?.parse().ok());
    let before = own_rss_kib()?;
    let t = Instant::now();
    let embedder = Arc::new(Embedder::load(&model_dir)?);
    let load_ms = ms_since(t);
    embedder.embed_one("warm up the model")?;
    let model_rss_kib = own_rss_kib()?.saturating_sub(before);
    let model = Arc::new(BenchModel {
        model: embedder.clone(),
        seen: Mutex::default(),
        remember: AtomicBool::new(true),
    });

    let catalog = Arc::new(catalog_of(&THREE)?);
    let plain = ToolIndex::build(catalog.clone()).map_err(anyhow::Error::msg)?;
    let texts: Vec<String> = plain
        .search_index()
        .docs()
        .iter()
        .map(embedding_text)
        .collect();
    drop(plain);
    let (vectors, secs) = embed_with_progress(&embedder, "three catalogs", &texts)?;
    let first_embed = FirstEmbed {
        tools: texts.len(),
        secs,
    };

    eprintln!("capa-bench: index build from cached vectors…");
    let (warm, index) = warm_build(&catalog, &vectors, &texts, &model)?;

    eprintln!("capa-bench: quality by kind, three rankers…");
    let everyday = parse_queries(QUERIES).map_err(anyhow::Error::msg)?;
    let mut all = everyday.clone();
    all.extend(parse_queries(MEANING_QUERIES).map_err(anyhow::Error::msg)?);
    let quality = quality(index.search_index(), &all)?;

    eprintln!("capa-bench: hybrid latency over {} tools…", texts.len());
    let mut latency_rows = vec![latency(
        index.search_index(),
        &model,
        &everyday,
        texts.len(),
    )?];
    let mut embed_us = Vec::new();
    for q in &everyday {
        let t = Instant::now();
        embedder.embed_one(&q.query)?;
        embed_us.push(us_since(t));
    }
    drop(index);

    let (wide, extra_embed_secs, extra_embedded) = wide_index(
        &embedder,
        &model,
        &texts,
        &vectors,
        first_embed.per_second(),
    )?;
    eprintln!(
        "capa-bench: hybrid latency over {} tools…",
        wide.0.docs().len()
    );
    latency_rows.push(latency(&wide.0, &model, &everyday, wide.1)?);

    Ok(Some(SemanticReport {
        model_dir,
        load_average,
        load_ms,
        model_rss_kib,
        quality,
        first_embed,
        extra_embed_secs,
        extra_embedded,
        warm,
        latency: latency_rows,
        query_embed_us: Samples(embed_us),
    }))
}

/// `--only-query-embedding`: `embed_one` of every everyday query, five rounds, in one line: for
/// a profiler's run of the query path alone.
pub(crate) fn print_query_embedding_line() -> anyhow::Result<()> {
    let model_dir = model_dir().context("no search model (scripts/setup --model installs it)")?;
    let embedder = Embedder::load(&model_dir)?;
    embedder.embed_one("warm up the model")?;
    let everyday = parse_queries(QUERIES).map_err(anyhow::Error::msg)?;
    let mut took = Vec::new();
    for _ in 0..5 {
        for q in &everyday {
            let t = Instant::now();
            embedder.embed_one(&q.query)?;
            took.push(us_since(t));
        }
    }
    let took = Samples(took);
    println!(
        "query embedding p50 {:.0} µs, p99 {:.0} µs over {} embeddings",
        took.percentile(0.5),
        took.percentile(0.99),
        took.0.len()
    );
    Ok(())
}

/// The four catalogs' index with a vector for every tool: the three catalogs' real ones, and
/// for the rest real ones when embedding them is projected to take at most
/// [`REAL_EMBED_LIMIT_S`], synthetic ones otherwise. Returns the index and how many vectors are
/// real, the seconds the extra tools took (or would take), and whether they were embedded.
fn wide_index(
    embedder: &Embedder,
    model: &Arc<BenchModel>,
    texts: &[String],
    vectors: &[Vec<f32>],
    per_second: f64,
) -> anyhow::Result<((SearchIndex, usize), f64, bool)> {
    let known: HashMap<[u8; 32], &Vec<f32>> =
        texts.iter().map(|t| text_hash(t)).zip(vectors).collect();
    let catalog = Arc::new(catalog_of(&FOUR)?);
    let plain = ToolIndex::build(catalog).map_err(anyhow::Error::msg)?;
    let docs = plain.search_index().docs().to_vec();
    drop(plain);
    let wide_texts: Vec<String> = docs.iter().map(embedding_text).collect();
    let mut wide: Vec<Option<Vec<f32>>> = wide_texts
        .iter()
        .map(|t| known.get(&text_hash(t)).map(|v| (*v).clone()))
        .collect();
    let missing: Vec<usize> = (0..wide.len()).filter(|&i| wide[i].is_none()).collect();
    let projected = missing.len() as f64 / per_second;
    let embedded = projected <= REAL_EMBED_LIMIT_S;
    let (fill, secs) = if embedded {
        let extra: Vec<String> = missing.iter().map(|&i| wide_texts[i].clone()).collect();
        embed_with_progress(embedder, "the other tools of all four catalogs", &extra)?
    } else {
        eprintln!(
            "capa-bench: embedding the other {} tools would take about {projected:.0} s at {per_second:.1} tools/s; synthetic vectors for them (latency only)",
            missing.len()
        );
        (synthetic_vectors(missing.len()), projected)
    };
    for (&i, v) in missing.iter().zip(fill) {
        wide[i] = Some(v);
    }
    let real = if embedded {
        wide.len()
    } else {
        wide.len() - missing.len()
    };
    let index = SearchIndex::build(docs)?.with_semantic(Semantic {
        vectors: wide,
        embedder: model.clone(),
    });
    Ok(((index, real), secs, embedded))
}
