//! The `execute` section: the targets' headline, the official clients through the front, rmcp
//! through the front, the sandbox in process beside the Executor sandbox, and guest calls,
//! fan-out and load.

use std::fmt::Write;

use super::targets::headline;
use crate::calls::Samples;
use crate::execute::{FIRST_CALLS, GUEST_CALLS};
use crate::inprocess::DEMO_CALLS;
use crate::speed::SpeedReport;

fn clients(s: &mut String, report: &SpeedReport) {
    let _ = writeln!(
        s,
        "\n### Through the MCP front, official clients\n\n\
         Each client in its own session, 200 rounds of one baseline request then one `execute` of `return 1`, \
         after 20 warm-up runs (drivers: tests/bench/ts_client.mjs, tests/bench/py_client.py). The baseline is \
         `ping` under 2025-11-25; 2026-07-28 removed `ping`, so there it is `server/discover`, that era's \
         smallest request. Over stdio the client starts `capa mcp` (a hub in its process: no hub runs on its data dir); over HTTP all talk to one `capa hub serve`. \
         The hub serves code mode with the demo source only. The TS SDK 1.x sessions then run 12 rounds of \
         a run of 200 awaited `demo.add` calls and an empty run, alternating: the headline's calls from a client.\n"
    );
    let _ = writeln!(
        s,
        "| client | transport | protocol | baseline | baseline p50 (µs) | execute p50 (µs) | execute p99 (µs) | execute / baseline p50 |"
    );
    let _ = writeln!(s, "|---|---|---|---|---:|---:|---:|---:|");
    for row in &report.clients.rows {
        let (ping, execute) = (row.ping.percentile(0.5), row.execute.percentile(0.5));
        let _ = writeln!(
            s,
            "| {} | {} | {} | `{}` | {ping:.0} | {execute:.0} | {:.0} | {:.2}× |",
            row.sdk.label(),
            row.front.label(),
            row.protocol,
            row.baseline,
            row.execute.percentile(0.99),
            execute / ping
        );
    }
    let first = &report.clients.first_session;
    let (ping, execute) = (first.ping.percentile(0.5), first.execute.percentile(0.5));
    let _ = writeln!(
        s,
        "| {}, first session of a new data dir | stdio | {} | `{}` | {ping:.0} | {execute:.0} | {:.0} | {:.2}× |",
        first.sdk.label(),
        first.protocol,
        first.baseline,
        first.execute.percentile(0.99),
        execute / ping
    );
    let _ = writeln!(
        s,
        "\nThe stdio sessions share one data dir, as a person's do. Its first session is the row marked so: \
         the hub that `capa mcp` starts there does its one-time work meanwhile (a new database, its tools \
         indexed for search), which the later sessions find done; the other stdio rows and the targets are \
         those later sessions."
    );
    match &report.daemon {
        Some(peer) => {
            let (ping, execute) = (peer.ping.percentile(0.5), peer.execute.percentile(0.5));
            let _ = writeln!(
                s,
                "| peer: Executor's daemon ({}), TS SDK 1.x | HTTP | {} | `ping` | {ping:.0} | {execute:.0} | {:.0} | {:.2}× |",
                crate::executor_daemon::PACKAGE,
                peer.protocol,
                peer.execute.percentile(0.99),
                execute / ping
            );
            let _ = writeln!(
                s,
                "
The peer row: Executor's daemon (`executor daemon run`, MCP over Streamable HTTP at \
                 localhost:4788, set up by `../shared/peers/executor/setup.sh`), the same driver and \
                 session, measured right after ours."
            );
        }
        None => {
            let _ = writeln!(
                s,
                "
Executor's daemon was not set up on this machine (`../shared/peers/executor/setup.sh`): no peer row."
            );
        }
    }
}

fn rmcp_fronts(s: &mut String, report: &SpeedReport) {
    let _ = writeln!(
        s,
        "\n### Through the MCP front, rmcp client\n\n\
         `execute` of `return 1` (pipeline, a fresh sandbox, the run recorded in SQLite) against a `search` in \
         the same session as the baseline round trip, 200 of each, alternating. The hub serves code mode with \
         the demo source, server-everything and the catalog fixture server. The last two rows' hub \
         serves the demo source and the 6,041 tools of the toucan-live catalog (search by meaning off): \
         back to back (100 of each), and paced as a model sends runs (30, each pair after 300 ms). \
         Every warm sandbox defines the hub's namespaces before its run (profile below, \"The pooled \
         start\"): for 6,041 tools that is tens of milliseconds of a core, so runs back to back outrun \
         the pool and compete with it, while paced runs find a sandbox ready.\n"
    );
    let _ = writeln!(
        s,
        "| transport | search p50 (µs) | execute p50 (µs) | execute p99 (µs) | execute / search p50 |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|");
    for row in &report.execute.fronts {
        let (search, execute) = (row.search.percentile(0.5), row.execute.percentile(0.5));
        let _ = writeln!(
            s,
            "| {} | {search:.0} | {execute:.0} | {:.0} | {:.2}× |",
            row.transport,
            row.execute.percentile(0.99),
            execute / search
        );
    }
}

