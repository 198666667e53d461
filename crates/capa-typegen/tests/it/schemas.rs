//! Declarations for one JSON Schema construct at a time (see `common/constructs.rs`).

use capa_typegen::{DescribeError, ToolSpec, describe, signature_line};
use serde_json::json;

use crate::constructs::{constructs, specs};

fn describe_one(tool: &str) -> String {
    let tools = constructs();
    let specs = specs(&tools);
    match describe(&specs, &[format!("demo.{tool}")], 1_000_000) {
        Ok(description) => description.text,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn every_construct_in_one_namespace() {
    let tools = constructs();
    let specs = specs(&tools);
    let description = describe(&specs, &["demo".to_owned()], 1_000_000).expect("describe demo");
    insta::assert_snapshot!(description.text);
}

#[test]
fn descriptions_defaults_and_bounds_become_jsdoc() {
    let text = describe_one("basic");
    assert!(
        text.contains(
            "\t\t/** Page size. @default 30 @minimum 1 @maximum 100 */\n\t\tpage?: number;"
        )
    );
    assert!(
        text.contains("\"foo-bar\"?: boolean;"),
        "non-identifier keys are quoted"
    );
    assert!(
        text.contains("default?: string;"),
        "reserved words are fine as keys"
    );
    assert!(
        text.contains("@pattern ^\\d+*\\/$"),
        "`*/` in text cannot end the comment"
    );
    // Required first.
    assert!(
        text.find("q: string").expect("q: string")
            < text.find("page?: number").expect("page?: number")
    );
}

#[test]
fn non_identifier_tool_names_use_their_identifier_form() {
    let text = describe_one("get-sum");
    assert!(text.contains(" * MCP name: get-sum\n"));
    assert!(
        text.contains("\tget_sum(input?: {}, options?: CallOptions): Promise<demo.SumResult>;")
    );
    assert!(text.contains("\tinterface SumResult { sum: number }"));
    // The later tool with the same identifier form is numbered, and addressable both ways.
    let text = describe_one("get_sum");
    assert!(text.contains("get_sum_2(input?: { [key: string]: unknown }"));
    assert!(text.contains("type GetSumResult = number;"));
    assert!(describe_one("get_sum_2").contains("get_sum_2("));
    assert!(describe_one("tool.with.dots").contains("tool_with_dots(input: string,"));
    assert!(describe_one("delete").contains("delete_(input: unknown,"));
    assert!(describe_one("2fa").contains("_2fa(input: unknown,"));
    assert!(describe_one("not_object_input").contains("(input: unknown /* unsupported schema:"));
}

#[test]
fn recursion_through_refs_declares_named_types() {
    let text = describe_one("recursive");
    assert!(text.contains("root?: demo.Node;"));
    assert!(text.contains("interface Node { value: string; children?: demo.Node[] }"));
    assert!(text.contains("type TreeNode = string | demo.TreeNode[];"));
    let text = describe_one("self_ref");
    assert!(text.contains("self_ref(input?: demo.SelfRefInput,"));
    assert!(text.contains("next?: demo.SelfRefInput;"));
    assert!(
        text.contains("encoded?: demo.Leaf }"),
        "percent-encoded pointers resolve"
    );
    // An alias that only refers to itself through unions is not valid TypeScript.
    assert!(describe_one("cycle").contains("unsupported schema: circular alias"));
}

#[test]
fn invalid_schemas_become_unknown_with_a_note() {
    let text = describe_one("invalid");
    for note in [
        "dangling $ref",
        "external $ref",
        "$ref to an anchor",
        "not a schema object",
    ] {
        assert!(
            text.contains(&format!("unknown /* unsupported schema: {note} */")),
            "{note}"
        );
    }
    assert!(
        text.contains("comment?: \"*/\";"),
        "string literals keep their text"
    );
    assert!(text.contains("Ends a comment *\\/ early"));
}

#[test]
fn index_signatures_admit_the_declared_properties() {
    let text = describe_one("maps");
    assert!(text.contains("labels?: { [key: string]: string };"));
    assert!(
        text.contains("mixed?: { count?: number; [key: string]: string | number | undefined };")
    );
    assert!(
        text.contains("[key: string]: unknown };"),
        "objects widen the index to unknown"
    );
    assert!(text.contains("patterns?: { [key: string]: number };"));
    assert!(text.contains("closed?: { k?: string };"));
}

#[test]
fn tuples_and_arrays() {
    let text = describe_one("arrays");
    assert!(text.contains("pair?: [string, number];"));
    assert!(text.contains("prefixed?: [boolean, ...string[]];"));
    assert!(text.contains("anything?: unknown[];"));
    assert!(text.contains("unions?: (string | number)[];"));
    assert!(text.contains("/** @minItems 1 @maxItems 5 */"));
}

#[test]
fn deep_objects_are_named_by_path_and_describable() {
    let tools = constructs();
    let specs = specs(&tools);
    let target = ["demo.DeepInputLevel1Level2".to_owned()];
    let description = describe(&specs, &target, 2500).expect("named object");
    insta::assert_snapshot!(description.text, @r"
    declare namespace demo {
    	interface DeepInputLevel1Level2 { leaf?: string; more?: number }
    }
    ");
}

#[test]
fn unknown_targets_suggest_the_closest_addresses() {
    let tools = constructs();
    let specs = specs(&tools);
    let error = describe(&specs, &["dmo.recursiv".to_owned()], 2500).expect_err("unknown");
    assert_eq!(
        error.to_string(),
        "unknown target `dmo.recursiv`. Closest: demo.recursive."
    );
    let DescribeError::UnknownTarget { suggestions, .. } = error else {
        panic!("{error:?}")
    };
    assert_eq!(suggestions, ["demo.recursive"]);
    assert!(matches!(
        describe(&specs, &[], 2500),
        Err(DescribeError::NoTargets)
    ));
    let many = vec!["demo".to_owned(); 11];
    assert!(matches!(
        describe(&specs, &many, 2500),
        Err(DescribeError::TooManyTargets { .. })
    ));
}

#[test]
fn signature_lines_shorten_without_cutting_tokens() {
    let schema = json!({"type": "object", "properties": {
        "owner": {"type": "string"}, "repo": {"type": "string"}, "title": {"type": "string"},
        "body": {"type": "string"}, "labels": {"type": "array", "items": {"type": "string"}},
        "meta": {"type": "object", "properties": {"a": {"type": "string"}}}
    }, "required": ["owner", "repo", "title"]});
    let tool = ToolSpec {
        namespace: "github",
        name: "create_issue",
        description: None,
        input_schema: &schema,
        output_schema: None,
    };
    let full = signature_line(&tool, 500);
    assert_eq!(
        full,
        "github.create_issue(input: { owner: string; repo: string; title: string; body?: string; \
         labels?: string[]; meta?: { a?: string } }): Promise<unknown>"
    );
    for max in [130, 110, 90, 60, 30, 10] {
        let line = signature_line(&tool, max);
        assert!(line.chars().count() <= max, "{max}: {line}");
        println!("{line}");
    }
    assert_eq!(
        signature_line(&tool, 110),
        "github.create_issue(input: { owner: string; repo: string; title: string; body?: string; … }): Promise<unknown>"
    );
}

#[test]
fn never_panics_on_odd_values() {
    let odd = [
        json!(null),
        json!(5),
        json!("x"),
        json!([]),
        json!({"type": []}),
        json!({"$ref": 5}),
        json!({"$ref": "#/$defs/0/1"}),
        json!({"$defs": [1], "$ref": "#/$defs/0"}),
        json!({"properties": [1]}),
        json!({"items": 5}),
        json!({"prefixItems": {}}),
        json!({"allOf": []}),
        json!({"anyOf": [false]}),
        json!({"enum": []}),
        json!({"additionalProperties": 3}),
        json!({"patternProperties": {"x": 1}}),
        json!({"$ref": "%"}),
        json!({"$ref": "#/%E2%82"}),
    ];
    for schema in &odd {
        let tool = ToolSpec {
            namespace: "odd",
            name: "t",
            description: Some("*/"),
            input_schema: schema,
            output_schema: Some(schema),
        };
        let description = describe(&[tool], &["odd".to_owned()], 2500).expect("describe");
        assert!(!description.text.is_empty());
        let _ = signature_line(&tool, 80);
    }
}

#[test]
fn deep_nesting_is_cut_off() {
    let mut schema = json!({"type": "string"});
    for _ in 0..200 {
        schema = json!({"type": "object", "properties": {"x": schema}});
    }
    let tool = ToolSpec {
        namespace: "deep",
        name: "t",
        description: None,
        input_schema: &schema,
        output_schema: None,
    };
    let description = describe(&[tool], &["deep.t".to_owned()], 1_000_000).expect("describe");
    assert!(
        description
            .text
            .contains("unsupported schema: nested deeper than 32 levels")
    );
}

#[test]
fn a_definition_is_shared_by_tools_whose_other_definitions_differ() {
    // As an OpenAPI source gives them: each operation carries only the schemas it reaches.
    let user = json!({"type": "object", "properties": {"login": {"type": "string"}, "team": {"$ref": "#/$defs/Team"}}});
    let team = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let issue = json!({"type": "object", "properties": {"title": {"type": "string"}}});
    let first = json!({"type": "object", "properties": {"who": {"$ref": "#/$defs/User"}},
        "$defs": {"User": user, "Team": team}});
    let second = json!({"type": "object", "properties": {"by": {"$ref": "#/$defs/User"}, "issue": {"$ref": "#/$defs/Issue"}},
        "$defs": {"User": user, "Team": team, "Issue": issue}});
    // A third whose `Team` differs: its `User` means something else and gets its own type.
    let other_team = json!({"type": "object", "properties": {"id": {"type": "number"}}});
    let third = json!({"type": "object", "properties": {"owner": {"$ref": "#/$defs/User"}},
        "$defs": {"User": user, "Team": other_team}});
    let specs: Vec<ToolSpec<'_>> = [("a", &first), ("b", &second), ("c", &third)]
        .into_iter()
        .map(|(name, input)| ToolSpec {
            namespace: "api",
            name,
            description: None,
            input_schema: input,
            output_schema: None,
        })
        .collect();
    let text = describe(&specs, &["api".to_owned()], 1_000_000)
        .expect("describe")
        .text;
    assert!(text.contains("who?: api.User }"), "{text}");
    assert!(text.contains("by?: api.User;"), "{text}");
    assert!(text.contains("owner?: api.User2 }"), "{text}");
    assert!(!text.contains("User3"), "{text}");
}
