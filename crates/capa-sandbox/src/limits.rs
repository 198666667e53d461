//! The run limits of `mcp-surface.md` (Default limits), plus the stack size and the size of one
//! call's arguments (docs/limits.md).

use serde::{Deserialize, Serialize};

/// Limits of one run attempt. The defaults are the spec's; a host may lower them, never raise them
/// (see [`Limits::lowered_to`]; [`crate::run`] clamps whatever it is given to the defaults).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Limits {
    /// Size of the code of one `execute`, in bytes (UTF-8).
    pub code_bytes: usize,
    /// Guest execution time in milliseconds; paused while the guest waits for tool calls.
    pub compute_ms: u64,
    /// Ceiling for one attempt in milliseconds, tool calls included.
    pub wall_ms: u64,
    /// Guest heap in bytes (QuickJS malloc limit). Running out inside promise jobs, where
    /// QuickJS drops the error, counts too (`oom.rs`).
    pub memory_bytes: usize,
    /// Guest stack in bytes (QuickJS max stack size).
    pub stack_bytes: usize,
    /// Tool calls per run, all attempts together (see [`crate::RunInput::calls_before`]).
    pub max_calls: u32,
    /// Tool calls in flight at once; further calls wait in a queue.
    pub max_concurrent: usize,
    /// Bytes of result and logs returned inline, together, counted as the envelope serialises
    /// them: the result's compact JSON plus the `logs` array's (each line's quotes, escapes and
    /// separator; an empty line costs 3).
    pub inline_result_bytes: usize,
    /// Milliseconds one upstream call may take, counted from when it leaves the queue.
    pub upstream_timeout_ms: u64,
    /// Bytes of one tool call's arguments, counted as the compact JSON the hub sends upstream.
    /// Not in the spec's table: without it only `memory_bytes` (64 MB) bounded what one call
    /// could push at an upstream. 4 MiB is far above any real tool input (the largest in our
    /// catalogs are file contents and message bodies of some KB) and small enough that eight
    /// calls in flight hold at most 32 MiB of arguments.
    pub argument_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            code_bytes: 64 * 1024,
            compute_ms: 10_000,
            wall_ms: 90_000,
            memory_bytes: 64 * 1024 * 1024,
            stack_bytes: 1024 * 1024,
            max_calls: 500,
            max_concurrent: 8,
            inline_result_bytes: 24 * 1024,
            upstream_timeout_ms: 30_000,
            argument_bytes: 4 * 1024 * 1024,
        }
    }
}

impl Limits {
    /// Field-wise minimum of `self` and `other`: `other` may lower any limit of `self`, never raise
    /// it. `Limits::default().lowered_to(&asked)` is what a host may ask for.
    #[must_use]
    pub fn lowered_to(self, other: &Limits) -> Limits {
        Limits {
            code_bytes: self.code_bytes.min(other.code_bytes),
            compute_ms: self.compute_ms.min(other.compute_ms),
            wall_ms: self.wall_ms.min(other.wall_ms),
            memory_bytes: self.memory_bytes.min(other.memory_bytes),
            stack_bytes: self.stack_bytes.min(other.stack_bytes),
            max_calls: self.max_calls.min(other.max_calls),
            max_concurrent: self.max_concurrent.min(other.max_concurrent),
            inline_result_bytes: self.inline_result_bytes.min(other.inline_result_bytes),
            upstream_timeout_ms: self.upstream_timeout_ms.min(other.upstream_timeout_ms),
            argument_bytes: self.argument_bytes.min(other.argument_bytes),
        }
    }

    /// The limits a run actually uses: lowered to the defaults, and with floors that keep the
    /// engine usable (at least one call slot, a stack and heap QuickJS can start with).
    pub(crate) fn effective(&self) -> Limits {
        let mut l = Limits::default().lowered_to(self);
        l.max_concurrent = l.max_concurrent.max(1);
        l.stack_bytes = l.stack_bytes.max(64 * 1024);
        l.memory_bytes = l.memory_bytes.max(2 * 1024 * 1024);
        l.inline_result_bytes = l.inline_result_bytes.max(1024);
        l
    }
}
