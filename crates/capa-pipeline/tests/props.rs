//! Property tests of the whole pipeline over generated JavaScript/TypeScript-ish code: random
//! nesting of the six shapes that nest (brackets, parentheses, template literals, blocks, arrow
//! functions, TypeScript generics), some left open, around random tokens and random unicode.
//!
//! Whatever the input, `prepare` returns (no panic, no stack overflow) `Ok` or a typed error
//! whose position lies in the code, never `Internal`; nesting past [`MAX_NESTING`] is refused
//! before parsing. 256 cases per property (a few seconds); `PROPTEST_CASES` raises it. Failures
//! are kept in `proptest-regressions/` and replayed first.

use capa_pipeline::{MAX_NESTING, PipelineError, prepare};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};

const LIMIT: usize = 64 * 1024;
/// The stack the hub runs the pipeline on (`capa-runner/src/prepare.rs`).
const PIPELINE_STACK_BYTES: usize = 256 * 1024 * 1024;

fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256);
    Config {
        cases,
        // Proptest's default looks for the crate's lib.rs beside the test, which an integration
        // test has not.
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/proptest-regressions/props.txt"
        )))),
        ..Config::default()
    }
}

/// One level of nesting.
#[derive(Debug, Clone, Copy)]
enum Shape {
    Bracket,
    Paren,
    Template,
    Block,
    Arrow,
    Generic,
}

impl Shape {
    /// The text before and after what it wraps.
    fn parts(self) -> (&'static str, &'static str) {
        match self {
            Shape::Bracket => ("[1, ", "]"),
            Shape::Paren => ("f(", ")"),
            Shape::Template => ("`t${", "}u`"),
            Shape::Block => ("{ if (a) { ", " } }"),
            Shape::Arrow => ("async (a: number) => ", ""),
            Shape::Generic => ("(x as Array<Map<string, ", ">>)"),
        }
    }

    /// Brackets (and `${`) it opens that are still open around what it wraps.
    fn depth(self) -> usize {
        match self {
            Shape::Bracket | Shape::Paren | Shape::Template | Shape::Generic => 1,
            Shape::Block => 2,
            Shape::Arrow => 0,
        }
    }

    /// The most brackets its opening part has open at once (an arrow's parameters close before
    /// its body).
    fn peak(self) -> usize {
        self.depth().max(1)
    }
}

/// How deep brackets nest in `shapes` wrapped around a bracket-free leaf, innermost first.
fn nesting(shapes: &[Shape]) -> usize {
    let mut outside = 0;
    let mut deepest = 0;
    for shape in shapes.iter().rev() {
        deepest = deepest.max(outside + shape.peak());
        outside += shape.depth();
    }
    deepest
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Bracket),
        Just(Shape::Paren),
        Just(Shape::Template),
        Just(Shape::Block),
        Just(Shape::Arrow),
        Just(Shape::Generic),
    ]
}

/// Short chains mostly, and some around the nesting bound (a shape opens one bracket on
/// average).
fn chain() -> impl Strategy<Value = Vec<Shape>> {
    prop_oneof![
        8 => prop::collection::vec(shape(), 0..8),
        1 => prop::collection::vec(shape(), 200..320),
    ]
}

/// Tokens a model's code (or a broken copy of it) is made of.
fn token() -> impl Strategy<Value = String> {
    let fixed = prop::sample::select(vec![
        "1",
        "a",
        "await demo.add({ a: 1, b: 2 })",
        "return",
        "return 1 + 1",
        "export default",
        "export default async function main() { return 1; }",
        "function f() {}",
        "import fs from 'fs'",
        "interface I { a: string }",
        "type T<U> = U[]",
        " as string",
        " satisfies unknown",
        "'str'",
        "\"it's\"",
        "'unclosed",
        "`tpl ${a} `",
        "`",
        "${",
        "// comment (",
        "/* block [ */",
        "/*",
        "/a+[(]/g",
        "```js\n",
        "```",
        "=>",
        "<",
        ">",
        "?.",
        "...",
        "\\",
        "\u{2028}",
        "\u{0}",
        "é😀",
    ]);
    prop_oneof![
        4 => fixed.prop_map(str::to_owned),
        1 => prop::collection::vec(any::<char>(), 0..6).prop_map(String::from_iter),
        1 => "[a-z_$][a-z0-9_$]{0,6}",
    ]
}

