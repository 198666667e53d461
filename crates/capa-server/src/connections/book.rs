//! Which connections are open, what each has shown (the token or a UI session, a request in
//! flight), and which one to close when the server needs room: the one idle longest that never
//! authenticated, first.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::task::JoinHandle;

/// After this many connections closed since the last time (and at least half of those open at
/// the peak), the allocator is asked to give back what they held.
const TRIM_AFTER_CLOSED: usize = 64;

/// How long the trim waits after it is asked for, so the closing tasks' own memory (freed after
/// their last drop) is free by then and several closings share one trim.
const TRIM_DELAY: Duration = Duration::from_millis(250);

/// The open connections of one server.
#[derive(Debug)]
pub(crate) struct ConnectionBook {
    limit: usize,
    state: Mutex<State>,
    trim_scheduled: Arc<AtomicBool>,
}

#[derive(Debug, Default)]
struct State {
    next_id: u64,
    /// Counts every change of state, so "idle longest" is an order, not a clock reading.
    clock: u64,
    open: HashMap<u64, Entry>,
    /// The most connections open since the last trim.
    peak: usize,
}

#[derive(Debug)]
struct Entry {
    authenticated: bool,
    in_flight: usize,
    /// When it last became idle (or started its first request): [`State::clock`].
    since: u64,
    /// Its task, for shedding; set just after the task is spawned.
    task: Option<JoinHandle<()>>,
}

/// In what order connections are closed for room; a connection with an authenticated request
/// in flight (an answer being computed, an event stream) is never closed for room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Shed {
    /// Never showed the token or a session and has no request in flight: an unfinished request
    /// head, or a kept-alive connection after an open request (the hub's proof, the login page).
    IdleStranger,
    /// Never authenticated, with a request in flight (the approval page, the UI's files).
    BusyStranger,
    /// Authenticated before, idle now (a client's kept-alive connection; it reconnects).
    IdleClient,
}

impl Entry {
    fn shed_order(&self) -> Option<Shed> {
        match (self.authenticated, self.in_flight > 0) {
            (false, false) => Some(Shed::IdleStranger),
            (false, true) => Some(Shed::BusyStranger),
            (true, false) => Some(Shed::IdleClient),
            (true, true) => None,
        }
    }
}

/// What the accept loop does with a connection it accepted.
#[derive(Debug)]
pub(crate) enum Room {
    /// There is room: serve it.
    Free,
    /// Close this one first.
    Shed(Victim),
    /// Every open connection is an authenticated one at work: refuse the new one.
    Full,
}

/// A connection taken out of the book to make room; its task is aborted.
#[derive(Debug)]
pub(crate) struct Victim(Option<JoinHandle<()>>);

impl Victim {
    /// Waits (a second at most) until the connection's task has ended, and with it the socket:
    /// only then is its file descriptor free for the next `accept`.
    pub(crate) async fn closed(self) {
        if let Some(task) = self.0 {
            let _ = tokio::time::timeout(Duration::from_secs(1), task).await;
        }
    }
}

impl ConnectionBook {
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            state: Mutex::new(State::default()),
            trim_scheduled: Arc::new(AtomicBool::new(false)),
        })
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Every change is a few assignments that cannot panic halfway: the state is whole.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn open(&self) -> usize {
        self.state().open.len()
    }

    /// Whether a new connection fits, and if not, which one to close for it.
    pub(crate) fn room(&self) -> Room {
        if self.open() < self.limit {
            return Room::Free;
        }
        self.shed_one().map_or(Room::Full, Room::Shed)
    }

    /// Takes the connection to close first out of the book and aborts its task. None when
    /// every open connection is an authenticated one at work.
    pub(crate) fn shed_one(&self) -> Option<Victim> {
        let task = {
            let mut state = self.state();
            let victim = state
                .open
                .iter()
                .filter_map(|(id, entry)| Some((entry.shed_order()?, entry.since, *id)))
                .min()
                .map(|(_, _, id)| id)?;
            let entry = state.open.remove(&victim)?;
            self.note_closed(&mut state);
            entry.task
        };
        if let Some(task) = &task {
            task.abort();
        }
        Some(Victim(task))
    }

    /// Books a new connection; the returned [`Registration`] takes it out when dropped.
    pub(crate) fn register(self: &Arc<Self>) -> (Slot, Registration) {
        let mut state = self.state();
        state.next_id += 1;
        state.clock += 1;
        let id = state.next_id;
        let since = state.clock;
        state.open.insert(
            id,
            Entry {
                authenticated: false,
                in_flight: 0,
                since,
                task: None,
            },
        );
        state.peak = state.peak.max(state.open.len());
        let slot = Slot {
            id,
            book: self.clone(),
        };
        (slot.clone(), Registration(slot))
    }

    /// Gives the connection's task to the book, so it can be shed. A connection shed before
    /// this has no entry any more: its task is aborted.
    pub(crate) fn attach(&self, id: u64, task: JoinHandle<()>) {
        let mut state = self.state();
        match state.open.get_mut(&id) {
            Some(entry) => entry.task = Some(task),
            None => task.abort(),
        }
    }

    fn update(&self, id: u64, change: impl FnOnce(&mut Entry, u64)) {
        let mut state = self.state();
        state.clock += 1;
        let now = state.clock;
        if let Some(entry) = state.open.get_mut(&id) {
            change(entry, now);
        }
    }

    fn remove(&self, id: u64) {
        let mut state = self.state();
        if state.open.remove(&id).is_some() {
            self.note_closed(&mut state);
        }
    }

    /// After a crowd has left, asks the allocator to give back what it held: glibc keeps freed
    /// buffers resident for reuse (issue 39 saw the memory of a thousand closed connections
    /// stay). One trim serves every closing within [`TRIM_DELAY`].
    fn note_closed(&self, state: &mut State) {
        let open = state.open.len();
        if state.peak < open + TRIM_AFTER_CLOSED || open > state.peak / 2 {
            return;
        }
        state.peak = open;
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.trim_scheduled.swap(true, Ordering::AcqRel) {
            return;
        }
        let scheduled = self.trim_scheduled.clone();
        runtime.spawn(async move {
            tokio::time::sleep(TRIM_DELAY).await;
            let _ = tokio::task::spawn_blocking(give_back_freed_memory).await;
            scheduled.store(false, Ordering::Release);
        });
    }
}

