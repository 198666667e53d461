//! `execute`: model code through the pipeline (rewrites, TypeScript stripped) into a fresh
//! QuickJS sandbox whose globals are the user's sources, with every run recorded: code, seed,
//! logical clock, journal of calls, envelope. The seed and clock are stored with the run and
//! every call's answer is journaled in call order, so a later attempt can replay the run
//! exactly (the approvals work resumes runs this way).

mod envelope;
mod host;

use std::sync::Arc;

use capa_sandbox::{Limits, Namespace, RunError, RunInput, ToolBinding};
use capa_store::RunRecord;

pub use envelope::Envelope;
use host::HubHost;

use crate::hub::Hub;
use crate::lookup::LookupError;
use crate::policy::Decision;

/// An `execute` request: exactly one of `code` and `resume`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecuteRequest {
    pub code: Option<String>,
    pub resume: Option<String>,
    /// The client's name, for history.
    pub client: Option<String>,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `run_` and 16 random hex digits.
fn new_run_id() -> String {
    format!(
        "run_{:016x}",
        getrandom::u64().unwrap_or_else(|_| now_ms() as u64)
    )
}

impl Hub {
    /// Runs model code, or answers for an earlier run.
    pub async fn execute(
        self: &Arc<Self>,
        request: ExecuteRequest,
    ) -> Result<Envelope, LookupError> {
        match (request.code, request.resume) {
            (Some(code), None) => Ok(self.run_code(code, request.client).await),
            (None, Some(run_id)) => self.resume(&run_id),
            _ => Err(LookupError::InvalidArguments(
                "send exactly one of `code` (the body of an async function) or `resume` (a run id)"
                    .to_owned(),
            )),
        }
    }

    /// The limits runs get: the spec's defaults, lowered where the configuration asks.
    pub fn run_limits(&self) -> Limits {
        let configured = Limits {
            upstream_timeout_ms: self.config().upstream_timeout.as_millis() as u64,
            ..Limits::default()
        };
        configured.lowered_to(&Limits::default())
    }

    async fn run_code(self: &Arc<Self>, code: String, client: Option<String>) -> Envelope {
        self.startup_done().await;
        let run_id = new_run_id();
        let seed = getrandom::u64().unwrap_or_else(|_| now_ms() as u64);
        let started = now_ms();
        let record = RunRecord {
            id: run_id.clone(),
            // History never holds a secret, even one a model pasted into its code.
            code: self.redactor().redact(&code),
            seed,
            clock_start_ms: started,
            client: client.clone(),
            status: "running".to_owned(),
            envelope: None,
            attempts: 1,
            created_at_ms: started,
            updated_at_ms: started,
        };
        if let Err(e) = self.store().insert_run(&record) {
            tracing::error!(error = %e, "could not record a run");
        }
        let limits = self.run_limits();
        let envelope = match capa_pipeline::prepare(&code, limits.code_bytes) {
            Err(error) => Envelope::refused(
                &run_id,
                RunError {
                    code: error.code().to_owned(),
                    message: error.to_string(),
                    hint: Some(error.hint()),
                },
                Vec::new(),
            ),
            Ok(prepared) => {
                let input = RunInput {
                    code: prepared.js,
                    namespaces: self.sandbox_namespaces(),
                    seed,
                    clock_start_ms: started,
                    limits,
                    calls_before: 0,
                };
                let host = Arc::new(HubHost {
                    hub: self.clone(),
                    run_id: run_id.clone(),
                    client,
                });
                let output = capa_sandbox::run(input, host).await;
                Envelope::from_run(&run_id, output, prepared.notices)
            }
        };
        let envelope = self.redact_envelope(envelope);
        match serde_json::to_string(&envelope) {
            Ok(json) => {
                if let Err(e) = self
                    .store()
                    .finish_run(&run_id, &envelope.status, &json, now_ms())
                {
                    tracing::error!(error = %e, run = %run_id, "could not record a run's end");
                }
            }
            Err(e) => tracing::error!(error = %e, "could not serialise an envelope"),
        }
        envelope
    }

    /// An ended run answers with its envelope again. (Runs pause only for approvals, which
    /// arrive with the approvals work; until then every run has ended when `execute` returns.)
    fn resume(&self, run_id: &str) -> Result<Envelope, LookupError> {
        let run = self
            .store()
            .run(run_id)
            .map_err(|e| LookupError::Store(e.to_string()))?
            .ok_or_else(|| {
                LookupError::InvalidArguments(format!(
                    "no run `{run_id}`: resume takes a runId from an earlier execute"
                ))
            })?;
        let envelope = run
            .envelope
            .as_deref()
            .and_then(|json| serde_json::from_str::<Envelope>(json).ok());
        envelope.ok_or_else(|| {
            LookupError::InvalidArguments(format!(
                "run `{run_id}` was interrupted before it ended (the hub stopped); start it again with code"
            ))
        })
    }

    /// The sources as sandbox globals: identifier forms of namespaces and tool names (the same
    /// rule as the TypeScript declarations), tools the policy denies left out.
    fn sandbox_namespaces(&self) -> Vec<Namespace> {
        let catalog = self.catalog();
        let mut groups: Vec<(&str, Vec<&crate::CatalogTool>)> = Vec::new();
        for tool in catalog.tools() {
            if self.policy().decide(&tool.address) == Decision::Deny {
                continue;
            }
            match groups.last_mut() {
                Some((ns, tools)) if *ns == tool.address.namespace => tools.push(tool),
                _ => groups.push((&tool.address.namespace, vec![tool])),
            }
        }
        let names: Vec<&str> = groups.iter().map(|(ns, _)| *ns).collect();
        let globals = capa_typegen::member_names(&names);
        groups
            .iter()
            .zip(globals)
            .map(|((_, tools), global)| {
                let tool_names: Vec<&str> = tools.iter().map(|t| t.address.name.as_str()).collect();
                let members = capa_typegen::member_names(&tool_names);
                Namespace {
                    global,
                    tools: tools
                        .iter()
                        .zip(members)
                        .map(|(tool, member)| ToolBinding {
                            member,
                            address: tool.address.to_string(),
                        })
                        .collect(),
                }
            })
            .collect()
    }

    /// Nothing secret leaves in an envelope (results were redacted per call; logs and errors
    /// are the guest's own text and may quote them).
    fn redact_envelope(&self, envelope: Envelope) -> Envelope {
        if self.redactor().is_empty() {
            return envelope;
        }
        let Ok(mut value) = serde_json::to_value(&envelope) else {
            return envelope;
        };
        self.redactor().redact_json(&mut value);
        serde_json::from_value(value).unwrap_or(envelope)
    }
}
