//! `describe`: TypeScript declarations for tools, namespaces and named types, within a token
//! budget. The declarations come from `capa-typegen`; this module checks the request and keeps
//! tools the policy denies out of sight.

use capa_typegen::{DEFAULT_BUDGET, DescribeError, ToolSpec};

use super::{LookupError, ToolIndex, one_of};
use crate::policy::Policy;

pub const MAX_TARGETS: usize = 10;
/// Longer than any address or type name; longer input is a mistake (or an attack).
const MAX_TARGET_CHARS: usize = 200;

/// Declarations for `targets`: addresses (`github.create_issue`), namespaces (`github`) or
/// named types (`github.Issue`).
pub fn describe(
    index: &ToolIndex,
    policy: &Policy,
    targets: &[String],
) -> Result<String, LookupError> {
    if targets.is_empty() || targets.len() > MAX_TARGETS {
        return Err(LookupError::InvalidArguments(format!(
            "targets has {} entries; pass 1 to {MAX_TARGETS} (addresses like `github.create_issue`, namespaces like `github`, or type names from an earlier declaration)",
            targets.len()
        )));
    }
    let mut cleaned: Vec<String> = Vec::with_capacity(targets.len());
    for target in targets {
        let target = target.trim();
        if target.is_empty() || target.chars().count() > MAX_TARGET_CHARS {
            return Err(LookupError::InvalidArguments(format!(
                "each target is 1 to {MAX_TARGET_CHARS} characters: an address, a namespace or a type name"
            )));
        }
        if !cleaned.iter().any(|t| t == target) {
            cleaned.push(target.to_owned());
        }
    }
    let specs: Vec<ToolSpec<'_>> = index
        .catalog()
        .tools()
        .iter()
        .enumerate()
        .filter(|(_, tool)| !policy.hides(tool))
        .map(|(position, _)| index.spec(position))
        .collect();
    match capa_typegen::describe(&specs, &cleaned, DEFAULT_BUDGET) {
        Ok(description) => {
            let mut text = description.text;
            super::pin_marks::describe_lines(&mut text, policy, index.catalog(), &cleaned);
            Ok(text)
        }
        Err(DescribeError::UnknownTarget {
            target,
            suggestions,
        }) => {
            let hint = if suggestions.is_empty() {
                "Use search to find tools by what they do.".to_owned()
            } else {
                format!("Did you mean {}?", one_of(&suggestions))
            };
            Err(LookupError::UnknownTarget(format!(
                "unknown target `{target}`: no tool, namespace or type has that name. {hint}"
            )))
        }
        Err(other) => Err(LookupError::InvalidArguments(other.to_string())),
    }
}
