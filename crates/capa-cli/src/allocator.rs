//! The allocator of every program built on this crate (`capa`, `capabilities` and the desktop
//! app): mimalloc, with a heap per thread.
//!
//! Why not the system's (glibc's): a run lives on a thread of its own (capa-sandbox's pool), and
//! while it runs the pool makes the next sandbox on another thread, the flusher commits the
//! store's queue on a third, and the runtime's workers serve clients. glibc's arenas are shared
//! between threads under a lock, and a thread that ends hands its cache back under that lock;
//! profiled, guest calls waited on those locks. With mimalloc the hub's share of an awaited
//! call to the demo source went from about 11.5 to about 6 µs (mean over 400-call runs, the
//! same build otherwise; docs/benchmarks.md, "Where the time goes").
//!
//! Only Rust's allocations go to it: QuickJS keeps the C library's `malloc`, which its memory
//! limit and accounting are written and tested against.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
