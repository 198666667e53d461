//! The search-by-meaning section (issue 20): quality by kind of the three rankings with the
//! issue's targets, hybrid latency against BM25F, the first embedding, a warm-cache index build
//! and memory with the model.

use std::fmt::Write;

use super::verdict;

use capa_search::eval::Quality;

use crate::calls::Samples;
use crate::semantic::{QualityRow, SemanticReport};
use crate::semantic_hub::HubModelRow;

fn ms(samples: &Samples, p: f64) -> f64 {
    samples.percentile(p) / 1000.0
}

fn kind<'a>(row: &'a QualityRow, label: &str) -> Option<&'a Quality> {
    row.kinds
        .iter()
        .find(|(k, _)| k.label() == label)
        .map(|(_, q)| q)
}

/// The section; `None` when the model is not installed.
pub(crate) fn semantic(report: Option<&SemanticReport>, hub: &[HubModelRow]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n## Search by meaning: hybrid BM25F + all-MiniLM-L6-v2\n"
    );
    let Some(report) = report else {
        let _ = writeln!(
            s,
            "Not measured in this run: the search model is not installed (`scripts/setup --model` installs it; \
             `CAPA_MODEL_DIR` names it).\n"
        );
        return s;
    };
    let _ = writeln!(
        s,
        "The sentence model in process (crates/capa-embed, candle on the CPU, the dense layers and the vocabulary table in 8 bits (Q8_0 blocks), {}; loaded from {} in {:.0} ms), \
         over the github, docker-registry and livemcpbench catalogs ({} tools) unless said otherwise. \
         Everyday queries are crates/capa-search/tests/data/queries.jsonl, paraphrase and task queries \
         queries-meaning.jsonl. BM25F alone, embeddings alone (`Ranker::Semantic`: cosine similarity, \
         tools under 0.2 left out) and the hybrid (`Ranker::Hybrid`: reciprocal-rank fusion of both) rank \
         the same index with the same vectors, in one run. The fusion's parameters were chosen on the \
         everyday set only, so paraphrase and task measure them unseen. Load average (1 min) of the \
         machine when this section started: {} (its cores: {}); the model's work is CPU-bound, so \
         other work on the machine slows the embedding and latency rows.\n",
        if capa_embed::integer_query_products() {
            "every product in f32 except a query's dense products, which on this machine (AVX-512 VNNI) \
             are exact integer products of the query's values in 16 bits with the weights' codes \
             (docs/code-mode.md, \"A query's time\")"
        } else {
            "every product in f32"
        },
        report.model_dir.display(),
        report.load_ms,
        report.first_embed.tools,
        report
            .load_average
            .map_or("unknown".to_owned(), |l| format!("{l:.2}")),
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get)
    );
    targets(&mut s, report, hub);
    quality(&mut s, report);
    latency(&mut s, report);
    costs(&mut s, report, hub);
    s
}

fn targets(s: &mut String, report: &SemanticReport, hub: &[HubModelRow]) {
    let _ = writeln!(
        s,
        "### Issue 20's targets (and issue 42's two on a query's time)\n"
    );
    let _ = writeln!(s, "| target | measured | verdict |");
    let _ = writeln!(s, "|---|---:|---|");
    quality_targets(s, report);
    speed_targets(s, report, hub);
}

/// The quality rows of the targets' table.
fn quality_targets(s: &mut String, report: &SemanticReport) {
    let hybrid = report
        .quality
        .iter()
        .find(|r| r.ranker.starts_with("hybrid"));
    let bm25f = report
        .quality
        .iter()
        .find(|r| r.ranker.starts_with("BM25F"));
    if let Some(h) = hybrid {
        let mut line = |target: &str, value: Option<f64>, at_least: f64| {
            let (measured, met) = value.map_or(("–".to_owned(), false), |v| {
                (format!("{v:.3}"), v >= at_least)
            });
            let _ = writeln!(s, "| {target} | {measured} | {} |", verdict(met));
        };
        line(
            "hybrid recall@5, all queries ≥ 0.90",
            Some(h.overall.recall_at_5),
            0.90,
        );
        line(
            "hybrid recall@5, paraphrase ≥ 0.85",
            kind(h, "paraphrase").map(|q| q.recall_at_5),
            0.85,
        );
        line(
            "hybrid recall@5, task ≥ 0.80",
            kind(h, "task").map(|q| q.recall_at_5),
            0.80,
        );
        line(
            "hybrid recall@1, all queries ≥ 0.65",
            Some(h.overall.recall_at_1),
            0.65,
        );
        if let Some(b) = bm25f {
            let loses: Vec<&str> = h
                .kinds
                .iter()
                .zip(&b.kinds)
                .filter(|((_, o), (_, l))| {
                    o.recall_at_1 < l.recall_at_1 || o.recall_at_5 < l.recall_at_5 || o.mrr < l.mrr
                })
                .map(|((k, _), _)| k.label())
                .collect();
            let _ = writeln!(
                s,
                "| hybrid ≥ BM25F on every kind (recall@1, recall@5, MRR) | {} | {} |",
                if loses.is_empty() {
                    "on all".to_owned()
                } else {
                    format!("loses on {}", loses.join(", "))
                },
                verdict(loses.is_empty())
            );
        }
    }
}

