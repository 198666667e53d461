//! The tray icon: its picture and tooltip say whether the hub is idle, has pending approvals (with
//! the count) or sign-ins that runs wait for, has approvals paused (every call that asks is
//! denied) or a failing source; its menu routes through the same commands tests call (the
//! handler is `commands::on_tray_menu`, given to [`build`]), and has a "Sign in to <source>…"
//! item for each source that a run waits to be signed in to (`sign_ins.rs`).

use std::sync::{Arc, Mutex};

use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Manager};

use crate::sign_ins;
use crate::view::{AppState, Look};

const IDLE: &[u8] = include_bytes!("../../icons/tray-idle.png");
const PENDING: &[u8] = include_bytes!("../../icons/tray-pending.png");
const ERROR: &[u8] = include_bytes!("../../icons/tray-error.png");
const PAUSED: &[u8] = include_bytes!("../../icons/tray-paused.png");

/// The menu's pause item: what it does, in its own words.
pub(crate) const PAUSE_TEXT: &str = "Pause approvals (deny every call that asks)";

/// The tray and the menu items whose text or check mark follows the hub. The handles are cheap
/// clones of the same native objects.
#[derive(Clone)]
pub(crate) struct Tray {
    icon: TrayIcon,
    menu: Menu<tauri::Wry>,
    pending: MenuItem<tauri::Wry>,
    pause: CheckMenuItem<tauri::Wry>,
    /// The sign-in items in the menu now, below the pending item.
    sign_ins: Arc<Mutex<Vec<SignInItem>>>,
    /// The last look shown, so that the icon is only replaced when it changes.
    shown: Arc<Mutex<Option<Look>>>,
}

/// A menu item "Sign in to <source>…", with its source.
type SignInItem = (String, MenuItem<tauri::Wry>);

impl std::fmt::Debug for Tray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tray").finish_non_exhaustive()
    }
}

fn look(state: &AppState) -> Look {
    let sign_ins: Vec<String> = state.sign_ins.iter().map(|n| n.source.clone()).collect();
    // A source waiting for a sign-in is said as that, not as an error too.
    let failing: Vec<&str> = state
        .sources
        .iter()
        .filter(|s| s.failing() && !sign_ins.contains(&s.id))
        .map(|s| s.id.as_str())
        .collect();
    let mut pending_text = match state.pending {
        0 => "No pending approvals".to_owned(),
        1 => "1 pending approval".to_owned(),
        n => format!("{n} pending approvals"),
    };
    if state.pending > 0 && !state.answering_elsewhere.is_empty() {
        pending_text.push_str(&format!(" ({})", state.answering_elsewhere.join(", ")));
    }
    let mut to_do = Vec::new();
    if state.pending > 0 {
        to_do.push(pending_text.clone());
    }
    match sign_ins.as_slice() {
        [] => {}
        [source] => to_do.push(format!("Sign in to {source} to continue")),
        many => to_do.push(format!("Sign in to {} sources to continue", many.len())),
    }
    let mut tooltip = String::from("Capabilities");
    if !to_do.is_empty() {
        tooltip.push_str(&format!(": {}", to_do.join(" · ")));
    }
    if !failing.is_empty() {
        tooltip.push_str(&format!(" · source error: {}", failing.join(", ")));
    }
    let unconfirmed: Vec<&str> = state
        .sources
        .iter()
        .filter(|s| s.unconfirmed())
        .map(|s| s.id.as_str())
        .collect();
    let to_confirm = unconfirmed.len() + state.held_policy_changes;
    if !unconfirmed.is_empty() {
        tooltip.push_str(&format!(
            " · waiting for your confirmation: {}",
            unconfirmed.join(", ")
        ));
    }
    if state.held_policy_changes > 0 {
        tooltip.push_str(" · policy changes wait for your confirmation");
    }
    if state.paused {
        tooltip.push_str(" · approvals paused: calls that ask are denied");
    }
    // Something to decide or sign in to first; then the pause, which denies every call that asks
    // until the person resumes, so it must not look like an idle hub; then trouble.
    let icon = if state.pending > 0 || !sign_ins.is_empty() {
        "pending"
    } else if state.paused {
        "paused"
    } else if !failing.is_empty() || to_confirm > 0 {
        "error"
    } else {
        "idle"
    };
    Look {
        icon,
        tooltip,
        pending_text,
        pending: state.pending,
        paused: state.paused,
        sign_ins,
    }
}

