//! Each code shape the pipeline forgives, TypeScript input, and where syntax errors point.

use capa_pipeline::{PipelineError, Position, prepare};

const LIMIT: usize = 64 * 1024;

fn ok(code: &str) -> (String, Vec<String>) {
    let prepared = prepare(code, LIMIT).unwrap_or_else(|e| panic!("{code:?}: {e}"));
    (prepared.js, prepared.notices)
}

#[test]
fn a_plain_body_passes_through_unchanged() {
    let code = "const a = await demo.add({ a: 1, b: 2 });\nreturn a;";
    assert_eq!(ok(code), (code.to_owned(), vec![]));
}

#[test]
fn the_body_of_a_fenced_block_runs() {
    let (js, notices) = ok("Here is the code:\n```js\nreturn 42;\n```\nThat should work.");
    assert_eq!(js, "return 42;");
    assert_eq!(
        notices,
        ["Ran the code inside the ``` fence; the text around it was ignored."]
    );
}

#[test]
fn export_default_is_unwrapped() {
    let (js, notices) = ok("export default async function main() {\n  return 1;\n}");
    assert_eq!(
        js,
        "async function main() {\n  return 1;\n}\nreturn await main();"
    );
    assert_eq!(
        notices,
        ["Unwrapped `export default` and called the function."]
    );
    let (js, _) = ok("export default async () => 2;");
    assert_eq!(js, "return await (async () => 2)();");
    let (js, notices) = ok("const x = 3;\nexport default x * 2;");
    assert_eq!(js, "const x = 3;\nreturn (x * 2);");
    assert_eq!(
        notices,
        ["Unwrapped `export default` and returned its value."]
    );
    let (js, _) = ok("export default async function () { return 4; }");
    assert_eq!(
        js,
        "const __default = async function () { return 4; }\nreturn await __default();"
    );
}

#[test]
fn a_lone_function_is_called() {
    let (js, notices) = ok("async function run() {\n  return await demo.echo({ text: 'hi' });\n}");
    assert!(js.ends_with("\nreturn await run();"), "{js}");
    assert_eq!(notices, ["Called `run()`, the only function in the code."]);
}

#[test]
fn a_final_expression_is_returned() {
    let (js, notices) = ok("const a = 2;\na * 21");
    assert_eq!(js, "const a = 2;\nreturn (a * 21);");
    assert_eq!(notices, ["Returned the value of the last expression."]);
    // Output is not a value: a final console.log stays as it is.
    let (js, notices) = ok("console.log('done')");
    assert_eq!((js.as_str(), notices.len()), ("console.log('done')", 0));
}

#[test]
fn typescript_annotations_are_stripped() {
    let code = "interface Issue { title: string }\nconst issues: Issue[] = [{ title: 'a' }];\nconst titles = issues.map((i: Issue): string => i.title);\nreturn titles as string[];";
    let (js, notices) = ok(code);
    assert!(notices.is_empty(), "{notices:?}");
    assert!(
        !js.contains("interface") && !js.contains(": string"),
        "{js}"
    );
    assert!(js.contains("return titles;"), "{js}");
}

#[test]
fn syntax_errors_point_into_the_models_code() {
    let error = prepare("const a = 1;\nconst b = (a + ;\nreturn b;", LIMIT).expect_err("syntax");
    let PipelineError::Syntax { at, message, hint } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(
        *at,
        Position {
            line: 2,
            column: 16
        }
    );
    assert!(!message.is_empty() && !hint.is_empty());
    assert_eq!(error.code(), "syntax_error");
    // Inside a fence, lines count from the top of what the model sent.
    let error = prepare("Try this:\n\n```ts\nreturn (1 +;\n```", LIMIT).expect_err("syntax");
    let PipelineError::Syntax { at, .. } = error else {
        panic!("not a syntax error");
    };
    assert_eq!(at.line, 4);
}

#[test]
fn imports_and_oversized_code_are_refused() {
    let error = prepare("import fs from 'fs';\nreturn 1;", LIMIT).expect_err("import");
    assert_eq!(error.code(), "unsupported");
    assert!(error.to_string().contains("`import` at line 1"), "{error}");
    let error = prepare(&"x".repeat(LIMIT + 1), LIMIT).expect_err("size");
    assert_eq!(error.code(), "code_too_large");
}
