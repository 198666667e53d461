//! `search`: the best tools for a query as plain text, one-line TypeScript signatures grouped by
//! namespace, in the shape of mcp-surface.md:
//!
//! ```text
//! github  (connections: personal*, work)
//!   github.create_issue(input: { owner: string; repo: string; title: string }): Promise<unknown>   [asks]
//!     Create an issue in a repository.
//! 3 more matches. Narrow the query or pass namespace.
//! ```
//!
//! Namespaces come in the order of their best match and tools best first within them, so the
//! best match is always the first tool line.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{LookupError, ToolIndex, one_of};
use crate::catalog::CatalogTool;
use crate::policy::{Decision, Policy};

pub const DEFAULT_LIMIT: usize = 8;
pub const MAX_LIMIT: usize = 25;
pub const MAX_QUERY_CHARS: usize = 200;
/// Longer signatures are shortened by the type generator (optional fields first).
const SIGNATURE_CHARS: usize = 220;
/// A description line is a reminder; `describe` has the full text.
const DESCRIPTION_CHARS: usize = 160;
/// Tools scoring under this share of the best match are not matches: they share a common word
/// or a distant synonym with the query, and counting them ("395 more matches") says nothing.
pub(super) const RELEVANCE_FLOOR: f32 = 0.2;

/// A `search` request as the model sends it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchRequest {
    pub query: String,
    pub namespace: Option<String>,
    pub limit: Option<i64>,
}

/// Answers a search over `index`. Tools are marked and hidden by [`Policy::verdict`] without a
/// connection (the hub's `decision_for`): rules for one connection apply to calls only.
/// `connections` maps a namespace to its connection names, the
/// default marked with `*`; `descriptions` maps a namespace to its source's description.
pub fn search(
    index: &ToolIndex,
    policy: &Policy,
    connections: &BTreeMap<String, Vec<String>>,
    descriptions: &BTreeMap<String, String>,
    request: &SearchRequest,
) -> Result<String, LookupError> {
    let limit = check_limit(request.limit)?;
    let query = request.query.trim();
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(LookupError::InvalidArguments(format!(
            "query is {} characters; keep it to {MAX_QUERY_CHARS} or fewer: a few words about the task",
            query.chars().count()
        )));
    }
    let catalog = index.catalog();
    let namespace = match request.namespace.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(ns) => Some(check_namespace(index, policy, ns)?),
    };
    let positions: Vec<usize> = if query.is_empty() {
        let Some(namespace) = namespace else {
            return Ok(overview(index, policy, connections, descriptions));
        };
        catalog
            .tools()
            .iter()
            .enumerate()
            .filter(|(_, t)| t.address.namespace == namespace)
            .map(|(i, _)| i)
            .collect()
    } else {
        let hits = index
            .search_index()
            .search(query)
            .map_err(|e| LookupError::Index(e.to_string()))?;
        // Only the sources the client is served count, for the relevance floor too: a better
        // match in a source outside its profile must not push its own tools out.
        let served: Vec<_> = hits
            .iter()
            .filter(|h| policy.serves_source(&catalog.tools()[h.doc].address.namespace))
            .collect();
        let floor = served
            .first()
            .map_or(0.0, |best| best.score * RELEVANCE_FLOOR);
        served
            .iter()
            .filter(|h| h.score >= floor)
            .map(|h| h.doc)
            .filter(|&i| namespace.is_none_or(|ns| catalog.tools()[i].address.namespace == ns))
            .collect()
    };
    let mut hidden = 0;
    let mut shown: Vec<(usize, Decision)> = Vec::new();
    let mut more = 0;
    for position in positions {
        if !policy.serves_source(&catalog.tools()[position].address.namespace) {
            continue;
        }
        match policy.verdict(&catalog.tools()[position], None).decision {
            Decision::Deny => hidden += 1,
            _ if shown.len() >= limit => more += 1,
            decision => shown.push((position, decision)),
        }
    }
    let mut out = String::new();
    if shown.is_empty() {
        let _ = write!(out, "No tools match \"{query}\"");
        if let Some(ns) = namespace {
            let _ = write!(out, " in {ns}");
        }
        out.push_str(". Try other words for the task, or an empty query with a namespace to list its tools.\n");
    }
    for (namespace, tools) in group_by_namespace(catalog.tools(), &shown) {
        out.push_str(&namespace_line(namespace, connections, None));
        for &(position, decision) in &tools {
            tool_lines(&mut out, index, position, decision);
            super::pin_marks::search_line(&mut out, policy, &catalog.tools()[position]);
        }
    }
    if hidden > 0 {
        let _ = writeln!(
            out,
            "{hidden} matching {} hidden by your policy{}.",
            if hidden == 1 { "tool is" } else { "tools are" },
            policy
                .profile()
                .map(|p| format!(" or the profile \"{}\"", p.name()))
                .unwrap_or_default()
        );
    }
    if more > 0 {
        let noun = if more == 1 { "match" } else { "matches" };
        if namespace.is_some() && query.is_empty() {
            let _ = writeln!(
                out,
                "{more} more {noun}. Pass a query, or a higher limit (up to {MAX_LIMIT})."
            );
        } else {
            let _ = writeln!(
                out,
                "{more} more {noun}. Narrow the query or pass namespace."
            );
        }
    }
    Ok(out)
}

