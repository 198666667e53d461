//! Writes that may wait: committed together, in the order they were made, in one transaction.
//!
//! A run's guest calls used to pay one SQLite write transaction each for the call record and
//! two for the journal (in flight, then answered): most of a call's cost; and a run one more
//! for its record when it starts. Writes that nothing
//! reads at once are queued here instead, and the queue is committed as one transaction
//! (group commit, across every run and client of the hub):
//! - before any other statement runs on the connection ([`crate::SqliteStore`]'s every read and
//!   write takes the connection through `commit_pending`), so a read always sees every write
//!   made before it, and writes keep their order;
//! - by [`WriteQueue::flush`], where a caller needs its write durable now (the journal entry
//!   of a call that may write, before the call goes out);
//! - at the latest [`FLUSH_DELAY`] after the first write was queued, by a thread of the store;
//! - when the store is dropped.
//!
//! Durable here means what it means for every write of the store (WAL, `synchronous=NORMAL`):
//! committed, so a hub that is killed keeps it; a power cut may lose the last commits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use crate::calls::CallRecord;
use crate::runs::{JournalEntry, RunRecord};

/// How long a queued write may wait for others to share its transaction.
pub(crate) const FLUSH_DELAY: Duration = Duration::from_millis(2);

/// Writes that may wait for the next group commit, and the commit itself.
pub trait WriteQueue: Send + Sync {
    /// Appends one call record with the next group of queued writes: history is not needed
    /// before the next read, and every read commits the queue first.
    fn defer_call_record(&self, call: CallRecord);

    /// [`crate::RunStore::insert_run`] with the next group of queued writes: a run that made no
    /// call that may write has nothing a replay needs, and its first such call, its pause and
    /// its end all commit the queue first.
    fn defer_insert_run(&self, run: RunRecord);

    /// [`crate::RunStore::journal_call`] with the next group of queued writes; durable at the
    /// next statement on the database, [`WriteQueue::flush`], or within a few milliseconds.
    fn defer_journal_call(&self, run_id: &str, entry: JournalEntry);

    /// Commits every queued write now (one transaction): what was written before this call is
    /// durable when it returns `Ok`.
    fn flush(&self) -> Result<(), crate::StoreError>;
}

impl WriteQueue for crate::SqliteStore {
    fn defer_call_record(&self, call: CallRecord) {
        self.shared.defer(Deferred::Call(call));
    }

    fn defer_insert_run(&self, run: RunRecord) {
        self.shared.defer(Deferred::Run(run));
    }

    fn defer_journal_call(&self, run_id: &str, entry: JournalEntry) {
        self.shared.defer(Deferred::Journal {
            run_id: run_id.to_owned(),
            entry,
        });
    }

    fn flush(&self) -> Result<(), crate::StoreError> {
        let mut conn = self
            .shared
            .conn
            .lock()
            .map_err(|_| crate::StoreError::Poisoned)?;
        Ok(self.shared.queue.commit_pending(&mut conn)?)
    }
}

/// One queued write.
#[derive(Debug)]
pub(crate) enum Deferred {
    /// A new run's record.
    Run(RunRecord),
    /// A run's journal entry (inserted or replaced by its position).
    Journal { run_id: String, entry: JournalEntry },
    /// A tool call's history record.
    Call(CallRecord),
}

impl Deferred {
    fn kind(&self) -> &'static str {
        match self {
            Self::Run(_) => "run record",
            Self::Journal { .. } => "journal entry",
            Self::Call(_) => "call record",
        }
    }

    fn apply(&self, conn: &rusqlite::Connection) -> rusqlite::Result<()> {
        match self {
            Self::Run(run) => crate::runs::insert_run_row(conn, run),
            Self::Journal { run_id, entry } => {
                crate::runs::write_journal_entry(conn, run_id, entry)
            }
            Self::Call(call) => crate::calls::insert_call(conn, call).map(|_| ()),
        }
    }
}

