//! Tool text a person can trust (docs/tool-text.md): what an upstream writes in its tool
//! definitions reaches a model as instructions and a person's screen as characters, so
//!
//! - [`visible`] / [`visible_line`] write control, bidi, invisible and tag characters as
//!   `\u{…}` wherever a person is shown upstream text (the CLI, and the UI's same rule in
//!   TypeScript), so no upstream escape sequence acts on a terminal;
//! - [`for_model`] removes the Unicode tag characters (a message no person can see) from the
//!   prose a model reads, and says so in the description;
//! - [`inspect`] names each rule a tool's text breaks ([`TextRule`]), for the warning a person
//!   sees beside the tool, with Block or Accept.
//!
//! Pure functions over a [`ToolDefinition`]: no I/O, no regex engine.

mod chars;
mod fields;
mod phrases;

use serde::{Deserialize, Serialize};

pub use chars::{CharKind, visible, visible_line};
use chars::{as_model_reads, kind, tag_message, without_tags};
use fields::{edit_prose, fields};

use crate::tool::ToolDefinition;

/// A quoted phrase in a warning is cut to this many characters.
const MAX_QUOTE_CHARS: usize = 80;

/// Why a tool's text is flagged. The codes are stable: programs and the UI match on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TextRule {
    /// Characters a person cannot see but a model reads: Unicode tag characters, zero-width
    /// and other invisible characters, bidi controls that show text in another order.
    HiddenCharacters,
    /// Terminal control characters (`ESC[2J`, colours, OSC 52 clipboard writes, `CR`).
    ControlCharacters,
    /// Speaks to the model as an attack does: "ignore previous instructions", "do not tell the
    /// user", pseudo-system markup (`<IMPORTANT>`).
    AddressesTheModel,
    /// Sends the model to another source's tool by address (`files.write_file`).
    NamesOtherTools,
    /// Names a credential file (`~/.ssh`, `id_rsa`, `.aws/credentials`, `.env`).
    CredentialPath,
}

impl TextRule {
    /// The stable code (`hidden_characters`).
    pub fn code(self) -> &'static str {
        match self {
            Self::HiddenCharacters => "hidden_characters",
            Self::ControlCharacters => "control_characters",
            Self::AddressesTheModel => "addresses_the_model",
            Self::NamesOtherTools => "names_other_tools",
            Self::CredentialPath => "credential_path",
        }
    }
}

/// One rule a tool's text breaks, with what a person should read about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextFlag {
    pub rule: TextRule,
    /// One sentence: where and what (`description: 41 Unicode tag characters, hidden text
    /// "ignore…"`); every quote already [`visible_line`].
    pub message: String,
}

/// A flagged tool as a listing shows it: its flags, the digest of the text they were raised on
/// (what an Accept names), and whether a person accepted that text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextReview {
    pub flags: Vec<TextFlag>,
    /// SHA-256 (hex) of the tool's text as the source sent it, redacted.
    pub digest: String,
    /// A person accepted this exact text: shown, no longer warned about.
    pub accepted: bool,
}

