//! Opening one connection to an upstream: spawn the child or reach the URL, then negotiate.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::auth_signal::{AuthSignal, Signalled};
use crate::error::UpstreamError;
use crate::explain::{self, Target};
use crate::handler::UpstreamClient;
use crate::http_client::BoundedHttpClient;
use crate::limits::MAX_MESSAGE_BYTES;
use crate::line_transport::LineTransport;
use crate::source_log::{LogLevel, LogStream, SourceLog};
use crate::spec::{DirectCalls, UpstreamSpec, UpstreamTransport};
use crate::stdio::ChildTransport;

pub(crate) type Client = RunningService<RoleClient, UpstreamClient>;

/// The longest line of a child's stderr that reaches the log; the rest of the line is dropped.
const MAX_STDERR_LINE_BYTES: usize = 8 * 1024;

/// How long starting a server and negotiating may take before it counts as unavailable.
const CONNECT_TIMEOUT: Duration = Duration::from_mins(1);

/// Negotiation: 2026-07-28 through `server/discover`, falling back to `initialize` for older
/// servers (rmcp's `Auto` mode).
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: None,
    }
}

/// A new connection and what comes with it.
pub(crate) struct Connected {
    pub(crate) client: Client,
    /// The child's process id when the upstream is a local command.
    pub(crate) pid: Option<u32>,
    /// What an HTTP server says of the credentials.
    pub(crate) auth: Option<Arc<AuthSignal>>,
    /// A server inside the hub that takes calls without the session.
    pub(crate) direct: Option<Arc<dyn DirectCalls>>,
}

/// Connects to the upstream of `spec`.
pub(crate) async fn connect(
    spec: &UpstreamSpec,
    handler: UpstreamClient,
    log: &Arc<SourceLog>,
) -> Result<Connected, UpstreamError> {
    let mut pid = None;
    let mut auth = None;
    let mut direct = None;
    // The log's position before this attempt: a failed handshake quotes the child's last
    // stderr line of this attempt only.
    let log_start = log.after(u64::MAX).next;
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
            // A team hub's database address (with its password) is the hub's, not a source's.
            cmd.env_remove("CAPA_STORE").args(args).envs(env);
            if let Some(cwd) = cwd {
                cmd.current_dir(cwd);
            }
            die_with_parent(&mut cmd);
            let (transport, stderr) = ChildTransport::spawn(cmd)
                .map_err(|e| unavailable(explain::spawn_failure(command, &e)))?;
            pid = transport.id();
            if let Some(stderr) = stderr {
                forward_stderr(spec.source_id.clone(), stderr, log.clone());
            }
            tokio::time::timeout(
                CONNECT_TIMEOUT,
                handler.serve_with_lifecycle(transport, lifecycle()),
            )
            .await
        }
        UpstreamTransport::Http {
            url,
            headers,
            oauth,
        } => {
            let signal = Arc::new(AuthSignal::default());
            auth = Some(Arc::clone(&signal));
            serve_http(spec, url, headers, oauth.as_ref(), handler, signal).await?
        }
        UpstreamTransport::InProcess { connect, .. } => {
            // The same bound as a child's stdout: an in-process server is ours, but one rule
            // for every line transport keeps the limits in one place. Our servers read what
            // the hub reads, so a larger request is refused here rather than dropped unread
            // there, which would leave its call waiting out its timeout.
            // An in-process server may first read something (an OpenAPI document): bounded as a
            // handshake is.
            let server = tokio::time::timeout(CONNECT_TIMEOUT, connect())
                .await
                .map_err(|_| {
                    unavailable(format!(
                        "the built-in server did not start within {} s",
                        CONNECT_TIMEOUT.as_secs()
                    ))
                })?
                .map_err(unavailable)?;
            direct = server.direct;
            let (read, write) = tokio::io::split(server.stream);
            let transport = LineTransport::new(read, write, Some(MAX_MESSAGE_BYTES));
            tokio::time::timeout(
                CONNECT_TIMEOUT,
                handler.serve_with_lifecycle(transport, lifecycle()),
            )
            .await
        }
    };
    match started {
        Ok(Ok(client)) => Ok(Connected {
            client,
            pid,
            auth,
            direct,
        }),
        // A 401 to a server that asks for a sign-in: none was made, or it is no longer
        // accepted. A source with its own `Authorization` header has a token that was refused,
        // which a sign-in would not fix.
        Ok(Err(_)) if auth.as_ref().is_some_and(|a| sign_in_would_help(spec, a)) => {
            Err(UpstreamError::NeedsSignIn {
                source_id: spec.source_id.clone(),
                reason: sign_in_hint(spec),
            })
        }
        Ok(Err(e)) => Err(unavailable(
            handshake_failure(spec, &e, log, log_start).await,
        )),
        Err(_) => Err(unavailable(format!(
            "no MCP handshake within {} s",
            CONNECT_TIMEOUT.as_secs()
        ))),
    }
}