/// The queue of writes not committed yet, and the thread that commits them when nobody else
/// does.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    pending: Mutex<Vec<Deferred>>,
    wake: Condvar,
    closing: AtomicBool,
    flusher: OnceLock<()>,
    /// The flusher thread, joined when the store closes (so the connection closes with it).
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// What the flusher thread needs: the connection and the queue.
pub(crate) struct Shared {
    pub conn: Mutex<rusqlite::Connection>,
    pub queue: Queue,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Deferred>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Commits every queued write on `conn` (held by the caller) in one transaction. A write
    /// that fails on its own (a constraint: its run was deleted meanwhile, say) is logged and
    /// skipped, since SQLite undoes only that statement; one after which SQLite rolled the
    /// whole transaction back (a full disk, an I/O error) fails the group. A failed group is
    /// lost as failed direct writes would be; the error says so.
    pub(crate) fn commit_pending(&self, conn: &mut rusqlite::Connection) -> rusqlite::Result<()> {
        let writes = std::mem::take(&mut *self.lock());
        if writes.is_empty() {
            return Ok(());
        }
        let tx = conn.transaction()?;
        for write in &writes {
            if let Err(e) = write.apply(&tx) {
                if tx.is_autocommit() {
                    tracing::error!(error = %e, writes = writes.len(), "could not commit queued writes");
                    return Err(e);
                }
                tracing::error!(error = %e, write = write.kind(), "could not write a queued record");
            }
        }
        tx.commit().inspect_err(|e| {
            tracing::error!(error = %e, writes = writes.len(), "could not commit queued writes");
        })
    }
}

/// How far back from the queue's end [`replaced_by`] looks: a call's answer comes a few writes
/// after its entry in flight (its call record, other runs' writes meanwhile).
const REPLACE_LOOKBACK: usize = 16;

/// The queued journal entry that `write` rewrites (the same run and position), if it is among
/// the last writes queued: an entry in flight whose answer comes before the next commit is
/// written once, answered, instead of twice (a statement a guest call less). Nothing can read
/// the entry in between: every read commits the queue first.
fn replaced_by<'q>(pending: &'q mut [Deferred], write: &Deferred) -> Option<&'q mut Deferred> {
    let Deferred::Journal { run_id, entry } = write else {
        return None;
    };
    pending
        .iter_mut()
        .rev()
        .take(REPLACE_LOOKBACK)
        .find(|queued| {
            matches!(queued, Deferred::Journal { run_id: r, entry: e }
                if e.index == entry.index && r == run_id)
        })
}

impl Shared {
    /// Queues a write and makes sure the flusher thread will commit it.
    pub(crate) fn defer(self: &Arc<Self>, write: Deferred) {
        let was_empty = {
            let mut pending = self.queue.lock();
            let was_empty = pending.is_empty();
            if let Some(queued) = replaced_by(&mut pending, &write) {
                *queued = write;
            } else {
                pending.push(write);
            }
            was_empty
        };
        self.queue.flusher.get_or_init(|| {
            let shared = Arc::clone(self);
            let spawned = std::thread::Builder::new()
                .name("capa-store-flush".into())
                .spawn(move || shared.flush_until_closed());
            match spawned {
                Ok(thread) => {
                    *self
                        .queue
                        .thread
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = Some(thread);
                }
                // Writes are still committed by the next statement on the connection, by a
                // flush and at drop; only the bound on their wait is lost.
                Err(e) => tracing::warn!(error = %e, "could not start the database's flush thread"),
            }
        });
        // The flusher waits only on an empty queue: a write behind others is committed with
        // them, and a wake-up per write (a system call each, three per guest call) is not needed.
        if was_empty {
            self.queue.wake.notify_one();
        }
    }

    /// Commits what is queued now.
    pub(crate) fn commit_now(&self) -> rusqlite::Result<()> {
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        self.queue.commit_pending(&mut conn)
    }

    /// Stops the flusher thread (after it commits what is left) and waits for it to end.
    pub(crate) fn close(&self) {
        {
            // Under the queue's lock: the flusher is either waiting (and woken) or sees the
            // flag before it waits.
            let _pending = self.queue.lock();
            self.queue.closing.store(true, Ordering::Release);
        }
        self.queue.wake.notify_all();
        let thread = self
            .queue
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(thread) = thread
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
    }

    fn flush_until_closed(&self) {
        loop {
            {
                let pending = self.queue.lock();
                let pending = self
                    .queue
                    .wake
                    .wait_while(pending, |p| {
                        p.is_empty() && !self.queue.closing.load(Ordering::Acquire)
                    })
                    .unwrap_or_else(PoisonError::into_inner);
                if pending.is_empty() {
                    return;
                }
            }
            if !self.queue.closing.load(Ordering::Acquire) {
                // Let the writes of the next moments share this transaction.
                std::thread::sleep(FLUSH_DELAY);
            }
            // A failure is logged by the commit; the next write tries again.
            let _ = self.commit_now();
        }
    }
}
