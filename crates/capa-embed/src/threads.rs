//! How many threads the model's matrix products use, counted once per process.
//!
//! candle decides at every matrix product how many threads to split it over. Unless
//! `RAYON_NUM_THREADS` is set, it counts the machine's physical cores there and then, by reading
//! and parsing `/proc/cpuinfo`: 48 times for one query's vector (6 layers × 8 products) when it
//! was measured, about 4 of a query's 13 ms on this project's CI machine (docs/code-mode.md,
//! "A query's time"); 12 times now that a query's dense layers take their own path
//! (`few_tokens.rs`), and 48 per pass of a batch. Setting the variable once, to the count candle
//! would find, makes every later product read it instead.

/// The variable candle (and rayon) read their thread count from.
pub const THREADS_ENV: &str = "RAYON_NUM_THREADS";

/// Sets [`THREADS_ENV`] to the number of threads candle would choose, unless it is set already.
///
/// # Safety
///
/// Call it before the process starts any other thread (the first thing `main` does): changing
/// the environment while another thread may read it is undefined behaviour.
#[expect(
    unsafe_code,
    reason = "std::env::set_var, sound only before other threads start; the caller promises that"
)]
pub(crate) unsafe fn count_threads_once() {
    if std::env::var_os(THREADS_ENV).is_some() {
        return;
    }
    let threads = candle_core::utils::get_num_threads();
    // SAFETY: the caller guarantees no other thread runs yet, so nothing reads the environment
    // while it changes.
    unsafe { std::env::set_var(THREADS_ENV, threads.to_string()) };
}
