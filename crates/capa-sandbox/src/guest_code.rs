//! How the model's code is evaluated: as the body of an async function, in a file of its own
//! name, so that a stack frame in it maps back to a line of the code (`thrown.rs`).

/// The guest's code is wrapped in one line before it: `(async function () {`.
pub(crate) const WRAPPER_LINES: u32 = 1;
pub(crate) const CODE_FILE: &str = "code.js";

/// The model's code as the expression evaluated in [`CODE_FILE`]: the async function whose body
/// it is, [`WRAPPER_LINES`] before it.
pub(crate) fn wrapped(code: &str) -> String {
    format!("(async function () {{\n{code}\n}})")
}
