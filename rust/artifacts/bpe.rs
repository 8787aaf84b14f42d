//! Real BPE token counts (OpenAI's o200k and cl100k encodings, offline: the
//! ranks are compiled in), for the budgets a contract calls approximate.

use rayon::prelude::*;
use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

fn encoding(name: &str) -> Option<&'static CoreBPE> {
    static O200K: OnceLock<CoreBPE> = OnceLock::new();
    static CL100K: OnceLock<CoreBPE> = OnceLock::new();
    match name {
        "o200k" => Some(
            O200K.get_or_init(|| tiktoken_rs::o200k_base().expect("o200k ranks are compiled in")),
        ),
        "cl100k" => Some(
            CL100K
                .get_or_init(|| tiktoken_rs::cl100k_base().expect("cl100k ranks are compiled in")),
        ),
        _ => None,
    }
}

/// Token counts of each text in `name`'s encoding, in parallel; None for an unknown name.
pub fn count(name: &str, texts: &[String]) -> Option<Vec<usize>> {
    let bpe = encoding(name)?;
    Some(
        texts
            .par_iter()
            .map(|t| bpe.encode_ordinary(t).len())
            .collect(),
    )
}

/// The token count of one text in `name`'s encoding; None for an unknown name.
pub fn count_one(name: &str, text: &str) -> Option<usize> {
    Some(encoding(name)?.encode_ordinary(text).len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_strings() {
        let texts = vec![
            "hello world".to_string(),
            String::new(),
            "tiktoken is great!".to_string(),
        ];
        assert_eq!(count("cl100k", &texts).unwrap(), vec![2, 0, 6]);
        assert_eq!(count("o200k", &texts[..1]).unwrap(), vec![2]);
        assert!(count("gpt2", &texts).is_none());
    }
}
