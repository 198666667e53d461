//! The `path` of `hub.read(handle, { path })`: JavaScript's own accessor syntax, so the model
//! writes what it would write in code — `items[3].body`, `[0]`, `data["content-type"]`,
//! `.items` — and the value there is answered.

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    Key(String),
    Index(usize),
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Key(k) if is_identifier(k) => write!(f, ".{k}"),
            Self::Key(k) => write!(f, "[{}]", Value::String(k.clone())),
            Self::Index(i) => write!(f, "[{i}]"),
        }
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// The longest path accepted, in characters: deeper values are reached in two reads.
const MAX_PATH_CHARS: usize = 1024;

/// Parses `path`, or says in one sentence what is wrong with it.
pub(crate) fn parse(path: &str) -> Result<Vec<Step>, String> {
    if path.chars().count() > MAX_PATH_CHARS {
        return Err(format!(
            "the path is longer than {MAX_PATH_CHARS} characters"
        ));
    }
    let chars: Vec<char> = path.trim().chars().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => {
                let start = i + 1;
                let end = identifier_end(&chars, start);
                if end == start {
                    return Err(format!("expected a key after `.` at character {start}"));
                }
                steps.push(Step::Key(chars[start..end].iter().collect()));
                i = end;
            }
            '[' => {
                let (step, next) = bracket(&chars, i)?;
                steps.push(step);
                i = next;
            }
            _ if i == 0 => {
                let end = identifier_end(&chars, 0);
                if end == 0 {
                    return Err(format!(
                        "a path starts with a key, `.key` or `[index]`, not `{}`",
                        chars[0]
                    ));
                }
                steps.push(Step::Key(chars[..end].iter().collect()));
                i = end;
            }
            c => {
                return Err(format!(
                    "unexpected `{c}` at character {i}; write .key, [index] or [\"key\"]"
                ));
            }
        }
    }
    Ok(steps)
}

fn identifier_end(chars: &[char], start: usize) -> usize {
    let mut end = start;
    while end < chars.len()
        && (chars[end].is_alphanumeric() || matches!(chars[end], '_' | '$' | '-'))
    {
        end += 1;
    }
    end
}

/// `[3]`, `["key"]` or `['key']` starting at `open`; the step and the index after `]`.
fn bracket(chars: &[char], open: usize) -> Result<(Step, usize), String> {
    let mut i = open + 1;
    match chars.get(i) {
        Some(&quote) if quote == '"' || quote == '\'' => {
            let mut key = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(format!("unclosed string in the path at character {open}")),
                    Some('\\') => {
                        let (c, next) = escape(chars, i + 1)?;
                        key.push(c);
                        i = next;
                    }
                    Some(&c) if c == quote => break,
                    Some(&c) => {
                        key.push(c);
                        i += 1;
                    }
                }
            }
            if chars.get(i + 1) != Some(&']') {
                return Err(format!("expected `]` after the key at character {}", i + 1));
            }
            Ok((Step::Key(key), i + 2))
        }
        _ => {
            let start = i;
            while chars.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
            if i == start || chars.get(i) != Some(&']') {
                return Err(format!(
                    "expected an index like [3] or a quoted key like [\"name\"] at character {open}"
                ));
            }
            let digits: String = chars[start..i].iter().collect();
            let index = digits
                .parse::<usize>()
                .map_err(|_| format!("the index {digits} is too large"))?;
            Ok((Step::Index(index), i + 1))
        }
    }
}

/// The character a JavaScript string escape stands for, its backslash just before `at`
/// (`\n`, `\t`, `\u00e9`, …; any other character stands for itself, as in JavaScript), and
/// the index after the escape.
fn escape(chars: &[char], at: usize) -> Result<(char, usize), String> {
    let Some(&c) = chars.get(at) else {
        return Err("the path ends inside a string".to_owned());
    };
    let simple = match c {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'v' => '\u{b}',
        '0' => '\0',
        'u' => {
            let hex: String = chars.iter().skip(at + 1).take(4).collect();
            let code = (hex.len() == 4 && hex.chars().all(|c| c.is_ascii_hexdigit()))
                .then(|| u32::from_str_radix(&hex, 16).ok())
                .flatten()
                .and_then(char::from_u32)
                .ok_or_else(|| {
                    format!("`\\u` at character {at} needs four hex digits of a character")
                })?;
            return Ok((code, at + 5));
        }
        other => other,
    };
    Ok((simple, at + 1))
}

