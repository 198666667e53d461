//! Problems that stop reading a file at once: YAML that cannot be parsed, nesting or aliases
//! past the reader's limits, a second document. One is reported, with its position, in our
//! words; the parser's own text is kept only where it already says what is wrong in YAML terms.

use std::path::Path;

use serde_saphyr::granit_parser::{ErrorKind, ScanError};

use crate::error::ConfigIssue;
use crate::located::Position;
use crate::yaml::limits::{MAX_DEPTH, MAX_TEXT_BYTES, MAX_VALUES};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fatal {
    /// The text is not YAML here.
    Syntax { position: Position, kind: ErrorKind },
    /// Lists and maps nest deeper than [`MAX_DEPTH`].
    TooDeep { position: Position },
    /// More than [`MAX_VALUES`] values or [`MAX_TEXT_BYTES`] of text, counting every copy an
    /// alias makes; `by_alias` when an alias crossed the line.
    TooMuch { position: Position, by_alias: bool },
    /// A second document after `---`.
    SecondDocument { position: Position },
    /// An alias inside the value its own anchor marks.
    SelfAlias { position: Position },
}

impl Fatal {
    pub(super) fn from_scan(error: &ScanError) -> Self {
        let marker = error.marker();
        let position = Position {
            line: marker.line() as u64,
            column: marker.col() as u64 + 1,
        };
        match error.kind() {
            ErrorKind::RecursionLimitExceeded => Self::TooDeep { position },
            kind => Self::Syntax {
                position,
                kind: kind.clone(),
            },
        }
    }

    pub(super) fn to_issue(&self, file: &Path) -> ConfigIssue {
        const SYNTAX_FIX: &str = "check the YAML near this position: indentation with spaces, a `: ` after each key, closed quotes and brackets";
        let (position, message, fix) = match self {
            Self::Syntax { position, kind } => {
                let (message, fix) = syntax_words(kind);
                (*position, message, fix.unwrap_or(SYNTAX_FIX).to_owned())
            }
            Self::TooDeep { position } => (
                *position,
                format!("the YAML here is nested deeper than {MAX_DEPTH} levels of lists and maps"),
                "a capabilities or policy file needs a few levels; remove the extra nesting".to_owned(),
            ),
            Self::TooMuch { position, by_alias } => (
                *position,
                if *by_alias {
                    format!(
                        "the YAML expands to too much here: with its anchors and aliases (`&name`, `*name`) it would hold more than {MAX_VALUES} values or {} MiB of text",
                        MAX_TEXT_BYTES >> 20
                    )
                } else {
                    format!(
                        "the file is too large: more than {MAX_VALUES} values or {} MiB of text",
                        MAX_TEXT_BYTES >> 20
                    )
                },
                "write each value out where it is needed, or split what the file holds; no configuration needs this much".to_owned(),
            ),
            Self::SecondDocument { position } => (
                *position,
                "a second YAML document starts here (after `---`); the file must hold one".to_owned(),
                "remove the `---` line and merge the two parts, or keep the second part in a file of its own".to_owned(),
            ),
            Self::SelfAlias { position } => (
                *position,
                "this alias (`*name`) is inside the value its anchor (`&name`) marks, so that value would contain itself".to_owned(),
                "use the alias only after the anchored value ends".to_owned(),
            ),
        };
        ConfigIssue {
            file: file.to_path_buf(),
            position,
            message,
            fix: Some(fix),
        }
    }
}

/// The parser's error in plain words, with a fix when the kind tells one. Kinds not named here
/// keep the parser's text, which describes the YAML (never an API).
fn syntax_words(kind: &ErrorKind) -> (String, Option<&'static str>) {
    let said = |message: &str, fix: &'static str| (message.to_owned(), Some(fix));
    match kind {
        ErrorKind::UnknownAnchor => said(
            "an alias (`*name`) refers to no anchor (`&name`) written before it",
            "define `&name` on a value above, or quote the text if `*` is meant literally (`'*'`)",
        ),
        ErrorKind::TabInBlockIndentation
        | ErrorKind::TabInIndentation
        | ErrorKind::TabNotAllowed => said(
            "a tab is used to indent",
            "indent with spaces; YAML does not allow tabs here",
        ),
        ErrorKind::UnclosedQuotedScalar => said(
            "a quoted value is not closed",
            "end the value with the same quote it starts with",
        ),
        ErrorKind::UnclosedFlowCollection { open } => (
            format!("`{open}` is not closed"),
            Some("add the closing bracket where the list or map ends"),
        ),
        ErrorKind::MismatchedFlowCollectionEnd { open, close } => (
            format!("`{open}` is closed by `{close}`"),
            Some("close `[` with `]` and `{` with `}`"),
        ),
        ErrorKind::MisplacedFlowCollectionEnd => said(
            "a closing bracket has no opening one",
            "remove it, or add the opening `[` or `{`",
        ),
        ErrorKind::UnexpectedEofFlowSequence
        | ErrorKind::UnexpectedEofFlowMapping
        | ErrorKind::UnexpectedEofImplicitFlowMapping => said(
            "the file ends inside a `[…]` or `{…}` that is not closed",
            "add the closing bracket",
        ),
        ErrorKind::UnexpectedEofBlockSequence
        | ErrorKind::UnexpectedEofBlockMapping
        | ErrorKind::UnexpectedEof => said(
            "the file ends in the middle of a value",
            "finish the last entry, or remove it",
        ),
        ErrorKind::SimpleKeyExpected | ErrorKind::InvalidSimpleKey => (
            "a key is not followed by `:` on the same line".to_owned(),
            None,
        ),
        ErrorKind::ExpectedBlockMappingKey => (
            "expected a `field: value` line here, indented like the lines around it".to_owned(),
            None,
        ),
        ErrorKind::ExpectedBlockSequenceEntry => (
            "expected a `- item` line here, indented like the items around it".to_owned(),
            None,
        ),
        ErrorKind::ExpectedStreamStart | ErrorKind::ExpectedDocumentStart => {
            ("the text cannot be read as YAML here".to_owned(), None)
        }
        ErrorKind::InputDecoding { .. } | ErrorKind::InputIo { .. } => {
            said("the file is not valid UTF-8 text", "save it as UTF-8")
        }
        other => (other.to_string(), None),
    }
}