fn versus(s: &mut String, name: &str, ours: &Samples, peer: &Samples) {
    let (p50, p99) = (peer.percentile(0.5), peer.percentile(0.99));
    let _ = writeln!(
        s,
        "| {name} | {:.1} | {:.1} | {p50:.1} | {p99:.1} | {:.2}× |",
        ours.percentile(0.5),
        ours.percentile(0.99),
        ours.percentile(0.5) / p50
    );
}

fn sandbox(s: &mut String, report: &SpeedReport) {
    let (ours, peer) = (&report.in_process, &report.peer);
    let _ = writeln!(
        s,
        "\n### The sandbox in process, beside Executor's\n\n\
         Ours: `capa_sandbox::run` (with the pool) and `capa_sandbox::run_unpooled` (a fresh runtime each \
         time), {} runs each, a pair every 40 ms or so (a client's runs come with a model's thinking between \
         them; back to back, faster than the pool refills, every run would start cold); and a hub in this process with the demo source running {DEMO_CALLS} sequential \
         awaited `demo.add` calls minus an empty run, per call ({} rounds). The peer: `{}` under Node \
         (tests/bench/executor_peer.mjs), `execute` through `Effect.runPromise`, a fresh QuickJS runtime and \
         context each time as that runtime does, its tool answering a small object from memory; the first \
         execute of its process, which loads the WASM module, is left out ({:.0} ms). Ours and the peer's in \
         alternating chunks; µs.\n",
        ours.pooled.0.len(),
        ours.demo_call.0.len(),
        peer.runtime,
        peer.module_load_us / 1000.0
    );
    let _ = writeln!(
        s,
        "| measure | ours p50 | ours p99 | peer p50 | peer p99 | ours / peer p50 |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|");
    versus(
        s,
        "cold start + `return 1`, with the pool",
        &ours.pooled,
        &peer.cold_start_us,
    );
    versus(
        s,
        "cold start + `return 1`, without the pool",
        &ours.unpooled,
        &peer.cold_start_us,
    );
    versus(
        s,
        "one awaited tool call from guest code (ours: `demo.add` through the hub)",
        &ours.demo_call,
        &peer.per_call_us,
    );
}

fn calls_and_load(s: &mut String, report: &SpeedReport) {
    let e = &report.execute;
    let _ = writeln!(s, "\n### Guest calls, fan-out and load\n");
    let _ = writeln!(s, "| measure | value |");
    let _ = writeln!(s, "|---|---:|");
    let direct = e.direct_call_us.percentile(0.5);
    let _ = writeln!(
        s,
        "| one tool call from guest code ({GUEST_CALLS} sequential `everything.echo`, minus an empty run, per call) | {:.0} µs |",
        e.guest_call_us
    );
    let _ = writeln!(
        s,
        "| the same over a run of {FIRST_CALLS} calls: a run's first calls, per call | {:.0} µs |",
        e.first_calls_us
    );
    let _ = writeln!(
        s,
        "| the same call made directly to server-everything (p50) | {direct:.0} µs |"
    );
    let _ = writeln!(
        s,
        "| guest call − direct call (issue 42's target: ≤ 60 µs) | {:.0} µs ({:.2}×) |",
        e.guest_call_us - direct,
        e.guest_call_us / direct
    );
    let _ = writeln!(
        s,
        "| `Promise.all` of 40 calls to a 10 ms upstream, maxConcurrent 8 (p50 / p99) | {:.1} ms / {:.1} ms |",
        e.fan_out_ms.percentile(0.5),
        e.fan_out_ms.percentile(0.99)
    );
    let _ = writeln!(
        s,
        "| its floor: five sequential waves of 8 parallel direct calls to the same upstream, interleaved (p50 / p99) | {:.1} ms / {:.1} ms |",
        e.fan_out_floor_ms.percentile(0.5),
        e.fan_out_floor_ms.percentile(0.99)
    );
    let _ = writeln!(
        s,
        "| one direct call to that upstream (p50) | {:.1} ms |",
        e.slow_call_ms.percentile(0.5)
    );
    let _ = writeln!(
        s,
        "| runs per second, {} concurrent HTTP clients, 2 cores (each run sums 1,000 squares) | {:.0} |",
        e.clients, e.runs_per_second
    );
    let _ = writeln!(
        s,
        "| hub RSS during that load (peak) | {:.1} MiB |",
        e.load_rss_kib as f64 / 1024.0
    );
}

/// The `execute` sections.
pub(crate) fn execute(report: &SpeedReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\n## `execute`\n");
    s.push_str(&headline(report));
    clients(&mut s, report);
    s.push_str(&super::both_hubs::both_hubs(report));
    rmcp_fronts(&mut s, report);
    sandbox(&mut s, report);
    calls_and_load(&mut s, report);
    // What profiling found: written by hand, kept beside the code that measures it.
    s.push_str(include_str!("profile.md"));
    s
}
