//! The authorizer: the one place that decides whether a tool call may run.
//!
//! Every path that can run a tool — guest calls in `execute`, direct calls in expose-all,
//! search and on-demand, `capa call`, `capa sh`, `POST /api/call`, the UI — asks
//! [`Hub::authorize`] and gets one of three answers: allowed (with a [`Permit`]), denied (with
//! the rule), or needs a person (a [`Question`]). [`Hub::call`] takes a `Permit`, and only this
//! module and the approval lifecycle (after a person's decision) can make one, so a caller that
//! skipped the authorizer does not compile. Callers choose only *how* a question reaches a
//! person (a form, the popup, the page, the terminal), never *whether* it is asked.
//!
//! One rule says which connection a policy applies to: the connection the call will use — the
//! one it names, else the source's default.

use crate::catalog::CatalogTool;
use crate::error::CallError;
use crate::hub::Hub;
use crate::policy::{Decision, PolicyVerdict};

pub(crate) mod answer;

pub use answer::{Authorization, Permit, Question, Refusal};

impl Hub {
    /// Decides whether a call of `address` with `connection` may run. An address the catalog
    /// does not have is `UnknownTool` (with the closest names); a first call may come before
    /// its source finished starting, so it waits for the start-up once.
    pub async fn authorize(
        &self,
        address: &str,
        connection: Option<&str>,
    ) -> Result<Authorization, CallError> {
        let mut catalog = self.catalog();
        if catalog.get(address).is_none() {
            self.startup_done().await;
            catalog = self.catalog();
        }
        let Some(tool) = catalog.get(address) else {
            if let Some(waiting) = self.waiting_for_connection(address) {
                return Err(waiting);
            }
            return Err(CallError::UnknownTool {
                address: address.to_owned(),
                suggestions: catalog.suggest(address),
            });
        };
        Ok(self.authorize_tool(tool, connection))
    }

    /// [`Hub::authorize`] for a tool already looked up.
    pub fn authorize_tool(&self, tool: &CatalogTool, connection: Option<&str>) -> Authorization {
        let policy_connection = self.connection_for_policy(tool, connection);
        let verdict = self.policy().verdict(tool, policy_connection.as_deref());
        match verdict.decision {
            Decision::Allow => {
                Authorization::Allowed(Permit::new(tool.clone(), connection.map(str::to_owned)))
            }
            Decision::Deny => Authorization::Denied {
                address: tool.address.to_string(),
                reason: verdict.reason,
            },
            Decision::Ask => Authorization::NeedsPerson(Question {
                tool: tool.clone(),
                requested_connection: connection.map(str::to_owned),
                connection: policy_connection
                    .or_else(|| self.default_connection_name(&tool.address.namespace)),
                verdict,
            }),
        }
    }

    /// What the policy says about a tool in a listing (search marks, `capa tools list`, hidden
    /// counts): calls without a connection, so only rules without one apply. Calls themselves
    /// are decided by [`Hub::authorize`].
    pub fn listing_verdict(&self, tool: &CatalogTool) -> PolicyVerdict {
        self.policy().verdict(tool, None)
    }
}
