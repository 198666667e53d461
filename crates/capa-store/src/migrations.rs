//! Versioned migrations. Each entry moves the schema one version up; `PRAGMA user_version` records
//! where a database is. Never edit a released migration: add one.

use crate::StoreError;

const MIGRATIONS: &[&str] = &[
    // 1: tool calls and connections.
    r"
    CREATE TABLE tool_calls (
        id             INTEGER PRIMARY KEY,
        address        TEXT NOT NULL,
        connection     TEXT,
        client         TEXT,
        started_at_ms  INTEGER NOT NULL,
        duration_ms    INTEGER NOT NULL,
        status         TEXT NOT NULL,
        error_code     TEXT,
        error_message  TEXT,
        request_bytes  INTEGER NOT NULL,
        response_bytes INTEGER NOT NULL
    );
    CREATE INDEX tool_calls_started ON tool_calls(started_at_ms);
    CREATE INDEX tool_calls_address ON tool_calls(address);

    CREATE TABLE connections (
        source        TEXT NOT NULL,
        name          TEXT NOT NULL,
        fields        TEXT NOT NULL,
        is_default    INTEGER NOT NULL DEFAULT 0,
        created_at_ms INTEGER NOT NULL,
        updated_at_ms INTEGER NOT NULL,
        PRIMARY KEY (source, name)
    );
    ",
    // 2: runs of `execute` and their journal of tool calls (the base of replay on resume).
    r"
    CREATE TABLE runs (
        id             TEXT PRIMARY KEY,
        code           TEXT NOT NULL,
        seed           INTEGER NOT NULL,
        clock_start_ms INTEGER NOT NULL,
        client         TEXT,
        status         TEXT NOT NULL,
        envelope       TEXT,
        attempts       INTEGER NOT NULL DEFAULT 1,
        created_at_ms  INTEGER NOT NULL,
        updated_at_ms  INTEGER NOT NULL
    );
    CREATE INDEX runs_created ON runs(created_at_ms);

    CREATE TABLE run_calls (
        run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        idx         INTEGER NOT NULL,
        address     TEXT NOT NULL,
        connection  TEXT,
        arguments   TEXT NOT NULL,
        ok          INTEGER NOT NULL,
        outcome     TEXT NOT NULL,
        ms          INTEGER NOT NULL,
        PRIMARY KEY (run_id, idx)
    );
    ",
    // 3: approvals and paused runs. A journal entry keeps a digest of the real arguments (the
    // stored ones are redacted) so a replay can tell it asks the same; pending inputs of runs,
    // what a person granted a run, and requestStates already used (single use).
    r"
    ALTER TABLE run_calls ADD COLUMN args_digest TEXT;
    ALTER TABLE runs ADD COLUMN resumable INTEGER NOT NULL DEFAULT 1;

    CREATE TABLE approvals (
        id            TEXT PRIMARY KEY,
        run_id        TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        call_index    INTEGER NOT NULL,
        kind          TEXT NOT NULL,
        address       TEXT NOT NULL,
        source        TEXT NOT NULL,
        connection    TEXT,
        preview       TEXT NOT NULL,
        reason        TEXT NOT NULL,
        args_digest   TEXT NOT NULL,
        status        TEXT NOT NULL,
        scope         TEXT,
        decided_via   TEXT,
        created_at_ms INTEGER NOT NULL,
        expires_at_ms INTEGER NOT NULL,
        decided_at_ms INTEGER,
        UNIQUE (run_id, call_index)
    );
    CREATE INDEX approvals_status ON approvals(status, created_at_ms);

    CREATE TABLE run_grants (
        run_id  TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        address TEXT NOT NULL,
        PRIMARY KEY (run_id, address)
    );

    CREATE TABLE consumed_states (
        digest         TEXT PRIMARY KEY,
        consumed_at_ms INTEGER NOT NULL
    );
    ",
    // 4: pending inputs of direct calls (`capa call`, `/api/call`, expose-all forms) live beside
    // those of runs, keyed by a call id (`call_…`) in `run_id`, so `run_id` no longer references
    // `runs`. SQLite cannot drop a constraint in place: the table is rebuilt.
    r"
    CREATE TABLE approvals_new (
        id            TEXT PRIMARY KEY,
        run_id        TEXT NOT NULL,
        call_index    INTEGER NOT NULL,
        kind          TEXT NOT NULL,
        address       TEXT NOT NULL,
        source        TEXT NOT NULL,
        connection    TEXT,
        preview       TEXT NOT NULL,
        reason        TEXT NOT NULL,
        args_digest   TEXT NOT NULL,
        status        TEXT NOT NULL,
        scope         TEXT,
        decided_via   TEXT,
        created_at_ms INTEGER NOT NULL,
        expires_at_ms INTEGER NOT NULL,
        decided_at_ms INTEGER,
        UNIQUE (run_id, call_index)
    );
    INSERT INTO approvals_new SELECT * FROM approvals;
    DROP TABLE approvals;
    ALTER TABLE approvals_new RENAME TO approvals;
    CREATE INDEX approvals_status ON approvals(status, created_at_ms);
    ",
    // 5: the policy a person confirmed (JSON rules). A change of the policy file that loosens
    // it (ask or deny becoming allow) made outside the app's window or an interactive terminal
    // waits against this until a person confirms it.
    r"
    CREATE TABLE confirmed_policy (
        id              INTEGER PRIMARY KEY CHECK (id = 1),
        rules           TEXT NOT NULL,
        confirmed_at_ms INTEGER NOT NULL
    );
    ",
    // 6: the sources a person confirmed, by id and a digest of how they start (command, args,
    // env, cwd; or URL and headers). A source that is new or changed outside the app's window
    // or an interactive terminal does not start until a person confirms it. The row with the
    // empty id marks that confirmations began (the first start counts what it finds as
    // confirmed).
    r"
    CREATE TABLE confirmed_sources (
        id              TEXT PRIMARY KEY,
        digest          TEXT NOT NULL,
        confirmed_at_ms INTEGER NOT NULL
    );
    ",
    // 7: the project sources a person trusted, by the project file's canonical path, the
    // source's id and the digest of how it starts. A project file (found from the working
    // directory up, perhaps in a cloned repository) runs nothing before this; the first start
    // never counts its sources as confirmed. `global_connections` is 1 when the person let the
    // source use the connections (secrets) of the global source with the same id.
    r"
    CREATE TABLE trusted_project_sources (
        file               TEXT NOT NULL,
        source_id          TEXT NOT NULL,
        digest             TEXT NOT NULL,
        global_connections INTEGER NOT NULL,
        trusted_at_ms      INTEGER NOT NULL,
        PRIMARY KEY (file, source_id)
    );
    ",
    // 8: which hub process runs a run's attempt (several hubs may share one data dir: the
    // desktop app's and a project's), so a hub that starts can tell a run whose process died
    // mid-attempt (it becomes `interrupted`) from one another hub is running; and journal
    // entries written before a call is made (`in_flight`), so a replay after a crash knows
    // which calls may have taken effect without an answer; and which hub's client form is
    // asking about a pending input now (`input_claims`), so the desktop app's popup waits for a
    // form shown by another hub's client too. `until_ms` NULL: until the claim is released.
    r"
    ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
    ALTER TABLE runs ADD COLUMN owner_started_ms INTEGER;
    ALTER TABLE run_calls ADD COLUMN in_flight INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE input_claims (
        approval_id      TEXT PRIMARY KEY,
        owner_pid        INTEGER NOT NULL,
        owner_started_ms INTEGER NOT NULL,
        channel          TEXT NOT NULL,
        until_ms         INTEGER
    );
    ",
    // 9: the client that asks, on each pending input ("name version" as the client introduced
    // itself, cleaned and bounded before it is stored): the popup and the Pending page name it,
    // and a direct call has no run to read it from.
    r"
    ALTER TABLE approvals ADD COLUMN client TEXT;
    ",
    // 10: the sentence model's vectors of tool texts (search by meaning), keyed by the model's
    // id and the SHA-256 of the text embedded, as little-endian f32s. A cache: any row may be
    // dropped (`prune_embeddings`), and a damaged one reads as a miss. `used_at_ms` is when a
    // lookup last found the row (refreshed at most hourly), so vectors of texts no catalog has
    // any more can be pruned.
    r"
    CREATE TABLE embeddings (
        model      TEXT NOT NULL,
        text_hash  BLOB NOT NULL,
        vector     BLOB NOT NULL,
        used_at_ms INTEGER NOT NULL,
        PRIMARY KEY (model, text_hash)
    );
    ",
    // 11: results and logs too large to return inline, kept whole (redacted) so later runs of
    // the same client can read them in pieces with `hub.read(handle)`. `body` is a string
    // result's own text, any other result's compact JSON (`of = 'result'`), or the log lines
    // joined by newlines (`of = 'logs'`); `bytes` its UTF-8 length, summed to bound the table;
    // the oldest go first. Pieces are read with blob I/O on `body`.
    r"
    CREATE TABLE result_handles (
        id            TEXT PRIMARY KEY,
        run_id        TEXT NOT NULL,
        client        TEXT,
        of            TEXT NOT NULL,
        value_type    TEXT NOT NULL,
        bytes         INTEGER NOT NULL,
        body          TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL
    );
    CREATE INDEX result_handles_created ON result_handles(created_at_ms);
    CREATE INDEX result_handles_run ON result_handles(run_id);
    ",
    // 12: clients a person paired (the app's Clients page, `capa clients pair` at a terminal):
    // each has its own key, kept here only as its SHA-256, and `forms` says whether the answers
    // of its own approval forms count as the person's. `run_pairings` names the paired client
    // that started a run, so only that client is shown the run's forms on a resume.
    r"
    CREATE TABLE paired_clients (
        id            TEXT PRIMARY KEY,
        name          TEXT NOT NULL,
        key_digest    TEXT NOT NULL UNIQUE,
        forms         INTEGER NOT NULL,
        created_at_ms INTEGER NOT NULL,
        last_seen_ms  INTEGER
    );
    CREATE TABLE run_pairings (
        run_id        TEXT PRIMARY KEY,
        paired_client TEXT NOT NULL
    );
    ",
    // 13: the sources a person allowed to ask the client's model (sampling). Off until then:
    // a source's sampling request speaks to the model in the hub's session, and 2026-07-28
    // deprecates sampling anyway.
    r"
    CREATE TABLE sampling_allowances (
        source_id     TEXT PRIMARY KEY,
        allowed_at_ms INTEGER NOT NULL
    );
    ",
    // 14: pinned tool definitions (the rug-pull guard, docs/pinning.md): per source key and
    // tool name, the definition a person approved (JSON: title, description, input and output
    // schema, annotations) and its digest; `status` is `approved`, `new` (appeared after the
    // source's first listing, waits for review) or `blocked`. A pending input keeps the digest
    // of the definition it was asked under, so a later change shows beside it.
    r"
    CREATE TABLE pinned_tools (
        source       TEXT NOT NULL,
        tool         TEXT NOT NULL,
        digest       TEXT NOT NULL,
        definition   TEXT NOT NULL,
        status       TEXT NOT NULL,
        pinned_at_ms INTEGER NOT NULL,
        PRIMARY KEY (source, tool)
    );
    ALTER TABLE approvals ADD COLUMN definition_digest TEXT;
    ",
    // 15: a person's Accept of a tool whose text was flagged (docs/tool-text.md): kept per tool
    // address and SHA-256 of the text the flag was raised on, so that a changed text is flagged
    // again.
    r"
    CREATE TABLE accepted_tool_texts (
        address        TEXT NOT NULL,
        text_digest    TEXT NOT NULL,
        accepted_at_ms INTEGER NOT NULL,
        PRIMARY KEY (address, text_digest)
    );
    ",
    // 16: a person's trust of what a project file brings besides sources of its own (skills,
    // profiles, options, sources with a global source's id): the SHA-256 of those settings per
    // project file (canonical path), so that a change asks again (capa-config's project_trust).
    r"
    CREATE TABLE trusted_project_settings (
        file          TEXT PRIMARY KEY,
        digest        TEXT NOT NULL,
        trusted_at_ms INTEGER NOT NULL
    );
    ",
    // 17: the tasks the hub gave its clients (SEP-2663, capa-mcp's tasks.rs), so that a
    // restarted hub answers `tasks/get` for them: per task id, the surface (profile) it belongs
    // to, its state as the client reads it (JSON), whether it ended, the hub process that
    // follows it (pid and start time, as `runs`) and when it is forgotten.
    r"
    CREATE TABLE client_tasks (
        id               TEXT PRIMARY KEY,
        surface          TEXT NOT NULL,
        detail           TEXT NOT NULL,
        ended            INTEGER NOT NULL,
        owner_pid        INTEGER NOT NULL,
        owner_started_ms INTEGER NOT NULL,
        expires_at_ms    INTEGER NOT NULL
    );
    CREATE INDEX client_tasks_expiry ON client_tasks (expires_at_ms);
    ",
    // 18: the machine a run's attempt runs on and the lease it holds (issue 44: replicas of a
    // team hub on several machines share one database). A process id says whether a hub lives
    // only on its own machine; a hub elsewhere tells a live attempt from an orphaned one by the
    // lease, which its process renews while it runs (capa-runner's ownership.rs). Every hub
    // looks for running runs every few seconds: by status.
    r"
    ALTER TABLE runs ADD COLUMN owner_machine INTEGER;
    ALTER TABLE runs ADD COLUMN lease_until_ms INTEGER;
    CREATE INDEX runs_status ON runs(status);
    ",
    // 19: PostgreSQL keeps a run's code and a kept result's body as UTF-8 bytes, since its text
    // cannot hold U+0000, which model code and tool results may (capa-store-pg's schema.rs).
    // SQLite's text holds it already: nothing changes here, and the versions stay in step.
    "",
];

