//! capa-store