/// The value at `steps` in `value`, or where the path stops and what is there instead.
pub(crate) fn select<'v>(value: &'v Value, steps: &[Step]) -> Result<&'v Value, String> {
    let mut here = value;
    for (n, step) in steps.iter().enumerate() {
        // Where the walk is, named only when it stops (each step would otherwise build it).
        let at = || {
            let walked: String = steps[..n].iter().map(ToString::to_string).collect();
            if walked.is_empty() {
                "the top".to_owned()
            } else {
                format!("`{walked}`")
            }
        };
        let no_key = |k: &str, map: &serde_json::Map<String, Value>| {
            let keys: Vec<&str> = map.keys().take(12).map(String::as_str).collect();
            let more = if map.len() > keys.len() { ", …" } else { "" };
            format!(
                "no key `{k}` at {}; its keys: {}{more}",
                at(),
                keys.join(", ")
            )
        };
        here = match (step, here) {
            (Step::Key(k), Value::Object(map)) => map.get(k).ok_or_else(|| no_key(k, map))?,
            // As in JavaScript, `[3]` on an object is its key "3".
            (Step::Index(i), Value::Object(map)) => {
                let k = i.to_string();
                map.get(&k).ok_or_else(|| no_key(&k, map))?
            }
            (Step::Index(i), Value::Array(items)) => items.get(*i).ok_or_else(|| {
                format!(
                    "index {i} is past the end of {}, which has {} items",
                    at(),
                    items.len()
                )
            })?,
            (Step::Key(k), Value::Array(items)) => {
                return Err(format!(
                    "{} is an array of {} items, not an object: write [index] instead of .{k}",
                    at(),
                    items.len()
                ));
            }
            (_, other) => {
                return Err(format!(
                    "{} is {}, which has no {step}",
                    at(),
                    capa_store::JsonType::of(other).as_str()
                ));
            }
        };
    }
    Ok(here)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn javascript_accessors_parse() {
        assert_eq!(
            parse("items[3].body").expect("parses"),
            vec![
                Step::Key("items".into()),
                Step::Index(3),
                Step::Key("body".into())
            ]
        );
        assert_eq!(
            parse(r#".a["content-type"]['it\'s'][0]"#).expect("parses"),
            vec![
                Step::Key("a".into()),
                Step::Key("content-type".into()),
                Step::Key("it's".into()),
                Step::Index(0)
            ]
        );
        assert_eq!(parse("").expect("empty"), vec![]);
        // JavaScript's escapes inside a quoted key.
        assert_eq!(
            parse(r#"["a\nb\u00e9\\\"x"]"#).expect("parses"),
            vec![Step::Key("a\nbé\\\"x".into())]
        );
        assert!(parse(r#"["\u12"]"#).is_err());
        for bad in [
            "[",
            "[x]",
            "a..b",
            "a[1",
            "a[\"x]",
            "#",
            "a b",
            &"a.".repeat(600),
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse(&format!("[{}]", "9".repeat(40))).is_err());
    }

    #[test]
    fn select_walks_and_says_where_it_stopped() {
        let v = json!({"items": [{"body": "hi"}], "n": 1});
        let steps = parse("items[0].body").expect("parses");
        assert_eq!(select(&v, &steps), Ok(&json!("hi")));
        let err = select(&v, &parse("items[5]").expect("parses")).expect_err("past the end");
        assert!(err.contains("has 1 items"), "{err}");
        let err = select(&v, &parse("nope").expect("parses")).expect_err("no key");
        assert!(err.contains("its keys: items, n"), "{err}");
        let err = select(&v, &parse("items.body").expect("parses")).expect_err("array");
        assert!(err.contains("write [index]"), "{err}");
        let keyed = json!({"3": "three"});
        assert_eq!(
            select(&keyed, &parse("[3]").expect("parses")),
            Ok(&json!("three"))
        );
        let err = select(&v, &parse("n.x").expect("parses")).expect_err("number");
        assert!(err.contains("`.n` is number"), "{err}");
    }
}
