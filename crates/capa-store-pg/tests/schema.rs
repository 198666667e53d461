//! The two backends' schemas mean the same: each migrated on an empty database, then read back
//! from the database itself (SQLite's pragmas, PostgreSQL's catalog) and compared table by
//! table: columns with their kind of value and whether they may be empty, primary keys, unique
//! constraints, indexes and foreign keys. A migration added to one backend and not the other
//! fails here.

// The suite's places; this test uses only some of its helpers.
#[path = "suite/support.rs"]
#[allow(dead_code)]
mod support;

use std::collections::{BTreeMap, BTreeSet};

/// What a column holds, whichever database's type says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Integer,
    Boolean,
    Text,
    Bytes,
}

/// SQLite has no boolean type: these columns are INTEGER 0/1 there and BOOLEAN in PostgreSQL.
const BOOLEAN_COLUMNS: &[(&str, &str)] = &[
    ("connections", "is_default"),
    ("runs", "resumable"),
    ("run_calls", "ok"),
    ("run_calls", "in_flight"),
    ("trusted_project_sources", "global_connections"),
    ("paired_clients", "forms"),
    ("client_tasks", "ended"),
];

/// Text PostgreSQL keeps as UTF-8 bytes, since its `text` cannot hold U+0000 (the backend's
/// migration 19): the same text as SQLite's column.
const TEXT_AS_BYTES: &[(&str, &str)] = &[("runs", "code"), ("result_handles", "body")];

/// Columns only PostgreSQL has, each standing for something SQLite has implicitly.
const POSTGRES_ONLY: &[(&str, &str)] = &[
    // SQLite's rowid: the order handles were kept in.
    ("result_handles", "seq"),
];

#[derive(Debug, Default, PartialEq, Eq)]
struct Table {
    /// Name → (kind, not null).
    columns: BTreeMap<String, (Kind, bool)>,
    primary_key: Vec<String>,
    unique: BTreeSet<Vec<String>>,
    /// Index name → its columns (indexes made by CREATE INDEX, not by a constraint).
    indexes: BTreeMap<String, Vec<String>>,
    /// (columns, table, its columns, on delete).
    foreign_keys: BTreeSet<(Vec<String>, String, Vec<String>, String)>,
}

type Schema = BTreeMap<String, Table>;

/// Tables only PostgreSQL has: keys replicas share (capa-store's keys.rs), which a SQLite hub
/// keeps in files of its data dir.
const POSTGRES_ONLY_TABLES: &[&str] = &["shared_keys"];

#[test]
fn both_backends_migrate_to_the_same_schema() {
    let places = support::places();
    let sqlite = places
        .iter()
        .find(|p| p.postgres_url().is_none())
        .expect("SQLite");
    let Some(postgres) = places.iter().find(|p| p.postgres_url().is_some()) else {
        // support::places() fails under CAPA_REQUIRE_ALL when there is no server.
        return;
    };
    for place in [sqlite, postgres] {
        assert_eq!(
            place.open().schema_version().expect("version"),
            capa_store::SCHEMA_VERSION,
            "{} migrates to the latest version",
            place.name()
        );
    }
    let Some(dir) = sqlite_dir(sqlite) else {
        unreachable!("the SQLite place is a directory")
    };
    let ours = sqlite_schema(&dir.join("hub.db"));
    let mut theirs = postgres_schema(&postgres.postgres_url().expect("url"));
    for table in POSTGRES_ONLY_TABLES {
        assert!(theirs.remove(*table).is_some(), "{table} is in PostgreSQL");
        assert!(!ours.contains_key(*table), "{table} is not in SQLite");
    }
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "the same tables"
    );
    for (name, table) in &ours {
        assert_eq!(table, &theirs[name], "table {name}");
    }
}

fn sqlite_dir(place: &support::Place) -> Option<std::path::PathBuf> {
    match place {
        support::Place::Sqlite(dir) => Some(dir.path().to_owned()),
        support::Place::Postgres(_) => None,
    }
}

