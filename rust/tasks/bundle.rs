//! The bundle: regions of the top files cut to a token budget.
//!
//! Each region is widened by `CONTEXT` lines on either side and offered with its score.
//! Offers are taken greedily by score per token to the `SIZE_EXPONENT` (a region counts at
//! least `MIN_TOKENS`, so a one-line window does not outbid a function), each taken only when the bundle still
//! fits: regions of a file that touch or overlap are merged into one piece, and the piece
//! is counted again as merged. An offer that does not fit whole is cut to its first lines
//! that do, when at least `MIN_TOKENS` are left. The budget is never exceeded: `tokens` is
//! the sum of the pieces' counts, each counted by the configured tokenizer.

pub const CONTEXT: u32 = 2;
pub const MIN_TOKENS: usize = 48;
/// Offers are ranked by score per token to this power: a longer region holds more of what a
/// task changes, though far from in proportion. The square root, as first written, filled a
/// large file's bundle with dozens of five-line pieces each matching one word (ruff's tuning
/// half: 0.26 of the changed lines shown at 8k, against 0.34 with a fourth root).
const SIZE_EXPONENT: f32 = 0.25;

/// The tokens of a text as the configured tokenizer counts them.
pub type Count<'a> = &'a (dyn Fn(&str) -> usize + Sync);

/// A tokenizer's counter, owned.
pub type Counter = Box<dyn Fn(&str) -> usize + Sync>;

pub fn counter(tokenizer: &str) -> Option<Counter> {
    match tokenizer {
        "bytes4" => Some(Box::new(|t: &str| t.len().div_ceil(4))),
        "o200k" | "cl100k" => {
            let name = tokenizer.to_string();
            crate::artifacts::bpe::count_one(&name, "")?;
            Some(Box::new(move |t: &str| {
                crate::artifacts::bpe::count_one(&name, t).unwrap_or(usize::MAX)
            }))
        }
        _ => None,
    }
}

/// One file's text, cut at its lines.
pub struct Text<'a> {
    pub text: &'a str,
    /// Byte offset of each line's start, and the text's length at the end.
    starts: Vec<usize>,
}

impl<'a> Text<'a> {
    pub fn new(text: &'a str) -> Text<'a> {
        let mut starts = vec![0];
        starts.extend(
            memchr::memchr_iter(b'\n', text.as_bytes())
                .map(|i| i + 1)
                .filter(|&i| i < text.len()),
        );
        if !text.is_empty() {
            starts.push(text.len());
        }
        Text { text, starts }
    }

    pub fn lines(&self) -> u32 {
        (self.starts.len() - 1) as u32
    }

    /// Lines `start..=end` (1-based), their newlines included.
    pub fn slice(&self, start: u32, end: u32) -> &'a str {
        &self.text[self.starts[start as usize - 1]..self.starts[end as usize]]
    }
}

/// A region on offer: the file (by its place among the texts), its lines, its score.
#[derive(Clone, Debug)]
pub struct Offer {
    pub file: usize,
    pub start: u32,
    pub end: u32,
    pub score: f32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    pub file: usize,
    pub start: u32,
    pub end: u32,
    pub tokens: usize,
}

/// The pieces of a bundle of `offers` within `budget` tokens, in file order then line
/// order, and the tokens they hold.
pub fn cut(texts: &[Text], offers: &[Offer], budget: usize, count: Count) -> (Vec<Piece>, usize) {
    let widened: Vec<(Offer, f32)> = offers
        .iter()
        .filter(|o| o.score > 0.0 && texts[o.file].lines() > 0)
        .map(|o| {
            let n = texts[o.file].lines();
            let start = o.start.saturating_sub(CONTEXT).max(1);
            let end = (o.end + CONTEXT).min(n);
            let tokens = count(texts[o.file].slice(start, end)).max(MIN_TOKENS);
            (
                Offer {
                    start,
                    end,
                    ..o.clone()
                },
                o.score / (tokens as f32).powf(SIZE_EXPONENT),
            )
        })
        .collect();
    let mut order: Vec<usize> = (0..widened.len()).collect();
    order.sort_by(|&a, &b| widened[b].1.total_cmp(&widened[a].1).then(a.cmp(&b)));
    let mut pieces: Vec<Piece> = Vec::new();
    let mut total = 0usize;
    for i in order {
        if budget.saturating_sub(total) < 1 {
            break;
        }
        let o = &widened[i].0;
        if let Some((merged, new_total)) =
            fit(texts, &pieces, total, o.file, o.start, o.end, budget, count)
        {
            pieces = merged;
            total = new_total;
        } else if budget - total >= MIN_TOKENS {
            // The first lines of it that fit, if any.
            let (mut lo, mut hi) = (o.start, o.end);
            let mut best = None;
            while lo <= hi {
                let mid = lo + (hi - lo) / 2;
                match fit(texts, &pieces, total, o.file, o.start, mid, budget, count) {
                    Some(r) => {
                        best = Some(r);
                        lo = mid + 1;
                    }
                    None => hi = mid - 1,
                }
            }
            if let Some((merged, new_total)) = best {
                pieces = merged;
                total = new_total;
            }
        }
    }
    pieces.sort_by_key(|p| (p.file, p.start));
    (pieces, total)
}