fn check_limit(limit: Option<i64>) -> Result<usize, LookupError> {
    match limit {
        None => Ok(DEFAULT_LIMIT),
        Some(n) => match usize::try_from(n) {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
            _ => Err(LookupError::InvalidArguments(format!(
                "limit {n} is out of range; pass 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT})"
            ))),
        },
    }
}

fn namespaces(index: &ToolIndex) -> Vec<&str> {
    let mut names: Vec<&str> = index
        .catalog()
        .tools()
        .iter()
        .map(|t| t.address.namespace.as_str())
        .collect();
    names.dedup();
    names
}

fn check_namespace<'a>(
    index: &'a ToolIndex,
    policy: &Policy,
    wanted: &str,
) -> Result<&'a str, LookupError> {
    let mut names = namespaces(index);
    names.retain(|n| policy.serves_source(n));
    if let Some(found) = names.iter().find(|n| **n == wanted) {
        return Ok(found);
    }
    let mut close: Vec<(usize, &str)> = names
        .iter()
        .map(|n| (capa_domain::edit_distance(&wanted.to_lowercase(), n), *n))
        .filter(|(d, n)| *d <= (n.len() / 2).max(2) || n.starts_with(wanted))
        .collect();
    close.sort_unstable();
    let close: Vec<String> = close
        .into_iter()
        .take(3)
        .map(|(_, n)| n.to_owned())
        .collect();
    let hint = if close.is_empty() {
        format!("Namespaces: {}.", abbreviated(&names, 20))
    } else {
        format!("Did you mean {}?", one_of(&close))
    };
    Err(LookupError::UnknownNamespace(format!(
        "unknown namespace `{wanted}`. {hint}"
    )))
}

fn abbreviated(names: &[&str], max: usize) -> String {
    let mut text = names
        .iter()
        .take(max)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > max {
        let _ = write!(text, " and {} more", names.len() - max);
    }
    text
}

/// The namespaces with their tool counts: what an empty query without a namespace answers.
fn overview(
    index: &ToolIndex,
    policy: &Policy,
    connections: &BTreeMap<String, Vec<String>>,
    descriptions: &BTreeMap<String, String>,
) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for tool in index.catalog().tools() {
        if policy.hides(tool) {
            continue;
        }
        // (A source outside the client's profile is denied too: never listed.)
        match counts.last_mut() {
            Some((ns, n)) if *ns == tool.address.namespace => *n += 1,
            _ => counts.push((&tool.address.namespace, 1)),
        }
    }
    if counts.is_empty() {
        return "No tools are available: no source is connected yet.\n".to_owned();
    }
    let total: usize = counts.iter().map(|(_, n)| n).sum();
    let namespaces = match counts.len() {
        1 => "1 namespace".to_owned(),
        n => format!("{n} namespaces"),
    };
    let mut out = format!(
        "{namespaces}, {total} tools. Search by what you want to do, or pass namespace to list one.\n"
    );
    for (namespace, count) in counts {
        let tools = format!("{count} tool{}", if count == 1 { "" } else { "s" });
        out.push_str(&namespace_line(namespace, connections, Some(&tools)));
        if let Some(description) = descriptions.get(namespace) {
            let _ = writeln!(out, "    {}", one_line(description, DESCRIPTION_CHARS));
        }
    }
    out
}

fn namespace_line(
    namespace: &str,
    connections: &BTreeMap<String, Vec<String>>,
    extra: Option<&str>,
) -> String {
    let mut parts: Vec<String> = extra.map(str::to_owned).into_iter().collect();
    if let Some(names) = connections.get(namespace).filter(|n| !n.is_empty()) {
        parts.push(format!("connections: {}", names.join(", ")));
    }
    if parts.is_empty() {
        format!("{namespace}\n")
    } else {
        format!("{namespace}  ({})\n", parts.join("; "))
    }
}

fn group_by_namespace<'a>(
    tools: &'a [CatalogTool],
    shown: &[(usize, Decision)],
) -> Vec<(&'a str, Vec<(usize, Decision)>)> {
    let mut groups: Vec<(&str, Vec<(usize, Decision)>)> = Vec::new();
    for &(position, decision) in shown {
        let namespace = tools[position].address.namespace.as_str();
        match groups.iter_mut().find(|(ns, _)| *ns == namespace) {
            Some((_, members)) => members.push((position, decision)),
            None => groups.push((namespace, vec![(position, decision)])),
        }
    }
    groups
}

fn tool_lines(out: &mut String, index: &ToolIndex, position: usize, decision: Decision) {
    let spec = index.spec(position);
    let signature = capa_typegen::signature_line(&spec, SIGNATURE_CHARS);
    let asks = if decision == Decision::Ask {
        "   [asks]"
    } else {
        ""
    };
    let _ = writeln!(out, "  {signature}{asks}");
    if let Some(description) = spec.description.filter(|d| !d.trim().is_empty()) {
        let _ = writeln!(out, "    {}", one_line(description, DESCRIPTION_CHARS));
    }
}

/// The first line (or sentence, when the line is long) of a text, whitespace collapsed, at most
/// `max` characters, cut at a word.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let collapsed = first.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= max {
        return collapsed;
    }
    if let Some(end) = collapsed.find(". ").filter(|&end| end < max) {
        return collapsed[..=end].to_owned();
    }
    let mut cut: String = collapsed.chars().take(max).collect();
    if let Some(space) = cut.rfind(' ') {
        cut.truncate(space);
    }
    cut.push('…');
    cut
}