impl TextReview {
    /// The rule codes, comma-separated (`hidden_characters, addresses_the_model`).
    pub fn codes(&self) -> String {
        self.flags
            .iter()
            .map(|f| f.rule.code())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What the rules need to know beyond the definition.
#[derive(Clone, Copy)]
pub struct TextContext<'a> {
    /// The tool's own source: its sibling tools are its business.
    pub namespace: &'a str,
    /// Whether an address is a tool of another source the hub serves.
    pub is_other_tool: &'a dyn Fn(&str) -> bool,
}

impl std::fmt::Debug for TextContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextContext")
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

/// Every rule `definition`'s text breaks, each once (at its first place), in [`TextRule`]'s
/// order. Read from the definition as the source sent it (tag characters not yet removed).
pub fn inspect(definition: &ToolDefinition, context: &TextContext<'_>) -> Vec<TextFlag> {
    let mut flags: Vec<TextFlag> = Vec::new();
    let mut add = |rule: TextRule, message: String| {
        if !flags.iter().any(|f| f.rule == rule) {
            flags.push(TextFlag { rule, message });
        }
    };
    for field in fields(definition) {
        if let Some(message) = hidden_characters(field.text) {
            add(
                TextRule::HiddenCharacters,
                format!("{}: {message}", field.label),
            );
        }
        let controls: Vec<char> = field
            .text
            .chars()
            .filter(|c| kind(*c) == CharKind::Control)
            .collect();
        if let Some(first) = controls.first() {
            add(
                TextRule::ControlCharacters,
                format!(
                    "{}: {} terminal control character{} (first {})",
                    field.label,
                    controls.len(),
                    plural(controls.len()),
                    first.escape_default()
                ),
            );
        }
        if !field.prose {
            continue;
        }
        let read = as_model_reads(field.text);
        if let Some(phrase) = phrases::addresses_the_model(&read) {
            add(
                TextRule::AddressesTheModel,
                format!(
                    "{}: speaks to the model: \"{}\"",
                    field.label,
                    quote(&phrase)
                ),
            );
        }
        if let Some(address) =
            phrases::names_other_tools(&read, context.namespace, context.is_other_tool)
        {
            add(
                TextRule::NamesOtherTools,
                format!(
                    "{}: sends the model to another source's tool `{}`",
                    field.label,
                    quote(&address)
                ),
            );
        }
        if let Some(path) = phrases::credential_path(&read) {
            add(
                TextRule::CredentialPath,
                format!(
                    "{}: names a credential file `{}`",
                    field.label,
                    quote(&path)
                ),
            );
        }
    }
    flags.sort_by_key(|f| f.rule);
    flags
}

/// What hidden characters `text` holds, as a clause for a person; `None` without any.
fn hidden_characters(text: &str) -> Option<String> {
    let count = |wanted: CharKind| text.chars().filter(|c| kind(*c) == wanted).count();
    let (tags, invisible, bidi) = (
        count(CharKind::Tag),
        count(CharKind::Invisible),
        count(CharKind::Bidi),
    );
    let mut parts = Vec::new();
    if tags > 0 {
        let spelled = tag_message(text);
        let reads = if spelled.trim().is_empty() {
            String::new()
        } else {
            format!(" that a model reads as \"{}\"", quote(&spelled))
        };
        parts.push(format!(
            "{tags} Unicode tag character{}{reads}",
            plural(tags)
        ));
    }
    if invisible > 0 {
        parts.push(format!(
            "{invisible} zero-width or invisible character{}",
            plural(invisible)
        ));
    }
    if bidi > 0 {
        parts.push(format!(
            "{bidi} bidi control{} (shows text in another order)",
            plural(bidi)
        ));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// `text` on one line, escaped, cut to [`MAX_QUOTE_CHARS`].
fn quote(text: &str) -> String {
    let line = visible_line(text.trim());
    if line.chars().count() <= MAX_QUOTE_CHARS {
        return line.into_owned();
    }
    let cut: String = line.chars().take(MAX_QUOTE_CHARS).collect();
    format!("{cut}…")
}

/// The notice that replaces what was removed, in the description the model reads.
pub fn removed_notice(count: usize) -> String {
    format!(
        "[capabilities: {count} hidden character{} removed]",
        plural(count)
    )
}

/// `definition` as a model may read it: the Unicode tag characters removed from its title,
/// description and schema titles and descriptions, and, when there were any, the notice
/// ([`removed_notice`]) at the end of its description. Returns how many were removed. Names
/// and property names are left as they are (calls use them); [`inspect`] flags them.
pub fn for_model(definition: &mut ToolDefinition) -> usize {
    let mut removed = 0;
    let has_tags = |text: &str| text.chars().any(|c| kind(c) == CharKind::Tag);
    edit_prose(definition, &has_tags, &mut |text| {
        let (kept, count) = without_tags(text);
        removed += count;
        kept.into_owned()
    });
    if removed > 0 {
        let notice = removed_notice(removed);
        definition.description = Some(match definition.description.take() {
            Some(text) if !text.trim().is_empty() => format!("{}\n{notice}", text.trim_end()),
            _ => notice,
        });
    }
    removed
}

/// The text of `definition` a flag was raised on, as one string: what a person's Accept is
/// bound to (a digest of it), so that any change to the text flags the tool again.
pub fn text_of(definition: &ToolDefinition) -> String {
    let mut text = String::new();
    for field in fields(definition) {
        text.push_str(&field.label);
        text.push('\u{0}');
        text.push_str(field.text);
        text.push('\u{0}');
    }
    text
}

#[cfg(test)]
mod tests;
