//! What the app's webviews may reach. Every window loads the hub's web UI from the hub's own
//! loopback origin (`http://127.0.0.1:<port>`, the port known only once the server listens), so:
//!
//! - IPC (the app's commands) is granted at run time to that exact origin, window by window:
//!   other loopback ports (any local program can listen on one) and other windows get nothing;
//! - no window may leave that origin: a navigation elsewhere is refused and the URL handed to the
//!   system browser instead, and no page may open a new window inside the app (`window.open`,
//!   `target=_blank`), where it would run beside the commands.

use std::str::FromStr;

use tauri::ipc::CapabilityBuilder;
use tauri::utils::acl::RemoteUrlPattern;
use tauri::webview::{NewWindowResponse, WebviewWindowBuilder};
use tauri::{Manager, Runtime, Url};

use crate::labels::{POPUP_PREFIX, SETTINGS};

/// The commands the settings window's UI calls (the tray calls the same functions in-process).
const SETTINGS_COMMANDS: &[&str] = &[
    "open_settings",
    "open_next_approval",
    "pause_approvals",
    "state",
    "close_window",
    "quit",
];

/// The commands an approval popup calls: it reports its paint (and, kept warm, that it has
/// loaded), closes itself, reads the state, and opens its run in the settings window. Nothing
/// that changes the hub (pausing approvals) is needed there.
const POPUP_COMMANDS: &[&str] = &[
    "state",
    "close_window",
    "popup_shown",
    "popup_ready",
    "open_run",
];

/// The hub's origin, the one place the app's windows load pages from.
#[derive(Debug, Clone)]
pub(crate) struct HubOrigin {
    url: Url,
}

impl HubOrigin {
    /// The origin of `base_url` (`http://127.0.0.1:<port>`, the server's bound address).
    pub(crate) fn parse(base_url: &str) -> anyhow::Result<Self> {
        let url = Url::parse(base_url)
            .map_err(|e| anyhow::anyhow!("the hub's URL {base_url} is not a URL: {e}"))?;
        if !url.origin().is_tuple() {
            anyhow::bail!("the hub's URL {base_url} has no origin");
        }
        Ok(Self { url })
    }

    /// Whether `url` is a page of the hub (same scheme, host and port).
    pub(crate) fn contains(&self, url: &Url) -> bool {
        url.origin() == self.url.origin()
    }

    /// `http://127.0.0.1:<port>`, without a path.
    pub(crate) fn origin(&self) -> String {
        self.url.origin().ascii_serialization()
    }

    /// Grants the app's commands to pages of this origin only, per window: the settings window
    /// gets what its UI calls, the approval popups (`approval-*`) what the popup calls, any other
    /// window nothing. Replaces a static capability file, which could only name the origin with a
    /// wildcard port (`http://127.0.0.1:*`), so that any local server on another port, loaded in
    /// a window, could have called the commands.
    pub(crate) fn grant_ipc<R: Runtime, M: Manager<R>>(&self, app: &M) -> anyhow::Result<()> {
        let pattern = format!("{}/*", self.origin());
        // Tauri parses the pattern again when the capability is added and panics on a bad one:
        // check it here, where a bad one is an error.
        RemoteUrlPattern::from_str(&pattern)
            .map_err(|e| anyhow::anyhow!("no URL pattern for the hub's origin {pattern}: {e}"))?;
        let capability = |identifier: &str, windows: &str, commands: &[&str]| {
            commands.iter().fold(
                CapabilityBuilder::new(identifier)
                    .local(false)
                    .remote(pattern.clone())
                    .window(windows),
                |capability, command| {
                    capability.permission(format!("allow-{}", command.replace('_', "-")))
                },
            )
        };
        app.add_capability(capability("hub-ui-settings", SETTINGS, SETTINGS_COMMANDS))?;
        app.add_capability(capability(
            "hub-ui-popups",
            &format!("{POPUP_PREFIX}*"),
            POPUP_COMMANDS,
        ))?;
        Ok(())
    }

