//! What the app shows about the hub: the `state` command's answer and the tray's look. Plain
//! data, shared by the commands, the popups and the tray.

use serde::Serialize;

/// What the app shows about the hub (the `state` command, the tray).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AppState {
    /// Pending approvals (calls waiting for a person).
    pub pending: usize,
    /// Runs with pending approvals, oldest first.
    pub pending_runs: Vec<String>,
    /// Sources that paused runs wait to be signed in to, oldest first: not approvals, so not in
    /// `pending` (`sign_ins.rs`).
    pub sign_ins: Vec<SignInNeed>,
    pub paused: bool,
    /// Where pending approvals are being answered instead of a popup: "answer in Claude Code"
    /// while a client shows its own form for them.
    pub answering_elsewhere: Vec<String>,
    /// Policy changes made outside the app that loosen it and wait for the person.
    pub held_policy_changes: usize,
    pub sources: Vec<SourceState>,
    /// The run whose popup is on screen, with its window's label.
    pub popup: Option<PopupState>,
    /// What the tray shows (the `state` command fills it in); none without a tray.
    pub tray: Option<Look>,
    /// What shows the tray icon on this desktop (the `state` command fills it in): `none`, and
    /// the settings window minimises instead of closing, and says how to get a tray.
    pub tray_host: Option<crate::tray_host::TrayHost>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SourceState {
    pub id: String,
    pub state: capa_core::SourceState,
    pub last_error: Option<String>,
    pub tools: usize,
}

/// A source that calls of paused runs wait on until the person signs in to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SignInNeed {
    pub source: String,
    /// The connection its oldest waiting call asked for; none: the source's default one.
    pub connection: Option<String>,
    /// The calls that wait for it.
    pub calls: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PopupState {
    pub run_id: String,
    pub label: String,
    /// Milliseconds from the call asking to the popup painting it; none until it has.
    pub shown_after_ms: Option<u64>,
    /// Whether the popup's window has the focus (the `state` command fills it in): a popup that
    /// came up on its own does not take it.
    pub focused: Option<bool>,
}

impl SourceState {
    pub(crate) fn failing(&self) -> bool {
        self.state.is_trouble()
    }

    /// New or changed outside the app: it starts once the person confirms it.
    pub(crate) fn unconfirmed(&self) -> bool {
        self.state == capa_core::SourceState::NeedsConfirmation
    }
}

/// What the tray shows: the icon (`idle`, `pending`, `paused`, `error`), the tooltip, the text of the
/// menu's pending item, the count beside the icon (approvals and sign-ins), the "Pause approvals"
/// check mark and the sources with a "Sign in to <source>…" item.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Look {
    pub icon: &'static str,
    pub tooltip: String,
    pub pending_text: String,
    pub pending: usize,
    pub paused: bool,
    pub sign_ins: Vec<String>,
}
