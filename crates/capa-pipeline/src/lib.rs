//! The code pipeline of `execute`: from what a model sends to the JavaScript body the sandbox
//! runs.
//!
//! 1. Size: at most `codeBytes`.
//! 2. Forgiving rewrites (mcp-surface.md), each adding one line to `notices`: the body of a
//!    fenced block, `export default` unwrapped, a lone function called, a final expression
//!    returned.
//! 3. TypeScript annotations stripped (oxc: parser, semantic analysis and its TypeScript
//!    transform, then codegen). Plain JavaScript is passed through as written, so line numbers
//!    in runtime errors are the model's own.
//! 4. Syntax errors are reported with line and column in the model's own code and a hint.
//!
//! Before any of it, brackets nesting deeper than [`MAX_NESTING`] are refused (`depth`); the
//! runner calls [`prepare`] on a thread with a stack large enough for any other nesting that
//! fits in the size limit.
//!
//! oxc rather than swc: one parser that accepts TypeScript and reports precise spans, a
//! TypeScript-stripping transform without a JavaScript runtime, a smaller dependency tree, and
//! the same crates the model's code would meet in common tooling (docs/code-mode.md).

mod depth;
mod fence;
mod locate;
mod rewrite;
mod strip;

pub use depth::MAX_NESTING;
pub use locate::Position;

/// What the sandbox runs: the body of an async function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub js: String,
    /// One line per rewrite, for the model.
    pub notices: Vec<String>,
}

/// Why code cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    #[error("the code is {bytes} bytes; the limit is {limit}")]
    TooLarge { bytes: usize, limit: usize },
    #[error("syntax error at line {}, column {}: {message}", .at.line, .at.column)]
    Syntax {
        at: Position,
        message: String,
        hint: String,
    },
    /// The code uses something the sandbox does not have (`import`).
    #[error("{message}")]
    Unsupported { message: String, hint: String },
    /// Brackets nest deeper than [`MAX_NESTING`].
    #[error("the code nests brackets more than {limit} levels deep at line {line}")]
    TooDeep { line: u32, limit: usize },
    /// The pipeline itself failed (a bug): the hub answers this request and serves on.
    #[error("the code could not be prepared: {message}")]
    Internal { message: String },
}

impl PipelineError {
    /// A stable code for the envelope's `error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::TooLarge { .. } => "code_too_large",
            Self::Syntax { .. } => "syntax_error",
            Self::Unsupported { .. } => "unsupported",
            Self::TooDeep { .. } => "code_too_deep",
            Self::Internal { .. } => "internal",
        }
    }

    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            Self::TooLarge { .. } => {
                "Send less code: filter and shape data inside the sandbox instead of pasting it."
                    .to_owned()
            }
            Self::Syntax { hint, .. } | Self::Unsupported { hint, .. } => hint.clone(),
            Self::TooDeep { .. } => {
                "Nest less: build deep data in a loop, or parse it from a string with JSON.parse."
                    .to_owned()
            }
            Self::Internal { .. } => {
                "Not caused by the code as far as the hub knows; send it again, and report it if it repeats."
                    .to_owned()
            }
        }
    }
}

/// Prepares `code` for the sandbox.
pub fn prepare(code: &str, max_bytes: usize) -> Result<Prepared, PipelineError> {
    if code.len() > max_bytes {
        return Err(PipelineError::TooLarge {
            bytes: code.len(),
            limit: max_bytes,
        });
    }
    let mut notices = Vec::new();
    let fenced = fence::body(code);
    let (source, first_line) = match &fenced {
        Some(block) => {
            notices.push(
                "Ran the code inside the ``` fence; the text around it was ignored.".to_owned(),
            );
            (block.text.as_str(), block.first_line)
        }
        None => (code, 1),
    };
    depth::check(source, first_line, depth::MAX_NESTING)?;
    let rewritten = rewrite::forgive(source, first_line)?;
    notices.extend(rewritten.notices);
    let js = strip::to_javascript(&rewritten.code, first_line)?;
    Ok(Prepared { js, notices })
}
