//! The sources of the runs before: what a warm sandbox defines ahead of its run.
//!
//! A hub's runs all have the same namespaces until its catalog changes, and defining them is
//! most of a run's start on a hub with many tools (a closure and a property per tool; about
//! 13 ms for 2,000 tools on this project's test machine). So the pool (`pool.rs`) remembers the
//! namespaces of the last run it was offered, and the sandboxes it makes define them while they
//! wait; a run whose namespaces are those takes such a sandbox and skips the step. The check is
//! an equality of the whole list, never a digest: a run gets exactly its own namespaces. The
//! runner hands every run of a catalog and policy the same shared list, so the check is
//! usually a pointer's.

use std::sync::Arc;

use crate::Namespace;
use crate::run_tools::RunTools;

/// Namespaces warm sandboxes define ahead, with the addresses they allow, made once.
pub(crate) struct Primed {
    pub(crate) namespaces: Arc<[Namespace]>,
    pub(crate) tools: Arc<RunTools>,
}

impl Primed {
    pub(crate) fn of(namespaces: &Arc<[Namespace]>) -> Arc<Self> {
        Arc::new(Self {
            namespaces: namespaces.clone(),
            tools: Arc::new(RunTools::of(namespaces)),
        })
    }

    /// Whether a run with `namespaces` may take a sandbox primed with these: the same list
    /// (the runner shares one while its catalog and policy stay), else an equal one.
    pub(crate) fn serves(&self, namespaces: &Arc<[Namespace]>) -> bool {
        Arc::ptr_eq(&self.namespaces, namespaces) || self.namespaces == *namespaces
    }
}
