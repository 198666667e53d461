//! A tool list bounded as it arrives, page by page, within the limits of `limits.rs`: tools,
//! bytes and per-tool sizes. What was cut is described once per listing (the first
//! [`MAX_CUT_NOTES`], the rest counted), logged and reported in the source's status.

use capa_domain::json_size::{Measure, json_len, prefix_within};
use rmcp::model::Tool;

use crate::limits::{
    MAX_CUT_NOTES, MAX_DESCRIPTION_BYTES, MAX_SCHEMA_BYTES, MAX_TITLE_BYTES, MAX_TOOL_LIST_BYTES,
    MAX_TOOL_NAME_BYTES, MAX_TOOL_NESTING, MAX_TOOL_PAGES, MAX_TOOLS,
};
use crate::scan::{CUT_MARKER_KEY, CUT_MARKER_VALUE};

/// What bounding a tool list cut, one line each, for the log and the source's status.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Cuts {
    pub(crate) notes: Vec<String>,
    /// Cuts past [`MAX_CUT_NOTES`].
    unlisted: usize,
}

impl Cuts {
    fn note(&mut self, note: String) {
        if self.notes.len() < MAX_CUT_NOTES {
            self.notes.push(note);
        } else {
            self.unlisted += 1;
        }
    }

    /// The last line, for the cuts that were only counted.
    fn close(&mut self) {
        if self.unlisted > 0 {
            self.notes
                .push(format!("and {} more cuts of the same kinds", self.unlisted));
        }
    }
}

/// The tools of one listing so far, bounded as they arrive (page by page).
#[derive(Debug, Default)]
pub(crate) struct ToolListBounds {
    pub(crate) tools: Vec<Tool>,
    bytes: usize,
    /// Tools past [`MAX_TOOLS`] or [`MAX_TOOL_LIST_BYTES`], counted rather than listed.
    dropped: usize,
    pub(crate) cuts: Cuts,
}

impl ToolListBounds {
    /// Whether another page could still add a tool.
    pub(crate) fn full(&self) -> bool {
        self.tools.len() >= MAX_TOOLS || self.bytes >= MAX_TOOL_LIST_BYTES
    }

    pub(crate) fn add_page(&mut self, page: Vec<Tool>) {
        for tool in page {
            if self.full() {
                self.dropped += 1;
                continue;
            }
            let Some(tool) = bound_tool(tool, &mut self.cuts) else {
                continue;
            };
            let size = json_len(&tool);
            if self.bytes.saturating_add(size) > MAX_TOOL_LIST_BYTES {
                self.dropped += 1;
                continue;
            }
            self.bytes += size;
            self.tools.push(tool);
        }
    }

    /// The kept tools and what was cut; `more_pages` when the listing stopped at
    /// [`MAX_TOOL_PAGES`] with a cursor left.
    pub(crate) fn finish(mut self, more_pages: bool) -> (Vec<Tool>, Cuts) {
        if self.dropped > 0 || (more_pages && self.full()) {
            self.cuts.note(format!(
                "kept the first {} tools ({} KiB); {} more were left out (limits: {MAX_TOOLS} \
                 tools, {} MiB)",
                self.tools.len(),
                self.bytes / 1024,
                if more_pages {
                    format!("{} or", self.dropped)
                } else {
                    self.dropped.to_string()
                },
                MAX_TOOL_LIST_BYTES / (1024 * 1024),
            ));
        } else if more_pages {
            self.cuts.note(format!(
                "stopped listing after {MAX_TOOL_PAGES} pages; tools on later pages are left out"
            ));
        }
        self.cuts.close();
        (self.tools, self.cuts)
    }
}

