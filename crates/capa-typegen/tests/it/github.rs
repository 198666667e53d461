//! Snapshots of `describe` and `signature_line` over the real github catalog.

use capa_typegen::{DEFAULT_BUDGET, Description, describe, signature_line};

use crate::catalogs;

fn describe_github(targets: &[&str]) -> Description {
    let tools = catalogs::load("github");
    let specs = catalogs::specs(&tools);
    let targets: Vec<String> = targets.iter().map(|t| (*t).to_owned()).collect();
    let description = describe(&specs, &targets, DEFAULT_BUDGET).expect("describe");
    assert!(description.tokens <= DEFAULT_BUDGET);
    assert_eq!(
        description.tokens,
        capa_typegen::count_tokens(&description.text)
    );
    description
}

#[test]
fn create_issue() {
    insta::assert_snapshot!(describe_github(&["github.create_issue"]).text);
}

#[test]
fn two_targets_share_one_namespace_block_in_catalog_order() {
    let description = describe_github(&["github.search_issues", "github.get_me"]);
    assert_eq!(description.text.matches("declare const github").count(), 1);
    assert!(
        description.text.find("get_me(").expect("get_me(")
            < description
                .text
                .find("search_issues(")
                .expect("search_issues(")
    );
    insta::assert_snapshot!(description.text);
}

#[test]
fn whole_namespace_at_the_default_budget_drops_tools_from_the_end() {
    let description = describe_github(&["github"]);
    assert!(
        description
            .text
            .contains(" more tools not shown: describe github.")
    );
    insta::assert_snapshot!(description.text);
}

#[test]
fn a_named_type_on_its_own() {
    let namespace = describe_github(&["github"]);
    let named = namespace
        .not_shown
        .first()
        .expect("the namespace output names a type it does not show")
        .clone();
    assert_eq!(named, "github.ActionsListInputWorkflowJobsFilter");
    insta::assert_snapshot!(describe_github(&[&named]).text);
}

#[test]
fn identifier_forms_of_targets_resolve_too() {
    let by_name = describe_github(&["github.get_me"]);
    let tools = catalogs::load("github");
    let specs = catalogs::specs(&tools);
    let error = describe(&specs, &["gh.creat_issue".to_owned()], DEFAULT_BUDGET).expect_err("typo");
    assert_eq!(
        error.to_string(),
        "unknown target `gh.creat_issue`. Closest: github.create_issue."
    );
    assert!(by_name.text.contains("get_me("));
}

#[test]
fn signature_lines() {
    let tools = catalogs::load("github");
    let specs = catalogs::specs(&tools);
    let names = [
        "create_issue",
        "search_issues",
        "get_me",
        "list_issues",
        "actions_list",
        "get_file_contents",
        "create_pull_request",
        "push_files",
        "projects_write",
        "update_gist",
    ];
    let mut lines = String::new();
    for name in names {
        let spec = specs
            .iter()
            .find(|s| s.name == name)
            .expect("tool in catalog");
        for max in [200, 100] {
            let line = signature_line(spec, max);
            assert!(line.chars().count() <= max, "{line}");
            lines.push_str(&line);
            lines.push('\n');
        }
    }
    insta::assert_snapshot!(lines);
}
