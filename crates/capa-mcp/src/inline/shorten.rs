//! Shortening a JSON value (structured content, `_meta`) to a byte budget while keeping what an
//! output schema is most likely to require: every member of every object. First long strings
//! are cut (ending in `…`, never below 256 characters); if that is not enough, lists keep their
//! first items and strings get back what room is left. Only when even empty lists do not fit
//! does the value become a prefix of itself (the sandbox's [`capa_sandbox::shrink`]), which may
//! leave members out.

use serde_json::Value;

use capa_domain::json_size::{escaped_width, json_len};

use super::ELLIPSIS;

/// Strings keep at least this many characters while lists give (then they are cut further).
const STRING_FLOOR: usize = 256;

/// `v` within `budget` bytes of compact JSON, as above.
pub(super) fn shorten(v: &Value, budget: usize) -> Value {
    let longest_string = longest(v, Longest::String);
    let longest_list = longest(v, Longest::List);
    if size(v, usize::MAX, usize::MAX) <= budget {
        return v.clone();
    }
    // Every item kept, strings cut as little as fits.
    if size(v, STRING_FLOOR, usize::MAX) <= budget {
        let chars = largest(STRING_FLOOR, longest_string, |c| {
            size(v, c, usize::MAX) <= budget
        });
        return capped(v, chars, usize::MAX);
    }
    // Lists keep their first items; strings then get back what room is left.
    if size(v, STRING_FLOOR, 0) <= budget {
        let items = largest(0, longest_list, |k| size(v, STRING_FLOOR, k) <= budget);
        let chars = largest(STRING_FLOOR, longest_string.max(STRING_FLOOR), |c| {
            size(v, c, items) <= budget
        });
        return capped(v, chars, items);
    }
    capa_sandbox::shrink(v, budget)
}

/// The largest `n` in `low..=high` for which `fits(n)` holds, given that `fits(low)` does and
/// that `fits` only turns false as `n` grows.
fn largest(low: usize, high: usize, fits: impl Fn(usize) -> bool) -> usize {
    let (mut low, mut high) = (low, high.max(low));
    if fits(high) {
        return high;
    }
    while low + 1 < high {
        let mid = low + (high - low) / 2;
        if fits(mid) {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}

#[derive(Clone, Copy)]
enum Longest {
    String,
    List,
}

fn longest(v: &Value, what: Longest) -> usize {
    match (v, what) {
        (Value::String(s), Longest::String) => s.chars().count(),
        (Value::Array(items), _) => {
            let own = match what {
                Longest::List => items.len(),
                Longest::String => 0,
            };
            items
                .iter()
                .map(|i| longest(i, what))
                .max()
                .unwrap_or(0)
                .max(own)
        }
        (Value::Object(map), _) => map.values().map(|i| longest(i, what)).max().unwrap_or(0),
        _ => 0,
    }
}

/// Compact JSON size of `v` with strings cut to `chars` characters and lists to `items` items.
fn size(v: &Value, chars: usize, items: usize) -> usize {
    match v {
        Value::String(s) => match s.char_indices().nth(chars) {
            Some((end, _)) => 2 + escaped_width(&s[..end]) + ELLIPSIS.len(),
            None => 2 + escaped_width(s),
        },
        Value::Array(list) => {
            let kept = list.len().min(items);
            2 + list[..kept]
                .iter()
                .map(|i| size(i, chars, items))
                .sum::<usize>()
                + kept.saturating_sub(1)
        }
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, i)| 2 + escaped_width(k) + 1 + size(i, chars, items))
                .sum::<usize>()
                + map.len().saturating_sub(1)
        }
        other => json_len(other),
    }
}

fn capped(v: &Value, chars: usize, items: usize) -> Value {
    match v {
        Value::String(s) => match s.char_indices().nth(chars) {
            Some((end, _)) => Value::String(format!("{}{ELLIPSIS}", &s[..end])),
            None => v.clone(),
        },
        Value::Array(list) => Value::Array(
            list.iter()
                .take(items)
                .map(|i| capped(i, chars, items))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, i)| (k.clone(), capped(i, chars, items)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sizes_match_serde_json() {
        let v = json!({"a": [1, 2.5, null, true, "x\"\\\n\u{1}é😀"], "b": {"c": ""}});
        assert_eq!(size(&v, usize::MAX, usize::MAX), json_len(&v));
        let cut = capped(&v, 2, 1);
        assert_eq!(size(&v, 2, 1), json_len(&cut));
    }

    #[test]
    fn lists_give_first_and_every_member_stays() {
        let items: Vec<Value> = (0..5_000)
            .map(|i| json!({"id": i, "title": format!("item {i} {}", "x".repeat(100))}))
            .collect();
        let v = json!({"items": items, "total": 5_000, "next": "page-2"});
        let short = shorten(&v, 12_000);
        assert!(json_len(&short) <= 12_000, "{}", json_len(&short));
        assert!(
            json_len(&short) > 11_000,
            "uses the room: {}",
            json_len(&short)
        );
        assert_eq!(short["total"], 5_000);
        assert_eq!(short["next"], "page-2");
        let kept = short["items"].as_array().expect("list");
        assert!(kept.len() > 50, "{}", kept.len());
        assert_eq!(kept[0], v["items"][0], "whole items, titles uncut");
    }

    #[test]
    fn one_huge_string_is_cut_and_the_rest_kept() {
        let v = json!({"name": "a", "body": "é".repeat(100_000), "tags": ["x", "y"]});
        let short = shorten(&v, 10_000);
        assert!(json_len(&short) <= 10_000 && json_len(&short) > 9_000);
        assert_eq!(short["tags"], json!(["x", "y"]));
        assert!(short["body"].as_str().is_some_and(|b| b.ends_with('…')));
    }

    #[test]
    fn too_many_members_fall_back_to_a_prefix() {
        let map: serde_json::Map<String, Value> = (0..10_000)
            .map(|i| (format!("key{i:05}"), json!(i)))
            .collect();
        let short = shorten(&Value::Object(map), 2_000);
        assert!(json_len(&short) <= 2_000);
        assert!(short.as_object().is_some_and(|m| !m.is_empty()));
    }
}
