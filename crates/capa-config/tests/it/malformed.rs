//! A table of malformed files: each must fail with the right position and a message and fix a
//! newcomer understands.

use std::path::Path;

use capa_config::parse_str;

struct Case {
    name: &'static str,
    text: &'static str,
    line: u64,
    message: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "unknown top-level key",
        text: "servers: []\nservrs: []\n",
        line: 2,
        message: "unknown field",
    },
    Case {
        name: "unknown exposure mode",
        text: "options:\n  toolExposure: everything\n",
        line: 2,
        message: "`options.toolExposure`: `everything` is not a known value",
    },
    Case {
        name: "bad indentation",
        text: "servers:\n  - id: a\n   type: mcp\n",
        line: 3,
        message: "expected a `- item` line here",
    },
    Case {
        name: "missing def",
        text: "servers:\n  - id: a\n    type: mcp\n",
        line: 2,
        message: "missing field `def` in `servers[0]`",
    },
    Case {
        name: "unsupported server type",
        text: "servers:\n  - id: a\n    type: graphql\n    def: { url: 'http://x' }\n",
        line: 3,
        message: "`servers[0].type`: `graphql` is not a known value",
    },
    Case {
        name: "openapi source with a url instead of a spec",
        text: "servers:\n  - id: a\n    type: openapi\n    def: { url: 'http://x' }\n",
        line: 4,
        message: "`command`, `args`, `env`, `cwd`, `url` and `oauth` do not apply to `type: openapi` sources",
    },
    Case {
        name: "except without tools",
        text: "servers:\n  - id: a\n    type: mcp\n    expose: except\n    def: { command: x }\n",
        line: 4,
        message: "`expose: except` needs a `tools` list",
    },
    Case {
        name: "exactly without tools",
        text: "servers:\n  - id: a\n    type: mcp\n    expose: exactly\n    def: { command: x }\n",
        line: 4,
        message: "`expose: exactly` needs a `tools` list",
    },
    Case {
        name: "tools with expose all",
        text: "servers:\n  - id: a\n    type: mcp\n    expose: all\n    tools: [x]\n    def: { command: x }\n",
        line: 5,
        message: "`tools` is not allowed with `expose: all`",
    },
    Case {
        name: "tools without expose (all by default)",
        text: "servers:\n  - id: a\n    type: mcp\n    tools: [x]\n    def: { command: x }\n",
        line: 4,
        message: "`tools` is not allowed with `expose: all`",
    },
    Case {
        name: "tools with expose none",
        text: "servers:\n  - id: a\n    type: mcp\n    expose: none\n    tools: [x]\n    def: { command: x }\n",
        line: 5,
        message: "`tools` is not allowed with `expose: none`",
    },
    Case {
        name: "duplicate server id",
        text: "servers:\n  - id: a\n    type: mcp\n    def: { command: x }\n  - id: a\n    type: mcp\n    def: { command: y }\n",
        line: 5,
        message: "already used on line 2",
    },
    Case {
        name: "invalid server id",
        text: "servers:\n  - id: My Server\n    type: mcp\n    def: { command: x }\n",
        line: 2,
        message: "not a valid namespace",
    },
    Case {
        name: "reserved server id",
        text: "servers:\n  - id: hub\n    type: mcp\n    def: { command: x }\n",
        line: 2,
        message: "reserved",
    },
    Case {
        name: "both command and url",
        text: "servers:\n  - id: a\n    type: mcp\n    def:\n      command: x\n      url: http://x\n",
        line: 5,
        message: "both `command` and `url`",
    },
    Case {
        name: "neither command nor url",
        text: "servers:\n  - id: a\n    type: mcp\n    def: { args: [x] }\n",
        line: 4,
        message: "neither `command` nor `url`",
    },
    Case {
        name: "url that is not http",
        text: "servers:\n  - id: a\n    type: mcp\n    def: { url: 'ftp://x' }\n",
        line: 4,
        message: "not an http:// or https:// address",
    },
    Case {
        name: "headers on a command server",
        text: "servers:\n  - id: a\n    type: mcp\n    def: { command: x, headers: { A: b } }\n",
        line: 4,
        message: "`headers` only apply to `url` servers",
    },
    Case {
        name: "unclosed secret placeholder",
        text: "servers:\n  - id: a\n    type: mcp\n    def: { command: x, env: { T: '${secret:tok' } }\n",
        line: 4,
        message: "bad secret placeholder",
    },
    Case {
        name: "tool entry for an unknown server",
        text: "servers:\n  - id: a\n    type: mcp\n    def: { command: x }\ntools:\n  - server: b\n    tool: t\n",
        line: 6,
        message: "unknown server `b`",
    },
    Case {
        name: "upstream timeout above the limit",
        text: "options:\n  upstreamTimeoutMs: 60000\n",
        line: 2,
        message: "outside 1 to 30000",
    },
    Case {
        name: "wrong type for args",
        text: "servers:\n  - id: a\n    type: mcp\n    def: { command: x, args: 3 }\n",
        line: 4,
        message: "`servers[0].def.args`: expected a list, found the number `3`",
    },
];

#[test]
fn malformed_files_name_the_file_line_and_fix() {
    let file = Path::new("/home/me/project/capabilities.yaml");
    let mut failures = Vec::new();
    for case in CASES {
        let Err(err) = parse_str(file, case.text) else {
            failures.push(format!("{}: parsed, expected an error", case.name));
            continue;
        };
        let issue = &err.issues()[0];
        let shown = err.to_string();
        if issue.position.line != case.line {
            failures.push(format!(
                "{}: line {} != {} in\n{shown}",
                case.name, issue.position.line, case.line
            ));
        }
        if !issue.message.contains(case.message) {
            failures.push(format!(
                "{}: message lacks {:?}:\n{shown}",
                case.name, case.message
            ));
        }
        if !shown.starts_with("/home/me/project/capabilities.yaml:") || !shown.contains("fix: ") {
            failures.push(format!(
                "{}: display lacks file or fix:\n{shown}",
                case.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_problem_in_a_file_is_reported_at_once() {
    let text = "servers:\n  - id: a\n    type: mcp\n    expose: except\n    def: { command: x }\n  - id: Bad\n    type: mcp\n    def: { url: 'ftp://x' }\n";
    let err = parse_str(Path::new("c.yaml"), text).expect_err("invalid");
    let lines: Vec<u64> = err.issues().iter().map(|i| i.position.line).collect();
    assert_eq!(lines, vec![4, 6, 8], "in file order: {err}");
}
