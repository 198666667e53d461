//! What can be wrong with the shape of a file (a value of the wrong type, an unknown or missing
//! field, a key written twice), and how each is said to the person: in the file's own terms
//! (field names, "a list", "a map"), never in the parser's or serde's.

use std::fmt;
use std::path::Path;

use crate::error::ConfigIssue;
use crate::located::Position;

/// One step from the top of the file to a value: a field or a list item (0-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// Where a value sits, written the way the docs name fields: `servers[0].def.env`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FieldPath(pub Vec<Seg>);

impl FieldPath {
    pub(crate) fn child(&self, seg: Seg) -> Self {
        let mut segs = self.0.clone();
        segs.push(seg);
        Self(segs)
    }

    /// The last field name (`env` for `servers[0].def.env`), for fixes that show an example.
    fn last_key(&self) -> Option<&str> {
        self.0.iter().rev().find_map(|s| match s {
            Seg::Key(k) => Some(k.as_str()),
            Seg::Index(_) => None,
        })
    }
}

impl fmt::Display for FieldPath {
    /// `` `servers[0].def` ``, or "the file" for the top level.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("the file");
        }
        f.write_str("`")?;
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Key(k) if i == 0 => f.write_str(k)?,
                Seg::Key(k) => write!(f, ".{k}")?,
                Seg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        f.write_str("`")
    }
}

/// The kind of value a field takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expected {
    Map,
    List,
    Text,
    WholeNumber { min: i128, max: i128 },
    Number,
    Bool,
    Nothing,
    OneOf(&'static [&'static str]),
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Map => f.write_str("a map"),
            Self::List => f.write_str("a list"),
            Self::Text => f.write_str("text"),
            Self::WholeNumber { min, max } if *max > i128::from(u32::MAX) => {
                write!(f, "a whole number from {min}")
            }
            Self::WholeNumber { min, max } => write!(f, "a whole number from {min} to {max}"),
            Self::Number => f.write_str("a number"),
            Self::Bool => f.write_str("`true` or `false`"),
            Self::Nothing => f.write_str("no value"),
            Self::OneOf(values) => write!(f, "one of {}", ticked(values)),
        }
    }
}

fn ticked(values: &[&str]) -> String {
    let list: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
    list.join(", ")
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// `found` says what is there instead ("a list", "the text `x`", "nothing").
    WrongType {
        expected: Expected,
        found: String,
    },
    UnknownField {
        field: String,
        known: &'static [&'static str],
    },
    UnknownValue {
        value: String,
        known: &'static [&'static str],
    },
    MissingField {
        field: &'static str,
    },
    /// The same key twice in one map; the path names the key, the issue sits at the second.
    Duplicate {
        first_line: u64,
        second_line: u64,
    },
    /// A key that is a list or a map (`[a]: 1`).
    KeyNotText {
        found: String,
    },
    /// `<<:` given something other than a map or a list of maps.
    BadMerge {
        found: String,
    },
    /// Anything else a type's reader refused; said as it came.
    Other(String),
}

/// A problem of a file's shape, at a place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shape {
    /// The value the problem is about (for unknown and missing fields: the map holding them).
    pub path: FieldPath,
    pub position: Position,
    pub problem: Problem,
}