/// The latency, build and memory rows of the targets' table.
fn speed_targets(s: &mut String, report: &SemanticReport, hub: &[HubModelRow]) {
    for row in &report.latency {
        let p50 = ms(&row.hybrid_us, 0.5);
        let _ = writeln!(
            s,
            "| search p50 ≤ 10 ms with the query embedding, {} tools | {p50:.1} ms | {} |",
            row.tools,
            if p50 <= 10.0 {
                verdict(true).to_owned()
            } else {
                format!(
                    "{}: the query's embedding alone is {:.1} ms (p50); ranking with the vector given {:.2} ms",
                    verdict(false),
                    ms(&report.query_embed_us, 0.5),
                    ms(&row.given_vector_us, 0.5)
                )
            }
        );
    }
    // Issue 42's: the query's embedding, and the whole hybrid over the largest catalog.
    let embed = ms(&report.query_embed_us, 0.5);
    let _ = writeln!(
        s,
        "| query embedding p50 ≤ 3 ms (issue 42) | {embed:.1} ms | {} |",
        verdict(embed <= 3.0)
    );
    if let Some(row) = report.latency.iter().max_by_key(|row| row.tools) {
        let p50 = ms(&row.hybrid_us, 0.5);
        let _ = writeln!(
            s,
            "| hybrid search p50 ≤ 4 ms with the query embedding, {} tools (issue 42) | {p50:.1} ms | {} |",
            row.tools,
            verdict(p50 <= 4.0)
        );
    }
    let build = report.warm.total_ms.percentile(0.5);
    let _ = writeln!(
        s,
        "| index build with a warm cache ≤ 100 ms, {} tools | {build:.0} ms | {} |",
        report.warm.tools,
        verdict(build <= 100.0)
    );
    match hub.first() {
        Some(row) => {
            let mib = row.hub_kib as f64 / 1024.0;
            let _ = writeln!(
                s,
                "| RSS of the headless hub with the model ≤ 120 MiB | {mib:.1} MiB | {} |",
                verdict(mib <= 120.0)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "| RSS of the headless hub with the model ≤ 120 MiB | not measured (below) | – |"
            );
        }
    }
}

fn quality(s: &mut String, report: &SemanticReport) {
    let _ = writeln!(s, "\n### Quality by kind\n");
    let _ = writeln!(
        s,
        "| ranking | kind | queries | recall@1 | recall@5 | MRR |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|");
    for row in &report.quality {
        let kinds = row.kinds.iter().map(|(k, q)| (k.label(), q));
        for (label, q) in kinds.chain([("all", &row.overall)]) {
            let _ = writeln!(
                s,
                "| {} | {label} | {} | {:.3} | {:.3} | {:.3} |",
                row.ranker, q.queries, q.recall_at_1, q.recall_at_5, q.mrr
            );
        }
    }
}

