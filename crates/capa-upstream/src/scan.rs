//! What one line from an upstream holds, learned a byte at a time with a few bytes of state, and
//! the line handed on with the too-deep parts of a tool list cut out.
//!
//! rmcp decodes a line with `serde_json`, which refuses nesting past [`MAX_JSON_DEPTH`]: one tool
//! whose schema nests deeper would make the whole `tools/list` answer unreadable and the source
//! lose every tool. So inside `result.tools`, a part nested more than [`MAX_TOOL_NESTING`] levels
//! below its tool is replaced while it streams by [`CUT_MARKER`]: an empty schema (any value)
//! whose description says why. Anything else nested too deep (a tool's result) is handed on
//! unchanged, and [`crate::bounded::BoundedLines`] fails the call it answers.

use crate::limits::{MAX_JSON_DEPTH, MAX_TOOL_NESTING};

/// What replaces a cut object: a schema that accepts anything (typegen renders it `unknown`,
/// with its description as the comment), marked so that the tool list can say what was cut.
/// A cut array becomes `[]`.
pub(crate) const CUT_MARKER: &str = r#"{"description":"Not shown: nested deeper than the 64 levels the hub reads.","x-capa-cut":"nested_too_deep"}"#;
/// The key and value that mark a [`CUT_MARKER`] in a schema.
pub(crate) const CUT_MARKER_KEY: &str = "x-capa-cut";
pub(crate) const CUT_MARKER_VALUE: &str = "nested_too_deep";

/// The depth of a tool object in a `tools/list` answer: the message, `result`, `tools`, the tool.
const TOOL_DEPTH: u32 = 4;
/// Below a tool, past this many levels everything is cut, arrays and maps of schemas too (the
/// first bound lets those through, see [`SCHEMA_MAPS`]), so that the line parses whatever its
/// shape: the deepest it can be is `TOOL_DEPTH + HARD_NESTING`, well within [`MAX_JSON_DEPTH`].
const HARD_NESTING: u32 = MAX_TOOL_NESTING + 8;
const _: () = assert!(TOOL_DEPTH + HARD_NESTING < MAX_JSON_DEPTH);

/// Keys whose value is a map from names to schemas rather than a schema: cutting the map would
/// put the marker's keys where property names belong, so the cut falls on the schemas in it.
const SCHEMA_MAPS: [&[u8]; 5] = [
    b"properties",
    b"patternProperties",
    b"$defs",
    b"definitions",
    b"dependentSchemas",
];

/// The longest key the scanner needs to recognise (`patternProperties`).
const MAX_KEY_BYTES: usize = 17;
/// The longest request id it keeps (rmcp sends small numbers).
const MAX_ID_BYTES: usize = 64;

/// What the scanner expects next in the current container.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A value: at the start of the line, after `[`, `,` in an array, or `:`.
    #[default]
    Value,
    /// A key: after `{`, or `,` in an object.
    Key,
    /// `:` after a key.
    Colon,
    /// `,` or the end of the container.
    After,
}

/// Which member of the top-level object the scanner is in.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Top {
    #[default]
    None,
    Id,
    Result,
    Other,
}

/// Whether a line answers a request, and which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// A request, a notification, a batch, or not JSON-RPC at all.
    No,
    /// An answer with this id, as raw JSON.
    Id(Vec<u8>),
    /// An answer whose id the scanner could not keep.
    Unreadable,
}

/// A line that ended: what rmcp will make of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineEnd {
    /// Bytes handed on, its newline counted (as rmcp counts).
    pub(crate) bytes: usize,
    /// The deepest nesting handed on.
    pub(crate) deepest: u32,
    /// Parts of a tool list replaced by [`CUT_MARKER`] or `[]`.
    pub(crate) cuts: u32,
    pub(crate) answer: Answer,
}

#[derive(Debug, Default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "a one-pass scanner's flags, each read on every byte; they are independent, not one state"
)]
pub(crate) struct LineScan {
    len: usize,
    deepest: u32,
    cuts: u32,
    started: bool,
    object: bool,
    depth: u32,
    /// Bit `d - 1` is set when the container at depth `d` (up to 128) is an array.
    arrays: u128,
    expect: Expect,
    in_string: bool,
    escape: bool,
    in_key: bool,
    /// The key of the current member, its first bytes (a longer key matches nothing).
    key: Vec<u8>,
    top: Top,
    id: Vec<u8>,
    id_usable: bool,
    has_method: bool,
    has_answer: bool,
    /// Inside `result.tools` (an array).
    in_tools: bool,
    /// Inside a cut container, which opened at this depth: its bytes are dropped.
    skip_from: Option<u32>,
}

