//! The labels of the app's windows, which the windows are opened with and the hub's origin is
//! granted to (`hub_origin.rs`).

/// The label of the settings window.
pub(crate) const SETTINGS: &str = "settings";

/// The labels of the approval popups: `approval-1`, `approval-2`, … (never reused).
pub(crate) const POPUP_PREFIX: &str = "approval-";
