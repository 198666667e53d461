//! The approval popups: one small always-on-top window per run with pending approvals, shown one
//! at a time from a queue, each with an OS notification beside it. The hub is watched in-process
//! (`hub.approvals().watch_pending()`, plus a slow tick for expiries and source states) and the hub's page
//! opener is pointed here, so a popup appears well within a second of the call. A call that waits
//! for a sign-in gets no popup but a notification of its own, and the tray's sign-in item
//! (`sign_ins.rs`).
//!
//! While the person is approving calls, one popup window is kept warm: hidden, its page loaded at
//! the approval route with no run, so a call that asks only changes its route and shows it
//! (docs/desktop.md, "The warm popup"). The first is made once a popup has painted, the next
//! once the popup on screen has painted; a warm one is replaced after [`WARM_MAX_AGE`] (its UI
//! session would otherwise lapse unused) and closed [`WARM_WHILE_IN_USE`] after the last popup,
//! so an app that sits in the tray holds no webview.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use capa_core::{Hub, PendingInput};
use tauri::{AppHandle, Manager};
use tokio::sync::Notify;

use crate::desktop::Desktop;
use crate::notify::notify;
use crate::view::{AppState, PopupState, SourceState};
use crate::{sign_ins, tray, windows};

/// The popup queue. Runs are keyed by run id; a run is shown at most once on its own (a person
/// who closes the popup without deciding reopens it from the tray).
#[derive(Debug, Default)]
pub(crate) struct Popups {
    inner: Mutex<Queue>,
    /// Wakes the watcher at once (the hub's page opener, a decision, a closed popup).
    pub poke: Arc<Notify>,
    /// The calls waiting for a sign-in already notified (they get no popup: the tray offers
    /// the sign-in).
    sign_in_notices: sign_ins::Notices,
}

#[derive(Debug, Default)]
struct Queue {
    /// Runs waiting for their popup, oldest first.
    waiting: VecDeque<String>,
    /// Runs already queued or shown (notified once each).
    seen: HashSet<String>,
    /// The popup on screen: (run id, window label).
    shown: Option<(String, String)>,
    /// Once the popup on screen has painted its call: milliseconds from the call's approval
    /// being recorded to that paint.
    shown_after_ms: Option<u64>,
    /// Labels are never reused: a closing window may still hold its label.
    next_label: u64,
    /// The hidden popup waiting for the next call that asks.
    warm: Option<Warm>,
    /// When making one last failed: the next try waits [`WARM_RETRY`].
    warm_failed: Option<Instant>,
    /// When a popup was last on screen (shown, or closed).
    last_shown: Option<Instant>,
}

/// A hidden popup window with its page loaded (or loading) at the approval route, no run.
#[derive(Debug)]
struct Warm {
    label: String,
    /// Its page said it is loaded and waiting (`popup_ready`).
    ready: bool,
    made: Instant,
}

/// How long a warm popup waits before it is replaced by a fresh one: well within the UI
/// session's hour, which only requests renew.
const WARM_MAX_AGE: Duration = Duration::from_mins(30);

/// How long after a failed try the app tries again to make a warm popup.
const WARM_RETRY: Duration = Duration::from_mins(1);

/// How long after the last popup a warm one is kept ([`WarmPolicy::WhileInUse`]): calls that ask
/// come in bursts while a person works with an agent, and a minute of quiet ends the burst. Its
/// web process (about 230 MiB) goes then (issue 41; it was ten minutes).
const WARM_WHILE_IN_USE: Duration = Duration::from_mins(1);

/// When the app keeps a popup warm: `CAPA_WARM_POPUP=1` always (from start), `0` never (a new
/// window per popup), else while in use: [`WARM_WHILE_IN_USE`] after the last popup, or
/// `CAPA_WARM_POPUP_SECS` seconds (the desktop tests see it go without waiting a minute).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WarmPolicy {
    Always,
    Never,
    /// From the first popup until `keep` (else [`WARM_WHILE_IN_USE`]) after the last: a warm
    /// popup holds WebKit in the app process (about 80 MiB) and a web process (about 230 MiB),
    /// which an app idle in the tray should not.
    WhileInUse {
        keep: Duration,
    },
}

