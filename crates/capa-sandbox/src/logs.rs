//! The guest's console lines, held within the inline budget as the envelope will serialise them,
//! and what one line costs in the envelope's `logs` array.

use capa_domain::json_size::{Measure, json_str_len, prefix_within};

const ELLIPSIS: &str = "…";
/// A log line that crosses the budget is kept cut only when this many bytes of room are left;
/// a shorter stub would say nothing.
pub(crate) const MIN_CUT_LINE_BYTES: usize = 64;

/// `s` as a JSON string of at most `max_json` bytes (quotes and escapes counted): `s` itself
/// when it fits, else its longest prefix that fits with `…` appended. Reads only as much of `s`
/// as it keeps. `max_json` must be at least 5 (`"…"`).
pub(crate) fn cut_json_str(s: &str, max_json: usize) -> String {
    let room = max_json.saturating_sub(2);
    if prefix_within(s, room, Measure::JsonEscaped).len() == s.len() {
        return s.to_string();
    }
    let kept = prefix_within(s, room.saturating_sub(ELLIPSIS.len()), Measure::JsonEscaped);
    format!("{kept}{ELLIPSIS}")
}

/// Bytes one console line adds to the envelope's `logs` array: its JSON string and the
/// separator before it (the opening bracket for the first). An empty line costs 3 (`"",`):
/// no line is free, so a flood of empty lines fills the budget too.
pub(crate) fn log_line_cost(line: &str) -> usize {
    json_str_len(line) + 1
}

/// Bytes of a `logs` array whose lines cost `costs` together ([`log_line_cost`]): that plus the
/// closing bracket, or nothing for no lines (the envelope then leaves `logs` out).
pub(crate) fn logs_array_len(lines: usize, costs: usize) -> usize {
    if lines == 0 { 0 } else { costs + 1 }
}

/// Console lines, held up to the inline budget as the envelope serialises them
/// ([`log_line_cost`]); nothing past it could be shown anyway.
#[derive(Debug, Default)]
pub(crate) struct Logs {
    pub(crate) lines: Vec<String>,
    /// What `lines` cost together.
    pub(crate) cost: usize,
    /// A line was dropped or cut: the budget is full, later lines are dropped unread.
    pub(crate) shortened: bool,
    cap: usize,
}

impl Logs {
    /// No lines yet; at most `cap` bytes of them held.
    pub(crate) fn with_cap(cap: usize) -> Self {
        Logs {
            cap,
            ..Logs::default()
        }
    }

    /// Keeps `line` (or its cut first part) if there is room; false once a line had to be
    /// dropped or cut, which tells the prelude to send no more.
    pub(crate) fn push(&mut self, line: String) -> bool {
        if self.shortened {
            return false;
        }
        let cost = log_line_cost(&line);
        // The array's closing bracket, on top of each line's cost.
        let room = self.cap.saturating_sub(self.cost + 1);
        if cost <= room {
            self.cost += cost;
            self.lines.push(line);
            return true;
        }
        self.shortened = true;
        if room > MIN_CUT_LINE_BYTES {
            // Keep a cut first part of the line that crosses the budget.
            let cut = cut_json_str(&line, room - 1);
            self.cost += log_line_cost(&cut);
            self.lines.push(cut);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_json_str_counts_escapes_and_keeps_char_boundaries() {
        for (s, max) in [
            ("ééé", 8),
            ("aaaa", 6),
            ("aaaaaa", 7),
            ("\u{1}\u{1}\u{1}", 16),
            ("a\"b\\c\nd", 9),
        ] {
            let cut = cut_json_str(s, max);
            let json = serde_json::to_string(&cut).unwrap_or_default();
            assert!(json.len() <= max, "{s:?} {max}: {json}");
            assert!(cut == s || cut.ends_with('…'), "{cut}");
        }
        assert_eq!(cut_json_str("ééé", 8), "ééé");
        assert_eq!(cut_json_str("ééé", 7), "é…");
        // Each control character is six bytes: two fit in 16 with the quotes, not three.
        assert_eq!(cut_json_str("\u{1}\u{1}\u{1}", 16), "\u{1}…");
    }

    #[test]
    fn log_cost_is_the_serialised_array() {
        let lines = ["", "a\u{1f}", "\"é\""];
        let cost: usize = lines.iter().map(|l| log_line_cost(l)).sum();
        let json = serde_json::to_string(&lines).unwrap_or_default();
        assert_eq!(logs_array_len(lines.len(), cost), json.len());
    }
}
