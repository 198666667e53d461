//! The markdown written to `docs/benchmarks.md`.

mod both_hubs;
mod desktop;
mod execute;
mod package;
mod replicas;
mod semantic;
mod targets;

use std::fmt::Write;

pub(crate) use desktop::desktop;
pub(crate) use execute::execute;
pub(crate) use package::package;
pub(crate) use replicas::replicas;
pub(crate) use semantic::semantic;

use crate::calls::OverheadRow;
use crate::lookup::LookupReport;
use crate::memory::MemoryRow;

/// A target's verdict in a table: met, or not met in bold.
fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "**not met**" }
}

pub(crate) fn markdown(rows: &[OverheadRow], memory: &[MemoryRow], per_round: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Benchmarks\n");
    let _ = writeln!(
        s,
        "Written by `capa-bench` (crates/capa-bench), which `scripts/test` (and so CI) runs on every change. \
         Numbers are from a shared 2-core machine: compare the ratios, measured in the same run with \
         interleaved rounds, more than the absolute times. Release build.\n"
    );
    let _ = writeln!(
        s,
        "Machine: {} cores; run at {} UTC.\n",
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
        now()
    );
    let _ = writeln!(s, "## One `tools/call` through the hub vs. directly\n");
    let _ = writeln!(
        s,
        "The same rmcp client calls server-everything's `echo` directly and through the hub \
         (`everything.echo`), {} calls a side in 6 interleaved rounds of {per_round}. Over stdio the hub is \
         `capa mcp` with server-everything as a stdio child; over HTTP it is `capa hub serve` with \
         server-everything over Streamable HTTP as its upstream. Through the hub a call crosses two \
         MCP hops instead of one, so about twice the direct latency is the floor; the rest is the hub's \
         own work (catalog lookup, redaction, the SQLite call record).\n",
        per_round * 6
    );
    let _ = writeln!(
        s,
        "| transport | direct p50 (µs) | hub p50 (µs) | overhead p50 (µs) | ratio p50 | direct p95 (µs) | hub p95 (µs) |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        let (d50, h50) = (row.direct.percentile(0.5), row.hub.percentile(0.5));
        let _ = writeln!(
            s,
            "| {:?} | {:.0} | {:.0} | {:.0} | {:.2}× | {:.0} | {:.0} |",
            row.transport,
            d50,
            h50,
            h50 - d50,
            h50 / d50,
            row.direct.percentile(0.95),
            row.hub.percentile(0.95)
        );
    }
    let _ = writeln!(s, "\n## Resident memory of an idle hub\n");
    let _ = writeln!(
        s,
        "RSS of the `capa hub serve` process once every source is ready, its tools are embedded for search and its search model was let go (`CAPA_MODEL_IDLE_SECS=2` here; 5 minutes unless set; the bench waits until `/api/config` says `searchModelLoaded: false`), plus a second; the upstream servers are separate processes, listed apart.\n"
    );
    let _ = writeln!(
        s,
        "| configuration | hub RSS (MiB) | upstream processes RSS (MiB) |"
    );
    let _ = writeln!(s, "|---|---:|---:|");
    for row in memory {
        let _ = writeln!(
            s,
            "| {} | {:.1} | {:.1} |",
            row.label,
            row.hub_kib as f64 / 1024.0,
            row.children_kib as f64 / 1024.0
        );
    }
    s
}