/// Serves `handler` over Streamable HTTP at `url`, through the sign-in's OAuth client when
/// the source signs in; every request's verdict on the credentials goes to `signal`.
///
/// A server that answers `server/discover` with a result of another kind (an empty `{}`, as
/// servers that answer every unknown method do) is neither modern nor, to rmcp, legacy: rmcp
/// takes only a JSON-RPC error as the sign of a pre-2026 server. Such a server is asked again,
/// over a new connection, with `initialize` alone.
async fn serve_http(
    spec: &UpstreamSpec,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    oauth: Option<&capa_oauth::TokenStore>,
    handler: UpstreamClient,
    signal: Arc<AuthSignal>,
) -> Result<
    Result<Result<Client, rmcp::service::ClientInitializeError>, tokio::time::error::Elapsed>,
    UpstreamError,
> {
    let first = serve_http_with(
        spec,
        url,
        headers,
        oauth,
        handler.clone(),
        Arc::clone(&signal),
        lifecycle(),
    )
    .await?;
    if let Ok(Err(rmcp::service::ClientInitializeError::ExpectedInitResult(_))) = &first {
        // The answer itself is the server's text, of any size: not logged.
        tracing::info!(source = %spec.source_id, "the server answered server/discover with another kind of result; connecting again with initialize");
        return serve_http_with(
            spec,
            url,
            headers,
            oauth,
            handler,
            signal,
            ClientLifecycleMode::Initialize,
        )
        .await;
    }
    Ok(first)
}

/// One attempt of [`serve_http`], with `lifecycle`.
async fn serve_http_with(
    spec: &UpstreamSpec,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    oauth: Option<&capa_oauth::TokenStore>,
    handler: UpstreamClient,
    signal: Arc<AuthSignal>,
    lifecycle: ClientLifecycleMode,
) -> Result<
    Result<Result<Client, rmcp::service::ClientInitializeError>, tokio::time::error::Elapsed>,
    UpstreamError,
> {
    let unavailable = |reason: String| UpstreamError::Unavailable {
        source_id: spec.source_id.clone(),
        reason,
    };
    let config = http_config(url, headers).map_err(unavailable)?;
    let client = BoundedHttpClient::new()
        .map_err(|e| unavailable(format!("cannot set up the HTTP client: {e}")))?;
    let Some(store) = oauth else {
        let client = Signalled {
            inner: client,
            signal,
        };
        let transport = StreamableHttpClientTransport::with_client(client, config);
        return Ok(tokio::time::timeout(
            CONNECT_TIMEOUT,
            handler.serve_with_lifecycle(transport, lifecycle),
        )
        .await);
    };
    let client = capa_oauth::authorized_client(client, url, store)
        .await
        .map_err(|e| match e {
            capa_oauth::ConnectError::SignedOut => UpstreamError::NeedsSignIn {
                source_id: spec.source_id.clone(),
                reason: sign_in_hint(spec),
            },
            other => unavailable(format!("cannot use the sign-in: {other}")),
        })?;
    let client = Signalled {
        inner: client,
        signal,
    };
    let transport = StreamableHttpClientTransport::with_client(client, config);
    Ok(tokio::time::timeout(
        CONNECT_TIMEOUT,
        handler.serve_with_lifecycle(transport, lifecycle),
    )
    .await)
}

/// The transport's settings for `url`: a static `Authorization: Bearer` header as rmcp's auth
/// header, the other headers as they are, and the hub's size bounds.
fn http_config(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransportConfig, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    let mut custom = HashMap::new();
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("authorization")
            && let Some(token) = value.strip_prefix("Bearer ")
        {
            config = config.auth_header(token.to_owned());
            continue;
        }
        let name = reqwest::header::HeaderName::try_from(name.as_str())
            .map_err(|e| format!("bad header name `{name}`: {e}"))?;
        let value = reqwest::header::HeaderValue::try_from(value.as_str())
            .map_err(|_| format!("header `{name}` has a value that is not valid in HTTP"))?;
        custom.insert(name, value);
    }
    // rmcp refuses a JSON body over its limit before reading it all (typed as `TooLarge`) and
    // an SSE event over it; `BoundedHttpClient` turns the refused event into an error answer to
    // its request, and cuts or refuses what nests too deep.
    Ok(config
        .custom_headers(custom)
        .max_json_response_size(MAX_MESSAGE_BYTES)
        .max_sse_event_size(MAX_MESSAGE_BYTES))
}

