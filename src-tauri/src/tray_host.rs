//! Whether anything on this desktop shows the tray icon (issue 41). Stock GNOME shows none
//! without an extension, and neither does a bare X server: there the app made an unmapped tray
//! window, and once its settings window was closed a person could neither find it nor quit it.
//!
//! Two kinds of host count, the two the tray library (libayatana-appindicator) uses: a
//! `StatusNotifierItem` host (KDE, XFCE, Cinnamon, GNOME with the `AppIndicator` extension), found
//! through the `org.kde.StatusNotifierWatcher` on the session bus; and an `XEmbed` system tray
//! (`_NET_SYSTEM_TRAY_S<screen>` has an owner: trayer, stalonetray, older panels), which the
//! library falls back to. Asked when it matters (at start, when the settings window is
//! closed, and by `state`, which the settings page asks once as it loads), never cached: a panel
//! may start after the app.

use serde::Serialize;

/// What shows the tray icon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TrayHost {
    StatusNotifier,
    XEmbed,
    /// Nothing: the icon is not on screen.
    None,
}

impl TrayHost {
    /// From what was found: whether a `StatusNotifier` watcher has a host registered (none
    /// without a watcher), and whether the `XEmbed` tray selection has an owner.
    fn from_findings(status_notifier: Option<bool>, xembed: bool) -> Self {
        match (status_notifier, xembed) {
            (Some(true), _) => Self::StatusNotifier,
            (_, true) => Self::XEmbed,
            _ => Self::None,
        }
    }
}

/// What shows the tray icon on this desktop now.
#[cfg(target_os = "linux")]
pub(crate) fn find() -> TrayHost {
    TrayHost::from_findings(status_notifier_host(), xembed_tray())
}

/// macOS has its menu bar and Windows its notification area: there is always a host.
#[cfg(not(target_os = "linux"))]
pub(crate) fn find() -> TrayHost {
    TrayHost::StatusNotifier
}

/// Whether the `StatusNotifier` watcher on the session bus has a host; `None` without a watcher
/// (or a bus).
#[cfg(target_os = "linux")]
fn status_notifier_host() -> Option<bool> {
    const WATCHER: &str = "org.kde.StatusNotifierWatcher";
    let connection = zbus::blocking::Connection::session().ok()?;
    let bus = zbus::blocking::fdo::DBusProxy::new(&connection).ok()?;
    let name = zbus::names::BusName::try_from(WATCHER).ok()?;
    if !bus.name_has_owner(name).ok()? {
        return None;
    }
    let watcher =
        zbus::blocking::Proxy::new(&connection, WATCHER, "/StatusNotifierWatcher", WATCHER).ok()?;
    // A watcher that cannot say is taken at its word that it exists.
    Some(
        watcher
            .get_property::<bool>("IsStatusNotifierHostRegistered")
            .unwrap_or(true),
    )
}

/// Whether the X server's system tray selection has an owner (an `XEmbed` tray runs). libX11 is
/// loaded at run time (x11-dl, as the windowing library does), on a connection of its own.
#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "Xlib has no safe binding here; each call gets a display this function opened and checks"
)]
fn xembed_tray() -> bool {
    let Ok(xlib) = x11_dl::xlib::Xlib::open() else {
        return false;
    };
    // SAFETY: a null name opens the display of $DISPLAY; the result is checked before use and
    // closed below, and no other code holds this connection.
    let display = unsafe { (xlib.XOpenDisplay)(std::ptr::null()) };
    if display.is_null() {
        return false;
    }
    // SAFETY: `display` is the open connection above.
    let screen = unsafe { (xlib.XDefaultScreen)(display) };
    let owned = std::ffi::CString::new(format!("_NET_SYSTEM_TRAY_S{screen}")).is_ok_and(|name| {
        // SAFETY: `display` is open and `name` a NUL-terminated string that outlives the call.
        let atom = unsafe { (xlib.XInternAtom)(display, name.as_ptr(), 0) };
        // SAFETY: as above; an atom that names no selection has no owner (0).
        atom != 0 && unsafe { (xlib.XGetSelectionOwner)(display, atom) } != 0
    });
    // SAFETY: closes the connection opened above, used by nothing after this.
    unsafe { (xlib.XCloseDisplay)(display) };
    owned
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_status_notifier_host_wins_then_an_xembed_tray() {
        assert_eq!(
            TrayHost::from_findings(Some(true), true),
            TrayHost::StatusNotifier
        );
        assert_eq!(
            TrayHost::from_findings(Some(true), false),
            TrayHost::StatusNotifier
        );
        assert_eq!(TrayHost::from_findings(Some(false), true), TrayHost::XEmbed);
        assert_eq!(TrayHost::from_findings(None, true), TrayHost::XEmbed);
    }

    #[test]
    fn a_watcher_without_a_host_and_no_xembed_tray_is_no_tray() {
        assert_eq!(TrayHost::from_findings(Some(false), false), TrayHost::None);
        assert_eq!(TrayHost::from_findings(None, false), TrayHost::None);
    }
}
