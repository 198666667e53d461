//! Where the suite's stores live: every test runs once per backend, on SQLite (a file in a
//! temporary directory, as a desktop hub's) and on PostgreSQL (a database of its own, made for
//! the test on the server `CAPA_TEST_POSTGRES` names and dropped after it).
//!
//! Without `CAPA_TEST_POSTGRES` the tests run on SQLite alone and say so, unless
//! `CAPA_REQUIRE_ALL` is set (as `scripts/test` sets it), where that is a failure: CI starts a
//! server (tests/support/postgres.sh).

use capa_store::Store;
use capa_store_pg::PgStore;
use capa_store_pg::scratch::ScratchDatabase;

/// One backend's home for a test's data.
pub(crate) enum Place {
    Sqlite(tempfile::TempDir),
    Postgres(ScratchDatabase),
}

impl Place {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Sqlite(_) => "SQLite",
            Self::Postgres(_) => "PostgreSQL",
        }
    }

    /// A store on this place's data (opened again, it finds what an earlier one wrote).
    pub(crate) fn open(&self) -> Store {
        match self {
            Self::Sqlite(dir) => Store::open(&dir.path().join("hub.db")).expect("open SQLite"),
            Self::Postgres(database) => Store::from_backend(
                PgStore::connect(&database.url()).expect("connect to PostgreSQL"),
            ),
        }
    }

    /// The address of this place's PostgreSQL database, if it is one.
    pub(crate) fn postgres_url(&self) -> Option<String> {
        match self {
            Self::Sqlite(_) => None,
            Self::Postgres(database) => Some(database.url()),
        }
    }
}

/// The places of this run: SQLite, and PostgreSQL when a server is given.
pub(crate) fn places() -> Vec<Place> {
    let mut places = vec![Place::Sqlite(tempfile::tempdir().expect("tempdir"))];
    match std::env::var("CAPA_TEST_POSTGRES") {
        Ok(admin) if !admin.is_empty() => places.push(Place::Postgres(
            ScratchDatabase::new(&admin, "test").expect("a database on CAPA_TEST_POSTGRES"),
        )),
        _ if std::env::var_os("CAPA_REQUIRE_ALL").is_some() => panic!(
            "CAPA_TEST_POSTGRES is not set: these tests need a PostgreSQL server \
             (eval \"$(tests/support/postgres.sh start)\" starts one)"
        ),
        _ => eprintln!("CAPA_TEST_POSTGRES is not set: on SQLite only"),
    }
    places
}

/// Runs `test` on a new store of each backend; a failure names the backend.
pub(crate) fn each_store(test: impl Fn(&Store)) {
    each_place(|place| test(&place.open()));
}

/// Runs `test` on a new place of each backend; a failure names the backend.
pub(crate) fn each_place(test: impl Fn(&Place)) {
    for place in places() {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| test(&place)));
        if let Err(panic) = outcome {
            eprintln!("failed on {}", place.name());
            std::panic::resume_unwind(panic);
        }
    }
}
