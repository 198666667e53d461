//! The code pipeline on a thread of its own. Parsing, transforming and printing code recurse
//! once per level of nesting; on a tokio worker's 2 MiB stack 1,500 nested `(` overflowed it and
//! aborted the whole hub. Brackets are bounded before parsing (`capa_pipeline::MAX_NESTING`);
//! what nests without brackets (arrow chains, unary operators, conditionals, type arguments) up
//! to the 64 KB code limit fits in [`PIPELINE_STACK_BYTES`] — measured at 32 MiB for the
//! deepest shape in a debug build, so 256 MiB leaves room. The stack is reserved, not used:
//! only code that nests that deep touches it. A panic in the pipeline is this request's error.

use capa_pipeline::{PipelineError, Prepared};

/// The pipeline thread's stack.
const PIPELINE_STACK_BYTES: usize = 256 * 1024 * 1024;
/// Code up to this long is prepared on the calling thread: its nesting is bounded by its
/// length, and at the measured worst (32 MiB for 64 KB: 512 bytes of stack per byte of code,
/// debug build) it needs 512 KiB, a quarter of a tokio worker's 2 MiB stack. The code models
/// send is often this short, and a thread of its own costs it a start and two wake-ups
/// (`crates/capa-core/tests/it/deep_code.rs` holds the deepest shapes of this size).
pub const INLINE_CODE_BYTES: usize = 1024;

/// [`capa_pipeline::prepare`] in one step with its panic caught.
fn prepare_here(code: &str, max_bytes: usize) -> Result<Prepared, PipelineError> {
    std::panic::catch_unwind(|| capa_pipeline::prepare(code, max_bytes)).unwrap_or_else(|_| {
        Err(PipelineError::Internal {
            message: "the code pipeline failed unexpectedly".to_owned(),
        })
    })
}

/// [`capa_pipeline::prepare`], off the async runtime on a large stack (short code on the
/// calling thread, see [`INLINE_CODE_BYTES`]).
pub(crate) async fn prepare(code: &str, max_bytes: usize) -> Result<Prepared, PipelineError> {
    if code.len() <= INLINE_CODE_BYTES {
        return prepare_here(code, max_bytes);
    }
    let (done, answer) = tokio::sync::oneshot::channel();
    let code = code.to_owned();
    let spawned = std::thread::Builder::new()
        .name("capa-pipeline".into())
        .stack_size(PIPELINE_STACK_BYTES)
        .spawn(move || {
            let _ = done.send(prepare_here(&code, max_bytes));
        });
    if let Err(e) = spawned {
        return Err(PipelineError::Internal {
            message: format!("could not start the code pipeline: {e}"),
        });
    }
    answer.await.unwrap_or_else(|_| {
        Err(PipelineError::Internal {
            message: "the code pipeline ended without an answer".to_owned(),
        })
    })
}
