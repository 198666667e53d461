//! A change of a tool's definition as a person reads it at a terminal: per changed part, the
//! approved lines (`-`) and the new ones (`+`), with the lines they share shown once. Upstream
//! text is shown escaped ([`printable`]): it never reaches the terminal raw.

use capa_core::{ChangeState, DefinitionPart, PinnedDefinition, ToolChange};
use serde_json::Value;

use crate::terminal::printable;

/// Prints `change`: its address and state, the verdicts, then each changed part.
pub(super) fn print(change: &ToolChange) {
    let state = match change.state {
        ChangeState::Changed => {
            let parts: Vec<&str> = change.parts.iter().map(|p| p.words()).collect();
            format!("changed: {}", parts.join(", "))
        }
        ChangeState::New => "new since the source was first listed".to_owned(),
        ChangeState::Blocked => "blocked by you".to_owned(),
    };
    println!("{}  [{state}]", printable(&change.address));
    match change.state {
        ChangeState::Changed => println!(
            "  You approved it when the policy said {}; the new definition alone says {}. Until you accept or block it, every call asks you.",
            change.approved_decision, change.now_decision
        ),
        ChangeState::New => println!(
            "  The policy says {}. Accept to clear the mark, block to refuse it.",
            change.now_decision
        ),
        ChangeState::Blocked => println!("  Every call is refused until you accept it."),
    }
    let parts: Vec<DefinitionPart> = if change.state == ChangeState::New {
        vec![DefinitionPart::Description, DefinitionPart::Annotations]
    } else {
        change.parts.clone()
    };
    for part in parts {
        println!("  {}:", part.words());
        let (before, after) = (lines(&change.approved, part), lines(&change.now, part));
        if change.state == ChangeState::New {
            for line in &after {
                println!("      {}", printable(line));
            }
            continue;
        }
        for (sign, line) in line_diff(&before, &after) {
            println!("    {sign} {}", printable(line));
        }
    }
    println!();
}

/// One part of a definition as lines: text as written, JSON pretty-printed.
fn lines(definition: &PinnedDefinition, part: DefinitionPart) -> Vec<String> {
    let text = match part {
        DefinitionPart::Title => definition.title.clone(),
        DefinitionPart::Description => definition.description.clone(),
        DefinitionPart::InputSchema => Some(pretty(Some(&definition.input_schema))),
        DefinitionPart::OutputSchema => definition.output_schema.as_ref().map(|v| pretty(Some(v))),
        DefinitionPart::Annotations => definition.annotations.as_ref().map(|v| pretty(Some(v))),
        DefinitionPart::Other => Some(pretty(Some(&Value::Object(definition.other.clone())))),
    };
    match text {
        Some(text) => text.lines().map(str::to_owned).collect(),
        None => vec!["(none)".to_owned()],
    }
}

fn pretty(value: Option<&Value>) -> String {
    value
        .and_then(|v| serde_json::to_string_pretty(v).ok())
        .unwrap_or_default()
}

/// The lines of `before` and `after` as an edit: `' '` shared, `'-'` only before, `'+'` only
/// after (longest common subsequence; definitions are small).
pub(crate) fn line_diff<'a>(before: &'a [String], after: &'a [String]) -> Vec<(char, &'a str)> {
    let (n, m) = (before.len(), after.len());
    let mut common = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            common[i][j] = if before[i] == after[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(n + m);
    while i < n || j < m {
        if i < n && j < m && before[i] == after[j] {
            out.push((' ', before[i].as_str()));
            i += 1;
            j += 1;
        } else if i < n && (j == m || common[i + 1][j] >= common[i][j + 1]) {
            out.push(('-', before[i].as_str()));
            i += 1;
        } else {
            out.push(('+', after[j].as_str()));
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_keeps_shared_lines_once_and_marks_the_rest() {
        let lines = |s: &[&str]| s.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
        let before = lines(&["{", "  \"a\": 1", "}"]);
        let after = lines(&["{", "  \"b\": 2", "}"]);
        assert_eq!(
            line_diff(&before, &after),
            vec![
                (' ', "{"),
                ('-', "  \"a\": 1"),
                ('+', "  \"b\": 2"),
                (' ', "}")
            ]
        );
    }
}