impl WarmPolicy {
    fn from_env() -> Self {
        static POLICY: std::sync::OnceLock<WarmPolicy> = std::sync::OnceLock::new();
        *POLICY.get_or_init(|| {
            match std::env::var_os("CAPA_WARM_POPUP")
                .as_deref()
                .and_then(|v| v.to_str())
            {
                Some("1") => Self::Always,
                Some("0") => Self::Never,
                _ => Self::WhileInUse {
                    keep: std::env::var("CAPA_WARM_POPUP_SECS")
                        .ok()
                        .and_then(|v| v.parse().ok())
                        .map_or(WARM_WHILE_IN_USE, Duration::from_secs),
                },
            }
        })
    }

    /// Whether a warm popup should wait now, the last popup having been on screen `since` ago
    /// (zero while one is).
    fn wants_warm(self, since: Option<Duration>) -> bool {
        match self {
            Self::Always => true,
            Self::Never => false,
            Self::WhileInUse { keep } => since.is_some_and(|since| since < keep),
        }
    }
}

/// Every pending input: approvals and calls waiting for a connection or a sign-in.
fn pending_inputs(hub: &Hub) -> Vec<PendingInput> {
    hub.approvals().pending().unwrap_or_else(|e| {
        tracing::warn!(error = %e, "could not read pending approvals");
        Vec::new()
    })
}

fn only_approvals(pending: &[PendingInput]) -> Vec<PendingInput> {
    pending
        .iter()
        .filter(|p| p.kind == capa_core::InputKind::Approval)
        .cloned()
        .collect()
}

fn approvals(hub: &Hub) -> Vec<PendingInput> {
    only_approvals(&pending_inputs(hub))
}

/// The approvals a popup may ask about: none a client's own form is asking about now (the
/// popup opens when that form is declined, cancelled or times out).
fn for_popups(hub: &Hub, pending: &[PendingInput]) -> Vec<PendingInput> {
    pending
        .iter()
        .filter(|p| hub.approvals().channel(&p.id).is_none())
        .cloned()
        .collect()
}

/// Pending run ids in order of their oldest pending approval.
fn runs_of(pending: &[PendingInput]) -> Vec<String> {
    let mut runs: Vec<String> = Vec::new();
    for p in pending {
        if !runs.contains(&p.run_id) {
            runs.push(p.run_id.clone());
        }
    }
    runs
}

impl Popups {
    /// The app's state as the `state` command reports it.
    pub(crate) fn state(&self, hub: &Hub) -> AppState {
        let inputs = pending_inputs(hub);
        let sources = hub.sources().list();
        let pending = only_approvals(&inputs);
        let popup = self.inner.lock().ok().and_then(|q| {
            q.shown.as_ref().map(|(run_id, label)| PopupState {
                run_id: run_id.clone(),
                label: label.clone(),
                shown_after_ms: q.shown_after_ms,
                focused: None,
            })
        });
        let mut answering_elsewhere: Vec<String> = pending
            .iter()
            .filter_map(|p| hub.approvals().channel(&p.id))
            .map(|c| c.where_to_answer())
            .collect();
        answering_elsewhere.dedup();
        AppState {
            pending: pending.len(),
            pending_runs: runs_of(&pending),
            sign_ins: sign_ins::needs(&inputs, &sources),
            paused: hub.approvals().paused(),
            answering_elsewhere,
            held_policy_changes: hub.held_policy_changes().len(),
            sources: sources
                .into_iter()
                .map(|s| SourceState {
                    id: s.id,
                    state: s.state,
                    last_error: s.last_error,
                    tools: s.tools,
                })
                .collect(),
            popup,
            tray: None,
            tray_host: None,
        }
    }

