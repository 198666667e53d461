//! What search and describe say of a tool whose definition changed since the person approved
//! it (docs/pinning.md): a `[changed]` line under it, so that the model knows why its calls
//! ask a person each time. Kept apart from the listing code so that each listing has one call.

use std::fmt::Write as _;

use crate::catalog::{Catalog, CatalogTool};
use crate::policy::Policy;

/// The note for `tool`, when its definition changed (`None` otherwise).
fn note(policy: &Policy, tool: &CatalogTool) -> Option<String> {
    let change = policy.definition_change(&tool.address.to_string())?;
    if change.parts.is_empty() {
        return None;
    }
    let parts: Vec<&str> = change.parts.iter().map(|p| p.words()).collect();
    Some(format!(
        "[changed] its definition changed since the person approved it ({}); each call asks the person until they review it",
        parts.join(", ")
    ))
}

/// Adds the `[changed]` line under a tool search listed.
pub(super) fn search_line(out: &mut String, policy: &Policy, tool: &CatalogTool) {
    if let Some(note) = note(policy, tool) {
        let _ = writeln!(out, "    {note}");
    }
}

/// Adds a comment for each described tool (among `targets`, or in a described namespace)
/// whose definition changed.
pub(super) fn describe_lines(
    out: &mut String,
    policy: &Policy,
    catalog: &Catalog,
    targets: &[String],
) {
    for tool in catalog.tools() {
        let address = tool.address.to_string();
        if !targets
            .iter()
            .any(|t| *t == address || *t == tool.address.namespace)
        {
            continue;
        }
        if let Some(note) = note(policy, tool) {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            let _ = writeln!(out, "// {address}: {note}");
        }
    }
}
