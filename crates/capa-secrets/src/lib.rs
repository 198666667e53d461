//! capa-secrets
