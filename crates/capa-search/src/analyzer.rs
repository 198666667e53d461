//! Text analysis shared by every field and by queries, so that a query word and an indexed word
//! meet as the same term whichever field it sits in (BM25F needs one term space across fields).
//!
//! Identifiers are split into their words — `createIssue`, `create_issue`, `create-issue`,
//! `github.create_issue` all yield `create` and `issue` — and also kept whole, so that a model
//! that types the exact name (or, with prefix expansion, the start of it) finds it. Then
//! lower-casing, a short English stop-word list and English stemming.

use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, StopWordFilter, TextAnalyzer, Token,
    TokenStream, Tokenizer,
};

/// Name under which the analyzer is registered with the index.
pub(crate) const ANALYZER: &str = "capa";

/// Words that say nothing about what a tool does. Short on purpose: "get", "list" or "all" are
/// meaningful in tool names, and BM25's IDF already discounts what is common.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "i", "in", "is", "it", "me",
    "my", "of", "on", "or", "the", "this", "that", "to", "with", "you", "your", "please", "can",
    "could", "would", "should", "want", "need", "s", "what", "whats", "how", "when", "where",
    "which", "do", "does", "did", "will", "there",
];

/// The analyzer every field and query goes through.
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(IdentifierTokenizer)
        .filter(RemoveLongFilter::limit(48))
        .filter(LowerCaser)
        .filter(StopWordFilter::remove(
            STOP_WORDS.iter().map(|w| (*w).to_owned()),
        ))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// The terms a text yields, in order, duplicates kept.
pub(crate) fn terms(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

/// Splits text into words; identifiers into their parts plus the whole identifier.
#[derive(Clone, Debug, Default)]
pub struct IdentifierTokenizer;

impl Tokenizer for IdentifierTokenizer {
    type TokenStream<'a> = VecTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        VecTokenStream {
            tokens: split(text),
            next: 0,
        }
    }
}

/// Tokens computed up front (tool texts are short).
pub struct VecTokenStream {
    tokens: Vec<Token>,
    next: usize,
}

impl TokenStream for VecTokenStream {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

fn is_joiner(c: char) -> bool {
    matches!(c, '_' | '-' | '.')
}

/// CJK ideographs carry a word each, near enough; text in those scripts has no spaces to split on.
fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF)
}

fn split(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if is_cjk(c) {
            chars.next();
            push(&mut tokens, start, &text[start..start + c.len_utf8()]);
            continue;
        }
        if !c.is_alphanumeric() {
            chars.next();
            continue;
        }
        let mut end = start;
        while let Some(&(i, c)) = chars.peek() {
            if (c.is_alphanumeric() || is_joiner(c)) && !is_cjk(c) {
                end = i + c.len_utf8();
                chars.next();
            } else {
                break;
            }
        }
        let word = text[start..end].trim_end_matches(is_joiner);
        let parts = word_parts(word);
        for (offset, part) in &parts {
            push(&mut tokens, start + offset, part);
        }
        if parts.len() > 1 {
            push(&mut tokens, start, word);
        }
    }
    tokens
}

fn push(tokens: &mut Vec<Token>, offset: usize, text: &str) {
    let position = tokens.len();
    tokens.push(Token {
        offset_from: offset,
        offset_to: offset + text.len(),
        position,
        text: text.to_owned(),
        position_length: 1,
    });
}

/// The words of an identifier with their byte offsets: split at `_ - .`, at a lower-to-upper
/// change (`createIssue`), before the last capital of a capital run (`HTTPServer` → `HTTP`,
/// `Server`) and between letters and digits only where case changes too (`s3Bucket` → `s3`,
/// `Bucket`; `ipv4` stays whole).
fn word_parts(word: &str) -> Vec<(usize, &str)> {
    let mut parts = Vec::new();
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut start: Option<usize> = None;
    for (k, &(i, c)) in chars.iter().enumerate() {
        if is_joiner(c) {
            if let Some(s) = start.take() {
                parts.push((s, &word[s..i]));
            }
            continue;
        }
        let Some(s) = start else {
            start = Some(i);
            continue;
        };
        let prev = chars[k - 1].1;
        let next = chars.get(k + 1).map(|&(_, c)| c);
        let boundary = c.is_uppercase()
            && ((prev.is_lowercase() || prev.is_ascii_digit())
                || (prev.is_uppercase() && next.is_some_and(char::is_lowercase)));
        if boundary {
            parts.push((s, &word[s..i]));
            start = Some(i);
        }
    }
    if let Some(s) = start {
        parts.push((s, &word[s..]));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        terms(&mut analyzer(), text)
    }

    #[test]
    fn identifiers_split_and_stay_whole() {
        assert_eq!(words("createIssue"), ["creat", "issu", "createissu"]);
        assert_eq!(words("create_issue"), ["creat", "issu", "create_issu"]);
        assert_eq!(
            words("github.list-pull_requests"),
            [
                "github",
                "list",
                "pull",
                "request",
                "github.list-pull_request"
            ]
        );
        assert_eq!(
            words("HTTPServer s3Bucket ipv4"),
            [
                "http",
                "server",
                "httpserver",
                "s3",
                "bucket",
                "s3bucket",
                "ipv4"
            ]
        );
    }

    #[test]
    fn prose_is_stemmed_without_stop_words() {
        assert_eq!(
            words("Opens the issues, e.g. bugs."),
            ["open", "issu", "e", "g", "e.g", "bug"]
        );
    }

    #[test]
    fn cjk_characters_are_words() {
        assert_eq!(words("搜索 maps"), ["搜", "索", "map"]);
    }
}
