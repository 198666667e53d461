//! capa-demo
