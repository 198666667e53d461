//! Direct tool results within the spec's `inlineResultBytes` (mcp-surface.md, "Default limits":
//! "result and logs returned inline, across every channel"). Code mode's `execute` fits its own
//! envelope in the sandbox; this is the same bound for the calls a client makes to a source's
//! tool directly: expose-all's `tools/call` and `call_tool` of search and on-demand.
//!
//! The whole result counts, as the compact JSON that goes out (`content`, `structuredContent`,
//! `_meta`, `isError`), so what the client receives is at most the budget. When it is over:
//!
//! - **`_meta`** keeps at most an eighth of the room, shortened like structured content.
//! - **`structuredContent`** and `content` share the rest (each at least half when both are
//!   large: clients read one or the other, and `content` usually holds the same JSON as text).
//!   Structured content is shortened ([`shorten`]): long strings are cut (ending in `…`) and, if
//!   that is not enough, long lists keep their first items; every member of every object stays
//!   while that fits. It stays valid JSON, never half a value, so a client that checks it
//!   against the tool's output schema still accepts it unless the schema bounds list lengths or
//!   string patterns.
//! - **`content`** keeps its blocks in order while they fit whole. Text (and an embedded text
//!   resource) that does not fit is cut at a character boundary and ends in `…`; an image, audio,
//!   an embedded blob or a resource link cannot be cut validly (base64 counts as sent) and is left
//!   out whole. Later blocks that still fit are kept.
//! - **A notice** ends `content`, a text block the model reads: what the result was, the limit,
//!   what was cut, and to ask for less. `isError` stays as the tool said.
//!
//! A named direct profile keeps the whole result first and its notice names the handle that
//! `read_result` reads (crate `read_result`); elsewhere the model asks the tool for less.

mod shorten;

use capa_domain::json_size::{Measure, json_len, prefix_within};
use rmcp::model::{CallToolResult, ContentBlock, MetaObject, ResourceContents, ResultType};
use serde_json::Value;

use shorten::shorten;

/// Room kept for the notice block. Its text names two sizes and at most four kinds of cuts
/// (`notice_fits_its_reserve` checks the longest one).
const NOTICE_RESERVE: usize = 512;
/// Room for a key of the result (`,"structuredContent":`) beside its value.
const KEY_RESERVE: usize = 24;
/// A cut text keeps at least this many bytes, or the block is left out: a dozen characters and
/// `…` tell the model less than the notice does.
const MIN_CUT_TEXT: usize = 64;
/// The smallest budget honoured; the sandbox has the same floor.
const MIN_BUDGET: usize = 1024;
const ELLIPSIS: &str = "…";

/// Whether `result` is within `budget` bytes of compact JSON as it is.
pub fn fits(result: &CallToolResult, budget: usize) -> bool {
    measured(result) <= budget.max(MIN_BUDGET)
}

/// `result` within `budget` bytes of compact JSON, unchanged when it fits.
pub fn fit(result: CallToolResult, budget: usize) -> CallToolResult {
    fit_noting(result, budget, None)
}

/// [`fit`], with `after` in place of the notice's advice to ask the tool for less (what became
/// of the whole result). `after` counts within the notice's reserve: keep it to a few lines.
pub fn fit_noting(
    mut result: CallToolResult,
    budget: usize,
    after: Option<&str>,
) -> CallToolResult {
    let budget = budget.max(MIN_BUDGET);
    let full = measured(&result);
    if full <= budget {
        return result;
    }
    let mut cuts = Cuts::default();
    let mut shell = CallToolResult::success(Vec::new());
    shell.is_error = result.is_error;
    // The front sets it on every result: count it even when it is not there yet.
    shell.result_type = Some(ResultType::COMPLETE);
    let after_len = after.map_or(0, |a| json_len(&Value::String(a.to_owned())));
    let mut room = budget.saturating_sub(json_len(&shell) + NOTICE_RESERVE + after_len);

    if let Some(meta) = result.meta.take() {
        let value = Value::Object(meta.0);
        let share = room / 8;
        let kept = if json_len(&value) + KEY_RESERVE <= share {
            value
        } else {
            cuts.meta = true;
            shorten(&value, share.saturating_sub(KEY_RESERVE))
        };
        room = room.saturating_sub(json_len(&kept) + KEY_RESERVE);
        if let Value::Object(map) = kept
            && !map.is_empty()
        {
            result.meta = Some(MetaObject(map));
        }
    }

    let content_len = json_len(&result.content);
    if let Some(structured) = result.structured_content.take() {
        let structured_len = json_len(&structured) + KEY_RESERVE;
        let half = room / 2;
        let share = if structured_len + content_len <= room || structured_len <= half {
            structured_len
        } else if content_len <= half {
            room - content_len
        } else {
            half
        };
        let kept = if structured_len <= share {
            structured
        } else {
            cuts.structured = true;
            shorten(&structured, share.saturating_sub(KEY_RESERVE))
        };
        room = room.saturating_sub(json_len(&kept) + KEY_RESERVE);
        result.structured_content = Some(kept);
    }

    let blocks = std::mem::take(&mut result.content);
    result.content = fit_blocks(blocks, room, &mut cuts);
    result
        .content
        .push(ContentBlock::text(cuts.notice(full, budget, after)));
    tracing::info!(
        bytes = full,
        limit = budget,
        "a direct call's result was over the inline limit and was cut"
    );
    result
}

