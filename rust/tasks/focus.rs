//! Which regions of the top files the bundle offers first, beyond the task's words in them:
//! the names of the code (definitions and the names each region refers to,
//! lang/symbols.rs).
//!
//! - A definition whose name is made of the task's words (`expand_union_aliases` for
//!   "Expand nested union aliases") is what the task is about, though its body may use
//!   other words: it gains the share of its name's parts the task says (from two parts on).
//! - A region that refers to a name the task writes as code (`` `TypedDict` ``,
//!   `parse_args()`) is where that name is used.
//! - The regions the best regions call, and less those that call them, come with them: a
//!   change to a function often changes its helpers and its callers. Each best region lends a
//!   share of its weight to the definitions it refers to and a smaller one to the regions
//!   referring to what it defines, across the top files; a name defined by more than
//!   `MAX_DEFINERS` regions (`new`, `fmt`) links nothing.

use super::bundle::Offer;
use super::cuts::Refs;
use super::regions::Region;
use super::terms;
use std::collections::HashSet;
use std::hash::BuildHasher;

/// What a definition whose every part the task says adds to its region (over the file's best).
pub const W_NAME: f32 = 0.5;
/// What a region that refers to a name the task writes as code adds.
pub const W_USES_NAMED: f32 = 0.5;
/// What a best region lends to the definitions it refers to (its callees), times its weight.
pub const W_CALLEE: f32 = 0.3;
/// What it lends to the regions that refer to what it defines (its callers): a name is
/// defined once but used in many places, most of which a change leaves alone. At 0.3, as
/// callees, the callers took the budget from the task's own words: over the twenty tuning
/// halves coverage@8k rose by 0.367 at 0.1 (ripgrep +0.065, flask +0.037, cobra +0.031), and
/// fell on none by more than 0.005.
pub const W_CALLER: f32 = 0.1;
/// A region lends only from this share of its file's best region on.
const STRONG: f32 = 0.5;
/// A name defined by more regions than this among the top files links nothing.
const MAX_DEFINERS: usize = 3;
/// A region nothing speaks for is worth this share of its file's score: 0.1 at first, which
/// on ruff's tuning half filled the bundle of a large top file with pieces matching nothing.
const REGION_FLOOR: f32 = 0.02;
/// A first file that fits the budget whole offers its regions nothing speaks for at the floor
/// plus this times its lead (1 − the second file's score over its own): a file clearly ahead
/// of the rest is shown whole before the best lines of the next files, a close ranking spreads
/// the budget as before. Over the 48 tuning halves coverage@8k rose by 0.173 summed (53 tasks
/// up, 21 down; chi −0.029, rich −0.023); for a first file over the budget the same rule lost
/// 0.304 (viper −0.107, cobra −0.072: its unmatched regions fill the budget a few lines at a
/// time, where the change is elsewhere).
pub const SURE: f32 = 1.0;

/// The share of a definition's name the task's terms say, when at least two of its parts
/// are said (one word in common names too many things); 0 otherwise.
pub fn name_words(symbol: &str, task_terms: &HashSet<&str, impl BuildHasher>) -> f32 {
    let mut parts = 0;
    let mut said = 0;
    terms::each_part_term(symbol, |t| {
        parts += 1;
        said += task_terms.contains(t) as usize;
    });
    if said < 2 {
        return 0.0;
    }
    said as f32 / parts as f32
}

/// Which of a file's `names` (sorted) the task writes as code: each code name sought in the
/// names, or each name in the code names, whichever are fewer (a long task names hundreds).
pub fn named(names: &[Box<str>], code_names: &HashSet<String, impl BuildHasher>) -> Vec<bool> {
    if code_names.len() < names.len() {
        let mut out = vec![false; names.len()];
        for n in code_names {
            if let Ok(i) = names.binary_search_by(|r| (**r).cmp(n.as_str())) {
                out[i] = true;
            }
        }
        out
    } else {
        names.iter().map(|n| code_names.contains(&**n)).collect()
    }
}

/// Whether a region refers to one of the names the task writes as code: `refs` its names by
/// place, `named` what `named` tells of its file's.
pub fn uses_named(refs: &[u32], named: &[bool]) -> bool {
    refs.iter().any(|&n| named[n as usize])
}

/// The regions of one of the top files: its weight in the bundle (its score over the best
/// file's, to `FILE_FOCUS`), its regions with what the task says for each, and the names
/// each refers to (empty when not known).
pub struct Scored<'a> {
    pub weight: f32,
    pub regions: &'a [(Region, f32)],
    pub refs: &'a Refs,
    /// Each line's age (tasks/recent.rs; empty when not known).
    pub ages: &'a [u8],
}

