//! Sign-ins that paused runs wait for: a call to an OAuth source nobody signed in to (or whose
//! sign-in the server stopped accepting) pauses its run with a pending input
//! (`PendingInput::is_sign_in`). The tray counts them apart from approvals and offers
//! "Sign in to <source>…" for each source; an OS notification says once per call that one waits.
//!
//! A pending sign-in stays until the model resumes its run, also after the person signed in, so
//! a source's listing decides whether it still needs one.

use std::collections::HashSet;
use std::sync::Mutex;

use capa_core::{PendingInput, SourceStatus};
use tauri::{AppHandle, Manager};

use crate::desktop::Desktop;
use crate::notify::notify;
use crate::view::SignInNeed;

/// The ids of the tray's sign-in items: this prefix, then the source id.
pub(crate) const MENU_PREFIX: &str = "sign-in:";

/// The tray's item for signing in to `source`.
pub(crate) fn menu_text(source: &str) -> String {
    format!("Sign in to {source}…")
}

/// Whether `source`'s connection `connection` (none: its default one) is signed in, by the
/// hub's listing. A source the hub no longer lists counts as done: nothing can sign in to it.
fn signed_in(sources: &[SourceStatus], source: &str, connection: Option<&str>) -> bool {
    let Some(status) = sources.iter().find(|s| s.id == source) else {
        return true;
    };
    // No OAuth side listed: the hub has not seen the server ask yet; the sign-in may still start.
    status.oauth.as_ref().is_some_and(|oauth| {
        oauth.connections.iter().any(|c| {
            c.signed_in
                && match connection {
                    Some(name) => c.name == name,
                    None => c.default,
                }
        })
    })
}

/// The pending sign-ins that still need the person, one per source in the order of its oldest
/// call, with the connection that call asked for.
pub(crate) fn needs(pending: &[PendingInput], sources: &[SourceStatus]) -> Vec<SignInNeed> {
    let mut needs: Vec<SignInNeed> = Vec::new();
    for input in waiting(pending, sources) {
        match needs.iter_mut().find(|n| n.source == input.source) {
            Some(need) => need.calls += 1,
            None => needs.push(SignInNeed {
                source: input.source.clone(),
                connection: input.connection.clone(),
                calls: 1,
            }),
        }
    }
    needs
}

fn waiting<'a>(
    pending: &'a [PendingInput],
    sources: &'a [SourceStatus],
) -> impl Iterator<Item = &'a PendingInput> {
    pending
        .iter()
        .filter(|p| p.is_sign_in() && !signed_in(sources, &p.source, p.connection.as_deref()))
}

/// The pending sign-ins already notified, by pending input id: one notification per call.
#[derive(Debug, Default)]
pub(crate) struct Notices(Mutex<HashSet<String>>);

impl Notices {
    /// The pending sign-ins still needed that were not notified yet; forgets the ones that are no
    /// longer pending.
    pub(crate) fn fresh(
        &self,
        pending: &[PendingInput],
        sources: &[SourceStatus],
    ) -> Vec<PendingInput> {
        let Ok(mut seen) = self.0.lock() else {
            return Vec::new();
        };
        seen.retain(|id| pending.iter().any(|p| &p.id == id));
        waiting(pending, sources)
            .filter(|p| seen.insert(p.id.clone()))
            .cloned()
            .collect()
    }
}

/// The notification's title and body for a call that waits for a sign-in: the source and the
/// call, never the sign-in's link (the tray's item starts a fresh one) nor anything of a token.
fn notice(input: &PendingInput) -> (String, String) {
    (
        format!("Sign in to {} to continue", input.source),
        format!(
            "A run's call to {} waits for it. Choose “{}” in the Capabilities tray menu.",
            input.address,
            menu_text(&input.source)
        ),
    )
}

/// Notifies the person of a call that waits for a sign-in.
pub(crate) fn notify_needed(app: &AppHandle, input: &PendingInput) {
    let (title, body) = notice(input);
    notify(app, title, body);
}

