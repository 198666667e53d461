//! A failed MCP handshake in one sentence a person can act on (issue 18: "could not reach
//! `http://127.0.0.1:59999/mcp`: connection refused", never a Rust type dump).
//!
//! rmcp's handshake error wraps the transport's error, which wraps reqwest's, hyper's and the
//! operating system's; its text names Rust types (`WorkerTransport<…BoundedHttpClient>`). The
//! cause is found by walking the error's `source()` chain for the errors that say what happened
//! (an `io::Error`'s kind, reqwest's connect / timeout / status), and the sentence is built from
//! that and what the source was told to run or reach. Anything not recognised falls back to the
//! innermost message with type paths taken out.

use std::error::Error as StdError;

use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

/// Where the handshake went: the URL of an HTTP source, or the program of a local command.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target<'a> {
    Url(&'a str),
    Command(&'a str),
    InProcess,
}

/// The sentence for a handshake that failed with `error`. `last_stderr` is the last line the
/// child wrote to its stderr, if any (already redacted by the source log).
pub(crate) fn handshake_failure(
    target: Target<'_>,
    error: &(dyn StdError + 'static),
    last_stderr: Option<&str>,
) -> String {
    let chain = chain(error);
    match target {
        Target::Url(url) => http_failure(url, &chain),
        Target::Command(program) => command_failure(program, &chain, last_stderr),
        Target::InProcess => format!(
            "the built-in server failed its handshake: {}",
            innermost(&chain)
        ),
    }
}

/// The sentence for a command that could not be started at all.
pub(crate) fn spawn_failure(program: &str, error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => format!(
            "cannot start `{program}`: no such program; install it, or give its full path (the hub's PATH may differ from your terminal's)"
        ),
        std::io::ErrorKind::PermissionDenied => {
            format!("cannot start `{program}`: it is not executable (check its permissions)")
        }
        _ => format!("cannot start `{program}`: {error}"),
    }
}

fn http_failure(url: &str, chain: &[&(dyn StdError + 'static)]) -> String {
    if let Some(kind) = io_kind(chain) {
        use std::io::ErrorKind as K;
        let why = match kind {
            K::ConnectionRefused => {
                Some("connection refused: is the server running, and on this port?")
            }
            K::ConnectionReset | K::ConnectionAborted => {
                Some("the server closed the connection: check that the URL is its MCP endpoint")
            }
            K::TimedOut => Some("the connection timed out: check the address and your network"),
            K::PermissionDenied => Some("the system refused the connection (a firewall?)"),
            _ => None,
        };
        if let Some(why) = why {
            return format!("could not reach {url}: {why}");
        }
    }
    for error in chain {
        if let Some(e) = error.downcast_ref::<reqwest::Error>() {
            if let Some(status) = e.status() {
                return status_sentence(url, status.as_u16());
            }
            if e.is_timeout() {
                return format!(
                    "could not reach {url}: no answer in time; check the address and your network"
                );
            }
            if e.is_connect() {
                let text = innermost(chain);
                if text.contains("dns error") || text.contains("failed to lookup address") {
                    return format!(
                        "could not reach {url}: the host name does not resolve; check the URL's spelling"
                    );
                }
                return format!("could not reach {url}: {text}");
            }
        }
    }
    let text = chain
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ");
    if let Some(status) = status_in_text(&text) {
        return status_sentence(url, status);
    }
    if text.contains("connection closed") {
        return format!(
            "{url} closed the connection before the MCP handshake: check that it is an MCP endpoint (Streamable HTTP)"
        );
    }
    format!(
        "{url} did not complete the MCP handshake: {}",
        innermost(chain)
    )
}

fn status_sentence(url: &str, status: u16) -> String {
    match status {
        401 | 403 => format!(
            "{url} refused the hub (HTTP {status}): it needs a credential; add a connection and an Authorization header that uses it"
        ),
        404 => format!("{url} has no MCP endpoint (HTTP 404): check the URL's path (often `/mcp`)"),
        405 => format!(
            "{url} does not take MCP requests (HTTP 405): check that it is a Streamable HTTP endpoint, not an SSE-only one"
        ),
        s if s >= 500 => {
            format!("{url} failed (HTTP {s}): the server has a problem; the hub retries")
        }
        s => format!("{url} answered HTTP {s} to the MCP handshake: check the URL"),
    }
}

/// An HTTP status in rmcp's text (`Unexpected server response: 404 Not Found`, `HTTP status
/// client error (401 Unauthorized)`), when no typed error carries it.
fn status_in_text(text: &str) -> Option<u16> {
    let markers = [
        "status client error (",
        "status server error (",
        "server response: ",
        "HTTP ",
    ];
    markers.iter().find_map(|marker| {
        let at = text.find(marker)? + marker.len();
        let digits: String = text[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok().filter(|s| (100..600).contains(s))
    })
}

fn command_failure(
    program: &str,
    chain: &[&(dyn StdError + 'static)],
    last_stderr: Option<&str>,
) -> String {
    let said = last_stderr
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| format!("; its last message: \"{}\"", cut(l, 300)))
        .unwrap_or_default();
    let text = chain
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ");
    let closed = matches!(
        io_kind(chain),
        Some(std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::UnexpectedEof)
    ) || text.contains("connection closed")
        || text.contains("Broken pipe");
    if closed {
        return format!(
            "`{program}` stopped before the MCP handshake{said}; check its arguments and environment, or run it in a terminal to see why"
        );
    }
    if text.contains("expect initialized")
        || text.contains("unexpected message")
        || text.contains("serde")
    {
        return format!(
            "`{program}` did not speak MCP on its standard output{said}; check that it is an MCP server started in stdio mode"
        );
    }
    format!(
        "`{program}` did not complete the MCP handshake: {}{said}",
        innermost(chain)
    )
}

/// The error and its causes. rmcp's errors do not all name their cause as `source()`: the
/// handshake's transport error and the HTTP transport's client error are followed by hand.
fn chain<'a>(error: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    let mut chain = vec![error];
    let mut next = cause(error);
    // Bounded: a cycle in a hand-written `source()` must not hang the hub.
    while let Some(e) = next {
        if chain.len() >= 32 {
            break;
        }
        chain.push(e);
        next = cause(e);
    }
    chain
}

fn cause<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a (dyn StdError + 'static)> {
    if let Some(ClientInitializeError::TransportError { error, .. }) = error.downcast_ref() {
        return Some(error);
    }
    if let Some(StreamableHttpError::<reqwest::Error>::Client(e)) = error.downcast_ref() {
        return Some(e);
    }
    error.source()
}

fn io_kind(chain: &[&(dyn StdError + 'static)]) -> Option<std::io::ErrorKind> {
    chain
        .iter()
        .find_map(|e| e.downcast_ref::<std::io::Error>())
        .map(std::io::Error::kind)
}

/// The innermost message, without Rust type paths (`[rmcp::transport::…]`) and trailing
/// context rmcp adds (`, when send discover request`).
fn innermost(chain: &[&(dyn StdError + 'static)]) -> String {
    let text = chain.last().map(ToString::to_string).unwrap_or_default();
    cut(&without_type_paths(&text), 300)
}

fn without_type_paths(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // `[path::Type<…>]` as rmcp prints its transport's type.
            '[' if chars.peek().is_some_and(char::is_ascii_alphabetic) && text.contains("::") => {
                depth += 1;
            }
            ']' if depth > 0 => depth -= 1,
            _ if depth > 0 => {}
            _ => out.push(c),
        }
    }
    let out = out.replace("  ", " ");
    out.split(", when ")
        .next()
        .unwrap_or_default()
        .trim()
        .to_owned()
}

fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Wrapped(String, Box<dyn StdError + Send + Sync>);
    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.0)
        }
    }
    impl StdError for Wrapped {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            Some(self.1.as_ref())
        }
    }

    #[test]
    fn a_refused_connection_is_one_sentence_with_the_url() {
        let error = Wrapped(
            "Send message error Transport [rmcp::transport::worker::WorkerTransport<X>] error"
                .into(),
            Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
        );
        assert_eq!(
            handshake_failure(Target::Url("http://127.0.0.1:59999/mcp"), &error, None),
            "could not reach http://127.0.0.1:59999/mcp: connection refused: is the server running, and on this port?"
        );
    }

    #[test]
    fn a_child_that_stops_is_named_with_its_last_words() {
        let error = Wrapped(
            "Send message error Transport [capa_upstream::stdio::ChildTransport] error".into(),
            Box::new(std::io::Error::from(std::io::ErrorKind::BrokenPipe)),
        );
        let text = handshake_failure(Target::Command("sh"), &error, Some("boom\n"));
        assert_eq!(
            text,
            "`sh` stopped before the MCP handshake; its last message: \"boom\"; check its arguments and environment, or run it in a terminal to see why"
        );
    }

    #[test]
    fn statuses_in_text_become_advice_and_type_paths_go() {
        let error = std::io::Error::other("Unexpected server response: 404 Not Found");
        assert!(handshake_failure(Target::Url("http://h/x"), &error, None).contains("HTTP 404"));
        let error = std::io::Error::other("HTTP status client error (401 Unauthorized)");
        assert!(
            handshake_failure(Target::Url("http://h/x"), &error, None)
                .contains("needs a credential")
        );
        assert_eq!(
            without_type_paths(
                "Send message error Transport [a::b::C<d::E>] error: closed, when send discover request"
            ),
            "Send message error Transport error: closed"
        );
    }

    #[test]
    fn a_missing_program_says_how_to_fix_it() {
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert!(spawn_failure("/no/such", &missing).contains("no such program; install it"));
    }

    #[test]
    fn long_messages_are_cut_on_a_character_boundary() {
        let long = "é".repeat(400);
        let error = std::io::Error::other(long);
        let text = handshake_failure(Target::Url("http://h/x"), &error, None);
        assert!(text.len() < 400, "{}", text.len());
        assert!(text.ends_with('…'));
    }
}
