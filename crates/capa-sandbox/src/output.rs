//! Fitting result and logs into `inline_result_bytes`: always a valid, shortened value, never
//! JSON cut mid-token.
//!
//! Everything is counted as the envelope serialises it (compact JSON, `serde_json`'s escaping):
//! the result's JSON, and the `logs` array with each line's quotes, escapes (`\u00XX` for control
//! characters) and separator. Their sum never exceeds the budget (the spec's "result and logs
//! returned inline, across every channel").
//!
//! Strategy: the result gets the budget first, logs at least a quarter of it when both are over.
//! A result is shortened in two steps: first every string is cut to the longest common length
//! that makes the whole value fit (binary search), keeping every array item and key; if even
//! short strings do not fit, the value is taken as a prefix — arrays and objects keep their first
//! members that fit, in order. Cut strings end in `…`.

use serde_json::{Map, Value};

use capa_domain::json_size::{Measure, escaped_width, json_str_len, prefix_within};

use crate::logs::{Logs, MIN_CUT_LINE_BYTES, cut_json_str, log_line_cost, logs_array_len};
use crate::{Limits, Truncated, Whole};

const ELLIPSIS: &str = "…";
/// Strings are never cut shorter than this many characters by the first step.
const MIN_STRING_CAP: usize = 16;

