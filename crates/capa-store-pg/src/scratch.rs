//! Throwaway databases on a PostgreSQL server, for tests and benchmarks: each made with a name
//! of its own and dropped (with any connection still open to it) when dropped.

use capa_store::StoreError;

use crate::pool::backend;

/// A database made for one test or benchmark on the server `admin` names.
pub struct ScratchDatabase {
    admin: String,
    name: String,
}

/// The server's address may hold a password: only the database's name is shown.
impl std::fmt::Debug for ScratchDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScratchDatabase")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ScratchDatabase {
    /// Makes a new, empty database on the server of `admin` (an address whose user may create
    /// databases), named `capa_<what>_<pid>_<n>_<nanos>`.
    pub fn new(admin: &str, what: &str) -> Result<Self, StoreError> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let what: String = what
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(20)
            .collect::<String>()
            .to_ascii_lowercase();
        let name = format!(
            "capa_{what}_{}_{}_{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let (server, create) = (admin.to_owned(), format!("CREATE DATABASE {name}"));
        // On a thread of its own, as every use of the synchronous client here (pool.rs).
        std::thread::spawn(move || {
            postgres::Client::connect(&server, postgres::NoTls)?.batch_execute(&create)
        })
        .join()
        .map_err(|_| StoreError::Backend("making a scratch database panicked".into()))?
        .map_err(backend)?;
        Ok(Self {
            admin: admin.to_owned(),
            name,
        })
    }

    /// The database's address: the server's, with this database's name.
    pub fn url(&self) -> String {
        let (address, query) = self
            .admin
            .split_once('?')
            .map_or((self.admin.as_str(), ""), |(a, q)| (a, q));
        let base = address.rsplit_once('/').map_or(address, |(base, _)| base);
        if query.is_empty() {
            format!("{base}/{}", self.name)
        } else {
            format!("{base}/{}?{query}", self.name)
        }
    }
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        // On a thread of its own: the synchronous client must not run on an async runtime's
        // thread, and a test may drop this on one.
        let (admin, name) = (self.admin.clone(), self.name.clone());
        let dropped = std::thread::spawn(move || {
            if let Ok(mut client) = postgres::Client::connect(&admin, postgres::NoTls) {
                let _ =
                    client.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
            }
        });
        let _ = dropped.join();
    }
}
