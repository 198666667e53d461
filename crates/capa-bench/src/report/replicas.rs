//! The team hub section: replicas behind HAProxy (`crate::replicas`).

use std::fmt::Write;

use crate::replicas::ReplicasReport;

pub(crate) fn replicas(report: &ReplicasReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\n## A team hub: replicas behind HAProxy\n");
    let (rows, failover_ms) = match report {
        ReplicasReport::NotMeasured(why) => {
            let _ = writeln!(s, "Not measured in this run: {why}.");
            return s;
        }
        ReplicasReport::Measured { rows, failover_ms } => (rows, failover_ms),
    };
    let _ = writeln!(
        s,
        "Two `capa hub serve` replicas (each with its own data dir) on one PostgreSQL database (docs/team.md), HAProxy in front with `docs/team-haproxy.cfg` as it is; \"1\" replica is the same hub behind both of HAProxy's servers. Concurrent rmcp clients through HAProxy, each running `execute` of `return 1 + 1` back to back for 4 s; 2026-07-28 clients carry no session (round robin), 2025-11-25 clients keep a session on one replica. All of it on the same 2 cores as the clients and the database, so a second replica adds a process, not a machine: read the rows for what the load balancer and the shared store cost, not for scaling.\n"
    );
    let _ = writeln!(
        s,
        "| replicas | protocol | clients | runs/s | p50 (ms) | p99 (ms) | failed |"
    );
    let _ = writeln!(s, "|---:|---|---:|---:|---:|---:|---:|");
    for row in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.0} | {:.2} | {:.2} | {} |",
            row.replicas,
            row.era.label(),
            row.clients,
            row.runs_per_second,
            row.latency.percentile(0.5) / 1000.0,
            row.latency.percentile(0.99) / 1000.0,
            row.failed
        );
    }
    let _ = writeln!(
        s,
        "\nA replica dies: a run paused through HAProxy and approved in the database (as `capa hub approve` does), then the replica that recorded it is killed (SIGKILL); from the kill to the run's completion through HAProxy on the other replica (new sessions, HAProxy's redispatch, the replay from the journal): **{failover_ms:.0} ms**."
    );
    s
}
