//! Token counting for budgets. The BPE tables are embedded in tiktoken-rs; building one takes
//! tens of milliseconds, so each is built once per process.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

fn o200k() -> Option<&'static CoreBPE> {
    static BPE: OnceLock<Option<CoreBPE>> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().ok()).as_ref()
}

fn cl100k() -> Option<&'static CoreBPE> {
    static BPE: OnceLock<Option<CoreBPE>> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::cl100k_base().ok()).as_ref()
}

/// Tokens of `text` in `o200k_base` (GPT-4o and later), the encoding budgets are counted in.
pub fn count_tokens(text: &str) -> usize {
    count_with(o200k(), text)
}

/// Tokens of `text` in `cl100k_base` (GPT-4, GPT-3.5), for comparison.
pub fn count_tokens_cl100k(text: &str) -> usize {
    count_with(cl100k(), text)
}

fn count_with(bpe: Option<&CoreBPE>, text: &str) -> usize {
    match bpe {
        Some(bpe) => bpe.encode_ordinary(text).len(),
        // The tables are embedded, so this cannot really happen; one token a byte never
        // undercounts, which keeps outputs within budget.
        None => text.len(),
    }
}

/// Declarations average about 4 bytes per o200k token (the github catalog: 3.95); a text with
/// more than this many bytes per budget token is taken as over budget without counting. A wrong
/// guess only costs detail (a more compact level is tried), never the budget.
pub(crate) const MAX_BYTES_PER_TOKEN: usize = 5;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_strings() {
        assert_eq!(count_tokens(""), 0);
        assert_eq!(count_tokens("hello world"), 2);
        assert_eq!(count_tokens_cl100k("hello world"), 2);
    }
}