    /// Keeps the window being built on the hub's origin: navigations elsewhere are refused (and
    /// handed to the system browser), new windows are never opened inside the app.
    pub(crate) fn confine<'a, R: Runtime, M: Manager<R>>(
        &self,
        builder: WebviewWindowBuilder<'a, R, M>,
        label: &str,
    ) -> WebviewWindowBuilder<'a, R, M> {
        let (navigating, opening) = (self.clone(), self.clone());
        let (nav_label, new_label) = (label.to_owned(), label.to_owned());
        builder
            .on_navigation(move |url| {
                if navigating.contains(url) {
                    return true;
                }
                refuse(&nav_label, url, "navigation");
                false
            })
            .on_new_window(move |url, _features| {
                if opening.contains(&url) {
                    // The UI opens none of its own pages in a new window; a browser tab would
                    // have no session, and the URL may be a one-time sign-in link.
                    tracing::info!(window = %new_label, "new window for a page of the hub refused");
                } else {
                    refuse(&new_label, &url, "new window");
                }
                NewWindowResponse::Deny
            })
    }
}

/// Logs a refused navigation or new window and, for a web page, opens it in the system browser,
/// where the person can still follow a link (with none of the app's commands). Logs the origin
/// only: the path or query of a URL may carry a token.
fn refuse(label: &str, url: &Url, what: &'static str) {
    let origin = url.origin().ascii_serialization();
    if !matches!(url.scheme(), "http" | "https") {
        tracing::info!(window = %label, scheme = url.scheme(), "{what} outside the hub refused");
        return;
    }
    if std::env::var("CAPA_NO_BROWSER").is_ok_and(|v| v == "1") {
        tracing::info!(window = %label, %origin, "{what} outside the hub refused; not opened in the browser (CAPA_NO_BROWSER=1)");
        return;
    }
    if !browser_open_allowed(std::time::Instant::now()) {
        tracing::info!(window = %label, %origin, "{what} outside the hub refused; not opened in the browser (one a second at most)");
        return;
    }
    let target = url.to_string();
    let label = label.to_owned();
    // Off the main thread, which runs the webviews: starting a program may take a moment.
    tauri::async_runtime::spawn_blocking(move || match capa_server::open_in_browser(&target) {
        Ok(()) => {
            tracing::info!(window = %label, %origin, "{what} outside the hub refused; opened in the system browser");
        }
        Err(e) => {
            tracing::warn!(window = %label, %origin, error = %e, "{what} outside the hub refused; the system browser did not start");
        }
    });
}

/// At most one page handed to the system browser a second: script on the hub's origin that
/// navigates in a loop must not flood the person's browser with tabs.
const BROWSER_OPEN_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// When a page was last handed to the browser.
struct OpenLimiter(std::sync::Mutex<Option<std::time::Instant>>);

impl OpenLimiter {
    const fn new() -> Self {
        Self(std::sync::Mutex::new(None))
    }

    fn allow(&self, now: std::time::Instant) -> bool {
        let Ok(mut last) = self.0.lock() else {
            return false;
        };
        if last.is_some_and(|at| now.saturating_duration_since(at) < BROWSER_OPEN_INTERVAL) {
            return false;
        }
        *last = Some(now);
        true
    }
}

static BROWSER_OPENS: OpenLimiter = OpenLimiter::new();

fn browser_open_allowed(now: std::time::Instant) -> bool {
    BROWSER_OPENS.allow(now)
}

#[cfg(test)]
mod tests {
    use tauri::WebviewUrl;
    use tauri::ipc::{CallbackFn, InvokeBody};
    use tauri::test::{INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder};
    use tauri::webview::InvokeRequest;

    #[test]
    fn the_browser_gets_at_most_one_page_a_second() {
        let limiter = super::OpenLimiter::new();
        let start = std::time::Instant::now();
        assert!(limiter.allow(start));
        assert!(!limiter.allow(start + std::time::Duration::from_millis(500)));
        assert!(limiter.allow(start + std::time::Duration::from_millis(1_001)));
    }

    use super::*;

    const HUB: &str = "http://127.0.0.1:4477";

