//! A bound on how deeply code nests brackets, before any parser sees it.
//!
//! Parsers, transforms and code generators recurse once per level of nesting: 64 KB of `(` is
//! 32,000 levels, which would take the parser (and then QuickJS) far below any sane stack. Real
//! code nests a few dozen levels at most, so deeper code is refused with the line where it went
//! too deep. Nesting without brackets (chains of arrows, unary operators, conditionals, type
//! arguments) is left to the pipeline's own large stack (the runner's `prepare` thread).
//!
//! The scan is one pass over the bytes, no recursion: it counts `(`, `[`, `{` and template
//! substitutions `${`, and skips strings, template text and comments. A regular expression
//! literal is not recognised (telling it from a division needs a parser); a bracket inside one
//! can only make the count too high by its few brackets, never let deeper code through.

use crate::PipelineError;

/// Deepest nesting of brackets and template substitutions accepted.
pub const MAX_NESTING: usize = 256;

/// Refuses `code` when its brackets nest deeper than `limit`; `first_line` is the model's line
/// number of the code's first line (after a fence).
pub(crate) fn check(code: &str, first_line: u32, limit: usize) -> Result<(), PipelineError> {
    let bytes = code.as_bytes();
    // Open `(`, `[`, `{` and `${` (closed by `}`).
    let mut depth: usize = 0;
    // The depth at which each open template literal's text is (templates nest through `${`).
    let mut in_template: Vec<usize> = Vec::new();
    let mut line = first_line;
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        let in_text = in_template.last() == Some(&depth);
        if in_text {
            // Inside the text of a template literal.
            match byte {
                b'\\' => i += 1,
                b'`' => {
                    in_template.pop();
                }
                b'$' if bytes.get(i + 1) == Some(&b'{') => {
                    depth += 1;
                    i += 1;
                }
                b'\n' => line += 1,
                _ => {}
            }
            i += 1;
            if depth > limit {
                return Err(too_deep(line, limit));
            }
            continue;
        }
        match byte {
            b'\n' => line += 1,
            b'"' | b'\'' => {
                // A string: to its closing quote (or the end of the line, where it is broken).
                i += 1;
                while i < bytes.len() && bytes[i] != byte && bytes[i] != b'\n' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'`' => in_template.push(depth),
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Err(too_deep(line, limit));
                }
            }
            b')' | b']' | b'}' => {
                // Unbalanced code is the parser's to report; the count only never goes below 0.
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

fn too_deep(line: u32, limit: usize) -> PipelineError {
    PipelineError::TooDeep { line, limit }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_ok(code: &str) -> bool {
        check(code, 1, 4).is_ok()
    }

    #[test]
    fn brackets_and_substitutions_count_strings_and_comments_do_not() {
        assert!(depth_ok("f([{a: (1)}])"));
        assert!(!depth_ok("f([{a: ((1))}])"));
        assert!(depth_ok("'((((((' + \"[[[[[[\" // {{{{{{\n/* (((((( */ 1"));
        assert!(depth_ok("`(((((( ${a} ((((`"));
        assert!(!depth_ok("`${`${`${`${`${1}`}`}`}`}`"));
        assert!(depth_ok("`${`${1}`}`"));
        assert!(depth_ok("'it\\'s (((((' + 1"));
    }

    #[test]
    fn the_error_names_the_line_where_it_went_too_deep() {
        let code = "const a = 1;\n// ((((((\nreturn [\n[[[[1]]]]]";
        match check(code, 10, 4) {
            Err(PipelineError::TooDeep { line, limit }) => assert_eq!((line, limit), (13, 4)),
            other => panic!("{other:?}"),
        }
    }
}