/// What the person does about a server that wants a sign-in.
pub(crate) fn sign_in_hint(spec: &UpstreamSpec) -> String {
    let signed = matches!(
        &spec.transport,
        UpstreamTransport::Http { oauth: Some(_), .. }
    );
    let connection = spec.connection.as_deref().unwrap_or("personal");
    let what = if signed {
        format!("the sign-in of connection `{connection}` is no longer accepted")
    } else {
        "the server asks for a sign-in (HTTP 401)".to_owned()
    };
    format!(
        "{what}; sign in from Capabilities (Sources, Sign in) or with `capa connections login {} --connection {connection}`",
        spec.source_id
    )
}

/// Whether a person's sign-in would answer the server's last refusal: a 401 to a source without
/// its own `Authorization` header, that signs in with OAuth or was asked for a Bearer token.
pub(crate) fn sign_in_would_help(spec: &UpstreamSpec, signal: &AuthSignal) -> bool {
    let oauth = matches!(
        &spec.transport,
        UpstreamTransport::Http { oauth: Some(_), .. }
    );
    signal.refused() && !has_auth_header(spec) && (oauth || signal.wants_bearer())
}

pub(crate) fn has_auth_header(spec: &UpstreamSpec) -> bool {
    matches!(&spec.transport, UpstreamTransport::Http { headers, .. }
        if headers.keys().any(|k| k.eq_ignore_ascii_case("authorization")))
}

/// One sentence for a failed handshake ([`crate::explain`]), quoting the child's last stderr
/// line of this attempt. A child that dies writes its last words as it exits, so they are given
/// a moment to arrive through the stderr forwarder.
async fn handshake_failure(
    spec: &UpstreamSpec,
    error: &(dyn std::error::Error + Send + Sync + 'static),
    log: &SourceLog,
    log_start: u64,
) -> String {
    let target = match &spec.transport {
        UpstreamTransport::Stdio { command, .. } => Target::Command(command),
        UpstreamTransport::Http { url, .. } => Target::Url(url),
        UpstreamTransport::InProcess { .. } => Target::InProcess,
    };
    if matches!(target, Target::Command(_)) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let last_stderr = log
        .after(log_start)
        .lines
        .into_iter()
        .rev()
        .find(|l| l.stream == LogStream::Stderr)
        .map(|l| l.text);
    explain::handshake_failure(target, error, last_stderr.as_deref())
}

/// Every line a child writes to stderr goes to the hub's log (which redacts known secrets) and to
/// the source's log (which redacts as it stores), cut to [`MAX_STDERR_LINE_BYTES`]: a child that
/// writes without newlines must not grow the hub.
fn forward_stderr(source_id: String, stderr: tokio::process::ChildStderr, log: Arc<SourceLog>) {
    tokio::spawn(async move {
        let emit = |line: &[u8], cut: bool| {
            let text = String::from_utf8_lossy(line);
            let text = text.trim_end_matches(['\n', '\r']);
            let more = if cut { " …(cut)" } else { "" };
            tracing::info!(target: "capa::upstream::stderr", source = %source_id, "{text}{more}");
            log.push(LogStream::Stderr, LogLevel::Info, &format!("{text}{more}"));
        };
        let mut reader = BufReader::new(stderr);
        let mut line = Vec::new();
        let mut cut = false;
        loop {
            let available = match reader.fill_buf().await {
                Ok(available) if !available.is_empty() => available,
                _ => break,
            };
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let room = MAX_STDERR_LINE_BYTES.saturating_sub(line.len());
            line.extend_from_slice(&available[..take.min(room)]);
            cut |= take > room;
            reader.consume(take);
            if newline.is_some() {
                emit(&line, cut);
                line.clear();
                cut = false;
            }
        }
        // The last words of a child that exits without a newline.
        if !line.is_empty() {
            emit(&line, cut);
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