/// The tray's "Sign in to <source>…": starts the sign-in as the connection the oldest waiting
/// call asked for, and opens the browser on it. The hub waits for the redirect itself and
/// starts the source again; the model resumes its run. What fails is said in a notification,
/// as the person clicked a menu and looks for an answer.
pub(crate) async fn sign_in(app: AppHandle, source: String) {
    let Some(hub) = app.try_state::<Desktop>().map(|d| d.hosted.hub.clone()) else {
        return;
    };
    let connection = hub
        .approvals()
        .pending()
        .unwrap_or_default()
        .into_iter()
        .find(|p| p.is_sign_in() && p.source == source)
        .and_then(|p| p.connection);
    let started = match hub.begin_sign_in(&source, connection.as_deref()).await {
        Ok(started) => started,
        Err(e) => {
            tracing::warn!(source = %source, error = %e, "could not start the sign-in");
            notify(
                &app,
                format!("Could not sign in to {source}"),
                e.to_string(),
            );
            return;
        }
    };
    // A private forwarding page: the URL stays out of other users' `ps` (capa-server).
    let url = started.url;
    // Watched: an opener that finds no browser fails, and the notification says so.
    let opened = tauri::async_runtime::spawn_blocking(move || capa_server::open_for_person(&url))
        .await
        .is_ok_and(|r| r.is_ok());
    if opened {
        tracing::info!(source = %source, connection = %started.connection, "sign-in opened in the browser");
    } else {
        tracing::warn!(source = %source, "could not open the browser for the sign-in");
        notify(
            &app,
            format!("Could not open your browser to sign in to {source}"),
            "Set CAPA_BROWSER or a default browser, or open Sources in the Capabilities settings, where the sign-in's link is shown.".to_owned(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capa_core::InputKind;
    use serde_json::json;

    fn input(id: &str, source: &str, connection: Option<&str>, reason: &str) -> PendingInput {
        PendingInput {
            id: id.to_owned(),
            run_id: format!("run_{id}"),
            call_index: 0,
            args_digest: String::new(),
            kind: InputKind::Connection,
            address: format!("{source}.search"),
            source: source.to_owned(),
            connection: connection.map(str::to_owned),
            preview: json!({}),
            reason: reason.to_owned(),
            created_at_ms: 0,
            expires_at_ms: 0,
            client: None,
        }
    }

    fn sign_in_input(id: &str, source: &str, connection: Option<&str>) -> PendingInput {
        input(
            id,
            source,
            connection,
            &format!("Sign in to `{source}` to continue: nobody has signed in"),
        )
    }

    /// A listed OAuth source with its connections as (name, default, signed in).
    fn source(id: &str, connections: &[(&str, bool, bool)]) -> SourceStatus {
        serde_json::from_value(json!({
            "id": id,
            "target": "http://127.0.0.1:1/mcp",
            "state": "needs_connection",
            "tools": 0,
            "restarts": 0,
            "connections": [],
            "origin": "config",
            "limited": [],
            "oauth": {
                "connections": connections
                    .iter()
                    .map(|(name, default, signed_in)| json!({
                        "name": name, "default": default, "signedIn": signed_in
                    }))
                    .collect::<Vec<_>>(),
                "signIn": null,
            },
        }))
        .expect("a source status")
    }

    #[test]
    fn needs_are_one_per_source_with_the_oldest_calls_connection() {
        let pending = [
            sign_in_input("a1", "notes", Some("work")),
            sign_in_input("b1", "mail", None),
            sign_in_input("a2", "notes", None),
            // A source that lacks an ordinary connection is no sign-in.
            input("c1", "gh", None, "gh.issues needs a connection"),
        ];
        let sources = [source("notes", &[]), source("mail", &[]), source("gh", &[])];
        let needs = needs(&pending, &sources);
        assert_eq!(
            needs,
            vec![
                SignInNeed {
                    source: "notes".to_owned(),
                    connection: Some("work".to_owned()),
                    calls: 2,
                },
                SignInNeed {
                    source: "mail".to_owned(),
                    connection: None,
                    calls: 1,
                },
            ]
        );
    }

    #[test]
    fn a_source_signed_in_since_needs_no_sign_in_while_its_run_waits_to_resume() {
        let pending = [
            sign_in_input("a1", "notes", None),
            sign_in_input("b1", "mail", Some("work")),
        ];
        let sources = [
            source("notes", &[("personal", true, true)]),
            // Signed in as another connection than the call asked for, or signed out.
            source("mail", &[("personal", true, true), ("work", false, false)]),
        ];
        let needs = needs(&pending, &sources);
        assert_eq!(needs.len(), 1);
        assert_eq!(needs[0].source, "mail");
        // A source the hub no longer lists cannot be signed in to.
        assert!(super::needs(&pending, &[]).is_empty());
    }

    #[test]
    fn each_call_waiting_for_a_sign_in_is_notified_once() {
        let notices = Notices::default();
        let sources = [source("notes", &[])];
        let first = [sign_in_input("a1", "notes", None)];
        let fresh = notices.fresh(&first, &sources);
        assert_eq!(fresh.len(), 1);
        assert!(notices.fresh(&first, &sources).is_empty());
        let second = [
            sign_in_input("a1", "notes", None),
            sign_in_input("a2", "notes", None),
        ];
        let fresh = notices.fresh(&second, &sources);
        assert_eq!(
            fresh.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(),
            ["a2"]
        );
        // Signed in meanwhile: nothing to say.
        let signed = [source("notes", &[("personal", true, true)])];
        let third = [sign_in_input("a3", "notes", None)];
        assert!(notices.fresh(&third, &signed).is_empty());
    }

    #[test]
    fn the_notice_names_the_source_and_the_call_and_no_link() {
        let (title, body) = notice(&sign_in_input("a1", "notes", None));
        assert_eq!(title, "Sign in to notes to continue");
        assert_eq!(
            body,
            "A run's call to notes.search waits for it. Choose “Sign in to notes…” in the Capabilities tray menu."
        );
        assert!(!body.contains("http"));
    }
}