impl LineScan {
    /// Reads one byte of the line (never the newline) and hands on what rmcp should see.
    pub(crate) fn push(&mut self, byte: u8, out: &mut Vec<u8>) {
        if let Some(from) = self.skip_from {
            self.skip(byte, from);
            return;
        }
        if self.in_string {
            self.emit(byte, out);
            self.string_byte(byte);
            return;
        }
        if matches!(byte, b'{' | b'[') {
            self.open(byte, out);
            return;
        }
        self.emit(byte, out);
        match byte {
            b'"' => {
                self.in_string = true;
                self.started = true;
                if self.expect == Expect::Key {
                    self.in_key = true;
                    self.key.clear();
                } else {
                    self.keep_id(byte);
                }
            }
            b'}' | b']' => self.close(),
            b',' => {
                if self.depth == 1 {
                    self.top = Top::None;
                }
                self.expect = if self.in_object() {
                    Expect::Key
                } else {
                    Expect::Value
                };
            }
            b':' => self.colon(),
            // A newline ends a stdio line before it gets here; in an SSE event's data it is
            // whitespace.
            b' ' | b'\t' | b'\r' | b'\n' => {}
            other => {
                // Bytes over 0x7f before anything else are a byte order mark, which rmcp skips.
                if other < 0x80 {
                    self.started = true;
                }
                self.keep_id(other);
            }
        }
    }

    /// The line ended; the scanner starts over.
    pub(crate) fn end(&mut self) -> LineEnd {
        let scan = std::mem::take(self);
        let id_read = scan.id_usable
            && scan.top != Top::Id
            && matches!(scan.id.first(), Some(b'"' | b'-' | b'0'..=b'9'));
        let answer = if !(scan.object && scan.has_answer && !scan.has_method) {
            Answer::No
        } else if id_read {
            Answer::Id(scan.id)
        } else {
            Answer::Unreadable
        };
        LineEnd {
            bytes: scan.len.saturating_add(1),
            deepest: scan.deepest,
            cuts: scan.cuts,
            answer,
        }
    }

    fn emit(&mut self, byte: u8, out: &mut Vec<u8>) {
        self.len = self.len.saturating_add(1);
        out.push(byte);
    }

    fn in_object(&self) -> bool {
        self.depth >= 1 && !self.is_array(self.depth)
    }

    fn is_array(&self, depth: u32) -> bool {
        (1..=128).contains(&depth) && self.arrays & (1u128 << (depth - 1)) != 0
    }

    fn string_byte(&mut self, byte: u8) {
        if self.escape {
            self.escape = false;
        } else if byte == b'\\' {
            self.escape = true;
        } else if byte == b'"' {
            self.in_string = false;
            if self.in_key {
                self.in_key = false;
                self.expect = Expect::Colon;
                return;
            }
            self.keep_id(byte);
            self.expect = Expect::After;
            return;
        }
        if self.in_key {
            if self.key.len() <= MAX_KEY_BYTES {
                self.key.push(byte);
            }
        } else {
            self.keep_id(byte);
        }
    }

    fn open(&mut self, byte: u8, out: &mut Vec<u8>) {
        let depth = self.depth.saturating_add(1);
        if self.in_tools && self.cuts_at(byte, depth) {
            let marker: &[u8] = if byte == b'{' {
                CUT_MARKER.as_bytes()
            } else {
                b"[]"
            };
            out.extend_from_slice(marker);
            self.len = self.len.saturating_add(marker.len());
            self.deepest = self.deepest.max(depth);
            self.cuts = self.cuts.saturating_add(1);
            self.depth = depth;
            self.skip_from = Some(depth);
            return;
        }
        self.emit(byte, out);
        if !self.started {
            self.started = true;
            self.object = byte == b'{';
        }
        if self.depth == 1 && self.top == Top::Id {
            // An id is a number or a string, never a structure.
            self.id_usable = false;
        }
        let tools = depth == 3
            && byte == b'['
            && self.top == Top::Result
            && self.in_object()
            && self.key == b"tools";
        self.depth = depth;
        self.deepest = self.deepest.max(depth);
        if (1..=128).contains(&depth) {
            let bit = 1u128 << (depth - 1);
            if byte == b'[' {
                self.arrays |= bit;
            } else {
                self.arrays &= !bit;
            }
        }
        self.expect = if byte == b'{' {
            Expect::Key
        } else {
            Expect::Value
        };
        if tools {
            self.in_tools = true;
        }
    }

    /// Whether a container opening at `depth` inside `result.tools` is cut.
    fn cuts_at(&self, byte: u8, depth: u32) -> bool {
        let level = depth.saturating_sub(TOOL_DEPTH);
        if level > HARD_NESTING {
            return true;
        }
        let in_schema_map = self.in_object() && SCHEMA_MAPS.contains(&self.key.as_slice());
        level > MAX_TOOL_NESTING && byte == b'{' && !in_schema_map
    }

