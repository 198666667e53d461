//! Accepting and serving the HTTP server's connections, bounded for a process that needs no
//! token to open one (issue 39: a thousand unfinished request heads held ~62 KB each forever,
//! and at the file limit the hub stopped answering).
//!
//! - **A deadline for request heads** ([`limits::HEAD_DEADLINE`], 10 s): hyper closes a
//!   connection that has not sent a whole head by then, counted from `accept` and, on a
//!   kept-alive connection, from the previous answer. A head holds at most
//!   [`limits::MAX_HEAD_BYTES`].
//! - **A bound on open connections** ([`limits::connection_bound`], half the file limit): a
//!   connection over it, or an `accept` that fails for want of a file descriptor, first closes
//!   the connection idle longest that never showed the token or a session ([`book`]); an
//!   authenticated request at work is never closed for room. So the hub keeps accepting, and
//!   answering its clients, however many strangers connect.
//! - **Memory given back**: after a crowd of connections has closed, the allocator is asked to
//!   return what they held ([`book`]).
//!
//! The guard ([`crate::guard`]) marks a connection authenticated through the [`Slot`] every
//! request carries in its extensions. docs/limits.md, "Connections to the HTTP server", has the
//! numbers and why.

mod book;
mod limits;
mod tracked;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

pub(crate) use book::Slot;
use book::{ConnectionBook, Room};
use limits::AcceptFailure;

/// How long the server waits before it tries `accept` again after a failure that closing a
/// connection cannot help (or when there was none to close): short, so a client waits little,
/// and long enough not to spin.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// Serves `router` on `listener` until `stop` is cancelled, then lets open connections finish
/// their requests and returns when all have closed.
pub(crate) async fn serve(listener: TcpListener, router: Router, stop: CancellationToken) {
    let book = ConnectionBook::new(limits::connection_bound());
    tracing::debug!(
        connections = book.limit(),
        "serving HTTP with a bound on open connections"
    );
    let mut out_of_files_logged = false;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        match accepted {
            Ok((stream, _)) => {
                out_of_files_logged = false;
                if make_room(&book).await {
                    spawn_connection(&book, stream, router.clone(), stop.clone());
                } else {
                    tracing::debug!(
                        "refused a connection: every open one is a client's request at work"
                    );
                }
            }
            Err(error) => match limits::classify(&error) {
                AcceptFailure::Connection => {}
                AcceptFailure::OutOfFiles => {
                    if !out_of_files_logged {
                        tracing::warn!(error = %error, open = book.open(), "the process has no file descriptor left for a new connection; closing idle ones that never showed the token");
                        out_of_files_logged = true;
                    }
                    match book.shed_one() {
                        Some(victim) => victim.closed().await,
                        None => tokio::time::sleep(ACCEPT_RETRY).await,
                    }
                }
                AcceptFailure::Other => {
                    tracing::warn!(error = %error, "accepting a connection failed; trying again");
                    tokio::time::sleep(ACCEPT_RETRY).await;
                }
            },
        }
    }
    drop(listener);
    // Connections saw `stop` too and shut down gracefully; wait for their last answers.
    while book.open() > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Makes room for one more connection; false when none can be closed for it.
async fn make_room(book: &Arc<ConnectionBook>) -> bool {
    match book.room() {
        Room::Free => true,
        Room::Shed(victim) => {
            victim.closed().await;
            true
        }
        Room::Full => false,
    }
}

fn spawn_connection(
    book: &Arc<ConnectionBook>,
    stream: TcpStream,
    router: Router,
    stop: CancellationToken,
) {
    let (slot, registration) = book.register();
    let id = slot.id();
    let task = tokio::spawn(async move {
        let _registration = registration;
        serve_connection(stream, router, slot, stop).await;
    });
    book.attach(id, task);
}

async fn serve_connection(stream: TcpStream, router: Router, slot: Slot, stop: CancellationToken) {
    // Nagle off: a response that goes out as two small writes (headers, then the body)
    // otherwise waits for the client's delayed ACK, ~40 ms per request for HTTP/1.1 clients
    // such as the TS and Python SDKs.
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(error = %e, "could not set TCP_NODELAY on a connection");
    }
    let service =
        hyper::service::service_fn(move |request| handle(router.clone(), slot.clone(), request));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits::HEAD_DEADLINE)
        .max_buf_size(limits::MAX_HEAD_BYTES);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        served = connection.as_mut() => {
            if let Err(e) = served {
                tracing::trace!(error = %e, "connection ended");
            }
        }
        () = stop.cancelled() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}

/// One request: counted in flight until its answer is sent, with the connection's [`Slot`] in
/// its extensions for the guard.
async fn handle(
    router: Router,
    slot: Slot,
    request: hyper::Request<Incoming>,
) -> Result<hyper::Response<tracked::Tracked>, Infallible> {
    let busy = slot.begin_request();
    let mut request = request.map(Body::new);
    request.extensions_mut().insert(slot);
    let response = router.oneshot(request).await?;
    Ok(response.map(|body| tracked::Tracked::new(body, busy)))
}
