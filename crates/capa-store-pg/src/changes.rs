//! Changes to pending inputs announced to every hub on the database (capa-store's changes.rs):
//! a write that records or decides an input sends `NOTIFY` on [`CHANNEL`] in its own
//! transaction, so it is heard once committed; each store follows with `LISTEN` on a
//! connection of its own, on a thread of its own.

use std::sync::atomic::Ordering;
use std::time::Duration;

use capa_store::ChangeFeed;
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, GenericClient, NoTls};

use crate::PgStore;
use crate::pool::Failed;

/// The channel inputs' changes are announced on.
const CHANNEL: &str = "capa_inputs";

/// How long the listener waits for a notification before it looks whether its store closed.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// Announces that inputs changed, as the store `from` (whose own listener ignores it).
pub(crate) fn announce(c: &mut impl GenericClient, from: &str) -> Result<(), Failed> {
    c.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &from])?;
    Ok(())
}

impl ChangeFeed for PgStore {
    fn follow_changes(&self, notify: Box<dyn Fn() + Send + Sync>) -> bool {
        let (config, me, open) = (
            self.config.clone(),
            self.id.clone(),
            std::sync::Arc::clone(&self.open),
        );
        std::thread::Builder::new()
            .name("capa-store-pg-listen".into())
            .spawn(move || {
                while open.load(Ordering::Acquire) {
                    match config.connect(NoTls) {
                        Ok(client) => follow(client, &me, &open, &*notify),
                        Err(e) => tracing::warn!(error = %e, "could not listen for other hubs' decisions; trying again"),
                    }
                    if open.load(Ordering::Acquire) {
                        std::thread::sleep(LOOK_EVERY);
                    }
                }
            })
            .is_ok()
    }
}

/// Listens on `client` until the store closes or the connection fails.
fn follow(mut client: Client, me: &str, open: &std::sync::atomic::AtomicBool, notify: &dyn Fn()) {
    if let Err(e) = client.batch_execute(&format!("LISTEN {CHANNEL}")) {
        tracing::warn!(error = %e, "could not listen for other hubs' decisions");
        return;
    }
    // Whatever changed while this hub was not listening.
    notify();
    while open.load(Ordering::Acquire) {
        let mut notifications = client.notifications();
        match notifications.timeout_iter(LOOK_EVERY).next() {
            Ok(Some(heard)) if heard.payload() != me => {
                // A hub that panics while it looks again must not deafen this store for good.
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(notify)).is_err() {
                    tracing::error!("looking again after another hub's change panicked");
                }
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "lost the connection that listens for other hubs' decisions; connecting again");
                return;
            }
        }
    }
}
