//! One-time links to the hub's own sign-in page, for a person's browser: the HTTP server
//! installs what makes them, and a client's URL elicitation hands one out.

use std::sync::{Arc, PoisonError, RwLock};

use super::Connections;

/// Makes a one-time link to the hub's own sign-in page for `source` as `connection` (the HTTP
/// server installs one; `None` when it cannot).
pub type SignInLinker = Arc<dyn Fn(&str, Option<&str>) -> Option<String> + Send + Sync>;

/// Where the hub keeps its [`SignInLinker`].
#[derive(Default)]
pub(super) struct LinkerSlot(RwLock<Option<SignInLinker>>);

impl std::fmt::Debug for LinkerSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkerSlot").finish_non_exhaustive()
    }
}

impl Connections<'_> {
    /// Installs the maker of one-time sign-in links (the HTTP server does, when it starts).
    pub fn set_sign_in_linker(&self, linker: SignInLinker) {
        let mut slot = self
            .hub
            .sign_in_links
            .0
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        *slot = Some(linker);
    }

    /// A one-time link to this hub's sign-in page for `source` as `connection`, for a person's
    /// browser (a client's URL elicitation); `None` without an HTTP server.
    pub fn sign_in_link(&self, source: &str, connection: Option<&str>) -> Option<String> {
        let linker = self
            .hub
            .sign_in_links
            .0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()?;
        linker(source, connection)
    }
}
