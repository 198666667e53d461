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

/// [`capa_pipeline::prepare`], off the async runtime, on a large stack.
pub(crate) async fn prepare(code: &str, max_bytes: usize) -> Result<Prepared, PipelineError> {
    let (done, answer) = tokio::sync::oneshot::channel();
    let code = code.to_owned();
    let spawned = std::thread::Builder::new()
        .name("capa-pipeline".into())
        .stack_size(PIPELINE_STACK_BYTES)
        .spawn(move || {
            let prepared = std::panic::catch_unwind(|| capa_pipeline::prepare(&code, max_bytes))
                .unwrap_or_else(|_| {
                    Err(PipelineError::Internal {
                        message: "the code pipeline failed unexpectedly".to_owned(),
                    })
                });
            let _ = done.send(prepared);
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
