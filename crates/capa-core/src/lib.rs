//! capa-core