/// The code-mode sections: search quality, lookup speed, index cost, surface tokens.
pub(crate) fn lookups(report: &LookupReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\n## Search quality: BM25F against two baselines\n");
    let _ = writeln!(
        s,
        "{} hand-labelled queries (crates/capa-search/tests/data/queries.jsonl, phrased as people ask, not copied \
         from descriptions) over the github, docker-registry and livemcpbench catalogs together (1,399 tools). \
         recall@k: the share of a query's relevant tools in the top k, out of at most k; MRR: mean reciprocal \
         rank of the first relevant tool. All three rankers use the same analysis, index and query terms; \
         only the scoring differs. A test (crates/capa-search/tests/quality.rs) fails if BM25F loses to \
         either baseline on any of the three.\n",
        report.quality.first().map_or(0, |(_, q)| q.queries)
    );
    let _ = writeln!(s, "| ranker | recall@1 | recall@5 | MRR |");
    let _ = writeln!(s, "|---|---:|---:|---:|");
    for (name, q) in &report.quality {
        let _ = writeln!(
            s,
            "| {name} | {:.3} | {:.3} | {:.3} |",
            q.recall_at_1, q.recall_at_5, q.mrr
        );
    }
    quality_by_kind(&mut s, report);
    let _ = writeln!(s, "\n## Code-mode lookups\n");
    let _ = writeln!(
        s,
        "In process, release build. Index build: the catalog indexed from scratch (best of 3; the hub rebuilds \
         when a source's tools change). Index memory: growth of the process's RSS while one index is built \
         and kept. `search`: every labelled query, three times, answered in full (ranking, policy, \
         signatures, text). `describe`: 10 github tools in one request, 100 times.\n"
    );
    let _ = writeln!(
        s,
        "| catalog | tools | index build (ms) | index memory (MiB) | search p50 (µs) | search p99 (µs) | describe ×10 p50 (µs) | describe ×10 p99 (µs) |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for row in &report.catalogs {
        let (d50, d99) =
            row.describe_us
                .as_ref()
                .map_or(("–".to_owned(), "–".to_owned()), |d| {
                    (
                        format!("{:.0}", d.percentile(0.5)),
                        format!("{:.0}", d.percentile(0.99)),
                    )
                });
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} | {:.1} | {:.0} | {:.0} | {d50} | {d99} |",
            row.label,
            row.tools,
            row.build_ms.percentile(0.0),
            row.index_kib as f64 / 1024.0,
            row.search_us.percentile(0.5),
            row.search_us.percentile(0.99),
        );
    }
    let _ = writeln!(s, "\n## Surface cost in tokens\n");
    let _ = writeln!(
        s,
        "What a client loads before the model does anything: the `tools/list` result as JSON, plus the server \
         instructions in code mode. Code mode's cost is fixed (the spec's limit is 1,500 tokens, the target \
         1,000; a test holds the limit). expose-all lists every tool with its full schema.\n"
    );
    let _ = writeln!(
        s,
        "| catalog | tools | code mode o200k | code mode cl100k | expose-all o200k | expose-all cl100k | reduction (o200k) |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|");
    for row in &report.catalogs {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {:.0}× |",
            row.label,
            row.tools,
            report.code_o200k,
            report.code_cl100k,
            row.tokens.expose_all_o200k,
            row.tokens.expose_all_cl100k,
            row.tokens.expose_all_o200k as f64 / report.code_o200k.max(1) as f64
        );
    }
    s
}

/// The approvals section.
pub(crate) fn approvals(report: &crate::approvals::ApprovalsReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\n## Approvals\n");
    let _ = writeln!(
        s,
        "A hub in the bench process (demo source, code mode) behind its loopback HTTP server; rmcp clients. \
         Resume replays a paused run of 500 calls (the spec's `maxCalls`): the same code, seed and clock, \
         its 499 journaled calls answered from the journal and the approved 500th made for real. The \
         baseline is the same 500 calls run fresh, with nothing asking, in the same process.\n"
    );
    let _ = writeln!(s, "| measure | p50 | p99 |");
    let _ = writeln!(s, "|---|---:|---:|");
    let row = |s: &mut String, name: &str, samples: &crate::calls::Samples| {
        let _ = writeln!(
            s,
            "| {name} | {:.1} ms | {:.1} ms |",
            samples.percentile(0.5),
            samples.percentile(0.99)
        );
    };
    row(
        &mut s,
        "fresh run of 500 calls (baseline)",
        &report.fresh_500_ms,
    );
    row(
        &mut s,
        "resume: replay of 499 journaled calls + the approved call",
        &report.replay_500_ms,
    );
    let _ = writeln!(
        s,
        "| replay / fresh run (p50) | {:.2}× | |",
        report.replay_500_ms.percentile(0.5) / report.fresh_500_ms.percentile(0.5)
    );
    row(
        &mut s,
        "one `execute` with the tool allowed (no approval; baseline)",
        &report.allowed_ms,
    );
    for (path, samples) in &report.paths {
        row(&mut s, &format!("decision → result: {path}"), samples);
    }
    s
}

fn now() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// The same rankers on the paraphrase and task queries, where words are not shared: where a
/// semantic ranking has to earn its place.
fn quality_by_kind(s: &mut String, report: &LookupReport) {
    let _ = writeln!(s, "\n### By query kind\n");
    let counts = report
        .quality_by_kind
        .first()
        .map_or_else(String::new, |(_, kinds)| {
            kinds
                .iter()
                .map(|(kind, q)| format!("{} {}", q.queries, kind.label()))
                .collect::<Vec<_>>()
                .join(", ")
        });
    let _ = writeln!(
        s,
        "The same rankers where the query shares few words with the tool (the set above is the everyday kind). \
         Paraphrase: the tool's meaning in as few of its words as possible (\"who else can push to this repo\"). \
         Task: a goal in a sentence, labelled with the tool to call first. Both are in \
         crates/capa-search/tests/data/queries-meaning.jsonl ({counts}).\n"
    );
    let _ = writeln!(s, "| ranker | kind | recall@1 | recall@5 | MRR |");
    let _ = writeln!(s, "|---|---|---:|---:|---:|");
    for (name, kinds) in &report.quality_by_kind {
        for (kind, q) in kinds {
            let _ = writeln!(
                s,
                "| {name} | {} | {:.3} | {:.3} | {:.3} |",
                kind.label(),
                q.recall_at_1,
                q.recall_at_5,
                q.mrr
            );
        }
    }
}