/// `s` in at most `max` bytes of UTF-8, cut at a character boundary and ending in `…` when cut.
pub fn cut_str(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let kept = prefix_within(s, max.saturating_sub(ELLIPSIS.len()), Measure::Utf8);
    format!("{kept}{ELLIPSIS}")
}

/// What was cut, for the notice.
#[derive(Debug, Default)]
struct Cuts {
    text: bool,
    structured: bool,
    meta: bool,
    left_out: LeftOut,
}

#[derive(Debug, Default)]
struct LeftOut {
    texts: usize,
    images: usize,
    audio: usize,
    resources: usize,
    links: usize,
}

impl Cuts {
    fn notice(&self, full: usize, budget: usize, after: Option<&str>) -> String {
        let mut what = Vec::new();
        if self.text {
            what.push("the text is cut (it ends in …)".to_owned());
        }
        let out = &self.left_out;
        let counted = [
            (out.texts, "text block", "text blocks"),
            (out.images, "image", "images"),
            (out.audio, "audio clip", "audio clips"),
            (out.resources, "embedded resource", "embedded resources"),
            (out.links, "resource link", "resource links"),
        ];
        let left: Vec<String> = counted
            .iter()
            .filter(|(n, _, _)| *n > 0)
            .map(|(n, one, many)| format!("{n} {}", if *n == 1 { one } else { many }))
            .collect();
        if !left.is_empty() {
            what.push(format!("left out: {}", left.join(", ")));
        }
        if self.structured {
            what.push(
                "structuredContent is shortened (long lists keep their first items, long strings end in …)"
                    .to_owned(),
            );
        }
        if self.meta {
            what.push("_meta is shortened".to_owned());
        }
        format!(
            "[capabilities] Result cut to the inline limit of {} (it was {}): {}. {}",
            capa_sandbox::human_bytes(budget),
            capa_sandbox::human_bytes(full),
            what.join("; "),
            after.unwrap_or(
                "Ask the tool for less: a narrower query, a smaller range or fewer items."
            )
        )
    }
}

/// The blocks in order while they fit whole in `room` bytes of JSON (with the commas between
/// them); a text that does not is cut to the room left, anything else is left out.
fn fit_blocks(blocks: Vec<ContentBlock>, mut room: usize, cuts: &mut Cuts) -> Vec<ContentBlock> {
    // The notice follows the kept blocks: one more comma.
    room = room.saturating_sub(1);
    let mut kept = Vec::new();
    for block in blocks {
        let comma = usize::from(!kept.is_empty());
        let whole = json_len(&block) + comma;
        if whole <= room {
            room -= whole;
            kept.push(block);
            continue;
        }
        if let Some(cut) = cut_block(&block, room.saturating_sub(comma)) {
            room = room.saturating_sub(json_len(&cut) + comma);
            cuts.text = true;
            kept.push(cut);
        } else {
            let out = &mut cuts.left_out;
            match block {
                ContentBlock::Text(_) => out.texts += 1,
                ContentBlock::Image(_) => out.images += 1,
                ContentBlock::Audio(_) => out.audio += 1,
                ContentBlock::Resource(_) => out.resources += 1,
                _ => out.links += 1,
            }
        }
    }
    kept
}