/// What a region holding a line the file's last change made adds, times its file's weight
/// (tasks/recent.rs). On ruff's tuning half 0.3 took coverage@8k from 0.336 to 0.319 (and
/// with the two changes before it, or times the region's own share, no better): a large file
/// of an active history changed lately in many places the task is not about.
pub const W_RECENT: f32 = 0.1;

/// Whether a line of `start..=end` changed lately.
fn changed_lately(ages: &[u8], start: u32, end: u32) -> bool {
    ages.get(start.saturating_sub(1) as usize..(end as usize).min(ages.len()))
        .is_some_and(|lines| lines.iter().any(|&a| a > 0))
}

fn defines(r: &Region) -> Option<&str> {
    (!r.more && r.kind != "lines" && r.kind != "impl" && r.kind != "module" && !r.symbol.is_empty())
        .then_some(r.symbol.as_str())
}

/// The bundle's offers: each region at its file's weight, scaled by how it compares with the
/// file's best region (every region of a file the task speaks for in none, as its best), plus
/// what the best regions lend it through the names that link them. `lead` is the first file's
/// lead when it fits the budget whole, 0 otherwise (`SURE`).
pub fn offers(files: &[Scored], link: bool, lead: f32) -> Vec<Offer> {
    let rels: Vec<Vec<f32>> = files
        .iter()
        .map(|f| {
            let best = f.regions.iter().map(|r| r.1).fold(0f32, f32::max);
            f.regions
                .iter()
                .map(|r| if best > 0.0 { r.1 / best } else { 0.0 })
                .collect()
        })
        .collect();
    // How many regions define each name, and what the strong regions define and refer to.
    // (Hashed with `Fnv`: every region of the top files is counted and looked up here.)
    let mut definers: terms::WordMap<usize> = terms::WordMap::default();
    for f in files {
        for (r, _) in f.regions {
            if let Some(name) = defines(r) {
                *definers.entry(name).or_default() += 1;
            }
        }
    }
    let linkable = |name: &str| definers.get(name).is_some_and(|&n| n <= MAX_DEFINERS);
    let mut defined: terms::WordMap<f32> = terms::WordMap::default(); // by strong regions
    let mut referred: terms::WordMap<f32> = terms::WordMap::default(); // by strong regions
    if link {
        for (f, rel) in files.iter().zip(&rels) {
            for (i, (r, _)) in f.regions.iter().enumerate() {
                if rel[i] < STRONG {
                    continue;
                }
                let strength = f.weight * rel[i];
                let own = defines(r);
                if let Some(name) = own.filter(|n| linkable(n)) {
                    let e = defined.entry(name).or_default();
                    *e = e.max(strength);
                }
                for &n in f.refs.region(i) {
                    let name = &*f.refs.names[n as usize];
                    if Some(name) != own && linkable(name) {
                        let e = referred.entry(name).or_default();
                        *e = e.max(strength);
                    }
                }
            }
        }
    }
    let mut by_name: Vec<(&str, f32)> = defined.iter().map(|(&n, &s)| (n, s)).collect();
    by_name.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut out = Vec::new();
    for (file, (f, rel)) in files.iter().zip(&rels).enumerate() {
        // A file the task speaks for in no region was ranked for what it is whole (its path,
        // the names it defines, its history, its imports): each region is offered as its best.
        // At the floor, a top file so ranked was left out of the bundle (ripgrep's
        // `pathutil.rs` ranked 2 for "more pathutil clean-up", gin's 6-line `doc.go` ranked 1).
        let unspoken = rel.iter().all(|&r| r == 0.0);
        let lends = lends(&f.refs.names, &by_name, &defined);
        for (i, (r, _)) in f.regions.iter().enumerate() {
            let share = if unspoken { 1.0 } else { rel[i] };
            let floor = if file == 0 {
                (REGION_FLOOR + SURE * lead).min(1.0)
            } else {
                REGION_FLOOR
            };
            let own = defines(r);
            let called = own.and_then(|n| referred.get(n)).copied().unwrap_or(0.0);
            let calls = lent_to_caller(f.refs.region(i), &f.refs.names, own, &lends);
            out.push(Offer {
                file,
                start: r.start,
                end: r.end,
                score: f.weight * (floor + (1.0 - floor) * share)
                    + (W_CALLEE * called).max(W_CALLER * calls)
                    + W_RECENT * f.weight * changed_lately(f.ages, r.start, r.end) as u8 as f32,
            });
        }
    }
    out
}

/// What each of a file's `names` (sorted) lends the regions referring to it: the most a strong
/// region defining it lends (None: none defines it); `defined` is those names with what each
/// lends, `by_name` the same sorted by name. A few names are each sought in the file's names,
/// more are looked up once per name of the file (`Fnv`, no string compared but a match).
fn lends(
    names: &[Box<str>],
    by_name: &[(&str, f32)],
    defined: &terms::WordMap<f32>,
) -> Vec<Option<f32>> {
    if by_name.len() * FEW_NAMES < names.len() {
        let mut out = vec![None; names.len()];
        for &(name, strength) in by_name {
            if let Ok(i) = names.binary_search_by(|r| (**r).cmp(name)) {
                out[i] = Some(strength);
            }
        }
        out
    } else {
        names.iter().map(|n| defined.get(&**n).copied()).collect()
    }
}

