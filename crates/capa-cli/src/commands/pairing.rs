//! `capa clients pair | paired | forms | unpair`: the clients whose own approval forms count as
//! the person's answer (docs/security.md, "Who may say yes"). Pairing, and turning a client's
//! forms back on, is a person's act: an interactive terminal only. Turning forms off and
//! unpairing only take away, so any process may.

use std::process::ExitCode;

use anyhow::Context;
use capa_core::{HubPaths, PairedClient, Pairings};
use serde_json::json;

use crate::cli::FormsState;
use crate::output;
use crate::terminal::require_person;

pub(super) fn pair(paths: &HubPaths, name: &str, json: bool) -> anyhow::Result<ExitCode> {
    require_person("Pairing a client (its forms then answer approvals for you)")?;
    let store = capa_host::open_store(paths)?;
    let new = Pairings::new(&store)
        .pair(name)
        .context("pairing the client")?;
    if json {
        output::json(&json!({
            "id": new.client.id,
            "name": new.client.name,
            "forms": new.client.forms,
            "key": new.key,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("Paired {} as {}.", new.client.name, new.client.id);
    println!();
    println!("Its key (shown once; keep it in that client's configuration only):");
    println!("  {}", new.key);
    println!();
    println!("A client that starts `capa mcp` passes it in its environment:");
    println!("  \"env\": {{ \"CAPA_CLIENT_KEY\": \"{}\" }}", new.key);
    println!("A client over HTTP sends it instead of the hub's token (it survives restarts):");
    println!("  Authorization: Bearer {}", new.key);
    println!();
    println!(
        "Its own approval forms now count as your answer (never to loosen your policy: \"Always allow\" from a form waits for your confirmation). Turn that off with `capa clients forms {} off`.",
        new.client.id
    );
    Ok(ExitCode::SUCCESS)
}

pub(super) fn list(paths: &HubPaths, json: bool) -> anyhow::Result<ExitCode> {
    let store = capa_host::open_store(paths)?;
    let clients = Pairings::new(&store).list()?;
    if json {
        let rows: Vec<_> = clients.iter().map(listing).collect();
        output::json(&rows)?;
        return Ok(ExitCode::SUCCESS);
    }
    if clients.is_empty() {
        println!(
            "No paired clients. Pair one with `capa clients pair <name>` (or on the app's Clients page) to let its own approval forms answer for you."
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = clients
        .iter()
        .map(|c| {
            vec![
                c.id.clone(),
                c.name.clone(),
                if c.forms { "count" } else { "off" }.to_owned(),
                c.last_seen_ms.map_or_else(|| "never".to_owned(), ago),
            ]
        })
        .collect();
    output::table(&["ID", "NAME", "FORMS", "LAST SEEN"], &rows);
    Ok(ExitCode::SUCCESS)
}

pub(super) fn forms(paths: &HubPaths, id: &str, state: FormsState) -> anyhow::Result<ExitCode> {
    let on = state == FormsState::On;
    if on {
        require_person("Letting a client's forms answer approvals")?;
    }
    let store = capa_host::open_store(paths)?;
    Pairings::new(&store).set_forms(id, on)?;
    println!(
        "{id}: its own approval forms {}.",
        if on {
            "count as your answer"
        } else {
            "no longer count; the app's popup asks you instead"
        }
    );
    Ok(ExitCode::SUCCESS)
}

pub(super) fn unpair(paths: &HubPaths, id: &str) -> anyhow::Result<ExitCode> {
    let store = capa_host::open_store(paths)?;
    Pairings::new(&store).remove(id)?;
    println!("{id} is unpaired; its key no longer works.");
    Ok(ExitCode::SUCCESS)
}

/// "5 min ago", "2 h ago", "3 d ago".
fn ago(at_ms: i64) -> String {
    let minutes = (capa_core::clock::now_ms() - at_ms).max(0) / 60_000;
    match minutes {
        0 => "just now".to_owned(),
        1..60 => format!("{minutes} min ago"),
        60..1440 => format!("{} h ago", minutes / 60),
        _ => format!("{} d ago", minutes / 1440),
    }
}

fn listing(client: &PairedClient) -> serde_json::Value {
    json!({
        "id": client.id,
        "name": client.name,
        "forms": client.forms,
        "createdAtMs": client.created_at_ms,
        "lastSeenMs": client.last_seen_ms,
    })
}
