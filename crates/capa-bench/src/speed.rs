//! Everything the `execute` section of the report shows (issue 17, "Speed"), gathered in one
//! run: the rmcp measurements of `execute.rs`, the official clients, Executor's daemon through
//! the same client, our sandbox in process, and the Executor sandbox as a peer. Ours and the peer's are measured in alternating chunks so
//! that a noisy neighbour slows both alike.

use crate::calls::Samples;
use crate::clients::{self, ClientRows};
use crate::execute::{self, ExecuteReport};
use crate::executor_daemon::{self, DaemonRow};
use crate::hub_calls::{self, HubCalls};
use crate::inprocess::{self, InProcessReport};
use crate::peer::{self, PeerReport};
use crate::procs::BenchEnv;

/// Chunks of ours, then the peer's, alternating.
const CHUNKS: usize = 3;

#[derive(Debug)]
pub(crate) struct SpeedReport {
    pub execute: ExecuteReport,
    pub clients: ClientRows,
    /// Executor's daemon through the same TS SDK 1.x session over HTTP, when it is set up.
    pub daemon: Option<DaemonRow>,
    /// The code `daemon.calls` ran, through our hub (when the bench upstream is beside us).
    pub hub_calls: Option<HubCalls>,
    pub in_process: InProcessReport,
    pub peer: PeerReport,
}

pub(crate) async fn measure(env: &BenchEnv) -> anyhow::Result<SpeedReport> {
    let execute = execute::measure(env).await?;
    let clients = clients::measure(env).await?;
    let hub_calls = match hub_calls::bench_server() {
        Some(server) => Some(hub_calls::ours(env, &server).await?),
        None => None,
    };
    let daemon = executor_daemon::measure(env).await?;
    let mut ours: Option<InProcessReport> = None;
    let mut theirs: Option<PeerReport> = None;
    for _ in 0..CHUNKS {
        let chunk = inprocess::measure().await?;
        ours = Some(match ours {
            None => chunk,
            Some(mut all) => {
                extend(&mut all.pooled, chunk.pooled);
                extend(&mut all.unpooled, chunk.unpooled);
                extend(&mut all.demo_call, chunk.demo_call);
                all
            }
        });
        let chunk = peer::measure(env).await?;
        theirs = Some(match theirs {
            None => chunk,
            Some(mut all) => {
                extend(&mut all.cold_start_us, chunk.cold_start_us);
                extend(&mut all.per_call_us, chunk.per_call_us);
                all.module_load_us = all.module_load_us.min(chunk.module_load_us);
                all
            }
        });
    }
    let (Some(in_process), Some(peer)) = (ours, theirs) else {
        anyhow::bail!("no chunk measured");
    };
    Ok(SpeedReport {
        execute,
        clients,
        daemon,
        hub_calls,
        in_process,
        peer,
    })
}

fn extend(all: &mut Samples, more: Samples) {
    all.0.extend(more.0);
}
