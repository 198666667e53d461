//! What the browser-facing pages keep in memory: one-time links and the sessions they start
//! (cookie → what the session may see, CSRF token, a flash message). One mechanism serves both
//! the approval page (a link and a session bound to runs) and the web UI under `/app/` (a link
//! and a session for the whole local API, see [`crate::ui::UiAccess`]). Nothing survives a
//! restart; the terminal (`capabilities hub pending`, `capa ui`) does.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a link opened in the browser stays valid.
pub(crate) const LINK_TTL: Duration = Duration::from_mins(10);
/// How long a page session lives after its last use.
pub(crate) const SESSION_TTL: Duration = Duration::from_hours(1);

/// 32 random bytes as hex, or `None` when the system has no randomness to give.
pub(super) fn random_token() -> Option<String> {
    capa_core::digest::random_hex(32)
}

/// What a link opens.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Grant {
    /// The approval page of one run.
    Run(String),
    /// The web UI (the whole local API).
    App,
    /// Starting the OAuth sign-in of a source as a connection (a link handed to a client's URL
    /// elicitation: its holder can only send their browser to the authorization server).
    SignIn {
        source: String,
        connection: Option<String>,
    },
}

struct Link {
    grant: Grant,
    expires: Instant,
}

struct Session {
    runs: HashSet<String>,
    /// A web UI session: the local API, not the approval page.
    app: bool,
    csrf: String,
    expires: Instant,
    flash: Option<String>,
}

/// A live session as a page request sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SessionView {
    pub csrf: String,
    /// A message from the last decision, shown once.
    pub flash: Option<String>,
}

