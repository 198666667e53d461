//! capa-server
