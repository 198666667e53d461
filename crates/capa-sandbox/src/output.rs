//! Fitting result and logs into `inline_result_bytes`: always a valid, shortened value, never
//! JSON cut mid-token.
//!
//! Strategy: the result gets the budget first, logs at least a quarter of it when both are over.
//! A result is shortened in two steps: first every string is cut to the longest common length
//! that makes the whole value fit (binary search), keeping every array item and key; if even
//! short strings do not fit, the value is taken as a prefix — arrays and objects keep their first
//! members that fit, in order. Cut strings end in `…`. Sizes are of compact JSON.

use serde_json::{Map, Value};

use crate::state::Logs;
use crate::{Limits, Truncated};

const ELLIPSIS: &str = "…";
/// Strings are never cut shorter than this many characters by the first step.
const MIN_STRING_CAP: usize = 16;

/// The first at most `max_bytes` bytes of `s`, at a character boundary, with `…` appended when
/// cut (the `…` counts against `max_bytes`).
pub(crate) fn cut_str(s: &str, max_bytes: usize) -> String {
    if s.len() <= max_bytes {
        return s.to_string();
    }
    let mut end = max_bytes.saturating_sub(ELLIPSIS.len());
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{ELLIPSIS}", &s[..end])
}

/// Length of `s` as a compact JSON string literal, quotes included (serde_json's escaping).
fn json_str_len(s: &str) -> usize {
    2 + s
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum::<usize>()
}

fn scalar_len(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => n.to_string().len(),
        Value::String(s) => json_str_len(s),
        Value::Array(_) | Value::Object(_) => 0,
    }
}

/// Compact JSON size of `v` with strings cut to `cap` characters (`…` added).
fn size_capped(v: &Value, cap: usize) -> usize {
    match v {
        Value::String(s) => match s.char_indices().nth(cap) {
            Some((i, _)) => json_str_len(&s[..i]) + ELLIPSIS.len(),
            None => json_str_len(s),
        },
        Value::Array(items) => {
            2 + items.iter().map(|i| size_capped(i, cap)).sum::<usize>()
                + items.len().saturating_sub(1)
        }
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| json_str_len(k) + 1 + size_capped(v, cap))
                .sum::<usize>()
                + map.len().saturating_sub(1)
        }
        other => scalar_len(other),
    }
}

