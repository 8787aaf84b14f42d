//! Which listed file comes first: the one where the task's words meet in one region. Among
//! files the ranking put close, the file whose single function holds the task's words together
//! is more often the one a change is about than a file that says them scattered through it.
//!
//! A listed file adds `W_MEET` × its best region's share of the task's words (each term by its
//! weight in the regions' scores: IDF × the task's count) × (1 − that region's words over the
//! file's): a file of one or two regions holds all the task's words in its "best region" by
//! being small, which says nothing. Then the listed files are sorted again, except that none
//! passes a file the task names (by its path, or as a release's version file). Only their
//! order moves: no file enters or leaves the list, and the bundle keeps the ranking's scores
//! and order (coverage@8k did not follow, benches/README.md "Which listed file comes first").

/// What a file's words meeting in one region add to its score, on the scale of the best
/// lexical match (1).
pub const W_MEET: f32 = 0.3;

/// The best region's share of the task's words, discounted by the region's share of the
/// file's words (0 for a task of one term). `query` is the task's terms with their weights;
/// `hits` the (term's place in `query`, count) each region holds, region i's ending at
/// `ends[i]`; `lens` the regions' word counts.
pub fn together(
    query: &[(&str, f32)],
    hits: &[(u32, u32)],
    ends: &[usize],
    lens: impl Iterator<Item = u32> + Clone,
) -> f32 {
    let total: f32 = query.iter().map(|q| q.1).sum();
    let file: f32 = lens.clone().map(|l| l as f32).sum();
    if query.len() < 2 || total <= 0.0 || file <= 0.0 {
        return 0.0;
    }
    let mut from = 0;
    let mut best = 0f32;
    for (len, &end) in lens.zip(ends) {
        let held: f32 = hits[from..end]
            .iter()
            .map(|&(q, _)| query[q as usize].1)
            .sum();
        from = end;
        best = best.max(held / total * (1.0 - len as f32 / file));
    }
    best
}

/// Sorts `files` (in the ranking's order) by `score`, the meeting's included, each run between
/// two files the task names (`named`: by their path, or as a release's version file) apart: the
/// file a task names is the sure one, and stays where the ranking put it; nothing passes it.
/// Stable: ties keep the ranking's order.
pub fn order<T>(files: &mut [T], named: &[bool], score: impl Fn(&T) -> f64) {
    let mut from = 0;
    for to in (0..files.len()).filter(|&i| named[i]).chain([files.len()]) {
        files[from..to].sort_by(|a, b| score(b).total_cmp(&score(a)));
        from = to + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUERY: &[(&str, f32)] = &[("apply", 1.0), ("coupon", 3.0)];

    #[test]
    fn the_region_holding_all_the_words_in_a_large_file_meets() {
        // Region 1 holds both terms and a tenth of the file's words; region 0 one of them.
        let s = together(
            QUERY,
            &[(1, 2), (0, 1), (1, 1)],
            &[1, 3, 3],
            [40u32, 10, 50].into_iter(),
        );
        assert!((s - 0.9).abs() < 1e-6, "{s}");
    }

    #[test]
    fn a_file_of_one_region_and_a_task_of_one_term_do_not_meet() {
        assert_eq!(
            together(QUERY, &[(0, 1), (1, 1)], &[2], [10u32].into_iter()),
            0.0
        );
        let one = &QUERY[..1];
        assert_eq!(
            together(one, &[(0, 1)], &[1, 1], [5u32, 50].into_iter()),
            0.0
        );
    }

    #[test]
    fn no_file_passes_one_the_task_names() {
        let mut files = [
            (1.0, 'a'),
            (0.9, 'b'),
            (1.2, 'c'),
            (0.5, 'd'),
            (0.8, 'e'),
            (0.8, 'f'),
        ];
        order(
            &mut files,
            &[false, true, false, false, false, false],
            |f| f.0,
        );
        let got: String = files.iter().map(|f| f.1).collect();
        assert_eq!(got, "abcefd");
    }

    #[test]
    fn scattered_words_meet_less_than_words_together() {
        let lens = [20u32, 20, 20, 20];
        let scattered = together(QUERY, &[(0, 1), (1, 1)], &[1, 2, 2, 2], lens.into_iter());
        let together_ = together(QUERY, &[(0, 1), (1, 1)], &[2, 2, 2, 2], lens.into_iter());
        assert!(scattered < together_, "{scattered} {together_}");
    }
}