/// A chain of shapes around a token, some shapes left without their closing part.
fn segment() -> impl Strategy<Value = String> {
    (
        chain(),
        token(),
        prop::collection::vec(prop::bool::weighted(0.9), 320),
    )
        .prop_map(|(shapes, leaf, closed)| {
            let mut code = leaf;
            for (shape, closed) in shapes.iter().zip(closed) {
                let (open, close) = shape.parts();
                code = format!("{open}{code}{}", if closed { close } else { "" });
            }
            code
        })
}

fn program() -> impl Strategy<Value = String> {
    let separator = prop::sample::select(vec!["\n", ";", " ", ";\n", "", "\n\n"]);
    prop::collection::vec((segment(), separator), 1..5).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(segment, separator)| segment + separator)
            .collect()
    })
}

/// `prepare(code)` on a stack as large as the hub's; `Err` when it panicked.
fn prepared(code: String) -> Result<Result<capa_pipeline::Prepared, PipelineError>, String> {
    std::thread::Builder::new()
        .stack_size(PIPELINE_STACK_BYTES)
        .spawn(move || prepare(&code, LIMIT))
        .map_err(|e| e.to_string())?
        .join()
        .map_err(|_| "prepare panicked".to_owned())
}

/// Lines of `code` as positions count them.
fn lines(code: &str) -> u32 {
    u32::try_from(code.matches('\n').count()).expect("generated code has few lines") + 1
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_code_is_prepared_or_refused_with_a_typed_error(code in program()) {
        let outcome = prepared(code.clone());
        let result = outcome.map_err(TestCaseError::fail)?;
        match &result {
            Ok(_) => {}
            Err(PipelineError::TooLarge { bytes, limit }) => {
                prop_assert!(*bytes > *limit && *limit == LIMIT);
            }
            Err(PipelineError::Syntax { at, message, hint }) => {
                prop_assert!(at.line >= 1 && at.line <= lines(&code), "{at:?}");
                prop_assert!(at.column >= 1);
                prop_assert!(!message.is_empty() && !hint.is_empty());
            }
            Err(PipelineError::Unsupported { message, hint }) => {
                prop_assert!(!message.is_empty() && !hint.is_empty());
            }
            Err(PipelineError::TooDeep { line, limit }) => {
                prop_assert_eq!(*limit, MAX_NESTING);
                prop_assert!(*line >= 1 && *line <= lines(&code), "line {}", line);
            }
            Err(error) => prop_assert!(false, "{error:?}"),
        }
        if let Err(error) = &result {
            prop_assert!(!error.to_string().is_empty() && !error.hint().is_empty());
        }
    }

    #[test]
    fn nesting_past_the_bound_is_refused_and_within_it_is_parsed(
        shapes in chain(),
    ) {
        let mut code = "1".to_owned();
        for shape in &shapes {
            let (open, close) = shape.parts();
            code = format!("{open}{code}{close}");
        }
        let depth = nesting(&shapes);
        let code = format!("const a = 1;\nconst f = (x: unknown) => x;\nconst x: unknown = 1;\nreturn {code};");
        let result = prepared(code).map_err(TestCaseError::fail)?;
        match result {
            Err(PipelineError::TooDeep { line, .. }) => {
                prop_assert!(depth > MAX_NESTING, "refused at depth {}", depth);
                prop_assert_eq!(line, 4);
            }
            other => prop_assert!(depth <= MAX_NESTING, "depth {}: {:?}", depth, other),
        }
    }
}

#[test]
fn an_arrow_inside_the_deepest_allowed_brackets_opens_one_more() {
    // Found by the property above: the parameters of an arrow at depth 256 are a 257th level.
    let mut shapes = vec![Shape::Arrow];
    shapes.extend(std::iter::repeat_n(Shape::Bracket, MAX_NESTING));
    assert_eq!(nesting(&shapes), MAX_NESTING + 1);
    let mut code = "1".to_owned();
    for shape in &shapes {
        let (open, close) = shape.parts();
        code = format!("{open}{code}{close}");
    }
    let refused = prepared(format!("return {code};")).expect("no panic");
    assert!(
        matches!(refused, Err(PipelineError::TooDeep { line: 1, .. })),
        "{refused:?}"
    );
    let fits = prepared(format!("return {};", &code[1..code.len() - 1])).expect("no panic");
    assert!(
        !matches!(fits, Err(PipelineError::TooDeep { .. })),
        "{fits:?}"
    );
}