fn cap_strings(v: &Value, cap: usize) -> Value {
    match v {
        Value::String(s) => match s.char_indices().nth(cap) {
            Some((i, _)) => Value::String(format!("{}{ELLIPSIS}", &s[..i])),
            None => v.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(|i| cap_strings(i, cap)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), cap_strings(v, cap)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn longest_string(v: &Value) -> usize {
    match v {
        Value::String(s) => s.chars().count(),
        Value::Array(items) => items.iter().map(longest_string).max().unwrap_or(0),
        Value::Object(map) => map.values().map(longest_string).max().unwrap_or(0),
        _ => 0,
    }
}

/// Greedy prefix of `v` within `*budget` bytes; subtracts what it takes.
fn take(v: &Value, budget: &mut usize) -> Option<Value> {
    match v {
        Value::String(s) => {
            let full = json_str_len(s);
            if full <= *budget {
                *budget -= full;
                return Some(v.clone());
            }
            if *budget < 2 + ELLIPSIS.len() + 1 {
                return None;
            }
            // Grow a prefix while it fits.
            let room = *budget - 2 - ELLIPSIS.len();
            let mut used = 0;
            let mut end = 0;
            for (i, c) in s.char_indices() {
                let w = json_str_len(&s[i..i + c.len_utf8()]) - 2;
                if used + w > room {
                    break;
                }
                used += w;
                end = i + c.len_utf8();
            }
            *budget -= used + 2 + ELLIPSIS.len();
            Some(Value::String(format!("{}{ELLIPSIS}", &s[..end])))
        }
        Value::Array(items) => {
            if *budget < 2 {
                return None;
            }
            *budget -= 2;
            let mut out = Vec::new();
            for item in items {
                let sep = usize::from(!out.is_empty());
                if *budget <= sep {
                    break;
                }
                let mut room = *budget - sep;
                match take(item, &mut room) {
                    Some(x) => {
                        out.push(x);
                        *budget = room;
                    }
                    None => break,
                }
            }
            Some(Value::Array(out))
        }
        Value::Object(map) => {
            if *budget < 2 {
                return None;
            }
            *budget -= 2;
            let mut out = Map::new();
            for (k, item) in map {
                let sep = usize::from(!out.is_empty());
                let key = json_str_len(k) + 1;
                if *budget <= sep + key {
                    break;
                }
                let mut room = *budget - sep - key;
                match take(item, &mut room) {
                    Some(x) => {
                        out.insert(k.clone(), x);
                        *budget = room;
                    }
                    None => break,
                }
            }
            Some(Value::Object(out))
        }
        other => {
            let n = scalar_len(other);
            if n <= *budget {
                *budget -= n;
                Some(other.clone())
            } else {
                None
            }
        }
    }
}

/// A valid value whose compact JSON is at most `budget` bytes (when `budget` ≥ 4), as close to
/// `v` as the strategy above gets.
pub fn shrink(v: &Value, budget: usize) -> Value {
    let longest = longest_string(v);
    if size_capped(v, longest) <= budget {
        return v.clone();
    }
    if longest > MIN_STRING_CAP && size_capped(v, MIN_STRING_CAP) <= budget {
        let (mut lo, mut hi) = (MIN_STRING_CAP, longest);
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if size_capped(v, mid) <= budget {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return cap_strings(v, lo);
    }
    let capped = cap_strings(v, (budget / 8).max(MIN_STRING_CAP));
    let mut room = budget;
    take(&capped, &mut room).unwrap_or(Value::Null)
}

/// "1.2 MB", "24 KB", "512 bytes".
pub fn human_bytes(n: usize) -> String {
    const KB: f64 = 1024.0;
    let f = n as f64;
    if f >= KB * KB {
        format!("{:.1} MB", f / (KB * KB))
    } else if n >= 10 * 1024 {
        format!("{:.0} KB", f / KB)
    } else if n >= 1024 {
        format!("{:.1} KB", f / KB)
    } else {
        format!("{n} bytes")
    }
}

/// Fit result and logs into the inline budget; returns what was shortened and the notices.
pub(crate) fn fit(
    result: &mut Option<Value>,
    logs: Logs,
    limits: &Limits,
) -> (Vec<String>, Truncated, Vec<String>) {
    let budget = limits.inline_result_bytes;
    let mut truncated = Truncated::default();
    let mut notices = Vec::new();
    let result_len = result.as_ref().map_or(0, |v| size_capped(v, usize::MAX));
    let logs_total = logs.bytes + logs.dropped_bytes;

    let logs_budget = if result_len + logs.bytes <= budget {
        logs.bytes
    } else if result_len <= budget - budget / 4 {
        budget - result_len
    } else {
        logs.bytes.min(budget / 4)
    };
    let result_budget = budget - logs_budget.min(logs.bytes);

    if let Some(v) = result.as_mut()
        && result_len > result_budget
    {
        let short = shrink(v, result_budget);
        let short_len = size_capped(&short, usize::MAX);
        notices.push(format!(
            "result was {}, over the inline limit of {}; showing the first {} of it: long \
                 strings are cut (they end in …) and long arrays and objects keep their first \
                 items. Return less: filter, slice or summarise in code.",
            human_bytes(result_len),
            human_bytes(budget),
            human_bytes(short_len),
        ));
        *v = short;
        truncated.result = true;
    }

    let mut lines = Vec::new();
    let mut used = 0;
    let total_lines = logs.lines.len() + logs.dropped_lines;
    for line in logs.lines {
        if used + line.len() <= logs_budget {
            used += line.len();
            lines.push(line);
        } else {
            if used < logs_budget && logs_budget - used > 64 {
                let cut = cut_str(&line, logs_budget - used);
                used += cut.len();
                lines.push(cut);
            }
            break;
        }
    }
    if lines.len() < total_lines || used < logs_total {
        truncated.logs = true;
        notices.push(format!(
            "logs were {} in {} lines; showing the first {} ({} lines).",
            human_bytes(logs_total),
            total_lines,
            human_bytes(used),
            lines.len(),
        ));
    }
    (lines, truncated, notices)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn len(v: &Value) -> usize {
        serde_json::to_string(v)
            .map(|s| s.len())
            .unwrap_or(usize::MAX)
    }

    #[test]
    fn sizes_match_serde_json() {
        let v = json!({"a": [1, 2.5, null, true, false, "x\"\\\n\u{1}é😀"], "b": {"c": ""}});
        assert_eq!(size_capped(&v, usize::MAX), len(&v));
    }

    #[test]
    fn shrink_fits_and_stays_valid() {
        let big: Vec<Value> = (0..5000)
            .map(|i| json!({"id": i, "title": format!("item {i} {}", "x".repeat(i % 300))}))
            .collect();
        for budget in [10, 100, 1000, 24 * 1024] {
            let v = shrink(&Value::Array(big.clone()), budget);
            assert!(len(&v) <= budget, "{budget}: {}", len(&v));
            assert!(v.is_array());
        }
        let s = Value::String("é".repeat(100_000));
        let v = shrink(&s, 1000);
        assert!(len(&v) <= 1000 && len(&v) > 900, "{}", len(&v));
    }

    #[test]
    fn cut_str_respects_char_boundaries() {
        assert_eq!(cut_str("ééé", 5), "é…");
        assert_eq!(cut_str("ééé", 4), "…");
        assert_eq!(cut_str("aaaa", 4), "aaaa");
        assert_eq!(cut_str("aaaaaa", 5), "aa…");
    }
}
