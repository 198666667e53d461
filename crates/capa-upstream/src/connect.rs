//! Opening one connection to an upstream: spawn the child or reach the URL, then negotiate.

use std::collections::HashMap;
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::error::UpstreamError;
use crate::handler::UpstreamClient;
use crate::spec::{UpstreamSpec, UpstreamTransport};

pub(crate) type Client = RunningService<RoleClient, UpstreamClient>;

/// How long starting a server and negotiating may take before it counts as unavailable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// Negotiation: 2026-07-28 through `server/discover`, falling back to `initialize` for older
/// servers (rmcp's `Auto` mode).
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: None,
    }
}

/// A new connection, and the child's process id when the upstream is a local command.
pub(crate) async fn connect(
    spec: &UpstreamSpec,
    handler: UpstreamClient,
) -> Result<(Client, Option<u32>), UpstreamError> {
    let mut pid = None;
    let unavailable = |reason: String| UpstreamError::Unavailable {
        source_id: spec.source_id.clone(),
        reason,
    };
    let started = match &spec.transport {
        UpstreamTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).envs(env);
            if let Some(cwd) = cwd {
                cmd.current_dir(cwd);
            }
            die_with_parent(&mut cmd);
            let (transport, stderr) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| unavailable(format!("cannot start `{command}`: {e}")))?;
            pid = transport.id();
            if let Some(stderr) = stderr {
                forward_stderr(spec.source_id.clone(), stderr);
            }
            tokio::time::timeout(
                CONNECT_TIMEOUT,
                handler.serve_with_lifecycle(transport, lifecycle()),
            )
            .await
        }
        UpstreamTransport::Http { url, headers } => {
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
            let mut custom = HashMap::new();
            for (name, value) in headers {
                if name.eq_ignore_ascii_case("authorization")
                    && let Some(token) = value.strip_prefix("Bearer ")
                {
                    config = config.auth_header(token.to_owned());
                    continue;
                }
                let name = reqwest::header::HeaderName::try_from(name.as_str())
                    .map_err(|e| unavailable(format!("bad header name `{name}`: {e}")))?;
                let value =
                    reqwest::header::HeaderValue::try_from(value.as_str()).map_err(|_| {
                        unavailable(format!(
                            "header `{name}` has a value that is not valid in HTTP"
                        ))
                    })?;
                custom.insert(name, value);
            }
            let transport =
                StreamableHttpClientTransport::from_config(config.custom_headers(custom));
            tokio::time::timeout(
                CONNECT_TIMEOUT,
                handler.serve_with_lifecycle(transport, lifecycle()),
            )
            .await
        }
        UpstreamTransport::InProcess { connect, .. } => {
            tokio::time::timeout(
                CONNECT_TIMEOUT,
                handler.serve_with_lifecycle(connect(), lifecycle()),
            )
            .await
        }
    };
    match started {
        Ok(Ok(client)) => Ok((client, pid)),
        Ok(Err(e)) => Err(unavailable(format!("MCP handshake failed: {e}"))),
        Err(_) => Err(unavailable(format!(
            "no MCP handshake within {} s",
            CONNECT_TIMEOUT.as_secs()
        ))),
    }
}

/// Every line a child writes to stderr goes to the hub's log (which redacts known secrets).
fn forward_stderr(source_id: String, stderr: tokio::process::ChildStderr) {
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::info!(target: "capa::upstream::stderr", source = %source_id, "{line}");
        }
    });
}

/// Children are killed with the hub, even when the hub itself is killed (SIGKILL leaves no chance
/// to clean up, so the kernel does it).
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut tokio::process::Command) {
    #[expect(unsafe_code, reason = "pre_exec is unsafe; prctl is async-signal-safe")]
    // SAFETY: the closure only calls prctl(2), which is async-signal-safe, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Elsewhere rmcp's process wrapper kills the child when the hub drops the connection.
#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut tokio::process::Command) {}
