//! A stdio upstream: the child process and the hub's line transport over its pipes
//! ([`LineTransport`], which reads the child's stdout through `BoundedLines`).
//!
//! rmcp's `TokioChildProcess` does the same but builds its line transport itself, so neither
//! its line cap nor its reader can be changed; this keeps its shutdown sequence (close stdin,
//! wait, SIGTERM, wait, kill) and kills the child when dropped.

use std::process::Stdio;
use std::time::Duration;

use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use crate::line_transport::LineTransport;

/// How long the child may take to exit after its stdin closed, and again after SIGTERM.
const EXIT_WAIT: Duration = Duration::from_secs(3);

pub(crate) struct ChildTransport {
    /// `kill_on_drop`: a dropped transport takes its child with it.
    child: Child,
    transport: LineTransport<ChildStdout, ChildStdin>,
}

impl ChildTransport {
    /// Starts `cmd` with piped stdio; its stderr is returned for the caller to forward.
    pub(crate) fn spawn(mut cmd: Command) -> std::io::Result<(Self, Option<ChildStderr>)> {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn()?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(std::io::Error::other("the child's stdio pipes are missing"));
        };
        let stderr = child.stderr.take();
        // What the child reads is its own business (its limits are not known): every request
        // is sent.
        let transport = LineTransport::new(stdout, stdin, None);
        Ok((Self { child, transport }, stderr))
    }

    pub(crate) fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// The MCP stdio shutdown: close the child's stdin and let it exit, then SIGTERM, then kill.
    async fn shut_down(&mut self) -> std::io::Result<()> {
        self.transport.close().await?;
        if self.exited_within(EXIT_WAIT).await {
            return Ok(());
        }
        #[cfg(unix)]
        if let Some(pid) = self.child.id().and_then(|p| i32::try_from(p).ok()) {
            // SAFETY: kill(2) with a pid this process spawned and has not reaped yet (`id()` is
            // `None` once it was), so the pid cannot belong to another process.
            #[expect(unsafe_code, reason = "kill(2) has no safe wrapper in std or tokio")]
            let sent = unsafe { libc::kill(pid, libc::SIGTERM) };
            if sent == 0 && self.exited_within(EXIT_WAIT).await {
                return Ok(());
            }
        }
        self.child.kill().await
    }

    async fn exited_within(&mut self, limit: Duration) -> bool {
        matches!(
            tokio::time::timeout(limit, self.child.wait()).await,
            Ok(Ok(_))
        )
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.shut_down()
    }
}
