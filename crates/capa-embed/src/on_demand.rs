//! The model loaded when it is used and let go when it has not been for a while, so a hub that
//! nobody searches (the desktop app in the tray, most of the day) does not hold 90 MB of
//! weights and the working memory of its last pass.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

/// A value made on first use and dropped once unused for `idle`.
///
/// [`OnDemand::get`] hands out an `Arc`: a value still held (an embedding pass in progress) is
/// never dropped under its holder, and never loaded twice. A failed load is not kept: the
/// next `get` tries again (the caller decides whether to ask again).
pub struct OnDemand<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for OnDemand<T> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

type Loader<T> = Box<dyn Fn() -> Result<T, String> + Send + Sync>;

struct Shared<T> {
    /// What the value is, for the log ("search model").
    name: &'static str,
    load: Loader<T>,
    /// `None`: kept until the hub stops.
    idle: Option<Duration>,
    slot: Mutex<Slot<T>>,
}

struct Slot<T> {
    value: Option<Arc<T>>,
    last_used: Instant,
    /// A thread is waiting to let the value go.
    watched: bool,
}

impl<T: Send + Sync + 'static> OnDemand<T> {
    /// `name`: what the value is, for the log; `idle`: how long an unused value is kept
    /// (`None`: for as long as this lives).
    pub fn new(
        name: &'static str,
        idle: Option<Duration>,
        load: impl Fn() -> Result<T, String> + Send + Sync + 'static,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                name,
                load: Box::new(load),
                idle,
                slot: Mutex::new(Slot {
                    value: None,
                    last_used: Instant::now(),
                    watched: false,
                }),
            }),
        }
    }

    /// The value, loaded now if it is not (blocking: call it off the async runtime). Loads are
    /// one at a time, so two callers never make two copies.
    pub fn get(&self) -> Result<Arc<T>, String> {
        let mut slot = self.shared.lock();
        slot.last_used = Instant::now();
        if let Some(value) = &slot.value {
            return Ok(value.clone());
        }
        let value = Arc::new((self.shared.load)()?);
        slot.value = Some(value.clone());
        slot.last_used = Instant::now();
        if let Some(idle) = self.shared.idle.filter(|_| !slot.watched) {
            let shared = Arc::downgrade(&self.shared);
            let spawned = std::thread::Builder::new()
                .name("capa-model-idle".to_owned())
                .spawn(move || let_go_when_idle(&shared, idle));
            // Without a thread the value is kept, as with no `idle`.
            slot.watched = spawned.is_ok();
        }
        Ok(value)
    }

    /// Counts as a use: an embedding pass calls it at each step so its value stays.
    pub fn touch(&self) {
        self.shared.lock().last_used = Instant::now();
    }

    /// Whether the value is in memory now.
    pub fn is_loaded(&self) -> bool {
        self.shared.lock().value.is_some()
    }
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, Slot<T>> {
        // The slot holds no invariant a panicking holder could break halfway.
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// How often the watcher looks again at a value held past its idle time.
const IN_USE_RECHECK: Duration = Duration::from_secs(1);

/// The watcher: sleeps until the value has been unused for `idle`, then drops it and gives the
/// memory back. Ends when the value is gone or the `OnDemand` is dropped.
fn let_go_when_idle<T>(shared: &Weak<Shared<T>>, idle: Duration) {
    loop {
        let Some(strong) = shared.upgrade() else {
            return;
        };
        let mut slot = strong.lock();
        let unused_for = slot.last_used.elapsed();
        let in_use = slot
            .value
            .as_ref()
            .is_some_and(|v| Arc::strong_count(v) > 1);
        let wait = if slot.value.is_none() {
            slot.watched = false;
            return;
        } else if let Some(left) = idle.checked_sub(unused_for).filter(|l| !l.is_zero()) {
            left
        } else if in_use {
            // Held past its idle time (a long pass): look again soon, so that it goes about
            // `idle` after its last use rather than up to twice that.
            idle.min(IN_USE_RECHECK)
        } else {
            let value = slot.value.take();
            slot.watched = false;
            drop(slot);
            drop(value);
            crate::memory::give_back_freed_memory();
            tracing::info!(
                idle_s = idle.as_secs(),
                "{} let go after {} s unused; it loads again when next needed",
                strong.name,
                idle.as_secs()
            );
            return;
        };
        drop(slot);
        drop(strong);
        std::thread::sleep(wait);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counting(idle: Option<Duration>) -> (OnDemand<Counted>, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        let (loads, drops) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (l, d) = (loads.clone(), drops.clone());
        let slot = OnDemand::new("counted", idle, move || {
            l.fetch_add(1, Ordering::SeqCst);
            Ok(Counted(d.clone()))
        });
        (slot, loads, drops)
    }

    fn wait_for(what: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !what() {
            assert!(Instant::now() < deadline, "not within 10 s");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn loads_once_and_lets_go_when_unused() {
        let (slot, loads, drops) = counting(Some(Duration::from_millis(50)));
        assert!(!slot.is_loaded());
        drop(slot.get().expect("loads"));
        drop(slot.get().expect("loads"));
        assert_eq!(loads.load(Ordering::SeqCst), 1);
        wait_for(|| drops.load(Ordering::SeqCst) == 1);
        assert!(!slot.is_loaded());
        // Used again: loaded again, and let go again.
        drop(slot.get().expect("loads"));
        assert_eq!(loads.load(Ordering::SeqCst), 2);
        wait_for(|| drops.load(Ordering::SeqCst) == 2);
    }

    #[test]
    fn a_value_still_held_is_never_dropped_or_loaded_twice() {
        let (slot, loads, drops) = counting(Some(Duration::from_millis(20)));
        let held = slot.get().expect("loads");
        std::thread::sleep(Duration::from_millis(120));
        assert_eq!(drops.load(Ordering::SeqCst), 0, "dropped while held");
        assert!(slot.is_loaded());
        let again = slot.get().expect("loads");
        assert!(Arc::ptr_eq(&held, &again));
        assert_eq!(loads.load(Ordering::SeqCst), 1);
        drop((held, again));
        wait_for(|| drops.load(Ordering::SeqCst) == 1);
    }

    #[test]
    fn use_keeps_it_and_no_idle_keeps_it_for_good() {
        // Touched every 50 ms for 1.2 s, with 500 ms to spare each time: a loaded machine's
        // sleeps overshoot, but not by that much.
        let (slot, _, drops) = counting(Some(Duration::from_millis(550)));
        drop(slot.get().expect("loads"));
        for _ in 0..24 {
            std::thread::sleep(Duration::from_millis(50));
            slot.touch();
        }
        assert_eq!(drops.load(Ordering::SeqCst), 0, "let go while in use");
        let (kept, _, kept_drops) = counting(None);
        drop(kept.get().expect("loads"));
        std::thread::sleep(Duration::from_millis(100));
        assert!(kept.is_loaded());
        drop(kept);
        assert_eq!(kept_drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_failed_load_is_tried_again() {
        let tries = Arc::new(AtomicUsize::new(0));
        let t = tries.clone();
        let slot = OnDemand::new("flaky", None, move || {
            if t.fetch_add(1, Ordering::SeqCst) == 0 {
                Err("first".to_owned())
            } else {
                Ok(7)
            }
        });
        assert_eq!(slot.get().expect_err("the first load fails"), "first");
        assert_eq!(*slot.get().expect("loads"), 7);
    }
}
