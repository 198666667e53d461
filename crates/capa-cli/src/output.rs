//! Printing for people: aligned columns, and JSON for scripts.

use serde::Serialize;

/// Prints `rows` under `headers` with columns padded to their widest cell.
pub(crate) fn table(headers: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len().saturating_sub(1);
        let text: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == last {
                    (*c).to_owned()
                } else {
                    format!("{c:<width$}", width = widths[i])
                }
            })
            .collect();
        println!("{}", text.join("  ").trim_end());
    };
    line(headers.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

/// Prints a value as pretty JSON. JSON already escapes control characters; bidi controls and
/// characters no person can see are escaped too (`\u202e`, tag characters as their surrogate
/// pair), so the same value reaches a program and nothing reaches a terminal raw.
pub(crate) fn json(value: &impl Serialize) -> anyhow::Result<()> {
    println!(
        "{}",
        terminal_safe_json(&serde_json::to_string_pretty(value)?)
    );
    Ok(())
}

/// `json` with every character a person cannot see written as a JSON `\u` escape. Outside
/// strings JSON is ASCII, so each such character is inside a string, where the escape means the
/// same character.
fn terminal_safe_json(json: &str) -> String {
    if !json.chars().any(hidden) {
        return json.to_owned();
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if hidden(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn hidden(c: char) -> bool {
    use capa_core::tool_text::CharKind;
    !matches!(
        capa_core::tool_text::CharKind::of(c),
        CharKind::Plain | CharKind::Layout
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_output_escapes_what_a_person_cannot_see_and_keeps_the_value() {
        let value = serde_json::json!({"d": "a\u{202e}b\u{e0041}\u{1b}[2J ok"});
        let shown = super::terminal_safe_json(&serde_json::to_string(&value).expect("json"));
        assert_eq!(shown, r#"{"d":"a\u202eb\udb40\udc41\u001b[2J ok"}"#);
        let back: serde_json::Value = serde_json::from_str(&shown).expect("still JSON");
        assert_eq!(back, value);
    }
}
