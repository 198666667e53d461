//! Search mode's matching: plain terms against a tool's id (address), remote name, server,
//! groups (the skills that require it) and description. No embeddings, no stemming beyond a
//! plural `s`: what a person would expect from a search box over tool names.

use crate::catalog::CatalogTool;

/// Matches returned when the query asks for no number.
pub const DEFAULT_MATCHES: usize = 10;
/// The most matches one search returns.
pub const MAX_MATCHES: usize = 50;

/// Weights per field: a term in the tool's own name counts most.
const NAME_WEIGHT: u32 = 4;
const SERVER_WEIGHT: u32 = 2;
const GROUP_WEIGHT: u32 = 2;
const DESCRIPTION_WEIGHT: u32 = 1;

/// Lower-case words of `text`, split at anything not a letter or digit and at camelCase
/// humps, a plural `s` dropped from words longer than three letters.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            push_word(&mut out, &mut current);
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            push_word(&mut out, &mut current);
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    push_word(&mut out, &mut current);
    out
}

fn push_word(out: &mut Vec<String>, current: &mut String) {
    if current.is_empty() {
        return;
    }
    let mut word = std::mem::take(current);
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        word.pop();
    }
    out.push(word);
}

/// The catalog positions of the best matches for `query`, best first (ties by address). An
/// empty query lists every tool alphabetically. `groups(tool)` names the skills requiring it.
pub fn match_tools<'a>(
    tools: impl Iterator<Item = &'a CatalogTool>,
    query: &str,
    limit: usize,
    groups: impl Fn(&CatalogTool) -> Vec<String>,
) -> Vec<&'a CatalogTool> {
    let limit = limit.clamp(1, MAX_MATCHES);
    let terms = words(query);
    let mut scored: Vec<(u32, &CatalogTool)> = tools
        .filter_map(|tool| {
            if terms.is_empty() {
                return Some((0, tool));
            }
            let score = score(tool, &terms, &groups(tool));
            (score > 0).then_some((score, tool))
        })
        .collect();
    scored.sort_by(|(a, ta), (b, tb)| {
        b.cmp(a)
            .then_with(|| ta.address.to_string().cmp(&tb.address.to_string()))
    });
    scored.into_iter().take(limit).map(|(_, t)| t).collect()
}

fn score(tool: &CatalogTool, terms: &[String], groups: &[String]) -> u32 {
    let name = words(&format!("{} {}", tool.address.name, tool.remote_name));
    let server = words(&tool.address.namespace);
    let group: Vec<String> = groups.iter().flat_map(|g| words(g)).collect();
    let description = words(tool.definition.description.as_deref().unwrap_or_default());
    let mut total = 0;
    for term in terms {
        let in_field = |field: &[String], weight: u32| {
            if field.iter().any(|w| w == term) {
                weight
            } else {
                0
            }
        };
        let best = in_field(&name, NAME_WEIGHT)
            .max(in_field(&server, SERVER_WEIGHT))
            .max(in_field(&group, GROUP_WEIGHT))
            .max(in_field(&description, DESCRIPTION_WEIGHT));
        // A term that is part of the whole id (`get-sum` for `sum`) still counts a little.
        let partial = u32::from(
            best == 0
                && tool
                    .address
                    .to_string()
                    .to_lowercase()
                    .contains(term.as_str()),
        );
        total += best + partial;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ToolAddress;

    fn tool(address: &str, description: &str) -> CatalogTool {
        let parsed = ToolAddress::parse(address).expect("address");
        let mut definition = crate::ToolDefinition::new(address, serde_json::Map::new());
        definition.description = Some(description.to_owned());
        CatalogTool {
            remote_name: parsed.name.clone(),
            address: parsed,
            definition,
        }
    }

    #[test]
    fn names_count_most_and_empty_lists_alphabetically() {
        let tools = [
            tool("github.create_issue", "Create a new issue in a repository"),
            tool("github.list_pull_requests", "List pull requests"),
            tool("slack.post_message", "Post a message; mentions an issue"),
            tool("everything.get-sum", "Adds two numbers"),
        ];
        let found = match_tools(tools.iter(), "create issues", 10, |_| Vec::new());
        let names: Vec<String> = found.iter().map(|t| t.address.to_string()).collect();
        assert_eq!(names, ["github.create_issue", "slack.post_message"]);
        let found = match_tools(tools.iter(), "sum", 10, |_| Vec::new());
        assert_eq!(found[0].address.to_string(), "everything.get-sum");
        let found = match_tools(tools.iter(), "pullRequests", 10, |_| Vec::new());
        assert_eq!(found[0].address.to_string(), "github.list_pull_requests");
        let all = match_tools(tools.iter(), "  ", 2, |_| Vec::new());
        let names: Vec<String> = all.iter().map(|t| t.address.to_string()).collect();
        assert_eq!(names, ["everything.get-sum", "github.create_issue"]);
        let grouped = match_tools(tools.iter(), "triage", 10, |t| {
            if t.address.namespace == "slack" {
                vec!["triage".to_owned()]
            } else {
                Vec::new()
            }
        });
        assert_eq!(grouped.len(), 1);
        assert!(match_tools(tools.iter(), "zebra", 10, |_| Vec::new()).is_empty());
    }
}
