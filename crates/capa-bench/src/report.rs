//! The markdown written to `docs/benchmarks.md`.

use std::fmt::Write;

use crate::calls::OverheadRow;
use crate::memory::MemoryRow;

pub fn markdown(rows: &[OverheadRow], memory: &[MemoryRow], per_round: usize) -> String {
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
        std::thread::available_parallelism().map_or(0, |n| n.get()),
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
        "RSS of the `capa hub serve` process once every source is ready and two seconds have passed; the upstream servers are separate processes, listed apart.\n"
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

fn now() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}
