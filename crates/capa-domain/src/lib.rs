//! The hub's domain: the words every other crate speaks, with no I/O and no heavy dependency (its
//! tests build without QuickJS, tantivy, oxc, SQLite, rmcp or keyring).
