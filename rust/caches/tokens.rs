//! Words and tokens as the context-engine v0 contract counts them.
//!
//! A word is a maximal run of non-whitespace (the Unicode `White_Space`
//! property, as `str::split_whitespace`) in the lowercased text (Unicode
//! lowercase mapping, as `str::to_lowercase`). A document costs
//! ceil(UTF-8 bytes / 4) tokens.

/// ceil(len / 4) over the UTF-8 bytes of the content.
pub fn approx_tokens(content: &str) -> u64 {
    (content.len() as u64).div_ceil(4)
}

/// The query's terms: lowercased, split on whitespace, in order, repeats kept.
pub fn query_terms(query: &str) -> Vec<String> {
    query
        .to_lowercase()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Score of a document: matching words over all its words, as a 32-bit float.
pub fn score(term_matches: u64, total_words: u64) -> f32 {
    if total_words == 0 {
        0.0
    } else {
        term_matches as f32 / total_words as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_up() {
        assert_eq!(approx_tokens(""), 0);
        assert_eq!(approx_tokens("a"), 1);
        assert_eq!(approx_tokens("Hello world"), 3);
        assert_eq!(approx_tokens("Goodbye world"), 4);
        assert_eq!(approx_tokens("é"), 1); // two bytes
        assert_eq!(approx_tokens("🚀🚀"), 2); // eight bytes
    }

    #[test]
    fn terms_keep_order_and_repeats() {
        assert_eq!(
            query_terms("  Deployment\tSECURITY deployment "),
            ["deployment", "security", "deployment"]
        );
        assert!(query_terms(" \u{3000}\n").is_empty());
        // NBSP and ideographic space are whitespace; a zero-width space is not.
        assert_eq!(
            query_terms("a\u{a0}b\u{3000}c\u{200b}d"),
            ["a", "b", "c\u{200b}d"]
        );
    }

    #[test]
    fn scores_are_f32_quotients() {
        assert_eq!(score(0, 0), 0.0);
        assert_eq!(score(1, 3).to_string(), "0.33333334");
        assert_eq!(score(3, 4), 0.75);
    }
}
