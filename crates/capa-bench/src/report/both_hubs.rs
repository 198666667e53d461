//! "The same code through both hubs": our hub and Executor's daemon, each with the same stdio
//! upstream, driven by the same client (`hub_calls.rs`).

use std::fmt::Write;

use crate::calls::Samples;
use crate::hub_calls::HubCalls;
use crate::speed::SpeedReport;

fn row(s: &mut String, measure: &str, ours: f64, peer: f64, unit: &str) {
    let _ = writeln!(
        s,
        "| {measure} | {ours:.2} {unit} | {peer:.2} {unit} | {:.3}× | {:.0}× |",
        ours / peer,
        peer / ours
    );
}

fn ms(samples: &Samples) -> f64 {
    samples.percentile(0.5) / 1000.0
}

fn table(s: &mut String, ours: &HubCalls, peer: &HubCalls) {
    let _ = writeln!(
        s,
        "| measure (p50) | ours | Executor's daemon | ours / peer | peer / ours |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|");
    row(
        s,
        "`execute` of `return 1`",
        ms(&ours.empty),
        ms(&peer.empty),
        "ms",
    );
    row(
        s,
        "one awaited `echo` from guest code: (the run of calls − the empty run) / calls",
        ours.per_call() / 1000.0,
        peer.per_call() / 1000.0,
        "ms",
    );
    row(
        s,
        &format!(
            "`Promise.all` of {} `sleep10` calls (each answers after 10 ms)",
            ours.fan_out_calls
        ),
        ms(&ours.fan_out),
        ms(&peer.fan_out),
        "ms",
    );
}

/// The section, or a line saying why it is missing.
pub(crate) fn both_hubs(report: &SpeedReport) -> String {
    let mut s = String::from("\n### The same code through both hubs\n\n");
    let peer = report.daemon.as_ref().and_then(|d| d.calls.as_ref());
    let (Some(ours), Some(peer)) = (report.hub_calls.as_ref(), peer) else {
        s.push_str(
            "Executor's daemon or its bench upstream is not set up on this machine \
             (`../shared/peers/executor/setup.sh`): not measured.\n",
        );
        return s;
    };
    let _ = writeln!(
        s,
        "The same guest code through our hub (`capa hub serve`, code mode) and Executor's daemon ({}), \
         each with the same stdio upstream as its only source (`../shared/peers/executor/bench-mcp-server.mjs`: \
         `echo`, and `sleep10`, which answers after 10 ms), from the same TS SDK 1.x client over Streamable \
         HTTP, ours first (driver: tests/bench/hub_calls.mjs). Each round is an empty run, a run of awaited \
         `echo` calls in a row ({} a run in ours, {} in the daemon's) and a `Promise.all` of {} `sleep10` \
         calls, after a warm-up round; {} rounds through ours, {} through the daemon, which starts its \
         upstream for each call. The code differs only in where the tools are (`bench.echo`, \
         `tools.bench.org.default.echo`).\n",
        crate::executor_daemon::PACKAGE,
        ours.calls,
        peer.calls,
        ours.fan_out_calls,
        ours.empty.0.len(),
        peer.empty.0.len(),
    );
    table(&mut s, ours, peer);
    s
}