/// Links and sessions, pruned of expired entries whenever they are touched.
pub(crate) struct Secrets {
    link_ttl: Duration,
    session_ttl: Duration,
    links: Mutex<HashMap<String, Link>>,
    sessions: Mutex<HashMap<String, Session>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Secrets {
    pub(crate) fn new(link_ttl: Duration, session_ttl: Duration) -> Self {
        Self {
            link_ttl,
            session_ttl,
            links: Mutex::new(HashMap::new()),
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// A new one-time link token for `run_id`.
    pub(super) fn issue_link(&self, run_id: &str) -> Option<String> {
        self.issue(Grant::Run(run_id.to_owned()))
    }

    /// A new one-time link token that starts the sign-in of `source` as `connection`.
    pub(crate) fn issue_sign_in_link(
        &self,
        source: &str,
        connection: Option<&str>,
    ) -> Option<String> {
        self.issue(Grant::SignIn {
            source: source.to_owned(),
            connection: connection.map(str::to_owned),
        })
    }

    /// Uses up a sign-in link: the source and connection it signs in, when it is known, unused
    /// and fresh.
    pub(crate) fn redeem_sign_in_link(&self, token: &str) -> Option<(String, Option<String>)> {
        match self.redeem(token, |g| matches!(g, Grant::SignIn { .. }))? {
            Grant::SignIn { source, connection } => Some((source, connection)),
            Grant::Run(_) | Grant::App => None,
        }
    }

    /// A new one-time link token that starts a web UI session.
    pub(crate) fn issue_app_link(&self) -> Option<String> {
        self.issue(Grant::App)
    }

    /// Registers `token` (made by an interactive terminal, handed over through the data dir) as
    /// a one-time web UI link.
    pub(crate) fn register_app_link(&self, token: String) {
        let now = Instant::now();
        let mut links = lock(&self.links);
        links.retain(|_, link| link.expires > now);
        links.insert(
            token,
            Link {
                grant: Grant::App,
                expires: now + self.link_ttl,
            },
        );
    }

    fn issue(&self, grant: Grant) -> Option<String> {
        let token = random_token()?;
        let now = Instant::now();
        let mut links = lock(&self.links);
        links.retain(|_, link| link.expires > now);
        links.insert(
            token.clone(),
            Link {
                grant,
                expires: now + self.link_ttl,
            },
        );
        Some(token)
    }

    /// Forgets a web UI link that was never shown (the browser did not start).
    pub(crate) fn revoke_app_link(&self, token: &str) {
        self.revoke_link(token);
    }

    /// Forgets a link that was never shown (the browser did not start).
    pub(super) fn revoke_link(&self, token: &str) {
        lock(&self.links).remove(token);
    }

    /// Uses up a link: the run it opens, when it is known, unused, fresh and a run's link.
    pub(super) fn redeem_link(&self, token: &str) -> Option<String> {
        match self.redeem(token, |g| matches!(g, Grant::Run(_)))? {
            Grant::Run(run_id) => Some(run_id),
            Grant::App | Grant::SignIn { .. } => None,
        }
    }

    /// Uses up a web UI link and starts a UI session: its id, when the link was known, unused
    /// and fresh.
    pub(crate) fn redeem_app_link(&self, token: &str) -> Option<String> {
        self.redeem(token, |g| *g == Grant::App)?;
        let now = Instant::now();
        let id = random_token()?;
        let csrf = random_token()?;
        let mut sessions = lock(&self.sessions);
        sessions.retain(|_, s| s.expires > now);
        sessions.insert(
            id.clone(),
            Session {
                runs: HashSet::new(),
                app: true,
                csrf,
                expires: now + self.session_ttl,
                flash: None,
            },
        );
        Some(id)
    }

    fn redeem(&self, token: &str, kind: impl Fn(&Grant) -> bool) -> Option<Grant> {
        let now = Instant::now();
        let mut links = lock(&self.links);
        links.retain(|_, link| link.expires > now);
        if !links.get(token).is_some_and(|link| kind(&link.grant)) {
            return None;
        }
        links.remove(token).map(|link| link.grant)
    }

    /// The key (CSRF token) of the live web UI session `id`. Its expiry is not renewed here: a
    /// cookie replayed without the key must not keep a session alive ([`Secrets::touch`]
    /// renews, once the request proved it holds the key).
    pub(crate) fn app_session(&self, id: &str) -> Option<String> {
        let now = Instant::now();
        let mut sessions = lock(&self.sessions);
        sessions.retain(|_, s| s.expires > now);
        let session = sessions.get(id).filter(|s| s.app)?;
        Some(session.csrf.clone())
    }

    /// Renews the live session `id` (a request of it proved it holds the key).
    pub(crate) fn touch(&self, id: &str) {
        let now = Instant::now();
        if let Some(session) = lock(&self.sessions).get_mut(id).filter(|s| s.expires > now) {
            session.expires = now + self.session_ttl;
        }
    }

    /// Whether `id` is a live approval-page session (of any run).
    pub(super) fn is_page_session(&self, id: &str) -> bool {
        let now = Instant::now();
        lock(&self.sessions)
            .get(id)
            .is_some_and(|s| !s.app && s.expires > now)
    }

    /// Binds `run_id` to the live session `existing` (a second link followed in the same
    /// browser keeps the first tab working), else to a new session. Returns the session id.
    pub(super) fn bind(&self, existing: Option<&str>, run_id: &str) -> Option<String> {
        let now = Instant::now();
        let mut sessions = lock(&self.sessions);
        sessions.retain(|_, s| s.expires > now);
        if let Some(id) = existing
            && let Some(session) = sessions.get_mut(id).filter(|s| !s.app)
        {
            session.runs.insert(run_id.to_owned());
            session.expires = now + self.session_ttl;
            return Some(id.to_owned());
        }
        let id = random_token()?;
        let csrf = random_token()?;
        sessions.insert(
            id.clone(),
            Session {
                runs: HashSet::from([run_id.to_owned()]),
                app: false,
                csrf,
                expires: now + self.session_ttl,
                flash: None,
            },
        );
        Some(id)
    }

    /// The live session `id` when it is bound to `run_id` (not renewed: [`Secrets::touch`]).
    /// With `take_flash`, the flash is handed out once.
    pub(super) fn session(&self, id: &str, run_id: &str, take_flash: bool) -> Option<SessionView> {
        let now = Instant::now();
        let mut sessions = lock(&self.sessions);
        sessions.retain(|_, s| s.expires > now);
        let session = sessions.get_mut(id)?;
        if !session.runs.contains(run_id) {
            return None;
        }
        let flash = if take_flash {
            session.flash.take()
        } else {
            session.flash.clone()
        };
        Some(SessionView {
            csrf: session.csrf.clone(),
            flash,
        })
    }

    /// Leaves a message for the session's next page view.
    pub(super) fn set_flash(&self, id: &str, message: String) {
        if let Some(session) = lock(&self.sessions).get_mut(id) {
            session.flash = Some(message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_opens_its_run_once() {
        let secrets = Secrets::new(LINK_TTL, SESSION_TTL);
        let token = secrets.issue_link("run_1").expect("token");
        assert_eq!(token.len(), 64);
        assert_eq!(secrets.redeem_link(&token).as_deref(), Some("run_1"));
        assert_eq!(secrets.redeem_link(&token), None);
        assert_eq!(secrets.redeem_link("unknown"), None);
    }

    #[test]
    fn app_links_and_run_links_do_not_mix() {
        let secrets = Secrets::new(LINK_TTL, SESSION_TTL);
        let app = secrets.issue_app_link().expect("token");
        let run = secrets.issue_link("run_1").expect("token");
        assert_eq!(secrets.redeem_link(&app), None);
        assert_eq!(secrets.redeem_app_link(&run), None);
        let id = secrets.redeem_app_link(&app).expect("session");
        assert_eq!(secrets.redeem_app_link(&app), None);
        assert_eq!(secrets.app_session(&id).map(|c| c.len()), Some(64));
        assert!(secrets.session(&id, "run_1", false).is_none());
        let page = secrets.bind(None, "run_1").expect("page session");
        assert!(secrets.app_session(&page).is_none());
        assert_eq!(secrets.redeem_link(&run).as_deref(), Some("run_1"));
    }

    #[test]
    fn expired_links_and_sessions_are_refused() {
        let secrets = Secrets::new(Duration::ZERO, Duration::ZERO);
        let token = secrets.issue_link("run_1").expect("token");
        assert_eq!(secrets.redeem_link(&token), None);
        let id = secrets.bind(None, "run_1").expect("session");
        assert_eq!(secrets.session(&id, "run_1", true), None);
    }

    #[test]
    fn sessions_see_only_their_runs_and_flash_once() {
        let secrets = Secrets::new(LINK_TTL, SESSION_TTL);
        let id = secrets.bind(None, "run_1").expect("session");
        assert!(secrets.session(&id, "run_2", false).is_none());
        assert_eq!(
            secrets.bind(Some(&id), "run_2").as_deref(),
            Some(id.as_str())
        );
        let view = secrets.session(&id, "run_2", false).expect("bound");
        assert_eq!(view.csrf.len(), 64);
        secrets.set_flash(&id, "Denied.".to_owned());
        assert_eq!(
            secrets
                .session(&id, "run_1", false)
                .and_then(|v| v.flash)
                .as_deref(),
            Some("Denied.")
        );
        assert_eq!(
            secrets
                .session(&id, "run_1", true)
                .and_then(|v| v.flash)
                .as_deref(),
            Some("Denied.")
        );
        assert_eq!(
            secrets.session(&id, "run_1", true).and_then(|v| v.flash),
            None
        );
        assert!(
            secrets
                .bind(Some("stale"), "run_3")
                .is_some_and(|other| other != id)
        );
    }
}
