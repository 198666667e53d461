//! capa-upstream