impl Shape {
    /// The problem as the person reads it; fixes that need the file format point at `docs`.
    pub(crate) fn to_issue(&self, file: &Path, docs: &str) -> ConfigIssue {
        let path = &self.path;
        let (message, fix) = match &self.problem {
            Problem::WrongType { expected, found } => (
                format!("{path}: expected {expected}, found {found}"),
                type_fix(*expected, path),
            ),
            Problem::UnknownField { field, known } => {
                let owner = match (path.0.last(), path.last_key()) {
                    (None, _) => "the top level".to_owned(),
                    (Some(Seg::Key(key)), _) => format!("`{key}`"),
                    (Some(Seg::Index(_)), Some(list)) => format!("an entry of `{list}`"),
                    (Some(Seg::Index(_)), None) => "an entry of this list".to_owned(),
                };
                let spelling = match closest(field, known) {
                    Some(near) => format!("did you mean `{near}`? Correct the spelling"),
                    None => "correct its spelling".to_owned(),
                };
                (
                    format!("unknown field `{field}` in {path}"),
                    format!(
                        "{spelling} or remove it; {owner} takes {} ({docs} lists every field)",
                        ticked(known)
                    ),
                )
            }
            Problem::UnknownValue { value, known } => (
                format!("{path}: `{value}` is not a known value"),
                format!("write one of {}", ticked(known)),
            ),
            Problem::MissingField { field } => (
                format!("missing field `{field}` in {path}"),
                format!("add `{field}: …` to it; {docs} shows a complete example"),
            ),
            Problem::Duplicate {
                first_line,
                second_line,
            } => (
                format!("{path} is defined twice (lines {first_line} and {second_line}); keep one"),
                "delete one of the two: a key holds one value, and YAML does not say which one wins"
                    .to_owned(),
            ),
            Problem::KeyNotText { found } => (
                format!("{path}: a field name must be a single word, found {found}"),
                "write each entry as `name: value`".to_owned(),
            ),
            Problem::BadMerge { found } => (
                format!("{path}: `<<` merges a map into this one, found {found}"),
                "write `<<: *name`, where `&name` marks a map (or a list of maps) earlier in the file"
                    .to_owned(),
            ),
            Problem::Other(message) => (
                format!("{path}: {message}"),
                format!("compare the value with {docs}"),
            ),
        };
        ConfigIssue {
            file: file.to_path_buf(),
            position: self.position,
            message,
            fix: Some(fix),
        }
    }
}

fn type_fix(expected: Expected, path: &FieldPath) -> String {
    let key = path.last_key().unwrap_or("the value");
    let entry = matches!(path.0.last(), Some(Seg::Index(_)));
    match expected {
        Expected::Map if entry => format!(
            "write the entry of `{key}` as fields: `- field: value`, its other fields indented below it"
        ),
        Expected::Map if path.0.is_empty() => {
            "write the file as fields, each `field: value` at the start of a line".to_owned()
        }
        Expected::Map => format!(
            "write the fields of `{key}` on the lines below it, indented, each as `field: value`"
        ),
        Expected::List => {
            format!(
                "write `{key}` as a list: `[a, b]`, or one `- item` line each below it, indented"
            )
        }
        Expected::Text if entry => {
            format!("write each item of `{key}` as one value, for example `- name`")
        }
        Expected::Text => format!("give `{key}` one value, for example `{key}: name`"),
        Expected::WholeNumber { .. } => {
            format!("give `{key}` a whole number without quotes, for example `{key}: 20000`")
        }
        Expected::Number => format!("give `{key}` a number, for example `{key}: 1.5`"),
        Expected::Bool => format!("write `{key}: true` or `{key}: false`"),
        Expected::Nothing => format!("remove the value of `{key}`"),
        Expected::OneOf(values) => format!("write one of {}", ticked(values)),
    }
}

/// The known name a typo most likely meant: same letters in another case, or at most two edits
/// away.
pub(crate) fn closest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    let length = lower.chars().count();
    known
        .iter()
        // Two edits change the length by at most two: a hostile file's long keys cost a count,
        // not an edit distance against every field.
        .filter(|k| k.chars().count().abs_diff(length) <= 2)
        .map(|k| (k, edit_distance(&lower, &k.to_ascii_lowercase())))
        .filter(|(_, d)| *d <= 2)
        .min_by_key(|(_, d)| *d)
        .map(|(k, _)| *k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_like_the_docs() {
        let path = FieldPath(vec![
            Seg::Key("servers".into()),
            Seg::Index(0),
            Seg::Key("def".into()),
        ]);
        assert_eq!(path.to_string(), "`servers[0].def`");
        assert_eq!(FieldPath::default().to_string(), "the file");
    }

    #[test]
    fn typos_find_the_field_meant() {
        let known = &["command", "args", "env", "cwd", "url", "headers"];
        assert_eq!(closest("comand", known), Some("command"));
        assert_eq!(closest("Headers", known), Some("headers"));
        assert_eq!(closest("transport", known), None);
    }
}
