//! The guest's console lines, held within the inline budget as the envelope will serialise them.

/// Console lines, held up to the inline budget as the envelope serialises them
/// ([`crate::output::log_line_cost`]); nothing past it could be shown anyway.
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
        let cost = crate::output::log_line_cost(&line);
        // The array's closing bracket, on top of each line's cost.
        let room = self.cap.saturating_sub(self.cost + 1);
        if cost <= room {
            self.cost += cost;
            self.lines.push(line);
            return true;
        }
        self.shortened = true;
        if room > crate::output::MIN_CUT_LINE_BYTES {
            // Keep a cut first part of the line that crosses the budget.
            let cut = crate::output::cut_json_str(&line, room - 1);
            self.cost += crate::output::log_line_cost(&cut);
            self.lines.push(cut);
        }
        false
    }
}