/// A text block or embedded text resource cut to `room` bytes of JSON; `None` for other
/// blocks and when too little of the text would be left.
fn cut_block(block: &ContentBlock, room: usize) -> Option<ContentBlock> {
    let (text, emptied) = match block {
        ContentBlock::Text(t) => {
            let mut emptied = t.clone();
            emptied.text = String::new();
            (&t.text, ContentBlock::Text(emptied))
        }
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { text, .. } => {
                let mut emptied = r.clone();
                if let ResourceContents::TextResourceContents { text, .. } = &mut emptied.resource {
                    text.clear();
                }
                (text, ContentBlock::Resource(emptied))
            }
            _ => return None,
        },
        _ => return None,
    };
    let available = room.checked_sub(json_len(&emptied))?;
    if available < MIN_CUT_TEXT {
        return None;
    }
    let cut = prefix_within_escaped(text, available);
    let mut block = emptied;
    match &mut block {
        ContentBlock::Text(t) => t.text = cut,
        ContentBlock::Resource(r) => {
            if let ResourceContents::TextResourceContents { text, .. } = &mut r.resource {
                *text = cut;
            }
        }
        _ => {}
    }
    Some(block)
}

/// The longest prefix of `s` whose JSON string escaping, with `…` appended, takes at most
/// `room` bytes.
fn prefix_within_escaped(s: &str, room: usize) -> String {
    let kept = prefix_within(s, room.saturating_sub(ELLIPSIS.len()), Measure::JsonEscaped);
    format!("{kept}{ELLIPSIS}")
}