    /// The popup `label` has painted the pending call of `run_id` (its page says so, with when:
    /// `painted_at_ms`): records and logs the time from the run's oldest pending approval being
    /// recorded to that paint. Returns it; none when `label` is not the popup of `run_id` on screen.
    pub(crate) fn painted(
        &self,
        hub: &Hub,
        label: &str,
        run_id: &str,
        painted_at_ms: Option<u64>,
    ) -> Option<u64> {
        let asked = approvals(hub)
            .into_iter()
            .filter(|p| p.run_id == run_id)
            .map(|p| p.created_at_ms)
            .min()?;
        let asked = u64::try_from(asked).unwrap_or(0);
        let now = u64::try_from(capa_core::clock::now_ms()).ok()?;
        let painted = paint_time(asked, now, painted_at_ms);
        let after_ms = painted.saturating_sub(asked);
        // How long the page's report took to reach the app (its IPC): not part of what the
        // person waits for, logged apart so a bench can tell the two.
        let reported_ms = now - painted;
        let mut q = self.inner.lock().ok()?;
        if q.shown.as_ref() != Some(&(run_id.to_owned(), label.to_owned())) {
            return None;
        }
        q.shown_after_ms.get_or_insert(after_ms);
        tracing::info!(run = %run_id, window = %label, after_ms, reported_ms, "approval popup on screen");
        drop(q);
        // The next warm popup, now that this one's paint no longer competes with its load.
        self.poke.notify_one();
        Some(after_ms)
    }

    /// The warm popup `label` has loaded its page and waits for a run.
    pub(crate) fn ready(&self, label: &str) -> bool {
        let Ok(mut q) = self.inner.lock() else {
            return false;
        };
        match q.warm.as_mut() {
            Some(warm) if warm.label == label => {
                warm.ready = true;
                tracing::info!(window = %label, "warm approval popup ready");
                true
            }
            _ => false,
        }
    }

    /// A popup window was closed (by the person, the UI or the app).
    pub(crate) fn closed(&self, label: &str) {
        if let Ok(mut q) = self.inner.lock() {
            if let Some((run, _)) = q.shown.take_if(|(_, l)| l == label) {
                tracing::info!(run = %run, window = %label, "approval popup closed");
                q.last_shown = Some(Instant::now());
            }
            q.warm.take_if(|w| w.label == label);
        }
        self.poke.notify_one();
    }

    /// Makes a warm popup when the policy wants one and none waits and none is on screen (nor
    /// about to paint); replaces one that waited [`WARM_MAX_AGE`], closes one no longer wanted.
    fn keep_warm(&self, app: &AppHandle) {
        let (stale, make) = {
            let Ok(mut q) = self.inner.lock() else {
                return;
            };
            let since = if q.shown.is_some() {
                Some(Duration::ZERO)
            } else {
                q.last_shown.map(|at| at.elapsed())
            };
            let wanted = WarmPolicy::from_env().wants_warm(since);
            let stale = q
                .warm
                .take_if(|w| !wanted || w.made.elapsed() > WARM_MAX_AGE)
                .map(|w| w.label);
            if let Some(label) = &stale {
                tracing::debug!(window = %label, wanted, "warm approval popup closed");
            }
            let painting = q.shown.is_some() && q.shown_after_ms.is_none();
            let waiting = q.warm_failed.is_some_and(|at| at.elapsed() < WARM_RETRY);
            let make = (wanted && q.warm.is_none() && !painting && !waiting).then(|| {
                q.next_label += 1;
                let label = format!("{}{}", windows::POPUP_PREFIX, q.next_label);
                q.warm = Some(Warm {
                    label: label.clone(),
                    ready: false,
                    made: Instant::now(),
                });
                label
            });
            (stale, make)
        };
        if let Some(label) = stale
            && let Some(window) = app.get_webview_window(&label)
        {
            let _ = window.close();
        }
        if let Some(label) = make
            && let Err(e) = windows::open_warm_popup(app, &label)
        {
            tracing::warn!(error = %e, "could not make the warm approval popup; trying again in a minute");
            if let Ok(mut q) = self.inner.lock() {
                q.warm.take_if(|w| w.label == label);
                q.warm_failed = Some(Instant::now());
            }
        }
    }

