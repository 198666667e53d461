//! TypeScript to JavaScript. Code that is already JavaScript is passed through unchanged, so
//! line numbers in runtime errors stay the model's own; TypeScript goes through oxc's
//! TypeScript transform and codegen.

use std::path::Path;

use oxc::allocator::Allocator;
use oxc::codegen::Codegen;
use oxc::parser::Parser;
use oxc::semantic::SemanticBuilder;
use oxc::span::SourceType;
use oxc::transformer::{TransformOptions, Transformer};

use crate::PipelineError;
use crate::locate::position;
use crate::rewrite::parse_options;

pub(crate) fn to_javascript(code: &str, first_line: u32) -> Result<String, PipelineError> {
    let allocator = Allocator::default();
    let as_js = Parser::new(&allocator, code, SourceType::mjs())
        .with_options(parse_options())
        .parse();
    if !as_js.panicked && !as_js.diagnostics.has_errors() {
        return Ok(code.to_owned());
    }
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, code, SourceType::ts())
        .with_options(parse_options())
        .parse();
    if let Some(error) = parsed.diagnostics.errors().next() {
        // The rewrites only produce valid code from valid code; this is a safety net.
        let offset = error.labels.first().map_or(0, |l| l.offset() as usize);
        return Err(PipelineError::Syntax {
            at: position(code, offset, first_line),
            message: error.message.to_string(),
            hint: "Send the body of an async function in JavaScript or TypeScript.".to_owned(),
        });
    }
    let mut program = parsed.program;
    let scoping = SemanticBuilder::new()
        .build(&program)
        .semantic
        .into_scoping();
    let transformed = Transformer::new(
        &allocator,
        Path::new("code.ts"),
        &TransformOptions::default(),
    )
    .build_with_scoping(scoping, &mut program);
    if let Some(error) = transformed.diagnostics.errors().next() {
        let offset = error.labels.first().map_or(0, |l| l.offset() as usize);
        return Err(PipelineError::Syntax {
            at: position(code, offset, first_line),
            message: error.message.to_string(),
            hint:
                "This TypeScript construct cannot be stripped to JavaScript; write it without it."
                    .to_owned(),
        });
    }
    Ok(Codegen::new().build(&program).code)
}
