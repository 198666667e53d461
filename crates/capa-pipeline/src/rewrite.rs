//! The forgiving rewrites: common shapes of model code that are not a function body, turned
//! into one, each with a notice. They are edits of the source text at spans the parser found,
//! so everything else stays exactly as the model wrote it.

use oxc::allocator::Allocator;
use oxc::ast::ast::{ExportDefaultDeclarationKind, Expression, Statement};
use oxc::parser::{ParseOptions, Parser};
use oxc::span::{GetSpan, SourceType, Span};

use crate::PipelineError;
use crate::locate::position;

/// Code after the rewrites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Forgiven {
    pub code: String,
    pub notices: Vec<String>,
}

/// One replacement of a byte range.
struct Edit {
    start: u32,
    end: u32,
    text: String,
}

/// How model code is parsed: TypeScript (a superset of what a model writes), as a module (top
/// level `await`, `export default`), with `return` allowed outside a function.
pub(crate) fn parse_options() -> ParseOptions {
    ParseOptions {
        allow_return_outside_function: true,
        ..ParseOptions::default()
    }
}

pub(crate) fn forgive(source: &str, first_line: u32) -> Result<Forgiven, PipelineError> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::ts())
        .with_options(parse_options())
        .parse();
    if let Some(error) = parsed.diagnostics.errors().next() {
        let offset = error.labels.first().map_or(0, |l| l.offset() as usize);
        return Err(PipelineError::Syntax {
            at: position(source, offset, first_line),
            message: error.message.to_string(),
            hint: error.help.as_ref().map_or_else(
                || {
                    "Send the body of an async function: statements, `await` and `return`, in \
                     JavaScript or TypeScript."
                        .to_owned()
                },
                std::string::ToString::to_string,
            ),
        });
    }
    let body = &parsed.program.body;
    let mut edits: Vec<Edit> = Vec::new();
    let mut notices = Vec::new();
    let mut call: Option<String> = None;
    for statement in body {
        match statement {
            Statement::ImportDeclaration(import) => {
                let at = position(source, import.span.start as usize, first_line);
                return Err(PipelineError::Unsupported {
                    message: format!(
                        "`import` at line {} is not available: there are no modules to load",
                        at.line
                    ),
                    hint:
                        "Each source is already a global object: call `github.create_issue({…})` \
                           directly. Use search and describe to find tools."
                            .to_owned(),
                });
            }
            Statement::ExportDeclaration(export) => {
                edits.push(drop_prefix(export.span, export.declaration.span()));
                notices.push("Dropped `export`: the code runs as a function body.".to_owned());
            }
            Statement::ExportDefaultDeclaration(export) => {
                let (edit, notice, name) = unwrap_default(source, export.span, &export.declaration);
                edits.push(edit);
                notices.push(notice);
                call = name;
            }
            _ => {}
        }
    }
    let mut appended = String::new();
    if let Some(name) = call {
        appended = format!("\nreturn await {name}();");
    } else if let [Statement::FunctionDeclaration(function)] = body.as_slice()
        && let Some(id) = &function.id
    {
        appended = format!("\nreturn await {}();", id.name);
        notices.push(format!(
            "Called `{}()`, the only function in the code.",
            id.name
        ));
    } else if let Some(Statement::ExpressionStatement(last)) = body.last()
        && !is_console_call(&last.expression)
        && edits.iter().all(|e| e.end <= last.span.start)
    {
        let expression = last.expression.span();
        edits.push(Edit {
            start: last.span.start,
            end: last.span.end,
            text: format!("return ({});", expression.source_text(source)),
        });
        notices.push("Returned the value of the last expression.".to_owned());
    }
    let mut code = apply(source, edits);
    code.push_str(&appended);
    Ok(Forgiven { code, notices })
}

/// `export default …`: a function is kept (named, so it can be called) and called; any other
/// value is returned.
fn unwrap_default(
    source: &str,
    statement: Span,
    declaration: &ExportDefaultDeclarationKind<'_>,
) -> (Edit, String, Option<String>) {
    const CALLED: &str = "Unwrapped `export default` and called the function.";
    match declaration {
        ExportDefaultDeclarationKind::FunctionDeclaration(function) => match &function.id {
            Some(id) => (
                drop_prefix(statement, function.span),
                CALLED.to_owned(),
                Some(id.name.to_string()),
            ),
            None => (
                Edit {
                    start: statement.start,
                    end: function.span.start,
                    text: "const __default = ".to_owned(),
                },
                CALLED.to_owned(),
                Some("__default".to_owned()),
            ),
        },
        other => match other.as_expression() {
            Some(
                expression @ (Expression::ArrowFunctionExpression(_)
                | Expression::FunctionExpression(_)),
            ) => (
                Edit {
                    start: statement.start,
                    end: statement.end,
                    text: format!(
                        "return await ({})();",
                        expression.span().source_text(source)
                    ),
                },
                CALLED.to_owned(),
                None,
            ),
            Some(expression) => (
                Edit {
                    start: statement.start,
                    end: statement.end,
                    text: format!("return ({});", expression.span().source_text(source)),
                },
                "Unwrapped `export default` and returned its value.".to_owned(),
                None,
            ),
            // A class or an interface: nothing to run; drop the `export default`.
            None => (
                drop_prefix(statement, other.span()),
                "Dropped `export default`: the code runs as a function body.".to_owned(),
                None,
            ),
        },
    }
}

fn drop_prefix(statement: Span, inner: Span) -> Edit {
    Edit {
        start: statement.start,
        end: inner.start,
        text: String::new(),
    }
}

/// `console.log(x)` as the last line is output, not a value to return.
fn is_console_call(expression: &Expression<'_>) -> bool {
    let Expression::CallExpression(call) = expression else {
        return false;
    };
    let Some(member) = call.callee.as_member_expression() else {
        return false;
    };
    matches!(member.object(), Expression::Identifier(id) if id.name == "console")
}

fn apply(source: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| std::cmp::Reverse(e.start));
    let mut code = source.to_owned();
    for edit in edits {
        let (start, end) = (edit.start as usize, edit.end as usize);
        if start <= end && end <= code.len() {
            code.replace_range(start..end, &edit.text);
        }
    }
    code
}
