//! Connections to PostgreSQL, each on a thread of its own.
//!
//! The store's operations are synchronous: callers, many of them on the hub's async runtime,
//! block on an operation for a moment, as they do on SQLite's connection. A synchronous
//! `postgres::Client` drives its connection on a small runtime of its own, which must not be
//! entered from a thread of another runtime; so each connection lives on a thread of the pool,
//! and an operation is a job sent to whichever connection is free, its answer sent back.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

use capa_store::StoreError;
use postgres::{Client, Config, NoTls};

/// One operation, run on a pool thread with its connection (or the error that it has none).
type Job = Box<dyn FnOnce(Result<&mut Client, StoreError>) + Send>;

/// A fixed set of connections, each on its own thread.
pub(crate) struct Pool {
    jobs: Mutex<Sender<Job>>,
    size: usize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

/// A PostgreSQL error as the store's.
pub(crate) fn backend(e: postgres::Error) -> StoreError {
    StoreError::Backend(Box::new(e))
}

/// Why an operation failed: PostgreSQL's error, or the store's own (`?` takes both).
#[derive(Debug)]
pub(crate) enum Failed {
    Postgres(postgres::Error),
    Store(StoreError),
}

impl From<postgres::Error> for Failed {
    fn from(e: postgres::Error) -> Self {
        Self::Postgres(e)
    }
}

impl From<StoreError> for Failed {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<Failed> for StoreError {
    fn from(failed: Failed) -> Self {
        match failed {
            Failed::Postgres(e) => backend(e),
            Failed::Store(e) => e,
        }
    }
}

/// An error and its causes in one line ("error connecting to server: Connection refused").
fn with_causes(e: &postgres::Error) -> String {
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

fn closed() -> StoreError {
    StoreError::Backend("the store's connections to PostgreSQL have ended".into())
}

impl Pool {
    /// Opens `size` connections with `config`; fails with the first connection's error (a wrong
    /// address or password is said at start, not at the first operation).
    pub(crate) fn connect(config: &Config, size: usize) -> Result<Self, StoreError> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        for n in 0..size.max(1) {
            let (ready, started) = mpsc::sync_channel(1);
            let (config, queue) = (config.clone(), Arc::clone(&queue));
            std::thread::Builder::new()
                .name(format!("capa-store-pg-{n}"))
                .spawn(move || {
                    let client = config.connect(NoTls);
                    let first = client.as_ref().map(|_| ()).map_err(with_causes);
                    let _ = ready.send(first);
                    if let Ok(client) = client {
                        serve(&config, client, &queue);
                    }
                })
                .map_err(|e| StoreError::Backend(Box::new(e)))?;
            match started.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    return Err(StoreError::Backend(
                        format!("could not connect to PostgreSQL: {e}").into(),
                    ));
                }
                Err(_) => return Err(closed()),
            }
        }
        Ok(Self {
            jobs: Mutex::new(jobs),
            size: size.max(1),
        })
    }

    /// Runs `operation` on a free connection and waits for its answer.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        operation: impl FnOnce(&mut Client) -> Result<T, Failed> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (answer, answered) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |client| {
            let _ = answer.send(client.and_then(|c| operation(c).map_err(StoreError::from)));
        });
        self.jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(job)
            .map_err(|_| closed())?;
        answered.recv().map_err(|_| {
            StoreError::Backend("a store operation ended without an answer (it panicked)".into())
        })?
    }
}

/// A pool thread: takes jobs until the pool is dropped, connecting again when the connection
/// was lost (the server restarted, say), so that one failure fails one operation.
fn serve(config: &Config, client: Client, queue: &Mutex<Receiver<Job>>) {
    let mut client = Some(client);
    loop {
        let job = {
            let queue = queue.lock().unwrap_or_else(PoisonError::into_inner);
            match queue.recv() {
                Ok(job) => job,
                Err(_) => return,
            }
        };
        if client.as_ref().is_none_or(Client::is_closed) {
            client = match config.connect(NoTls) {
                Ok(fresh) => Some(fresh),
                Err(e) => {
                    tracing::warn!(error = %e, "could not connect to PostgreSQL again");
                    job(Err(backend(e)));
                    continue;
                }
            };
        }
        match client.as_mut() {
            Some(open) => {
                // A panicking operation ends alone: its caller hears it (its answer is dropped),
                // and the connection, which it may have left mid-transaction, is opened again.
                let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(Ok(open))));
                if ran.is_err() {
                    tracing::error!("a store operation panicked; its connection is opened again");
                    client = None;
                }
            }
            None => job(Err(closed())),
        }
    }
}