/// The most the names a region refers to (`refs`, by place in its file's `names`) lend it
/// (`lends`), its `own` name left out. A question asks this of every region of the top files.
fn lent_to_caller(
    refs: &[u32],
    names: &[Box<str>],
    own: Option<&str>,
    lends: &[Option<f32>],
) -> f32 {
    refs.iter()
        .filter_map(|&n| lends[n as usize].filter(|_| Some(&*names[n as usize]) != own))
        .fold(0f32, f32::max)
}

/// Names sought in a file's names by binary search while there are fewer than its names / this.
const FEW_NAMES: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    fn region(start: u32, end: u32, symbol: &str, kind: &'static str) -> Region {
        Region {
            start,
            end,
            symbol: symbol.into(),
            kind,
            more: false,
        }
    }

    /// A file's regions at `weight`, with no ages.
    fn scored<'a>(regions: &'a [(Region, f32)], weight: f32, refs: &'a Refs) -> Scored<'a> {
        Scored {
            weight,
            regions,
            refs,
            ages: &[],
        }
    }

    #[test]
    fn uses_named_is_the_same_from_either_side() {
        // Every pair of subsets of a small vocabulary: fewer names than refs, and more.
        let vocab = ["a", "ab", "b", "ba", "c", "d", "dd", "e"];
        for rm in 0u32..256 {
            let refs: Vec<Box<str>> = (0..8)
                .filter(|i| rm & (1 << i) != 0)
                .map(|i| vocab[i].into())
                .collect();
            for nm in 0u32..256 {
                let names: HashSet<String> = (0..8)
                    .filter(|i| nm & (1 << i) != 0)
                    .map(|i| vocab[i].to_string())
                    .collect();
                let want = refs.iter().any(|r| names.iter().any(|n| **r == **n));
                let file = Refs::new(vec![refs.clone()]);
                let got = uses_named(file.region(0), &named(&file.names, &names));
                assert_eq!(got, want, "{refs:?} {names:?}");
            }
        }
    }

    #[test]
    fn lent_to_caller_is_the_same_from_either_side() {
        // Every pair of subsets of a small vocabulary, each name its own strength, and each
        // name as the region's own: the best strength among the shared names but its own;
        // with and without 64 more refs the names do not hold (both ways of seeking them).
        let vocab = ["a", "ab", "b", "ba", "c", "d", "dd", "e"];
        for (rm, padded) in (0u32..256).flat_map(|rm| [(rm, false), (rm, true)]) {
            let mut refs: Vec<Box<str>> = (0..8)
                .filter(|i| rm & (1 << i) != 0)
                .map(|i| vocab[i].into())
                .collect();
            if padded {
                refs.extend((0..64).map(|i| format!("z{i:02}").into()));
            }
            let file = Refs::new(vec![refs.clone()]);
            for dm in 0u32..256 {
                let by_name: Vec<(&str, f32)> = (0..8)
                    .filter(|i| dm & (1 << i) != 0)
                    .map(|i| (vocab[i], 0.1 * (1 + (i * 5) % 8) as f32))
                    .collect();
                let defined: terms::WordMap<f32> = by_name.iter().copied().collect();
                for own in [None, Some("b"), Some("dd")] {
                    let want = by_name
                        .iter()
                        .filter(|d| Some(d.0) != own && refs.iter().any(|r| **r == *d.0))
                        .map(|d| d.1)
                        .fold(0f32, f32::max);
                    let lends = lends(&file.names, &by_name, &defined);
                    assert_eq!(
                        lent_to_caller(file.region(0), &file.names, own, &lends),
                        want,
                        "{refs:?} {defined:?} {own:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_name_made_of_the_task_words_counts_from_two_parts() {
        let task: HashSet<&str> = ["expand", "union", "alias", "nest"].into();
        assert_eq!(name_words("expand_union_aliases", &task), 1.0);
        assert_eq!(name_words("expandUnionType", &task), 2.0 / 3.0);
        assert_eq!(name_words("expand", &task), 0.0, "one word names too much");
        assert_eq!(name_words("union_find", &task), 0.0);
    }

    #[test]
    fn the_best_region_lifts_its_callee_and_caller_not_the_rest() {
        let regions = vec![
            (region(1, 10, "settle", "function"), 1.0),
            (region(11, 20, "round_cents", "function"), 0.0),
            (region(21, 30, "checkout", "function"), 0.0),
            (region(31, 40, "unrelated", "function"), 0.0),
            (region(41, 50, "", "lines"), 0.0),
        ];
        let refs = Refs::new(vec![
            vec!["round_cents".into(), "total".into()],
            vec!["floor".into()],
            vec!["settle".into()],
            vec!["floor".into()],
            vec![],
        ]);
        let files = [Scored {
            weight: 1.0,
            regions: &regions,
            refs: &refs,
            ages: &[],
        }];
        let on = offers(&files, true, 0.0);
        let off = offers(&files, false, 0.0);
        assert!(on[1].score > off[1].score, "the callee is lifted");
        assert!(on[2].score > off[2].score, "the caller is lifted");
        assert_eq!(on[3].score, off[3].score);
        assert_eq!(on[4].score, off[4].score);
        assert_eq!(
            on[0].score, off[0].score,
            "the best lends, it does not gain"
        );
        assert!(on[1].score < on[0].score);
        assert!(
            on[1].score - off[1].score > on[2].score - off[2].score,
            "the callee more than the caller"
        );
    }

    #[test]
    fn a_file_the_task_speaks_for_in_no_region_offers_each_as_its_best() {
        let spoken = vec![
            (region(1, 10, "a", "function"), 0.8),
            (region(11, 20, "b", "function"), 0.0),
        ];
        let silent = vec![
            (region(1, 10, "c", "function"), 0.0),
            (region(11, 20, "d", "function"), 0.0),
        ];
        let refs = Refs::new(vec![vec![]; 2]);
        let got = offers(
            &[scored(&spoken, 1.0, &refs), scored(&silent, 0.5, &refs)],
            false,
            0.0,
        );
        let scores: Vec<f32> = got.iter().map(|o| o.score).collect();
        assert_eq!(
            scores[1], REGION_FLOOR,
            "a region nothing speaks for, beside one spoken for"
        );
        assert_eq!(
            (scores[2], scores[3]),
            (0.5 * scores[0], 0.5 * scores[0]),
            "each region of the silent file as its best, at its file's weight"
        );
    }

    #[test]
    fn a_first_file_far_ahead_offers_its_other_regions_before_the_next_file_s_best() {
        let first = vec![
            (region(1, 10, "a", "function"), 1.0),
            (region(11, 20, "b", "function"), 0.0),
        ];
        let next = vec![(region(1, 10, "c", "function"), 1.0)];
        let refs = Refs::new(vec![vec![]; 2]);
        // The second file scores half the first's: its weight is an eighth (`FILE_FOCUS` 3).
        let files = [scored(&first, 1.0, &refs), scored(&next, 0.125, &refs)];
        let ahead = offers(&files, false, 0.5);
        assert_eq!(ahead[1].score, REGION_FLOOR + SURE * 0.5);
        assert!(ahead[1].score > ahead[2].score, "{ahead:?}");
        assert_eq!(ahead[0].score, 1.0, "the best region stays the best");
        let close = offers(&files, false, 0.0);
        assert_eq!(close[1].score, REGION_FLOOR);
        assert!(close[1].score < close[2].score, "{close:?}");
        assert_eq!(
            offers(&files, false, 1.0)[1].score,
            1.0,
            "at most the file's weight"
        );
    }

    #[test]
    fn a_name_many_regions_define_links_nothing() {
        let mut regions = vec![(region(1, 5, "run", "function"), 1.0)];
        let mut refs: Vec<Vec<Box<str>>> = vec![vec!["new".into()]];
        for i in 0..4 {
            regions.push((region(6 + i * 5, 10 + i * 5, "new", "function"), 0.0));
            refs.push(vec![]);
        }
        let refs = Refs::new(refs);
        let files = [Scored {
            weight: 1.0,
            regions: &regions,
            refs: &refs,
            ages: &[],
        }];
        assert_eq!(
            offers(&files, true, 0.0)[1].score,
            offers(&files, false, 0.0)[1].score
        );
    }

    #[test]
    fn a_region_holding_a_line_changed_lately_comes_first_among_equals() {
        let regions = vec![
            (region(1, 10, "a", "function"), 0.5),
            (region(11, 20, "b", "function"), 0.5),
            (region(21, 30, "c", "function"), 0.5),
        ];
        let refs = Refs::new(vec![vec![]; 3]);
        let mut ages = vec![0u8; 30];
        ages[14] = 1; // line 15, in b
        let scored = |ages| {
            offers(
                &[Scored {
                    weight: 0.5,
                    regions: &regions,
                    refs: &refs,
                    ages,
                }],
                false,
                0.0,
            )
        };
        let (on, off) = (scored(&ages), scored(&[]));
        assert_eq!(on[1].score, off[1].score + W_RECENT * 0.5);
        assert_eq!((on[0].score, on[2].score), (off[0].score, off[2].score));
        assert_eq!(off[0].score, off[1].score);
    }
}