    fn close(&mut self) {
        if self.depth == 1 {
            self.top = Top::None;
        }
        if self.depth == 3 {
            self.in_tools = false;
        }
        self.depth = self.depth.saturating_sub(1);
        self.expect = Expect::After;
    }

    fn colon(&mut self) {
        if self.expect != Expect::Colon {
            return;
        }
        self.expect = Expect::Value;
        if self.depth != 1 {
            return;
        }
        self.top = match self.key.as_slice() {
            b"id" => {
                self.id.clear();
                self.id_usable = true;
                Top::Id
            }
            b"method" => {
                self.has_method = true;
                Top::Other
            }
            b"result" => {
                self.has_answer = true;
                Top::Result
            }
            b"error" => {
                self.has_answer = true;
                Top::Other
            }
            _ => Top::Other,
        };
    }

    fn keep_id(&mut self, byte: u8) {
        if self.top == Top::Id && self.depth == 1 {
            if self.id.len() < MAX_ID_BYTES {
                self.id.push(byte);
            } else {
                self.id_usable = false;
            }
        }
    }

    /// A byte inside a cut container: only strings and nesting are followed, to find its end.
    fn skip(&mut self, byte: u8, from: u32) {
        if self.in_string {
            if self.escape {
                self.escape = false;
            } else if byte == b'\\' {
                self.escape = true;
            } else if byte == b'"' {
                self.in_string = false;
            }
            return;
        }
        match byte {
            b'"' => self.in_string = true,
            b'{' | b'[' => self.depth = self.depth.saturating_add(1),
            b'}' | b']' => {
                if self.depth == from {
                    self.skip_from = None;
                    self.expect = Expect::After;
                }
                self.depth = self.depth.saturating_sub(1);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(line: &str) -> (String, LineEnd) {
        let mut scan = LineScan::default();
        let mut out = Vec::new();
        for &byte in line.as_bytes() {
            scan.push(byte, &mut out);
        }
        (String::from_utf8(out).expect("utf-8"), scan.end())
    }

    /// A schema nesting `levels` objects: `{"type":"object","properties":{"x":…}}`, twice as
    /// many levels of JSON.
    fn nested(levels: usize) -> String {
        let mut schema = r#"{"type":"string"}"#.to_owned();
        for _ in 0..levels {
            schema = format!(r#"{{"type":"object","properties":{{"x":{schema}}}}}"#);
        }
        schema
    }

    fn tools_answer(tools: &[String]) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"result":{{"tools":[{}]}}}}"#,
            tools.join(",")
        )
    }

