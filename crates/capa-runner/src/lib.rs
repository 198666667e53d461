//! `execute`: model code through the pipeline (rewrites, TypeScript stripped) into a fresh
//! QuickJS sandbox whose globals are the user's sources, with every run recorded: code, seed,
//! logical clock, journal of calls, envelope.
//!
//! A call that needs a person (an approval, a connection) stops the attempt with a pending
//! input recorded. `execute({ resume })` then replays the run: the same code, seed and clock,
//! journaled calls answered from the journal ([`journal`]), the decided call performed for real
//! (or refused), and the run goes on from there. Runs, journals and inputs live in SQLite, so
//! this works across a hub restart too.
//!
//! The runner reaches tools only through a [`Gateway`]: the hub implements it (catalog,
//! authorizer, calls, lookups, pending inputs); the runner never sees the hub itself.

mod absent;
mod context;
mod envelope;
mod execute;
mod gateway;
mod handle_path;
pub mod handles;
mod host;
mod ids;
pub mod journal;
mod namespaces;
pub mod ownership;
mod prepare;
pub mod process;
mod settle;
mod slots;
mod unlisted;

pub use context::RunnerContext;
pub use envelope::{Envelope, EnvelopeStatus, SUMMARY_BYTES};
pub use execute::{ExecuteError, ExecuteOptions, ExecuteRequest, Runner};
pub use gateway::{CallFailure, Gate, Gateway, Pending, Unready};
pub use handles::{HandleRef, Reader};
pub use ids::new_approval_id;
pub use journal::{call_digest, sources_of_run};
pub use namespaces::NamespaceCache;
pub use ownership::{Holder, LEASE_MS, LEASE_RENEW_EVERY, Progress, interrupt_orphans, progress};
pub use prepare::INLINE_CODE_BYTES;
pub use settle::{RESUME_WINDOW_MS, settle_abandoned};
pub use slots::{MAX_RUNS, RUN_SLOT_WAIT, RunRefusal, RunSlots};
