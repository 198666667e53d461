//! What an upstream connects to, with secrets already filled in.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// One upstream connection: a source, optionally under a named connection, and how to reach it.
#[derive(Clone)]
pub struct UpstreamSpec {
    /// The source id (namespace).
    pub source_id: String,
    /// The connection whose secrets were filled in, if any.
    pub connection: Option<String>,
    pub transport: UpstreamTransport,
    /// Timeout of one call.
    pub call_timeout: Duration,
}

/// Starting an in-process server: the client's end of its pipe, or why it did not start.
pub type InProcessStart = futures::future::BoxFuture<'static, Result<InProcessServer, String>>;

/// A server started inside the hub.
pub struct InProcessServer {
    /// The client's end of its pipe: the hub connects, lists the tools and watches the server
    /// over it, as with any upstream.
    pub stream: tokio::io::DuplexStream,
    /// The same server's calls without a session, when it can take them so
    /// ([`DirectCalls`]); calls then skip the pipe once the upstream is ready.
    pub direct: Option<Arc<dyn DirectCalls>>,
}

impl From<tokio::io::DuplexStream> for InProcessServer {
    fn from(stream: tokio::io::DuplexStream) -> Self {
        Self {
            stream,
            direct: None,
        }
    }
}

/// What a direct call answers: the server's result, or the error it would send on the session.
pub type DirectAnswer =
    futures::future::BoxFuture<'static, Result<rmcp::model::CallToolResult, rmcp::ErrorData>>;

/// The tools of a server inside the hub, called as functions: the same answers as its
/// `tools/call`, without two JSON encodings and an in-memory pipe each way (issue 42). The
/// upstream keeps what the session path guarantees around it: the call's timeout, the limits on
/// what is sent and received, and cancellation by dropping the call.
pub trait DirectCalls: Send + Sync {
    fn call_tool(&self, name: &str, arguments: Option<rmcp::model::JsonObject>) -> DirectAnswer;
}

/// How to reach an upstream. Values of `env` and `headers` may hold secrets: `Debug` hides them.
#[derive(Clone)]
pub enum UpstreamTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        /// The connection's OAuth sign-in, when the source uses OAuth: each request then carries
        /// its access token, refreshed as needed.
        oauth: Option<capa_oauth::TokenStore>,
    },
    /// A server running inside the hub, reached over an in-memory pipe; each call of the factory
    /// starts a fresh server and returns the client's end, or why it could not (an OpenAPI
    /// source whose document cannot be read), in one sentence for the source's status.
    InProcess {
        name: String,
        connect: Arc<dyn Fn() -> InProcessStart + Send + Sync>,
    },
}

impl fmt::Debug for UpstreamSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UpstreamSpec")
            .field("source_id", &self.source_id)
            .field("connection", &self.connection)
            .field("transport", &self.transport)
            .field("call_timeout", &self.call_timeout)
            .finish()
    }
}

impl fmt::Debug for UpstreamTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stdio {
                command, args, env, ..
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>())
                .finish(),
            Self::Http {
                url,
                headers,
                oauth,
            } => f
                .debug_struct("Http")
                .field("url", url)
                .field("headers", &headers.keys().collect::<Vec<_>>())
                .field("oauth", &oauth.is_some())
                .finish(),
            Self::InProcess { name, .. } => {
                f.debug_struct("InProcess").field("name", name).finish()
            }
        }
    }
}

impl UpstreamTransport {
    /// A one-line description without secrets, for listings.
    /// Whether the source is a command on this machine (not a server reached over the network).
    pub fn is_local(&self) -> bool {
        matches!(self, Self::Stdio { .. })
    }

    pub fn describe(&self) -> String {
        match self {
            Self::Stdio { command, args, .. } => {
                let mut text = command.clone();
                for arg in args {
                    text.push(' ');
                    text.push_str(arg);
                }
                text
            }
            Self::Http { url, .. } => url.clone(),
            Self::InProcess { name, .. } => format!("built in ({name})"),
        }
    }
}