    fn tool(name: &str, schema: &str) -> String {
        format!(r#"{{"name":"{name}","inputSchema":{schema}}}"#)
    }

    fn depth(value: &serde_json::Value) -> u32 {
        match value {
            serde_json::Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
            serde_json::Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    #[test]
    fn the_marker_is_an_empty_schema_that_names_the_bound() {
        let marker: serde_json::Value = serde_json::from_str(CUT_MARKER).expect("json");
        assert_eq!(marker[CUT_MARKER_KEY], CUT_MARKER_VALUE);
        assert!(
            marker["description"]
                .as_str()
                .is_some_and(|d| d.contains(&format!("{MAX_TOOL_NESTING} levels")))
        );
        assert_eq!(depth(&marker), 1);
    }

    #[test]
    fn a_tool_list_is_handed_on_unchanged_within_the_bound() {
        // 31 objects: the innermost schema (a string) is 63 levels below its tool.
        let line = tools_answer(&[tool("a", &nested(31)), tool("b", r#"{"type":"object"}"#)]);
        let (out, end) = scan(&line);
        assert_eq!(out, line);
        assert_eq!(end.cuts, 0);
        assert_eq!(end.answer, Answer::Id(b"2".to_vec()));
        assert_eq!(end.bytes, line.len() + 1);
    }

    #[test]
    fn a_deep_schema_is_cut_to_a_marked_empty_schema_and_the_other_tools_kept() {
        for levels in [32, 40, 500] {
            let line = tools_answer(&[
                tool("a", r#"{"type":"object"}"#),
                tool("deep", &nested(levels)),
                tool(
                    "b",
                    r#"{"type":"object","properties":{"y":{"type":"number"}}}"#,
                ),
            ]);
            let (out, end) = scan(&line);
            let value: serde_json::Value = serde_json::from_str(&out).expect("parses");
            assert_eq!(end.cuts, 1, "{levels}");
            assert_eq!(end.bytes, out.len() + 1);
            assert!(end.deepest <= MAX_JSON_DEPTH);
            assert_eq!(depth(&value), end.deepest);
            let tools = value["result"]["tools"].as_array().expect("tools");
            let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
            assert_eq!(names, ["a", "deep", "b"]);
            assert_eq!(tools[2]["inputSchema"]["properties"]["y"]["type"], "number");
            // Walk down the kept part: every level is the original's, until the marker, which
            // sits where a schema belongs (a property's value), at the bound.
            let mut schema = &tools[1]["inputSchema"];
            let mut level = 1;
            while schema.get(CUT_MARKER_KEY).is_none() {
                assert_eq!(schema["type"], "object");
                schema = &schema["properties"]["x"];
                level += 2;
            }
            assert_eq!(schema[CUT_MARKER_KEY], CUT_MARKER_VALUE);
            assert!(
                level > MAX_TOOL_NESTING && level <= MAX_TOOL_NESTING + 2,
                "{level}"
            );
        }
    }

    #[test]
    fn any_shape_is_cut_below_the_hard_bound() {
        // Arrays in arrays, and maps of schemas in maps: no schema position to put the marker
        // in, so the hard bound cuts whatever is there.
        let arrays = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        let maps = format!("{}{{}}{}", r#"{"properties":"#.repeat(300), "}".repeat(300));
        for schema in [
            format!(r#"{{"type":"object","default":{arrays}}}"#),
            maps.clone(),
        ] {
            let line = tools_answer(&[tool("deep", &schema), tool("b", "{}")]);
            let (out, end) = scan(&line);
            let value: serde_json::Value = serde_json::from_str(&out).expect("parses");
            assert_eq!(end.cuts, 1);
            assert_eq!(depth(&value), end.deepest);
            assert_eq!(end.deepest, TOOL_DEPTH + HARD_NESTING + 1);
            assert_eq!(value["result"]["tools"][1]["name"], "b");
        }
    }

    #[test]
    fn strings_with_brackets_and_escapes_do_not_confuse_the_cut() {
        let tricky = r#"{"type":"string","description":"a \"} ] { [ \\"}"#;
        let mut schema = tricky.to_owned();
        for _ in 0..100 {
            schema = format!(r#"{{"type":"object","properties":{{"x\"}}":{schema}}}}}"#);
        }
        let line = tools_answer(&[tool("deep", &schema), tool("after", tricky)]);
        let (out, end) = scan(&line);
        let value: serde_json::Value = serde_json::from_str(&out).expect("parses");
        assert_eq!(end.cuts, 1);
        assert_eq!(
            value["result"]["tools"][1]["inputSchema"]["description"],
            "a \"} ] { [ \\"
        );
    }

    #[test]
    fn a_deep_result_is_not_cut() {
        // Only tool lists are cut; a call's result is the tool's answer, and a changed answer
        // would be a wrong one: the call fails instead.
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        for line in [
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[],"structuredContent":{{"a":{deep}}}}}}}"#
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"result":{{"other":[{{"x":{deep}}}],"tools":1}}}}"#
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"x","params":{{"tools":[{{"x":{deep}}}]}}}}"#
            ),
        ] {
            let (out, end) = scan(&line);
            assert_eq!(out, line);
            assert_eq!(end.cuts, 0);
            assert!(end.deepest > MAX_JSON_DEPTH);
        }
    }

    #[test]
    fn ids_are_read_before_or_after_the_payload_and_unreadable_ones_are_told_apart() {
        let cases = [
            (
                r#"{"result":{"id":9},"jsonrpc":"2.0","id":"a\"b"}"#,
                Answer::Id(br#""a\"b""#.to_vec()),
            ),
            (
                r#"{"jsonrpc":"2.0", "id" : 12 ,"error":{}}"#,
                Answer::Id(b"12".to_vec()),
            ),
            (
                r#"{"jsonrpc":"2.0","id":{"n":1},"result":{}}"#,
                Answer::Unreadable,
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
                Answer::Unreadable,
            ),
            (r#"{"jsonrpc":"2.0","result":{}}"#, Answer::Unreadable),
            (r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, Answer::No),
            (r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#, Answer::No),
        ];
        for (line, answer) in cases {
            assert_eq!(scan(line).1.answer, answer, "{line}");
        }
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","result":{{}}}}"#,
            "x".repeat(80)
        );
        assert_eq!(scan(&long).1.answer, Answer::Unreadable);
        let unfinished = r#"{"jsonrpc":"2.0","result":{},"id":12"#;
        assert_eq!(scan(unfinished).1.answer, Answer::Unreadable);
        let bom = "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}";
        assert_eq!(scan(bom).1.answer, Answer::Id(b"4".to_vec()));
    }
}