fn latency(s: &mut String, report: &SemanticReport) {
    let _ = writeln!(s, "\n### Search latency\n");
    let queries = report.latency.first().map_or(0, |r| r.bm25f_us.0.len());
    let _ = writeln!(
        s,
        "`SearchIndex::rank` of each of the {queries} everyday queries, interleaved per query: BM25F alone; the \
         hybrid, which embeds the query inside (no cache); the hybrid with the query's vector already computed \
         (BM25F, the cosine scan over every vector and the fusion). The ranking only: `search`'s policy, \
         signatures and text add what the code-mode table above shows. Query embedding alone (`embed_one`, \
         same queries, 1,399-tool run): p50 {:.1} ms, p99 {:.1} ms.\n",
        ms(&report.query_embed_us, 0.5),
        ms(&report.query_embed_us, 0.99)
    );
    let _ = writeln!(
        s,
        "| tools | vectors | BM25F p50 (ms) | BM25F p99 (ms) | hybrid p50 (ms) | hybrid p99 (ms) | hybrid / BM25F p50 | hybrid, vector given, p50 (ms) | p99 (ms) |"
    );
    let _ = writeln!(s, "|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    for row in &report.latency {
        let vectors = if row.synthetic_vectors == 0 {
            format!("{} computed by the model", row.real_vectors)
        } else {
            format!(
                "{} by the model, **synthetic vectors for the extra {} tools: latency only**",
                row.real_vectors, row.synthetic_vectors
            )
        };
        let _ = writeln!(
            s,
            "| {} | {vectors} | {:.2} | {:.2} | {:.1} | {:.1} | {:.1}× | {:.2} | {:.2} |",
            row.tools,
            ms(&row.bm25f_us, 0.5),
            ms(&row.bm25f_us, 0.99),
            ms(&row.hybrid_us, 0.5),
            ms(&row.hybrid_us, 0.99),
            row.hybrid_us.percentile(0.5) / row.bm25f_us.percentile(0.5),
            ms(&row.given_vector_us, 0.5),
            ms(&row.given_vector_us, 0.99),
        );
    }
    if let Some(wide) = report.latency.get(1) {
        let extra = wide.tools - report.first_embed.tools;
        let _ = writeln!(
            s,
            "\n{}",
            if report.extra_embedded {
                format!(
                    "The other {extra} tools were embedded for this run in {:.0} s.",
                    report.extra_embed_secs
                )
            } else {
                format!(
                    "Embedding the other {extra} tools would have taken about {:.0} s at the rate measured below \
                     (over the bench's 3-minute limit), so they have seeded random unit vectors: a cosine scan \
                     costs the same whatever the vectors hold, but quality is not measured on them.",
                    report.extra_embed_secs
                )
            }
        );
    }
}

fn costs(s: &mut String, report: &SemanticReport, hub: &[HubModelRow]) {
    let _ = writeln!(s, "\n### Embedding, index build and memory\n");
    let _ = writeln!(s, "| measure | value |");
    let _ = writeln!(s, "|---|---:|");
    let _ = writeln!(
        s,
        "| first-time embedding of {} tools ({} per step in catalog order, as the hub's background pass; progress on stderr every 10%) | {:.1} s, {:.1} tools/s |",
        report.first_embed.tools,
        crate::semantic::STEP,
        report.first_embed.secs,
        report.first_embed.per_second()
    );
    let w = &report.warm;
    let _ = writeln!(
        s,
        "| warm cache, {} tools: hash the texts and read the vectors from a capa-store SQLite file (p50 of {}) | {:.1} ms |",
        w.tools,
        w.read_ms.0.len(),
        w.read_ms.percentile(0.5)
    );
    let _ = writeln!(
        s,
        "| warm cache: that read plus building the hybrid `ToolIndex` (p50; min {:.0}, max {:.0}) | {:.1} ms |",
        w.total_ms.percentile(0.0),
        w.total_ms.percentile(1.0),
        w.total_ms.percentile(0.5)
    );
    let _ = writeln!(
        s,
        "| the BM25F-only `ToolIndex` of the same catalog, interleaved (p50; baseline) | {:.1} ms |",
        w.bm25f_ms.percentile(0.5)
    );
    let _ = writeln!(
        s,
        "| model load (`Embedder::load`) | {:.0} ms |",
        report.load_ms
    );
    let _ = writeln!(
        s,
        "| the bench process's RSS growth over `Embedder::load` and one embedding (memory freed by earlier sections may be reused: a lower bound) | {:.1} MiB |",
        report.model_rss_kib as f64 / 1024.0
    );
    if hub.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n`capa hub serve` (code mode, demo source only; RSS one second after its last `search`, or, in the last row, one second after `/api/config` said its model was let go: `searchModelLoaded: false`). With the model: after \
         the first `search` (which loads the model), the background pass embedding every tool, and one more `search` \
         ranked by meaning. Without: `CAPA_MODEL_DIR` unset and `options.search.semantic: off` (the dist build finds the model beside the binary otherwise). \
         The vectors of 1,400 tools would add about 0.5 MiB (384 bytes each: 8 bits a value).\n"
    );
    let _ = writeln!(
        s,
        "| hub | search | hub RSS (MiB) | first search → every tool embedded |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|");
    for row in hub {
        let _ = writeln!(
            s,
            "| {} | {} | {:.1} | {} |",
            row.label,
            row.search,
            row.hub_kib as f64 / 1024.0,
            row.embedded_after_ms
                .map_or("–".to_owned(), |ms| format!("{ms:.0} ms"))
        );
    }
    if let [with, without, resting] = hub {
        let _ = writeln!(
            s,
            "\nThe model costs the hub {:.1} MiB while loaded, and {:.1} MiB once let go: the hub loads it when a \
             `search` needs it and lets it go after `CAPA_MODEL_IDLE_SECS` unused (5 minutes unless set), giving its \
             memory back to the system.",
            (with.hub_kib as f64 - without.hub_kib as f64) / 1024.0,
            (resting.hub_kib as f64 - without.hub_kib as f64) / 1024.0
        );
    }
}
