//! Giving freed memory back to the system: after the model is loaded (the file it was read
//! from), after a batch of texts (the passes' activations) and after the model is let go.
//!
//! glibc's allocator keeps what a program frees for its next allocations: after the model's
//! weights and its last pass are freed, the process still holds about 100 MB it no longer uses
//! (measured: 103 MB resident after the drop, 9 MB after `malloc_trim`); with the model loaded,
//! after the hub's background pass, 8 MB. Other allocators and systems return large blocks on
//! their own.
//!
//! `malloc_trim` gives back free memory inside every arena, but the free end ("top") of a
//! thread's arena only when a `free` in that arena finds it over the trim threshold, which
//! glibc raises (up to 64 MB) after large blocks such as the model's weights are freed. A worker
//! thread that ran the model then kept about 22 MB free and resident in its arena for good: the
//! headless hub held 63 MiB after letting the model go, against 38 MiB without a model. With
//! every thread in the main arena ([`use_one_malloc_arena`]), whose top `malloc_trim` does
//! shrink, it holds 40 MiB; first-time embedding and query latency measured the same
//! (docs/code-mode.md, "Cost").

/// Asks the C allocator to return the free memory it holds to the system.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn give_back_freed_memory() {
    // SAFETY: `malloc_trim` takes a plain integer, touches no memory of ours and is safe to
    // call from any thread at any time (glibc locks each arena while trimming it).
    #[expect(
        unsafe_code,
        reason = "one libc call with no preconditions; no safe binding exists"
    )]
    let _released = unsafe { libc::malloc_trim(0) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn give_back_freed_memory() {}

/// Makes every thread allocate from glibc's main arena, so that what the model frees can be
/// given back whole (see the module's notes). To be called at the start of `main`: a thread that
/// has already allocated from an arena of its own keeps it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn use_one_malloc_arena() {
    // SAFETY: `mallopt` takes two integers, touches no memory of ours and locks the allocator
    // itself; called at any time it only changes where later allocations come from.
    #[expect(
        unsafe_code,
        reason = "one libc call with no preconditions; no safe binding exists"
    )]
    let _set = unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn use_one_malloc_arena() {}