    /// Shows the popup of the next pending run (queued first, then any other): the tray's
    /// "N pending approvals". Focuses the popup already on screen. Returns the run shown.
    pub(crate) fn open_next(&self, app: &AppHandle, hub: &Hub) -> tauri::Result<Option<String>> {
        if let Some((run, label)) = self.inner.lock().ok().and_then(|q| q.shown.clone()) {
            if let Some(window) = app.get_webview_window(&label) {
                windows::focus(&window);
                return Ok(Some(run));
            }
            self.closed(&label);
        }
        let runs = runs_of(&for_popups(hub, &approvals(hub)));
        let next = {
            let Ok(mut q) = self.inner.lock() else {
                return Ok(None);
            };
            let queued = q.waiting.iter().find(|r| runs.contains(r)).cloned();
            let next = queued.or_else(|| runs.first().cloned());
            if let Some(run) = &next {
                q.waiting.retain(|r| r != run);
                q.seen.insert(run.clone());
            }
            next
        };
        match next {
            Some(run) => {
                self.show(app, &run)?;
                Ok(Some(run))
            }
            None => Ok(None),
        }
    }

    /// Opens the popup of `run_id` (the warm one when it is ready, else a new window).
    fn show(&self, app: &AppHandle, run_id: &str) -> tauri::Result<()> {
        let (label, warm) = {
            let Ok(mut q) = self.inner.lock() else {
                return Ok(());
            };
            let warm = q
                .warm
                .take_if(|w| w.ready && app.get_webview_window(&w.label).is_some());
            let label = if let Some(warm) = &warm {
                warm.label.clone()
            } else {
                q.next_label += 1;
                format!("{}{}", windows::POPUP_PREFIX, q.next_label)
            };
            q.shown = Some((run_id.to_owned(), label.clone()));
            q.shown_after_ms = None;
            q.last_shown = Some(Instant::now());
            (label, warm.is_some())
        };
        tracing::info!(run = %run_id, window = %label, warm, "approval popup opened");
        let shown = if warm {
            windows::reveal_popup(app, &label, run_id)
        } else {
            windows::open_popup(app, &label, run_id)
        };
        if let Err(e) = shown {
            self.closed(&label);
            return Err(e);
        }
        Ok(())
    }

    /// One pass: queue new runs (with a notification each), close the popup of a run that no
    /// longer waits, show the next queued run when nothing is on screen, refresh the tray.
    fn tick(&self, app: &AppHandle, hub: &Hub) {
        let inputs = pending_inputs(hub);
        let pending = for_popups(hub, &only_approvals(&inputs));
        let runs = runs_of(&pending);
        let mut notify = Vec::new();
        let mut close = None;
        let mut show = None;
        if let Ok(mut q) = self.inner.lock() {
            q.waiting.retain(|r| runs.contains(r));
            q.seen.retain(|r| runs.contains(r));
            for run in &runs {
                if q.seen.insert(run.clone()) {
                    q.waiting.push_back(run.clone());
                    if let Some(p) = pending.iter().find(|p| &p.run_id == run) {
                        notify.push(p.clone());
                    }
                }
            }
            if let Some((run, label)) = q.shown.take_if(|(run, _)| !runs.contains(run)) {
                tracing::info!(run = %run, window = %label, "approval popup closed");
                q.last_shown = Some(Instant::now());
                close = Some(label);
            }
            if q.shown.is_none() {
                show = q.waiting.pop_front();
            }
        }
        if let Some(label) = close
            && let Some(window) = app.get_webview_window(&label)
        {
            let _ = window.close();
        }
        if let Some(run) = show
            && let Err(e) = self.show(app, &run)
        {
            tracing::warn!(error = %e, run = %run, "could not open the approval popup");
        }
        for input in notify {
            notify_approval(app, &input);
        }
        // The listing only when a call waits for a sign-in: it reads the store.
        let sources = if inputs.iter().any(PendingInput::is_sign_in) {
            hub.sources().list()
        } else {
            Vec::new()
        };
        for input in self.sign_in_notices.fresh(&inputs, &sources) {
            sign_ins::notify_needed(app, &input);
        }
        self.keep_warm(app);
        tray::refresh(app, &self.state(hub));
    }
}

