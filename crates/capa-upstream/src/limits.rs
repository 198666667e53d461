//! Bounds on what an upstream sends the hub (docs/limits.md says why each value).
//!
//! An upstream is a program the user installed, not a trusted one: a bug or a hostile server
//! must not grow the hub without bound. One message is capped while it streams in; a tool list
//! is capped in tools, pages and bytes, and each tool in its name, title, description and
//! schemas. Each cut is described once per listing (the first [`MAX_CUT_NOTES`], the rest
//! counted), logged and reported in the source's status.

use rmcp::model::Tool;

use crate::scan::{CUT_MARKER_KEY, CUT_MARKER_VALUE};

/// One message from an upstream (a stdio line, an HTTP JSON body, an SSE event): 8 MiB. The
/// model sees at most 24 KB of a run's result inline, so a larger answer helps only code that
/// filters it, and the guest's 64 MB heap holds a parsed answer of 8 MiB a few times over; it
/// still leaves room for screenshots and file reads, the largest real answers we know.
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;
/// Tools kept per source. The largest real server in our catalogs lists a few hundred; 5,000
/// keeps search and the sandbox's namespaces fast while no real server comes close.
pub const MAX_TOOLS: usize = 5_000;
/// Pages of `tools/list` read per listing: a server that hands out cursors forever stops here.
pub const MAX_TOOL_PAGES: usize = 100;
/// Bytes of all kept tool definitions of a source together, as JSON. Each page is bounded by
/// [`MAX_MESSAGE_BYTES`] already; this bounds what the hub holds for one source.
pub const MAX_TOOL_LIST_BYTES: usize = 16 * 1024 * 1024;
/// A tool's name; the MCP spec asks for at most 128 characters. Longer names are skipped
/// (a cut name would call another tool, or none).
pub const MAX_TOOL_NAME_BYTES: usize = 128;
/// A tool's description: 16 KiB, over twice the longest in our catalogs (6.3 KB). Longer ones
/// are cut, ending in `…`, within this many bytes.
pub const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;
/// A tool's title (its own and its annotations'), cut like descriptions.
pub const MAX_TITLE_BYTES: usize = 256;
/// A tool's input or output schema as JSON: 256 KiB, five times the largest in our catalogs
/// (49 KB). A tool whose input schema is larger is skipped (its arguments could not be typed or
/// checked); a larger output schema is dropped and the tool kept, its result untyped.
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// The deepest nesting of arrays and objects in one message that rmcp's JSON decoder
/// (serde_json, whose recursion limit is 128) reads; a deeper line is dropped by it like an
/// oversized one (a test pins the value).
pub const MAX_JSON_DEPTH: u32 = 127;
/// Levels of nesting kept below a tool in a tool list (its input schema's root is level 1):
/// deeper parts are cut as they stream in, each replaced by an empty schema that says so
/// (`scan.rs`), so that the tool list parses and only the deep tool loses detail. The deepest
/// schema in our catalogs has 18 levels; TypeScript declarations stop at 32 levels of schemas.
pub const MAX_TOOL_NESTING: u32 = 64;

/// Cuts described one line each; past this many they are only counted (a server that sends a
/// million tools with overlong names must not fill the log and the status with a million
/// lines).
pub const MAX_CUT_NOTES: usize = 20;

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
            let size = json_bytes(&tool);
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
            cut(&tool.name, 40)
        ));
        return None;
    }
    let input = json_bytes(&tool.input_schema);
    if input > MAX_SCHEMA_BYTES {
        cuts.note(format!(
            "skipped `{}`: its input schema is {input} bytes (limit {MAX_SCHEMA_BYTES})",
            tool.name
        ));
        return None;
    }
    note_deep_cuts(&tool, cuts);
    if let Some(output) = &tool.output_schema {
        let size = json_bytes(output);
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
/// [`MAX_JSON_DEPTH`] levels).
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
        return cut(text, max).to_owned();
    }
    let mut out = cut(text, max.saturating_sub('…'.len_utf8())).to_owned();
    out.push('…');
    out
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn cut(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Bytes of `value` as compact JSON, counted without building the text.
pub(crate) fn json_bytes<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // A writer that never fails and types that always serialise: this cannot fail; if it did,
    // the count would be too small only for that value.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
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