/// The pieces with lines `start..=end` of `file` added (merged with what they touch) and the
/// new total, when it is within the budget.
#[allow(clippy::too_many_arguments)]
fn fit(
    texts: &[Text],
    pieces: &[Piece],
    total: usize,
    file: usize,
    start: u32,
    end: u32,
    budget: usize,
    count: Count,
) -> Option<(Vec<Piece>, usize)> {
    if pieces
        .iter()
        .any(|p| p.file == file && p.start <= start && end <= p.end)
    {
        return Some((pieces.to_vec(), total)); // already in the bundle
    }
    let (mut s, mut e) = (start, end);
    let mut freed = 0;
    let mut rest = Vec::with_capacity(pieces.len() + 1);
    for p in pieces {
        if p.file == file && p.start <= e + 1 && s <= p.end + 1 {
            s = s.min(p.start);
            e = e.max(p.end);
            freed += p.tokens;
        } else {
            rest.push(p.clone());
        }
    }
    let tokens = count(texts[file].slice(s, e));
    let new_total = total - freed + tokens;
    if new_total > budget {
        return None;
    }
    rest.push(Piece {
        file,
        start: s,
        end: e,
        tokens,
    });
    Some((rest, new_total))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes4(t: &str) -> usize {
        t.len().div_ceil(4)
    }

    fn text(n: usize, width: usize) -> String {
        (1..=n)
            .map(|i| format!("{:0width$}\n", i, width = width - 1))
            .collect()
    }

    #[test]
    fn lines_and_slices() {
        let t = Text::new("one\ntwo\nthree");
        assert_eq!(t.lines(), 3);
        assert_eq!(t.slice(2, 3), "two\nthree");
        let t = Text::new("one\ntwo\n");
        assert_eq!((t.lines(), t.slice(1, 2)), (2, "one\ntwo\n"));
        assert_eq!(Text::new("").lines(), 0);
    }

    #[test]
    fn best_score_per_token_first_merged_and_never_over_budget() {
        let a = text(100, 8); // 100 lines of 8 bytes: 2 tokens a line
        let b = text(50, 8);
        let texts = [Text::new(&a), Text::new(&b)];
        let offers = [
            Offer {
                file: 0,
                start: 10,
                end: 19,
                score: 1.0,
            },
            Offer {
                file: 0,
                start: 20,
                end: 29,
                score: 0.9,
            },
            Offer {
                file: 1,
                start: 1,
                end: 50,
                score: 0.5,
            },
            Offer {
                file: 0,
                start: 80,
                end: 99,
                score: 0.1,
            },
        ];
        let count: Count = &bytes4;
        let (pieces, total) = cut(&texts, &offers, 100, count);
        // 8..21 (14 lines, 28 tokens) then 18..31 merged into 8..31 (24 lines, 48 tokens); b does not
        // fit whole, and its first lines fill what is left.
        assert_eq!(
            pieces,
            [
                Piece {
                    file: 0,
                    start: 8,
                    end: 31,
                    tokens: 48
                },
                Piece {
                    file: 1,
                    start: 1,
                    end: 26,
                    tokens: 52
                }
            ]
        );
        assert_eq!(total, 100);
        // Fewer than MIN_TOKENS left: no sliver.
        assert_eq!(
            cut(&texts, &offers, 60, count),
            (
                vec![Piece {
                    file: 0,
                    start: 8,
                    end: 31,
                    tokens: 48
                }],
                48
            )
        );
        for budget in [0, 1, 5, 47, 48, 49, 100, 500, 100_000] {
            let (pieces, total) = cut(&texts, &offers, budget, count);
            assert!(total <= budget, "{budget}: {total}");
            let recount: usize = pieces
                .iter()
                .map(|p| bytes4(texts[p.file].slice(p.start, p.end)))
                .sum();
            assert_eq!(recount, total);
            for w in pieces.windows(2) {
                assert!(
                    w[0].file != w[1].file || w[0].end + 1 < w[1].start,
                    "pieces of a file never touch: {pieces:?}"
                );
            }
        }
        let (all, total) = cut(&texts, &offers, 100_000, count);
        assert_eq!(
            total,
            48 + 46 + 100,
            "a large budget takes every offer, merged"
        );
        assert_eq!(
            all.iter()
                .map(|p| (p.file, p.start, p.end))
                .collect::<Vec<_>>(),
            [(0, 8, 31), (0, 78, 100), (1, 1, 50)]
        );
    }

    #[test]
    fn counters() {
        assert_eq!(counter("bytes4").unwrap()("12345"), 2);
        assert_eq!(counter("cl100k").unwrap()("hello world"), 2);
        assert!(counter("gpt2").is_none());
    }
}