fn image(name: &str) -> tauri::Result<Image<'static>> {
    Image::from_bytes(match name {
        "pending" => PENDING,
        "error" => ERROR,
        "paused" => PAUSED,
        _ => IDLE,
    })
}

/// Builds the tray. Where the desktop has no tray (no status notifier host), the app still runs
/// and the error is returned for the log.
pub(crate) fn build(app: &AppHandle, on_menu: fn(&AppHandle, &str)) -> tauri::Result<Tray> {
    let pending = MenuItem::with_id(app, "pending", "No pending approvals", false, None::<&str>)?;
    let settings = MenuItem::with_id(app, "settings", "Open settings", true, None::<&str>)?;
    let pause = CheckMenuItem::with_id(app, "pause", PAUSE_TEXT, true, false, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
    let separator = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&pending, &settings, &pause, &separator, &quit])?;
    let icon = TrayIconBuilder::with_id("capabilities")
        .icon(image("idle")?)
        .tooltip("Capabilities")
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(move |app, event| on_menu(app, event.id().as_ref()))
        .build(app)?;
    Ok(Tray {
        icon,
        menu,
        pending,
        pause,
        sign_ins: Arc::default(),
        shown: Arc::default(),
    })
}

/// Where the app keeps its tray (managed state): none until it is built, and none on a desktop
/// without one.
#[derive(Debug, Default)]
pub(crate) struct TraySlot(pub Mutex<Option<Tray>>);

/// The app's tray, when it has one. The lock is held only to clone the handles: the tray's
/// setters wait for the main thread, which may itself be waiting for this lock.
fn tray(app: &AppHandle) -> Option<Tray> {
    let slot = app.try_state::<TraySlot>()?;
    slot.0.lock().ok()?.clone()
}

/// What the tray shows now; none where the desktop has no tray.
pub(crate) fn shown(app: &AppHandle) -> Option<Look> {
    let tray = tray(app)?;
    tray.shown.lock().ok()?.clone()
}

/// Makes the tray show `state`.
pub(crate) fn refresh(app: &AppHandle, state: &AppState) {
    let Some(tray) = tray(app) else {
        return;
    };
    let next = look(state);
    let previous = {
        let Ok(mut shown) = tray.shown.lock() else {
            return;
        };
        if shown.as_ref() == Some(&next) {
            return;
        }
        shown.replace(next.clone())
    };
    if previous.as_ref().map(|l| l.icon) != Some(next.icon)
        && let Ok(icon) = image(next.icon)
    {
        let _ = tray.icon.set_icon(Some(icon));
    }
    let _ = tray.icon.set_tooltip(Some(&next.tooltip));
    let waiting = next.pending + next.sign_ins.len();
    let title = (waiting > 0).then(|| waiting.to_string());
    let _ = tray.icon.set_title(title.as_deref());
    let _ = tray.pending.set_text(&next.pending_text);
    let _ = tray.pending.set_enabled(next.pending > 0);
    let _ = tray.pause.set_checked(next.paused);
    if let Err(e) = show_sign_ins(app, &tray, &next.sign_ins) {
        tracing::warn!(error = %e, "could not update the tray's sign-in items");
    }
}