    fn url(s: &str) -> Url {
        Url::parse(s).expect("url")
    }

    #[test]
    fn only_the_hubs_exact_origin_is_the_hub() {
        let hub = HubOrigin::parse(HUB).expect("origin");
        assert_eq!(hub.origin(), HUB);
        assert!(hub.contains(&url("http://127.0.0.1:4477/app/#/approve/run_1")));
        assert!(hub.contains(&url("http://127.0.0.1:4477/app/login/abc?x=1")));
        for other in [
            "http://127.0.0.1:4478/app/",
            "http://localhost:4477/app/",
            "https://127.0.0.1:4477/app/",
            "http://127.0.0.2:4477/",
            "https://example.com/",
            "about:blank",
            "data:text/html,hi",
            "file:///etc/passwd",
        ] {
            assert!(!hub.contains(&url(other)), "{other}");
        }
    }

    /// The app with the run-time capabilities of a hub on 127.0.0.1:4477, one settings window, one
    /// popup and one window the app never creates, all at the hub's UI; every command answers
    /// "ran" once the ACL lets it through.
    fn app_with_windows() -> tauri::App<MockRuntime> {
        let app = mock_builder()
            .invoke_handler(|invoke| {
                invoke.resolver.resolve("ran");
                true
            })
            .build(tauri::generate_context!(test = true))
            .expect("mock app");
        HubOrigin::parse(HUB)
            .expect("origin")
            .grant_ipc(&app)
            .expect("capabilities");
        for label in [SETTINGS, "approval-1", "other"] {
            WebviewWindowBuilder::new(
                &app,
                label,
                WebviewUrl::External(url(&format!("{HUB}/app/"))),
            )
            .build()
            .expect("window");
        }
        app
    }

    /// Whether `command`, invoked by a page at `origin` in window `label`, reaches the command.
    fn allowed(app: &tauri::App<MockRuntime>, label: &str, origin: &str, command: &str) -> bool {
        let window = app.get_webview_window(label).expect("window");
        get_ipc_response(
            &window,
            InvokeRequest {
                cmd: command.to_owned(),
                callback: CallbackFn(0),
                error: CallbackFn(1),
                url: url(origin),
                body: InvokeBody::default(),
                headers: tauri::http::HeaderMap::default(),
                invoke_key: INVOKE_KEY.to_owned(),
            },
        )
        .is_ok()
    }

    #[test]
    fn ipc_is_granted_to_the_hubs_origin_only_issue_14() {
        let app = app_with_windows();
        assert!(allowed(
            &app,
            SETTINGS,
            "http://127.0.0.1:4477/app/",
            "state"
        ));
        assert!(allowed(&app, SETTINGS, HUB, "pause_approvals"));
        // Another loopback port (any local program), another host name for it, https, the app's
        // local content: refused.
        for origin in [
            "http://127.0.0.1:4478/",
            "http://127.0.0.1:80/",
            "http://localhost:4477/",
            "https://127.0.0.1:4477/",
            "https://example.com/",
        ] {
            assert!(!allowed(&app, SETTINGS, origin, "state"), "{origin}");
            assert!(
                !allowed(&app, "approval-1", origin, "popup_shown"),
                "{origin}"
            );
        }
    }

    #[test]
    fn each_window_gets_only_its_own_commands_issue_14() {
        let app = app_with_windows();
        for command in SETTINGS_COMMANDS {
            assert!(allowed(&app, SETTINGS, HUB, command), "{command}");
        }
        assert!(!allowed(&app, SETTINGS, HUB, "popup_shown"));
        for command in POPUP_COMMANDS {
            assert!(allowed(&app, "approval-1", HUB, command), "{command}");
        }
        for command in ["pause_approvals", "open_settings", "open_next_approval"] {
            assert!(!allowed(&app, "approval-1", HUB, command), "{command}");
        }
        // A window the app does not create (none does today) gets nothing, even at the hub.
        for command in SETTINGS_COMMANDS.iter().chain(POPUP_COMMANDS) {
            assert!(!allowed(&app, "other", HUB, command), "{command}");
        }
    }
}