/// The newest schema version this build knows.
#[expect(
    clippy::cast_possible_wrap,
    reason = "a handful of migrations; `i64::try_from` is not const"
)]
pub(crate) const LATEST: i64 = MIGRATIONS.len() as i64;

pub(crate) fn migrate(conn: &mut rusqlite::Connection) -> Result<(), StoreError> {
    let current: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if current > LATEST {
        return Err(StoreError::TooNew {
            found: current,
            known: LATEST,
        });
    }
    migrate_to(conn, current, LATEST)
}

/// Applies migrations `from + 1 ..= to`, each in its own transaction.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    reason = "schema versions count a handful of migrations, and SQLite's `user_version` starts at 0"
)]
fn migrate_to(conn: &mut rusqlite::Connection, from: i64, to: i64) -> Result<(), StoreError> {
    for (index, sql) in MIGRATIONS
        .iter()
        .enumerate()
        .take(to as usize)
        .skip(from as usize)
    {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;

    /// A database made by every earlier release (each schema version) opens with its rows kept:
    /// a run paused at version 2, 3 or 7 can still be resumed after an upgrade.
    #[test]
    fn every_older_schema_migrates_with_its_runs_kept() {
        for version in 2..LATEST {
            let dir = tempfile::tempdir().expect("tempdir");
            let file = dir.path().join("hub.db");
            {
                let mut conn = rusqlite::Connection::open(&file).expect("open");
                migrate_to(&mut conn, 0, version).expect("old schema");
                conn.execute(
                    "INSERT INTO runs (id, code, seed, clock_start_ms, client, status, envelope, attempts, created_at_ms, updated_at_ms)
                     VALUES ('run_old', 'return 1', 7, 100, NULL, 'running', NULL, 1, 100, 100)",
                    [],
                )
                .expect("a run of that version");
                conn.execute(
                    "INSERT INTO run_calls (run_id, idx, address, connection, arguments, ok, outcome, ms)
                     VALUES ('run_old', 0, 'demo.list_notes', NULL, '{}', 1, '[]', 3)",
                    [],
                )
                .expect("a journal entry of that version");
            }
            let store = Store::open(&file).expect("opens and migrates");
            assert_eq!(store.schema_version().expect("version"), LATEST);
            let run = store.run("run_old").expect("read").expect("kept");
            assert_eq!(
                (run.seed, run.status.as_str()),
                (7, "running"),
                "v{version}"
            );
            assert!(
                run.resumable,
                "v{version}: runs before the flag were resumable"
            );
            assert_eq!(run.owner, None, "v{version}: no owner recorded before v8");
            let journal = store.journal("run_old").expect("journal");
            assert_eq!(journal.len(), 1, "v{version}");
            assert!(!journal[0].in_flight, "v{version}: old entries are answers");
            assert_eq!(journal[0].args_digest, None);
            // A run left `running` by an old hub has no owner: it counts as interrupted.
            assert_eq!(
                store.runs_in_progress().expect("in progress"),
                vec![crate::RunInProgress {
                    id: "run_old".to_owned(),
                    attempts: 1,
                    owner: None,
                    lease: None,
                }]
            );
        }
    }
}