fn scalar_len(v: &Value) -> usize {
    match v {
        Value::Null | Value::Bool(true) => 4,
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
            // The longest prefix that fits with `…`.
            let kept = prefix_within(s, *budget - 2 - ELLIPSIS.len(), Measure::JsonEscaped);
            *budget -= escaped_width(kept) + 2 + ELLIPSIS.len();
            Some(Value::String(format!("{kept}{ELLIPSIS}")))
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

/// Result and logs as they fit inline, and what was shortened.
#[derive(Debug)]
pub(crate) struct Fitted {
    /// The console lines kept.
    pub(crate) lines: Vec<String>,
    pub(crate) truncated: Truncated,
    /// One line per thing shortened, for the model.
    pub(crate) notices: Vec<String>,
    /// What was shortened, whole, when asked to keep it.
    pub(crate) whole: Whole,
}

/// Fit result and logs into the inline budget. Afterwards the result's compact JSON and the
/// `logs` array together take at most `inline_result_bytes`. With `keep_whole`, what was
/// shortened is also returned as it was, and the notices point to `hub.read`.
pub(crate) fn fit(
    result: &mut Option<Value>,
    logs: Logs,
    limits: &Limits,
    keep_whole: bool,
) -> Fitted {
    let budget = limits.inline_result_bytes;
    let mut truncated = Truncated::default();
    let mut notices = Vec::new();
    let mut whole = Whole::default();
    let result_len = result.as_ref().map_or(0, |v| size_capped(v, usize::MAX));
    let logs_len = logs_array_len(logs.lines.len(), logs.cost);

    // Never more than `logs_len`: when both do not fit, logs get what the result leaves, but at
    // least a quarter of the budget.
    let logs_budget = if result_len + logs_len <= budget {
        logs_len
    } else if result_len <= budget - budget / 4 {
        budget - result_len
    } else {
        logs_len.min(budget / 4)
    };
    let result_budget = budget - logs_budget;

    if let Some(v) = result.as_mut()
        && result_len > result_budget
    {
        let short = shrink(v, result_budget);
        let short_len = size_capped(&short, usize::MAX);
        let then = if keep_whole {
            "The whole result is kept: in your next execute, read the value at a path with \
             hub.read(handle, { path: \"items[3].body\" }) or a piece of its JSON text with \
             hub.read(handle, { offset, length }) (the handle is in `handles`), or return \
             less: filter, slice or summarise in code."
        } else {
            "Return less: filter, slice or summarise in code."
        };
        notices.push(format!(
            "result was {}, over the inline limit of {}; showing the first {} of it: long \
             strings are cut (they end in …) and long arrays and objects keep their first \
             items. {then}",
            human_bytes(result_len),
            human_bytes(budget),
            human_bytes(short_len),
        ));
        let full = std::mem::replace(v, short);
        if keep_whole {
            whole.result = Some(full);
        }
        truncated.result = true;
    }

    let mut shortened = logs.shortened;
    if keep_whole && (shortened || logs_len > logs_budget) {
        whole.logs = Some(logs.lines.clone());
    }
    let mut lines = Vec::new();
    // The closing bracket; each line then adds its cost.
    let mut used = 1;
    for line in logs.lines {
        let cost = log_line_cost(&line);
        if used + cost <= logs_budget {
            used += cost;
            lines.push(line);
            continue;
        }
        shortened = true;
        let room = logs_budget.saturating_sub(used);
        if room > MIN_CUT_LINE_BYTES {
            let cut = cut_json_str(&line, room - 1);
            used += log_line_cost(&cut);
            lines.push(cut);
        }
        break;
    }
    if shortened {
        truncated.logs = true;
        let then = if keep_whole {
            "The lines are kept (up to 1 MB): read them with hub.read(handle) in your next \
             execute, or log less."
        } else {
            "Log less, or return what matters."
        };
        notices.push(format!(
            "logs were cut to fit the inline limit of {} (shared with the result); showing the \
             first {} ({} line{}). {then}",
            human_bytes(budget),
            human_bytes(logs_array_len(lines.len(), used - 1)),
            lines.len(),
            if lines.len() == 1 { "" } else { "s" },
        ));
    }
    Fitted {
        lines,
        truncated,
        notices,
        whole,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn len(v: &Value) -> usize {
        serde_json::to_string(v).map_or(usize::MAX, |s| s.len())
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

    fn logs_of(lines: &[String], cap: usize) -> Logs {
        let mut logs = Logs::with_cap(cap);
        for l in lines {
            logs.push(l.clone());
        }
        logs
    }

    /// What the envelope would serialise for result and logs.
    fn inline_len(result: Option<&Value>, lines: &[String]) -> usize {
        let logs = if lines.is_empty() {
            0
        } else {
            serde_json::to_string(lines).map_or(0, |s| s.len())
        };
        result.map_or(0, len) + logs
    }

    #[test]
    fn fit_keeps_result_and_logs_within_the_budget_as_serialised() {
        let limits = Limits::default();
        let budget = limits.inline_result_bytes;
        let controls = "\u{1}".repeat(24_000);
        let cases: Vec<(Option<Value>, Vec<String>)> = vec![
            (None, vec![String::new(); 20_000]),
            (None, vec![controls.clone()]),
            (
                Some(json!("r".repeat(30_000))),
                vec![controls.clone(), "x".into()],
            ),
            (
                Some(json!(["q\"".repeat(5_000)])),
                vec!["\n".repeat(9_000); 3],
            ),
            (Some(json!({"a": 1})), vec!["é\t".repeat(700); 40]),
        ];
        for (result, lines) in cases {
            let mut result = result;
            let logs = logs_of(&lines, budget);
            assert!(
                logs_array_len(logs.lines.len(), logs.cost) <= budget,
                "held logs over the cap"
            );
            let Fitted {
                lines: kept,
                truncated,
                notices,
                ..
            } = fit(&mut result, logs, &limits, false);
            let n = inline_len(result.as_ref(), &kept);
            assert!(n <= budget, "{n} > {budget}");
            assert!(truncated.logs, "{notices:?}");
            assert!(
                notices.iter().any(|n| n.starts_with("logs were")),
                "{notices:?}"
            );
        }
    }

    #[test]
    fn fit_leaves_a_small_output_alone() {
        let limits = Limits::default();
        let lines = vec!["hello".to_string(), String::new(), "tab\there".to_string()];
        let mut result = Some(json!({"ok": true}));
        let Fitted {
            lines: kept,
            truncated,
            notices,
            whole,
        } = fit(
            &mut result,
            logs_of(&lines, limits.inline_result_bytes),
            &limits,
            true,
        );
        assert_eq!(whole, Whole::default(), "nothing cut, nothing kept");
        assert_eq!(kept, lines);
        assert!(truncated.is_empty());
        assert!(notices.is_empty());
        assert_eq!(result, Some(json!({"ok": true})));
    }

    #[test]
    fn fit_keeps_what_it_cut_whole_when_asked() {
        let limits = Limits::default();
        let big = json!({"items": (0..3000).map(|i| format!("item {i}")).collect::<Vec<_>>()});
        let lines: Vec<String> = (0..5000).map(|i| format!("line {i}")).collect();
        let mut result = Some(big.clone());
        let fitted = fit(&mut result, logs_of(&lines, 1024 * 1024), &limits, true);
        assert!(fitted.truncated.result && fitted.truncated.logs);
        assert_eq!(fitted.whole.result, Some(big));
        assert_eq!(fitted.whole.logs, Some(lines));
        assert!(
            fitted.notices.iter().all(|n| n.contains("hub.read(handle")),
            "{:?}",
            fitted.notices
        );
        assert!(inline_len(result.as_ref(), &fitted.lines) <= limits.inline_result_bytes);
    }
}