/// One tool within the per-tool bounds, or `None` when it is skipped.
fn bound_tool(mut tool: Tool, cuts: &mut Cuts) -> Option<Tool> {
    if tool.name.len() > MAX_TOOL_NAME_BYTES {
        cuts.note(format!(
            "skipped a tool whose name is {} bytes (limit {MAX_TOOL_NAME_BYTES}): `{}…`",
            tool.name.len(),
            prefix_within(&tool.name, 40, Measure::Utf8)
        ));
        return None;
    }
    let input = json_len(&tool.input_schema);
    if input > MAX_SCHEMA_BYTES {
        cuts.note(format!(
            "skipped `{}`: its input schema is {input} bytes (limit {MAX_SCHEMA_BYTES})",
            tool.name
        ));
        return None;
    }
    note_deep_cuts(&tool, cuts);
    if let Some(output) = &tool.output_schema {
        let size = json_len(output);
        if size > MAX_SCHEMA_BYTES {
            cuts.note(format!(
                "dropped the output schema of `{}`: {size} bytes (limit {MAX_SCHEMA_BYTES})",
                tool.name
            ));
            tool.output_schema = None;
        }
    }
    if let Some(description) = &tool.description
        && description.len() > MAX_DESCRIPTION_BYTES
    {
        cuts.note(format!(
            "cut the description of `{}` from {} to {MAX_DESCRIPTION_BYTES} bytes",
            tool.name,
            description.len()
        ));
        tool.description = Some(ellipsize(description, MAX_DESCRIPTION_BYTES).into());
    }
    if let Some(title) = &tool.title
        && title.len() > MAX_TITLE_BYTES
    {
        tool.title = Some(ellipsize(title, MAX_TITLE_BYTES));
    }
    if let Some(annotations) = &mut tool.annotations
        && let Some(title) = &annotations.title
        && title.len() > MAX_TITLE_BYTES
    {
        annotations.title = Some(ellipsize(title, MAX_TITLE_BYTES));
    }
    Some(tool)
}

/// Notes the parts of a tool's schemas that were cut while streaming in for nesting too deep
/// (`scan.rs` put [`crate::scan::CUT_MARKER`] in their place).
fn note_deep_cuts(tool: &Tool, cuts: &mut Cuts) {
    let schemas = [
        ("input", Some(tool.input_schema.as_ref())),
        ("output", tool.output_schema.as_deref()),
    ];
    for (which, schema) in schemas {
        let Some(schema) = schema else { continue };
        let count = schema.values().map(count_cut_markers).sum::<usize>();
        if count > 0 {
            cuts.note(format!(
                "cut {count} part{} of the {which} schema of `{}` nested deeper than \
                 {MAX_TOOL_NESTING} levels; {} `unknown`",
                if count == 1 { "" } else { "s" },
                tool.name,
                if count == 1 {
                    "it is now"
                } else {
                    "they are now"
                },
            ));
        }
    }
}

/// Markers of a cut in `value`, found without recursion (a schema may nest up to
/// [`crate::MAX_JSON_DEPTH`] levels).
fn count_cut_markers(value: &serde_json::Value) -> usize {
    let mut count = 0;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            serde_json::Value::Object(map) => {
                if map.get(CUT_MARKER_KEY).and_then(serde_json::Value::as_str)
                    == Some(CUT_MARKER_VALUE)
                {
                    count += 1;
                }
                stack.extend(map.values());
            }
            serde_json::Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    count
}

/// `text` within `max` bytes: itself, or its longest prefix on a character boundary followed
/// by `…` (3 bytes), the whole at most `max` bytes.
pub(crate) fn ellipsize(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    if max < '…'.len_utf8() {
        return prefix_within(text, max, Measure::Utf8).to_owned();
    }
    let mut out = prefix_within(text, max.saturating_sub('…'.len_utf8()), Measure::Utf8).to_owned();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_notes_are_bounded_and_the_rest_counted() {
        let mut bounds = ToolListBounds::default();
        let long_name = "n".repeat(MAX_TOOL_NAME_BYTES + 1);
        let tools: Vec<Tool> = (0..1_000)
            .map(|_| Tool::new(long_name.clone(), "x", serde_json::Map::new()))
            .collect();
        bounds.add_page(tools);
        let (kept, cuts) = bounds.finish(false);
        assert!(kept.is_empty());
        assert_eq!(cuts.notes.len(), MAX_CUT_NOTES + 1);
        assert_eq!(
            cuts.notes.last().map(String::as_str),
            Some("and 980 more cuts of the same kinds")
        );
    }

    #[test]
    fn ellipsized_text_fits_its_byte_budget_on_a_character_boundary() {
        assert_eq!(ellipsize("short", 10), "short");
        let long = "é".repeat(100);
        for max in [3, 4, 5, 10, 11, 199] {
            let out = ellipsize(&long, max);
            assert!(out.len() <= max, "{max}: {}", out.len());
            assert!(out.ends_with('…'));
        }
        assert_eq!(ellipsize(&long, 10), format!("{}…", "é".repeat(3)));
    }
}