/// The result's size as it goes out: with `resultType`, which the front adds.
pub fn measured(result: &CallToolResult) -> usize {
    if result.result_type.is_some() {
        return json_len(result);
    }
    json_len(result) + json_len(&ResultType::COMPLETE) + r#","resultType":"#.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Resource;
    use serde_json::json;

    const BUDGET: usize = 24 * 1024;

    fn size(result: &CallToolResult) -> usize {
        let mut sent = result.clone();
        sent.result_type = Some(ResultType::COMPLETE);
        serde_json::to_vec(&sent).expect("json").len()
    }

    fn notice(result: &CallToolResult) -> String {
        result
            .content
            .last()
            .and_then(|b| b.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default()
    }

    #[test]
    fn a_result_within_the_budget_is_unchanged() {
        let result = CallToolResult::success(vec![ContentBlock::text("x".repeat(20_000))]);
        assert_eq!(fit(result.clone(), BUDGET), result);
    }

    #[test]
    fn a_long_text_is_cut_on_a_character_boundary_with_a_notice() {
        // Multi-byte characters and characters JSON escapes, so bytes, chars and JSON differ.
        let text = "é\"😀\n".repeat(200_000);
        let fitted = fit(
            CallToolResult::error(vec![ContentBlock::text(text.clone())]),
            BUDGET,
        );
        assert!(size(&fitted) <= BUDGET, "{}", size(&fitted));
        assert!(
            size(&fitted) > BUDGET - NOTICE_RESERVE - 100,
            "{}",
            size(&fitted)
        );
        assert_eq!(fitted.is_error, Some(true), "isError stays");
        assert_eq!(fitted.content.len(), 2);
        let cut = &fitted.content[0].as_text().expect("text").text;
        let kept = cut.strip_suffix('…').expect("ends in …");
        assert!(text.starts_with(kept));
        let said = notice(&fitted);
        assert!(said.contains("inline limit of 24 KB"), "{said}");
        assert!(said.contains("it was 1.9 MB"), "{said}");
        assert!(said.contains("the text is cut"), "{said}");
    }

    #[test]
    fn images_are_kept_whole_or_left_out_and_later_blocks_that_fit_stay() {
        let big = "A".repeat(40_000);
        let small = "B".repeat(1_000);
        let fitted = fit(
            CallToolResult::success(vec![
                ContentBlock::image(small.clone(), "image/png"),
                ContentBlock::image(big.clone(), "image/png"),
                ContentBlock::image(big, "image/png"),
                ContentBlock::text("after"),
            ]),
            BUDGET,
        );
        assert!(size(&fitted) <= BUDGET);
        let kinds: Vec<&str> = fitted
            .content
            .iter()
            .map(|b| match b {
                ContentBlock::Image(i) if i.data == small => "small image",
                ContentBlock::Image(_) => "big image",
                ContentBlock::Text(t) if t.text == "after" => "after",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["small image", "after", "other"]);
        assert!(
            notice(&fitted).contains("left out: 2 images"),
            "{}",
            notice(&fitted)
        );
    }

    #[test]
    fn an_embedded_text_resource_is_cut_and_a_blob_left_out() {
        let fitted = fit(
            CallToolResult::success(vec![
                ContentBlock::resource(ResourceContents::blob(
                    "Q".repeat(30_000),
                    "file:///big.bin",
                )),
                ContentBlock::resource(ResourceContents::text(
                    "t".repeat(30_000),
                    "file:///big.txt",
                )),
                ContentBlock::resource_link(Resource::new("file:///x", "x")),
            ]),
            BUDGET,
        );
        assert!(size(&fitted) <= BUDGET);
        assert!(matches!(
            &fitted.content[0],
            ContentBlock::Resource(r) if r.get_text().ends_with('…') && r.get_text().len() > 20_000
        ));
        let said = notice(&fitted);
        assert!(said.contains("1 embedded resource"), "{said}");
        assert!(said.contains("1 resource link"), "{said}");
    }

    #[test]
    fn structured_content_is_shortened_to_valid_json_beside_its_text() {
        let items: Vec<Value> = (0..5_000)
            .map(|i| json!({"id": i, "title": format!("item {i}"), "body": "x".repeat(200)}))
            .collect();
        let structured = json!({"items": items, "total": 5_000});
        let text = serde_json::to_string(&structured).expect("json");
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(structured);
        let fitted = fit(result, BUDGET);
        assert!(size(&fitted) <= BUDGET, "{}", size(&fitted));
        let kept = fitted.structured_content.as_ref().expect("kept");
        assert!(kept["items"].as_array().is_some_and(|a| !a.is_empty()));
        assert!(
            json_len(kept) > BUDGET / 4,
            "about half of the room: {}",
            json_len(kept)
        );
        let said = notice(&fitted);
        assert!(said.contains("structuredContent is shortened"), "{said}");
        assert!(said.contains("the text is cut"), "{said}");
    }

    #[test]
    fn a_large_meta_is_shortened_and_a_small_one_kept() {
        let mut result = CallToolResult::success(vec![ContentBlock::text("y".repeat(30_000))]);
        let mut meta = MetaObject::new();
        meta.0.insert("small".into(), json!("kept"));
        meta.0.insert("huge".into(), json!("z".repeat(100_000)));
        result.meta = Some(meta);
        let fitted = fit(result, BUDGET);
        assert!(size(&fitted) <= BUDGET);
        let meta = fitted.meta.as_ref().expect("meta");
        assert_eq!(meta.0.get("small"), Some(&json!("kept")));
        assert!(notice(&fitted).contains("_meta is shortened"));
    }

    #[test]
    fn notice_fits_its_reserve() {
        let cuts = Cuts {
            text: true,
            structured: true,
            meta: true,
            left_out: LeftOut {
                texts: 1000,
                images: 1000,
                audio: 1000,
                resources: 1000,
                links: 1000,
            },
        };
        let block = ContentBlock::text(cuts.notice(usize::MAX / 4, BUDGET, None));
        assert!(json_len(&block) < NOTICE_RESERVE, "{}", json_len(&block));
    }

    #[test]
    fn every_budget_from_the_floor_up_is_kept() {
        let text = "w".repeat(200_000);
        for budget in [0, 1024, 4096, 24 * 1024, 100_000] {
            let fitted = fit(
                CallToolResult::success(vec![ContentBlock::text(text.clone())]),
                budget,
            );
            assert!(
                size(&fitted) <= budget.max(MIN_BUDGET),
                "{budget}: {}",
                size(&fitted)
            );
        }
    }

    #[test]
    fn cut_str_keeps_whole_characters() {
        assert_eq!(cut_str("ééé", 5), "é…");
        assert_eq!(cut_str("abc", 3), "abc");
    }
}
