//! Integration tests of capa-typegen through its public API.

#[path = "../common/catalogs.rs"]
mod catalogs;
#[path = "../common/constructs.rs"]
mod constructs;
#[path = "../common/hostile.rs"]
mod hostile;

mod bounds;
mod budget;
mod github;
mod schemas;
