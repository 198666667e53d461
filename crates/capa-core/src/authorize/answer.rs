//! The authorizer's answers: a [`Permit`] to run, a [`Question`] for a person, a refusal.

use crate::catalog::CatalogTool;
use crate::error::CallError;
use crate::policy::PolicyVerdict;

/// Leave to run one call of one tool with one connection. Made only by the authorizer (an
/// `allow` verdict) and by the approval lifecycle (a person's decision, a run's grant).
#[derive(Debug, Clone)]
pub struct Permit {
    tool: CatalogTool,
    connection: Option<String>,
}

impl Permit {
    pub(crate) fn new(tool: CatalogTool, connection: Option<String>) -> Self {
        Self { tool, connection }
    }

    pub fn tool(&self) -> &CatalogTool {
        &self.tool
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
#[derive(Debug, Clone)]
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
