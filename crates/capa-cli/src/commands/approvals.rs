//! `capabilities hub pending|approve|deny`: a person's decisions from a terminal.
//!
//! Decisions need a person: these commands refuse without an interactive terminal. The decision
//! is stored where pending inputs live, and a running hub told ([`capa_host::approvals`]).

use std::process::ExitCode;

use capa_core::{Choice, HubPaths, InputKind};
use capa_host::api::PendingView;
use serde::Serialize;

use crate::output;

/// `hub pending --json`.
#[derive(Serialize)]
struct Pending<'a> {
    pending: &'a [PendingView],
}

/// `hub approve|deny --json`.
#[derive(Serialize)]
#[expect(
    clippy::struct_field_names,
    reason = "the fields are the keys of the JSON `hub approve --json` prints"
)]
struct Decided {
    ok: bool,
    decided: usize,
    choice: &'static str,
}

pub(super) async fn pending(paths: &HubPaths, as_json: bool) -> anyhow::Result<ExitCode> {
    let pending = capa_host::approvals::pending(paths).await?;
    if as_json {
        output::json(&Pending { pending: &pending })?;
        return Ok(ExitCode::SUCCESS);
    }
    if pending.is_empty() {
        println!("Nothing is waiting for you.");
        return Ok(ExitCode::SUCCESS);
    }
    for item in &pending {
        let connection = match item.connection.as_deref() {
            None | Some("") => String::new(),
            Some(c) => format!(" (connection {c})"),
        };
        println!(
            "{}  {}  {}{connection}",
            item.run_id, item.kind, item.address
        );
        if let Some(client) = &item.client {
            println!("  asked by: {client}");
        }
        println!("  why: {}", item.reason);
        if item.kind == InputKind::Approval {
            for line in serde_json::to_string_pretty(&item.preview)?.lines() {
                println!("  {line}");
            }
            println!(
                "  approve: capabilities hub approve {}   deny: capabilities hub deny {}",
                item.run_id, item.run_id
            );
        } else {
            println!("  add the connection: capa connections set {}", item.source);
        }
        println!();
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) async fn decide(
    paths: &HubPaths,
    id: &str,
    choice: Choice,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let decided = decide_at_terminal(paths, id, choice).await?;
    if as_json {
        output::json(&Decided {
            ok: true,
            decided,
            choice: choice.as_str(),
        })?;
    } else {
        let what = match choice {
            Choice::Once => "Approved once",
            Choice::Run => "Approved for the rest of the run",
            Choice::Always => "Approved, and allowed from now on",
            Choice::Deny => "Denied",
        };
        let calls = if decided == 1 { "call" } else { "calls" };
        let next = if id.starts_with("call_") || id.starts_with("apr_") {
            "The waiting call goes on."
        } else {
            "The client continues with execute({ resume })."
        };
        println!("{what}: {decided} {calls} of {id}. {next}");
    }
    Ok(ExitCode::SUCCESS)
}

/// A person's decision at this terminal on `id` (a run, a direct call or one approval), once
/// the terminal proved a person is there.
pub(super) async fn decide_at_terminal(
    paths: &HubPaths,
    id: &str,
    choice: Choice,
) -> anyhow::Result<usize> {
    crate::terminal::require_person("Deciding an approval")?;
    capa_host::approvals::decide(paths, id, choice).await
}