fn sqlite_schema(file: &std::path::Path) -> Schema {
    let conn = rusqlite::Connection::open(file).expect("open");
    let strings = |sql: &str, arg: &str| -> Vec<Vec<String>> {
        let mut statement = conn.prepare(sql).expect("prepare");
        let width = statement.column_count();
        statement
            .query_map([arg], |row| {
                (0..width)
                    .map(|i| {
                        row.get::<_, rusqlite::types::Value>(i).map(|v| match v {
                            rusqlite::types::Value::Integer(n) => n.to_string(),
                            rusqlite::types::Value::Text(t) => t,
                            _ => String::new(),
                        })
                    })
                    .collect()
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    let mut schema = Schema::new();
    let tables = strings(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> ?1",
        "",
    );
    for row in tables {
        let name = &row[0];
        let mut table = Table::default();
        let mut key = Vec::new();
        for column in strings(
            "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1)",
            name,
        ) {
            let kind = match column[1].as_str() {
                "INTEGER" if BOOLEAN_COLUMNS.contains(&(name.as_str(), column[0].as_str())) => {
                    Kind::Boolean
                }
                "INTEGER" => Kind::Integer,
                "TEXT" => Kind::Text,
                "BLOB" => Kind::Bytes,
                other => panic!("{name}.{}: type {other}", column[0]),
            };
            let pk: usize = column[3].parse().expect("pk");
            // A key column is never empty in PostgreSQL; SQLite lets a non-integer key be NULL
            // but the store never writes one.
            table
                .columns
                .insert(column[0].clone(), (kind, column[2] == "1" || pk > 0));
            if pk > 0 {
                key.push((pk, column[0].clone()));
            }
        }
        key.sort();
        table.primary_key = key.into_iter().map(|(_, c)| c).collect();
        for index in strings("SELECT name, origin FROM pragma_index_list(?1)", name) {
            let columns: Vec<String> = strings(
                "SELECT name FROM pragma_index_info(?1) ORDER BY seqno",
                &index[0],
            )
            .into_iter()
            .map(|r| r[0].clone())
            .collect();
            match index[1].as_str() {
                "c" => {
                    table.indexes.insert(index[0].clone(), columns);
                }
                "u" => {
                    table.unique.insert(columns);
                }
                _ => {}
            }
        }
        for fk in strings(
            "SELECT \"table\", \"from\", \"to\", on_delete FROM pragma_foreign_key_list(?1)",
            name,
        ) {
            table.foreign_keys.insert((
                vec![fk[1].clone()],
                fk[0].clone(),
                vec![fk[2].clone()],
                fk[3].to_lowercase(),
            ));
        }
        schema.insert(name.clone(), table);
    }
    schema
}

fn postgres_schema(url: &str) -> Schema {
    let mut client = postgres::Client::connect(url, postgres::NoTls).expect("connect");
    let mut schema = Schema::new();
    let tables = client
        .query(
            "SELECT table_name::TEXT FROM information_schema.tables
             WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
               AND table_name <> 'capa_schema'",
            &[],
        )
        .expect("tables");
    for row in tables {
        let name: String = row.get(0);
        let mut table = Table::default();
        for column in client
            .query(
                "SELECT column_name::TEXT, data_type::TEXT, is_nullable = 'NO'
                 FROM information_schema.columns
                 WHERE table_schema = 'public' AND table_name = $1",
                &[&name],
            )
            .expect("columns")
        {
            let (column_name, data_type): (String, String) = (column.get(0), column.get(1));
            if POSTGRES_ONLY.contains(&(name.as_str(), column_name.as_str())) {
                continue;
            }
            let kind = match data_type.as_str() {
                "bigint" => Kind::Integer,
                "boolean" => Kind::Boolean,
                "text" => Kind::Text,
                "bytea" if TEXT_AS_BYTES.contains(&(name.as_str(), column_name.as_str())) => {
                    Kind::Text
                }
                "bytea" => Kind::Bytes,
                other => panic!("{name}.{column_name}: type {other}"),
            };
            table.columns.insert(column_name, (kind, column.get(2)));
        }
        for index in client
            .query(
                "SELECT i.relname::TEXT, ix.indisprimary,
                        EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = ix.indexrelid),
                        ARRAY(SELECT a.attname::TEXT
                              FROM unnest(ix.indkey) WITH ORDINALITY k(attnum, ord)
                              JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum
                              ORDER BY k.ord)
                 FROM pg_index ix
                 JOIN pg_class i ON i.oid = ix.indexrelid
                 WHERE ix.indrelid = $1::TEXT::regclass",
                &[&name],
            )
            .expect("indexes")
        {
            let (index_name, primary, by_constraint, columns): (String, bool, bool, Vec<String>) =
                (index.get(0), index.get(1), index.get(2), index.get(3));
            if primary {
                table.primary_key = columns;
            } else if by_constraint {
                table.unique.insert(columns);
            } else {
                table.indexes.insert(index_name, columns);
            }
        }
        for fk in client
            .query(
                "SELECT c.confrelid::regclass::TEXT,
                        ARRAY(SELECT a.attname::TEXT FROM unnest(c.conkey) WITH ORDINALITY k(n, ord)
                              JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.ord),
                        ARRAY(SELECT a.attname::TEXT FROM unnest(c.confkey) WITH ORDINALITY k(n, ord)
                              JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.ord),
                        CASE c.confdeltype WHEN 'c' THEN 'cascade' WHEN 'n' THEN 'set null'
                             WHEN 'd' THEN 'set default' WHEN 'r' THEN 'restrict' ELSE 'no action' END
                 FROM pg_constraint c WHERE c.contype = 'f' AND c.conrelid = $1::TEXT::regclass",
                &[&name],
            )
            .expect("foreign keys")
        {
            table
                .foreign_keys
                .insert((fk.get(1), fk.get(0), fk.get(2), fk.get(3)));
        }
        schema.insert(name, table);
    }
    schema
}

#[test]
fn a_postgres_database_from_a_newer_hub_is_refused() {
    for place in support::places() {
        let Some(url) = place.postgres_url() else {
            continue;
        };
        drop(place.open());
        let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
        client
            .execute("UPDATE capa_schema SET version = 99", &[])
            .expect("set");
        drop(client);
        let err = capa_store_pg::PgStore::connect(&url).expect_err("too new");
        assert!(err.to_string().contains("newer"), "{err}");
    }
}
