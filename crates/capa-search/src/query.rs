//! From analysed query words to weighted query terms. A word no tool contains is taken as the
//! start of a name (`create_iss`, `k8`, `pull_req`): it is replaced by the name and parameter
//! terms it begins, at a discount, so prefixes and half-typed names still find their tool.

use tantivy::Searcher;
use tantivy::schema::Field;

use crate::SearchError;
use crate::index::Fields;
use crate::synonyms::{STAND_IN_WEIGHT, SYNONYM_WEIGHT, Thesaurus};

/// A prefix match counts for less than the word itself.
const PREFIX_WEIGHT: f32 = 0.6;
/// A short prefix can begin hundreds of terms; the first ones (lexicographic) are enough.
const MAX_EXPANSIONS: usize = 16;
/// Shorter prefixes than this begin too much to mean anything.
const MIN_PREFIX_CHARS: usize = 2;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QueryTerm {
    pub text: String,
    pub weight: f32,
    /// Which of the query's words this term stands for, one bit each (word 64 and later share
    /// the last bit): coordination counts how many of them a tool matches.
    pub concepts: u64,
}

/// The query's analysed words without repeats: each is one concept the query asks for.
pub(crate) fn distinct(words: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for word in words {
        if !out.contains(&word) {
            out.push(word);
        }
    }
    out
}

fn bit(i: usize) -> u64 {
    1 << i.min(63)
}

/// The query's own words (weight 1), their synonyms, and completions of the words no tool
/// contains. A term several words bring counts once, at its highest weight, for all of them.
pub(crate) fn expand(
    words: &[String],
    thesaurus: &Thesaurus,
    searcher: &Searcher,
    fields: &Fields,
) -> Result<Vec<QueryTerm>, SearchError> {
    let mut terms: Vec<QueryTerm> = Vec::new();
    let mut push =
        |text: &str, weight: f32, concepts: u64| match terms.iter_mut().find(|t| t.text == text) {
            Some(term) => {
                term.weight = term.weight.max(weight);
                term.concepts |= concepts;
            }
            None => terms.push(QueryTerm {
                text: text.to_owned(),
                weight,
                concepts,
            }),
        };
    let mut present = Vec::with_capacity(words.len());
    for (i, word) in words.iter().enumerate() {
        let occurs = occurs(word, searcher, fields)?;
        if occurs {
            push(word, 1.0, bit(i));
        }
        present.push(occurs);
    }
    for (i, word) in words.iter().enumerate() {
        // A word no tool uses contributes nothing itself: its synonyms stand in for it.
        let weight = if present[i] {
            SYNONYM_WEIGHT
        } else {
            STAND_IN_WEIGHT
        };
        for synonym in thesaurus.of(word) {
            if occurs(synonym, searcher, fields)? {
                push(synonym, weight, bit(i));
            }
        }
    }
    // A two-word phrase names one thing ("bug report" is an issue): its synonyms are as good
    // as the words themselves, and stand for both.
    for (i, pair) in words.windows(2).enumerate() {
        for synonym in thesaurus.of_phrase(&pair[0], &pair[1]) {
            if occurs(synonym, searcher, fields)? {
                push(synonym, 1.0, bit(i) | bit(i + 1));
            }
        }
    }
    for (i, word) in words.iter().enumerate() {
        if present[i] || word.chars().count() < MIN_PREFIX_CHARS {
            continue;
        }
        let found = completions(word, searcher, &[fields.name, fields.params])?;
        // Spread the discount over the completions, so that a prefix that begins many names
        // does not outweigh a word that matched exactly.
        let weight = PREFIX_WEIGHT / (found.len().max(1) as f32).sqrt();
        for completion in &found {
            push(completion, weight, bit(i));
        }
    }
    Ok(terms)
}

fn occurs(word: &str, searcher: &Searcher, fields: &Fields) -> Result<bool, SearchError> {
    for field in [fields.name, fields.description, fields.params] {
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(field)?;
            if inverted
                .get_term_info(&tantivy::Term::from_field_text(field, word))?
                .is_some()
            {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Terms of `fields` that begin with `prefix`, in lexicographic order, at most [`MAX_EXPANSIONS`].
fn completions(
    prefix: &str,
    searcher: &Searcher,
    fields: &[Field],
) -> Result<Vec<String>, SearchError> {
    let mut found: Vec<String> = Vec::new();
    for &field in fields {
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(field)?;
            let mut stream = inverted
                .terms()
                .range()
                .ge(prefix.as_bytes())
                .into_stream()?;
            while stream.advance() {
                let key = stream.key();
                if !key.starts_with(prefix.as_bytes()) {
                    break;
                }
                if let Ok(text) = std::str::from_utf8(key)
                    && !found.iter().any(|f| f == text)
                {
                    found.push(text.to_owned());
                }
                if found.len() >= MAX_EXPANSIONS {
                    return Ok(found);
                }
            }
        }
    }
    found.sort();
    Ok(found)
}
