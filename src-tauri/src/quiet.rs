//! An app that has gone quiet in the tray gives back the code pages it is not using
//! (`code_pages.rs`): once after start-up, and again after each busy spell, never while a
//! window is shown, a call asks a person or the hub is working.

use std::time::Duration;

use tauri::{AppHandle, Manager};

use crate::desktop::Desktop;

/// How often the app looks whether it is quiet.
const LOOK_EVERY: Duration = Duration::from_secs(10);

/// CPU time (user and system, in the kernel's clock ticks of 1/100 s) above which a look's
/// span counts as busy: 0.2 s of 10 s, 2% of one core. Idle, the app uses well under a tick
/// per second (the popup watch's one-second timer, the hub's housekeeping); a call, a source
/// starting or the search index being built take far more.
const BUSY_TICKS: u64 = 20;

/// Whether the app should give its pages back now, from what it saw since the last look.
#[derive(Debug)]
struct Quiet {
    /// Something happened since pages were last given back (start-up counts).
    dirty: bool,
}

impl Quiet {
    /// Takes in one look: `busy` (CPU use above [`BUSY_TICKS`], or approvals coming or going,
    /// since the last look) or a window `shown`; true when pages should be given back now.
    fn look(&mut self, busy: bool, shown: bool) -> bool {
        if busy || shown {
            self.dirty = true;
            return false;
        }
        std::mem::replace(&mut self.dirty, false)
    }
}

/// Watches, for the app's life, for the app going quiet in the tray.
pub(crate) fn watch(app: AppHandle) {
    let Some(desktop) = app.try_state::<Desktop>() else {
        return;
    };
    // Approvals coming and going: a popup may have been shown and closed between two looks,
    // which a look alone would miss (and a person deciding a run of approvals is not quiet).
    let mut pending = desktop.hosted.hub.approvals().watch_pending();
    tauri::async_runtime::spawn(async move {
        let mut quiet = Quiet { dirty: true };
        let mut last = cpu_ticks();
        loop {
            tokio::time::sleep(LOOK_EVERY).await;
            let now = cpu_ticks();
            let busy = match (last, now) {
                (Some(last), Some(now)) => now.saturating_sub(last) > BUSY_TICKS,
                // Without a reading the app cannot tell it is idle.
                _ => true,
            };
            last = now;
            let asked = pending.has_changed().unwrap_or(false);
            pending.borrow_and_update();
            let shown = app
                .webview_windows()
                .values()
                .any(|window| window.is_visible().unwrap_or(true));
            if quiet.look(busy || asked, shown) {
                give_back();
                // Giving back costs CPU time of its own (reading smaps): not a busy spell.
                last = cpu_ticks();
            }
        }
    });
}

fn give_back() {
    match crate::code_pages::give_back() {
        Ok(bytes) => tracing::info!(
            mib = format!("{:.1}", bytes as f64 / f64::from(1 << 20)),
            "quiet in the tray: gave back the resident pages of the app's code"
        ),
        Err(e) => tracing::warn!(error = %e, "could not give back the app's code pages"),
    }
}

/// The process's CPU time so far (all threads, user and system), in clock ticks, from
/// /proc/self/stat (fields 14 and 15, counted after the command name, which may hold spaces
/// and parentheses).
fn cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_go_back_once_per_quiet_spell() {
        let mut quiet = Quiet { dirty: true };
        // Start-up: busy, then quiet: give back once, not again while nothing happens.
        assert!(!quiet.look(true, false));
        assert!(quiet.look(false, false));
        assert!(!quiet.look(false, false));
        // The settings window shown, then closed: once more.
        assert!(!quiet.look(false, true));
        assert!(quiet.look(false, false));
        // A busy spell (calls while in the tray), then quiet again.
        assert!(!quiet.look(true, false));
        assert!(!quiet.look(true, false));
        assert!(quiet.look(false, false));
        assert!(!quiet.look(false, false));
    }

    #[test]
    fn the_process_cpu_time_is_read_and_grows_with_work() {
        // Spins until the reading grows by 5 ticks (50 ms of CPU): a reading that does not
        // follow the process's work (wrong fields) never does, within ten seconds.
        let before = cpu_ticks().expect("/proc/self/stat");
        let spin = std::time::Instant::now();
        let mut x = 0u64;
        while cpu_ticks().expect("/proc/self/stat") < before + 5 {
            assert!(
                spin.elapsed() < Duration::from_secs(10),
                "the CPU time did not grow"
            );
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
        }
    }
}
