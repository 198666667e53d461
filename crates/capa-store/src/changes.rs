//! Changes other hub processes make to pending inputs, as they happen: a decision taken on one
//! replica of a team hub wakes the call waiting for it on another at once, and every replica's
//! pending count (the tray, popups, the UI) follows inputs recorded anywhere.

/// Tells a hub what other processes on its database changed.
pub trait ChangeFeed: Send + Sync {
    /// Calls `notify`, on a thread of the store's, whenever another hub process on this
    /// database records or decides an input, and each time it starts following (changes made
    /// while it was not may have been missed). False where the backend cannot tell: on SQLite
    /// a terminal's decision pokes the running hub over HTTP, and waiting calls look again
    /// every half second.
    fn follow_changes(&self, notify: Box<dyn Fn() + Send + Sync>) -> bool;
}

impl ChangeFeed for crate::SqliteStore {
    fn follow_changes(&self, _notify: Box<dyn Fn() + Send + Sync>) -> bool {
        false
    }
}