/// Asks the C allocator to return the free memory it holds to the system, as capa-embed does
/// after the model (capa-embed/src/memory.rs, which explains glibc's arenas; every program that
/// hosts the hub keeps one arena, so this reaches the connections' buffers).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn give_back_freed_memory() {
    // SAFETY: `malloc_trim` takes a plain integer, touches no memory of ours and is safe to
    // call from any thread at any time (glibc locks each arena while trimming it).
    #[expect(
        unsafe_code,
        reason = "one libc call with no preconditions; no safe binding exists"
    )]
    let _released = unsafe { libc::malloc_trim(0) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn give_back_freed_memory() {}

/// One connection's handle, in every request's extensions: the guard marks it authenticated.
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    id: u64,
    book: Arc<ConnectionBook>,
}

impl Slot {
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The request on this connection showed the token or a UI session: the connection is
    /// a client's, closed for room only after every stranger's.
    pub(crate) fn mark_authenticated(&self) {
        self.book
            .update(self.id, |entry, _| entry.authenticated = true);
    }

    /// A request began; it is in flight until the returned guard (held by the response body)
    /// is dropped.
    pub(crate) fn begin_request(&self) -> Busy {
        self.book.update(self.id, |entry, now| {
            entry.in_flight += 1;
            entry.since = now;
        });
        Busy(self.clone())
    }
}

/// A request in flight on a connection.
#[derive(Debug)]
pub(crate) struct Busy(Slot);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.book.update(self.0.id, |entry, now| {
            entry.in_flight = entry.in_flight.saturating_sub(1);
            entry.since = now;
        });
    }
}

/// Held by a connection's task: takes the connection out of the book when the task ends (or is
/// aborted).
#[derive(Debug)]
pub(crate) struct Registration(Slot);

impl Drop for Registration {
    fn drop(&mut self) {
        self.0.book.remove(self.0.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(book: &ConnectionBook) -> Vec<u64> {
        let mut ids: Vec<u64> = book.state().open.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    #[test]
    fn idle_strangers_go_first_oldest_first_and_clients_at_work_never() {
        let book = ConnectionBook::new(8);
        let (head, _r1) = book.register();
        let (client, _r2) = book.register();
        client.mark_authenticated();
        let (page, _r3) = book.register();
        let _page_loading = page.begin_request();
        let (stream, _r4) = book.register();
        stream.mark_authenticated();
        let _streaming = stream.begin_request();
        let (newer_head, _r5) = book.register();
        // A client that finished a request long ago is idle since then, not since it connected.
        let done = client.begin_request();
        drop(done);

        let order: Vec<u64> = std::iter::from_fn(|| {
            let before = ids(&book);
            book.shed_one()?;
            before.into_iter().find(|id| !ids(&book).contains(id))
        })
        .collect();
        assert_eq!(
            order,
            [head.id(), newer_head.id(), page.id(), client.id()],
            "strangers idle, then strangers at work, then idle clients"
        );
        assert_eq!(ids(&book), [stream.id()], "a client at work is never shed");
        assert!(book.shed_one().is_none());
    }

    #[test]
    fn room_is_free_below_the_limit_then_made_by_shedding_then_full() {
        let book = ConnectionBook::new(2);
        let (first, first_registration) = book.register();
        assert!(matches!(book.room(), Room::Free));
        let (second, _r2) = book.register();
        assert!(matches!(book.room(), Room::Shed(_)));
        assert_eq!(ids(&book), [second.id()], "the older stranger made room");
        drop(first_registration);
        assert!(matches!(book.room(), Room::Free));
        let (third, _r3) = book.register();
        for slot in [&second, &third] {
            slot.mark_authenticated();
            std::mem::forget(slot.begin_request());
        }
        assert!(matches!(book.room(), Room::Full));
        assert_ne!(first.id(), third.id());
    }

    #[test]
    fn a_connection_ended_or_shed_leaves_the_book() {
        let book = ConnectionBook::new(4);
        let (slot, registration) = book.register();
        assert_eq!(book.open(), 1);
        drop(registration);
        assert_eq!(book.open(), 0);
        // A late request of a connection that is gone changes nothing.
        slot.mark_authenticated();
        drop(slot.begin_request());
        assert_eq!(book.open(), 0);
    }
}
