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
use crate::hub::{Hub, Profile};
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
        self.authorize_in(address, connection, None).await
    }

    /// [`Hub::authorize`] for a client of `profile`: a tool of a source the profile does not
    /// serve is unknown there, and the profile's own rules apply on top of the policy.
    pub async fn authorize_in(
        &self,
        address: &str,
        connection: Option<&str>,
        profile: Option<&Profile>,
    ) -> Result<Authorization, CallError> {
        let policy = self.policy_in(profile);
        let mut catalog = self.catalog();
        if catalog.get(address).is_none() {
            self.startup_done().await;
            catalog = self.catalog();
        }
        let served = catalog
            .position(address)
            .filter(|&at| policy.serves_source(&catalog.tools()[at].address.namespace));
        let Some(position) = served else {
            // A source outside the profile is not there at all: not even its sign-in shows.
            let source_served = address
                .split_once('.')
                .is_none_or(|(source, _)| policy.serves_source(source));
            if source_served && let Some(waiting) = self.waiting_for_connection(address) {
                return Err(waiting);
            }
            let mut suggestions = catalog.suggest(address);
            suggestions.retain(|s| {
                s.split_once('.')
                    .is_none_or(|(source, _)| policy.serves_source(source))
            });
            return Err(CallError::UnknownTool {
                address: address.to_owned(),
                suggestions,
            });
        };
        let tool = &catalog.tools()[position];
        let listed = Permit::listed(catalog.clone(), position, connection.map(str::to_owned));
        Ok(self.decide_call(tool, connection, &policy, listed))
    }

    /// [`Hub::authorize`] for a tool already looked up.
    pub fn authorize_tool(&self, tool: &CatalogTool, connection: Option<&str>) -> Authorization {
        self.decide_call(tool, connection, &self.policy(), None)
    }

    /// The authorizer's answer for `tool`; `listed` is the permit to give when it is allowed,
    /// if the caller made one from the catalog (else the permit holds a copy of `tool`).
    fn decide_call(
        &self,
        tool: &CatalogTool,
        connection: Option<&str>,
        policy: &crate::policy::Policy,
        listed: Option<Permit>,
    ) -> Authorization {
        let policy_connection = self.connection_for_policy(tool, connection);
        let verdict = policy.verdict(tool, policy_connection.as_deref());
        match verdict.decision {
            Decision::Allow => Authorization::Allowed(
                listed.unwrap_or_else(|| Permit::new(tool.clone(), connection.map(str::to_owned))),
            ),
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
