//! A YAML document as a tree of positioned values. Built once from the parser's events
//! (`build.rs`); everything after that (types, unknown fields, missing fields) is checked on the
//! tree, so that every problem of a file can be reported, not only the first.

use std::fmt;

use crate::located::Position;

/// One YAML value and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub position: Position,
    pub value: Value,
    /// Put in by the reader in place of a broken or missing value, so that the rest of the file
    /// can still be checked. Its problem was reported once; nothing about it is reported again.
    pub placeholder: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Scalar(Scalar),
    List(Vec<Node>),
    /// Entries in file order, each key a scalar. Duplicate keys were reported and dropped while
    /// building, so each key is here once.
    Map(Vec<(Key, Node)>),
}

/// A key of a map: its text and where it is written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Key {
    pub text: String,
    pub position: Position,
}

/// A scalar as written: its text after YAML's escapes, whether it was quoted, and the core tag
/// (`!!str`, `!!int`…) it carried, if any.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scalar {
    pub text: String,
    pub plain: bool,
    pub tag: Option<CoreTag>,
}

/// The YAML core schema tags that change how a scalar reads. Other tags are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CoreTag {
    Str,
    Null,
    Bool,
    Int,
    Float,
}

impl CoreTag {
    pub(crate) fn from_suffix(suffix: &str) -> Option<Self> {
        match suffix {
            "str" => Some(Self::Str),
            "null" => Some(Self::Null),
            "bool" => Some(Self::Bool),
            "int" => Some(Self::Int),
            "float" => Some(Self::Float),
            _ => None,
        }
    }
}

impl Node {
    pub(crate) fn placeholder(position: Position, value: Value) -> Self {
        Self {
            position,
            value,
            placeholder: true,
        }
    }

    pub(crate) fn null_placeholder(position: Position) -> Self {
        Self::placeholder(
            position,
            Value::Scalar(Scalar {
                text: String::new(),
                plain: true,
                tag: Some(CoreTag::Null),
            }),
        )
    }
}

impl Scalar {
    /// YAML's null: `~`, `null`, an empty value (unquoted), or `!!null`.
    pub(crate) fn is_null(&self) -> bool {
        match self.tag {
            Some(CoreTag::Null) => true,
            Some(_) => false,
            None => self.plain && matches!(self.text.as_str(), "" | "~" | "null" | "Null" | "NULL"),
        }
    }

    /// `true`/`false`, and the YAML 1.1 spellings (`yes`, `no`, `on`, `off`) in any case.
    pub(crate) fn as_bool(&self) -> Option<bool> {
        if matches!(self.tag, Some(CoreTag::Str | CoreTag::Null)) {
            return None;
        }
        let text = self.text.trim();
        let is = |words: &[&str]| words.iter().any(|w| text.eq_ignore_ascii_case(w));
        if is(&["true", "yes", "on", "y"]) {
            Some(true)
        } else if is(&["false", "no", "off", "n"]) {
            Some(false)
        } else {
            None
        }
    }

    /// A whole number: decimal (`20000`, `-5`, `1_000`), `0x` hex or `0o` octal.
    pub(crate) fn as_integer(&self) -> Option<i128> {
        if matches!(self.tag, Some(CoreTag::Str | CoreTag::Null)) {
            return None;
        }
        let text = self.text.trim().replace('_', "");
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(&text)),
        };
        let (radix, digits) = if let Some(hex) = digits.strip_prefix("0x") {
            (16, hex)
        } else if let Some(octal) = digits.strip_prefix("0o") {
            (8, octal)
        } else {
            (10, digits)
        };
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return None;
        }
        let magnitude = i128::from_str_radix(digits, radix).ok()?;
        Some(if negative { -magnitude } else { magnitude })
    }

    /// A number with a fraction or exponent (`1.5`, `1e3`), or a whole number.
    #[expect(
        clippy::cast_precision_loss,
        reason = "a whole number asked for as a float rounds to the nearest one, as a float literal would"
    )]
    pub(crate) fn as_float(&self) -> Option<f64> {
        if matches!(self.tag, Some(CoreTag::Str | CoreTag::Null)) {
            return None;
        }
        if let Some(n) = self.as_integer() {
            return Some(n as f64);
        }
        let text = self.text.trim();
        match text.to_ascii_lowercase().as_str() {
            ".inf" | "+.inf" => return Some(f64::INFINITY),
            "-.inf" => return Some(f64::NEG_INFINITY),
            ".nan" => return Some(f64::NAN),
            _ => {}
        }
        let numeric = text
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
        if numeric { text.parse().ok() } else { None }
    }
}

/// What a value is, for messages: "a map", "a list", "nothing", or the scalar itself.
pub(crate) struct Found<'a>(pub &'a Value);

impl fmt::Display for Found<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Value::Map(_) => f.write_str("a map"),
            Value::List(_) => f.write_str("a list"),
            Value::Scalar(s) if s.is_null() => f.write_str("nothing"),
            Value::Scalar(s) => {
                const SHOWN: usize = 40;
                let mut text: String = s.text.chars().take(SHOWN).collect();
                if s.text.chars().count() > SHOWN {
                    text.push('…');
                }
                let text = text.replace('\n', "\\n");
                match (s.as_integer(), s.as_bool(), s.plain) {
                    (Some(_), _, true) => write!(f, "the number `{text}`"),
                    (_, Some(_), true) => write!(f, "the boolean `{text}`"),
                    _ => write!(f, "the text `{text}`"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Scalar {
        Scalar {
            text: text.into(),
            plain: true,
            tag: None,
        }
    }

    #[test]
    fn scalars_read_as_yaml_core_values() {
        assert!(plain("~").is_null() && plain("").is_null() && plain("null").is_null());
        let quoted = Scalar {
            plain: false,
            ..plain("null")
        };
        assert!(!quoted.is_null());
        assert_eq!(plain("0x10").as_integer(), Some(16));
        assert_eq!(plain("-5").as_integer(), Some(-5));
        assert_eq!(plain("1_000").as_integer(), Some(1000));
        assert_eq!(plain("1.5").as_integer(), None);
        assert_eq!(plain("1.5").as_float(), Some(1.5));
        assert_eq!(plain("Yes").as_bool(), Some(true));
        assert_eq!(plain("maybe").as_bool(), None);
    }
}