/// Makes the menu's sign-in items those of `sources`, below the pending item. The lock is held
/// across the menu's changes so that two refreshes do not interleave them; nothing on the main
/// thread takes it.
fn show_sign_ins(app: &AppHandle, tray: &Tray, sources: &[String]) -> tauri::Result<()> {
    let Ok(mut items) = tray.sign_ins.lock() else {
        return Ok(());
    };
    if items.iter().map(|(s, _)| s).eq(sources) {
        return Ok(());
    }
    for (_, item) in items.drain(..) {
        tray.menu.remove(&item)?;
    }
    for (position, source) in sources.iter().enumerate() {
        let item = MenuItem::with_id(
            app,
            format!("{}{source}", sign_ins::MENU_PREFIX),
            sign_ins::menu_text(source),
            true,
            None::<&str>,
        )?;
        tray.menu.insert(&item, position + 1)?;
        items.push((source.clone(), item));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::{SignInNeed, SourceState};

    fn state(pending: usize, paused: bool, sources: &[(&str, &str)]) -> AppState {
        AppState {
            pending,
            pending_runs: Vec::new(),
            sign_ins: Vec::new(),
            paused,
            answering_elsewhere: Vec::new(),
            held_policy_changes: 0,
            sources: sources
                .iter()
                .map(|(id, state)| SourceState {
                    id: (*id).to_owned(),
                    state: serde_json::from_value(serde_json::Value::from(*state))
                        .expect("a state"),
                    last_error: None,
                    tools: 1,
                })
                .collect(),
            popup: None,
            tray: None,
            tray_host: None,
        }
    }

    #[test]
    fn idle_when_nothing_waits_and_every_source_is_up() {
        let look = look(&state(0, false, &[("demo", "ready")]));
        assert_eq!(look.icon, "idle");
        assert_eq!(look.tooltip, "Capabilities");
        assert_eq!(look.pending_text, "No pending approvals");
    }

    #[test]
    fn pending_approvals_win_over_source_errors_and_are_counted() {
        let one = look(&state(1, false, &[("demo", "ready")]));
        assert_eq!(one.icon, "pending");
        assert_eq!(one.pending_text, "1 pending approval");
        assert_eq!(one.tooltip, "Capabilities: 1 pending approval");
        let three = look(&state(3, true, &[("gh", "down")]));
        assert_eq!(three.icon, "pending");
        assert_eq!(
            three.tooltip,
            "Capabilities: 3 pending approvals · source error: gh · approvals paused: calls that ask are denied"
        );
        assert!(three.paused);
    }

    #[test]
    fn paused_approvals_show_their_own_icon_over_source_errors() {
        let paused = look(&state(0, true, &[("gh", "down")]));
        assert_eq!(paused.icon, "paused");
        assert_eq!(
            paused.tooltip,
            "Capabilities · source error: gh · approvals paused: calls that ask are denied"
        );
        assert!(image("paused").is_ok(), "the paused icon decodes");
    }

    #[test]
    fn an_approval_a_client_form_asks_about_says_where_to_answer() {
        let mut answering = state(1, false, &[("demo", "ready")]);
        answering.answering_elsewhere = vec!["answer in claude-code".to_owned()];
        assert_eq!(
            look(&answering).pending_text,
            "1 pending approval (answer in claude-code)"
        );
    }

    #[test]
    fn what_waits_for_confirmation_is_shown() {
        let mut waiting = state(0, false, &[("planted", "needs_confirmation")]);
        waiting.held_policy_changes = 1;
        let look = look(&waiting);
        assert_eq!(look.icon, "error");
        assert_eq!(
            look.tooltip,
            "Capabilities · waiting for your confirmation: planted · policy changes wait for your confirmation"
        );
    }

    #[test]
    fn a_down_source_or_one_needing_its_connection_shows_the_error_icon() {
        let look = look(&state(
            0,
            false,
            &[("a", "down"), ("b", "needs_connection"), ("c", "ready")],
        ));
        assert_eq!(look.icon, "error");
        assert_eq!(look.tooltip, "Capabilities · source error: a, b");
    }

    fn waiting_for(sources: &[&str]) -> Vec<SignInNeed> {
        sources
            .iter()
            .map(|s| SignInNeed {
                source: (*s).to_owned(),
                connection: None,
                calls: 1,
            })
            .collect()
    }

    #[test]
    fn a_sign_in_a_run_waits_for_shows_the_pending_icon_apart_from_approvals() {
        let mut one = state(0, false, &[("notes", "needs_connection"), ("gh", "down")]);
        one.sign_ins = waiting_for(&["notes"]);
        let look = look(&one);
        assert_eq!(look.icon, "pending");
        // The source that waits for its sign-in is not called an error as well.
        assert_eq!(
            look.tooltip,
            "Capabilities: Sign in to notes to continue · source error: gh"
        );
        assert_eq!(look.pending_text, "No pending approvals");
        assert_eq!(look.pending, 0);
        assert_eq!(look.sign_ins, ["notes"]);
    }

    #[test]
    fn sign_ins_to_several_sources_are_counted_beside_the_approvals() {
        let mut two = state(0, true, &[("notes", "needs_connection")]);
        two.sign_ins = waiting_for(&["notes", "mail"]);
        let look = look(&two);
        assert_eq!(look.icon, "pending", "a sign-in wins over the pause");
        assert_eq!(
            look.tooltip,
            "Capabilities: Sign in to 2 sources to continue · approvals paused: calls that ask are denied"
        );
        assert_eq!(look.sign_ins, ["notes", "mail"]);
        let mut both = state(1, false, &[("notes", "needs_connection")]);
        both.sign_ins = waiting_for(&["notes"]);
        assert_eq!(
            super::look(&both).tooltip,
            "Capabilities: 1 pending approval · Sign in to notes to continue"
        );
    }
}