/// When a popup painted: the page's own time when it lies between the call being `asked` and
/// `now` (the page shares the machine's clock), else `now`: a page's word never moves the
/// measure outside what the app saw.
fn paint_time(asked: u64, now: u64, painted_at_ms: Option<u64>) -> u64 {
    painted_at_ms
        .filter(|at| (asked..=now).contains(at))
        .unwrap_or(now)
}

/// "Capabilities: approve <address>?" beside the popup.
fn notify_approval(app: &AppHandle, input: &PendingInput) {
    notify(
        app,
        format!("Capabilities: approve {}?", input.address),
        input.reason.clone(),
    );
}

/// Points the hub's approval page opener at the popups and watches the hub until the app ends.
pub(crate) fn watch(app: AppHandle) {
    let (Some(desktop), Some(popups)) = (app.try_state::<Desktop>(), app.try_state::<Popups>())
    else {
        return;
    };
    let hub = desktop.hosted.hub.clone();
    let poke = popups.poke.clone();
    // A paused run's approval "page" is our popup: the model is told it opened.
    let opener_poke = poke.clone();
    hub.approvals()
        .set_page_opener(Arc::new(move |_run_id: &str| {
            opener_poke.notify_one();
            true
        }));
    let mut pending = hub.approvals().watch_pending();
    let mut paused = hub.approvals().watch_paused();
    let mut asking = hub.approvals().watch_claims();
    tauri::async_runtime::spawn(async move {
        loop {
            if let Some(popups) = app.try_state::<Popups>() {
                popups.tick(&app, &hub);
            }
            tokio::select! {
                _ = pending.changed() => {}
                _ = paused.changed() => {}
                // A client's form went away undecided: the popup may ask now.
                _ = asking.changed() => {}
                () = poke.notified() => {}
                // Expiries, source states, and a safety net for missed changes.
                () = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paint_time_is_the_pages_only_between_the_call_and_now() {
        assert_eq!(paint_time(1_000, 1_200, Some(1_150)), 1_150);
        assert_eq!(paint_time(1_000, 1_200, None), 1_200);
        assert_eq!(
            paint_time(1_000, 1_200, Some(900)),
            1_200,
            "before the call"
        );
        assert_eq!(
            paint_time(1_000, 1_200, Some(5_000)),
            1_200,
            "in the future"
        );
    }

    #[test]
    fn a_warm_popup_waits_only_while_popups_are_in_use() {
        let in_use = WarmPolicy::WhileInUse {
            keep: WARM_WHILE_IN_USE,
        };
        let long_ago = WARM_WHILE_IN_USE + Duration::from_secs(1);
        assert!(!in_use.wants_warm(None), "warm before any popup");
        assert!(in_use.wants_warm(Some(Duration::ZERO)));
        assert!(in_use.wants_warm(Some(Duration::from_secs(50))));
        assert!(!in_use.wants_warm(Some(long_ago)));
        assert!(WarmPolicy::Always.wants_warm(None));
        assert!(!WarmPolicy::Never.wants_warm(Some(Duration::ZERO)));
    }
}
