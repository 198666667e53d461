//! The authorizer's answers: a [`Permit`] to run, a [`Question`] for a person, a refusal.

use crate::catalog::CatalogTool;
use crate::error::CallError;
use crate::policy::PolicyVerdict;

/// Leave to run one call of one tool with one connection. Made only by the authorizer (an
/// `allow` verdict) and by the approval lifecycle (a person's decision, a run's grant).
#[derive(Debug, Clone)]
pub struct Permit {
    tool: PermitTool,
    connection: Option<String>,
}

/// The tool a [`Permit`] is for.
#[derive(Clone)]
enum PermitTool {
    /// A tool of the catalog the decision was made on, held by the catalog's `Arc` and its
    /// position: a guest call's permit copies no definition (its schema, its `_meta`).
    Listed {
        catalog: crate::SharedCatalog,
        position: usize,
    },
    /// A tool as its question held it.
    Held(Box<CatalogTool>),
}

/// The tool, not the catalog it is in: a permit printed in a log or a failed test would
/// otherwise show every tool of the hub.
impl std::fmt::Debug for PermitTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Listed { catalog, position } => f
                .debug_struct("Listed")
                .field("tool", &catalog.tools().get(*position))
                .finish_non_exhaustive(),
            Self::Held(tool) => f.debug_tuple("Held").field(tool).finish(),
        }
    }
}

impl Permit {
    pub(crate) fn new(tool: CatalogTool, connection: Option<String>) -> Self {
        Self {
            tool: PermitTool::Held(Box::new(tool)),
            connection,
        }
    }

    /// A permit for the tool at `position` of `catalog`; `None` when there is none there.
    pub(crate) fn listed(
        catalog: crate::SharedCatalog,
        position: usize,
        connection: Option<String>,
    ) -> Option<Self> {
        catalog.tools().get(position)?;
        Some(Self {
            tool: PermitTool::Listed { catalog, position },
            connection,
        })
    }

    pub fn tool(&self) -> &CatalogTool {
        match &self.tool {
            // Checked when the permit was made, and a catalog never changes.
            PermitTool::Listed { catalog, position } => &catalog.tools()[*position],
            PermitTool::Held(tool) => tool,
        }
    }

    /// The connection the call names (`None`: the source's default).
    pub fn connection(&self) -> Option<&str> {
        self.connection.as_deref()
    }
}

/// A call that needs a person before it runs.
#[derive(Debug, Clone)]
pub struct Question {
    pub tool: CatalogTool,
    /// The connection the call names (`None`: the source's default).
    pub requested_connection: Option<String>,
    /// The connection the policy was applied to: the requested one, else the default.
    pub connection: Option<String>,
    pub verdict: PolicyVerdict,
}

impl Question {
    /// The permit a person's "yes" (this call, or the tool for the rest of the run) turns this
    /// question into.
    pub(crate) fn approved(self) -> Permit {
        Permit::new(self.tool, self.requested_connection)
    }
}

/// The authorizer's answer.
// An answer lives for one decision; a question holds a copy of its tool (a few hundred bytes),
// a permit only the catalog's `Arc`. Boxing the question would save copying those bytes at the
// price of an allocation per question and a box at every caller that takes it apart.
#[derive(Debug, Clone)]
#[expect(clippy::large_enum_variant, reason = "see the comment above")]
pub enum Authorization {
    Allowed(Permit),
    /// The policy denies the tool; `reason` names the rule.
    Denied {
        address: String,
        reason: String,
    },
    NeedsPerson(Question),
}

impl Authorization {
    /// The permit when the policy allows the call; a refusal (`Denied`) or the question
    /// otherwise.
    pub fn into_permit(self) -> Result<Permit, Refusal> {
        match self {
            Self::Allowed(permit) => Ok(permit),
            Self::Denied { address, reason } => Err(Refusal::Denied { address, reason }),
            Self::NeedsPerson(question) => Err(Refusal::NeedsPerson(Box::new(question))),
        }
    }
}

/// Why a call did not get a permit at once.
#[derive(Debug, Clone)]
pub enum Refusal {
    Denied { address: String, reason: String },
    NeedsPerson(Box<Question>),
}

impl Refusal {
    /// As a call error, for callers that cannot ask anybody.
    pub fn into_call_error(self) -> CallError {
        match self {
            Self::Denied { address, .. } => CallError::Denied { address },
            Self::NeedsPerson(question) => CallError::ApprovalRequired {
                address: question.tool.address.to_string(),
                reason: question.verdict.reason,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use capa_config::ToolSelection;
    use capa_domain::{Catalog, SourceTools, ToolDefinition};

    use super::Permit;

    #[test]
    fn a_listed_permit_holds_its_tool_and_prints_only_that_tool() {
        let tools = vec![
            ToolDefinition::new("add", serde_json::Map::new()),
            ToolDefinition::new("unrelated_neighbour", serde_json::Map::new()),
        ];
        let catalog = Arc::new(Catalog::build([SourceTools {
            source_id: "demo",
            selection: &ToolSelection::All,
            tools: &tools,
        }]));
        let position = catalog.position("demo.add").expect("listed");
        let permit = Permit::listed(catalog.clone(), position, None).expect("a permit");
        assert_eq!(permit.tool().address.to_string(), "demo.add");
        let printed = format!("{permit:?}");
        assert!(printed.contains("add"), "{printed}");
        assert!(!printed.contains("unrelated_neighbour"), "{printed}");
        assert!(Permit::listed(catalog, tools.len(), None).is_none());
    }
}
