//! Where one surface's tasks live (SEP-2663, `crate::tasks`): rmcp's [`TaskManager`], shared by
//! every request of every client of the surface, as a task's id is all a client needs.

use rmcp::task_manager::TaskManager;

/// The tasks of one surface. Cheap to clone; the clones share the tasks.
#[derive(Clone, Default)]
pub struct TaskStore(pub(crate) TaskManager);

impl std::fmt::Debug for TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStore")
            .field("running", &self.0.running_task_count())
            .finish()
    }
}
