//! Errors of `describe`, worded for the model that reads them: what was wrong and what to try.

/// Why `describe` produced no declarations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DescribeError {
    /// A target names no tool, namespace or type of the catalog; `suggestions` are the closest
    /// addresses, best first (possibly none).
    #[error("unknown target `{target}`. {}", closest(suggestions))]
    UnknownTarget {
        target: String,
        suggestions: Vec<String>,
    },
    /// The request had no targets.
    #[error("no targets. Pass 1 to 10 tool addresses, namespaces or type names.")]
    NoTargets,
    /// More targets than one request may have.
    #[error("{count} targets is too many. Pass at most {max} per call.")]
    TooManyTargets { count: usize, max: usize },
    /// Even the shortest form of the targets exceeds the budget.
    #[error(
        "the budget of {budget} tokens is too small for these targets (the shortest form needs \
         {needed}). Describe fewer targets or raise the budget."
    )]
    BudgetTooSmall { budget: usize, needed: usize },
}

fn closest(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        "Targets are a tool address (`namespace.tool`), a namespace, or a type named in an \
         earlier declaration (`namespace.Type`); search finds tool addresses."
            .to_owned()
    } else {
        format!("Closest: {}.", suggestions.join(", "))
    }
}
