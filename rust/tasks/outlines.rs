//! The ranked files' outlines (task context's `outline`): each listed file's definitions and
//! their members (lang/outline.rs, over the text the bundle reads), best files first, while
//! they take at most half the budget counted as the compact JSON the answer carries; then the
//! bundle's pieces give way from its end until pieces and outlines fit the budget together.
//!
//! The shape is `file_outline`'s definitions (python/repoctx/tasks/outline.py): a member has
//! no members of its own.

use super::bundle::Count;
use crate::lang::outline::{outline, Entry};
use serde::Serialize;

/// A definition of a ranked file's outline.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, name = "TaskDefinition", module = "repoctx._core")
)]
pub struct DefinitionOut {
    /// function, class, struct, enum, trait, impl, interface, module, …
    pub kind: &'static str,
    pub name: String,
    /// First line, 1-based.
    pub start: u32,
    /// Last line, inclusive.
    pub end: u32,
    /// The first line, trimmed (cut after 200 characters with …).
    pub signature: String,
    /// The definitions directly inside it, in line order.
    pub members: Vec<MemberOut>,
}

/// A definition directly inside one of the outline (a method under its class or impl).
#[derive(Serialize, Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, name = "TaskMember", module = "repoctx._core")
)]
pub struct MemberOut {
    pub kind: &'static str,
    pub name: String,
    pub start: u32,
    pub end: u32,
    pub signature: String,
}

impl From<Entry> for DefinitionOut {
    fn from(e: Entry) -> DefinitionOut {
        DefinitionOut {
            kind: e.kind,
            name: e.name,
            start: e.start,
            end: e.end,
            signature: e.signature,
            members: e
                .members
                .into_iter()
                .map(|m| MemberOut {
                    kind: m.kind,
                    name: m.name,
                    start: m.start,
                    end: m.end,
                    signature: m.signature,
                })
                .collect(),
        }
    }
}

/// The outline of each of `files` (path, its text or None when it could not be read), best
/// first, kept while the kept ones take at most `budget / 2` tokens; a file whose outline
/// does not fit (or whose text is None) has none, and a later, smaller one may still fit.
/// Returns the outlines and the tokens they take.
pub fn outlines(
    files: &[(&str, Option<&str>)],
    budget: usize,
    count: Count,
) -> (Vec<Option<Vec<DefinitionOut>>>, usize) {
    let share = budget / 2;
    let mut used = 0;
    let given = files
        .iter()
        .map(|&(path, text)| {
            let defs: Vec<DefinitionOut> = outline(path, text?)
                .into_iter()
                .map(DefinitionOut::from)
                .collect();
            let cost = count(&serde_json::to_string(&defs).expect("plain data serializes"));
            (used + cost <= share).then(|| {
                used += cost;
                defs
            })
        })
        .collect();
    (given, used)
}

/// How many of the bundle's pieces (their tokens, in bundle order) are kept so that they and
/// `outlined` tokens fit `budget`: the last give way first.
pub fn pieces_kept(pieces: &[usize], outlined: usize, budget: usize) -> usize {
    let mut total: usize = pieces.iter().sum::<usize>() + outlined;
    let mut kept = pieces.len();
    while kept > 0 && total > budget {
        kept -= 1;
        total -= pieces[kept];
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIG: &str = "class Cart:\n    def add(self, item):\n        pass\n\n    def drop(self, item):\n        pass\n";
    const SMALL: &str = "def f():\n    pass\n";

    fn cost(defs: &[DefinitionOut]) -> usize {
        serde_json::to_string(defs).unwrap().len().div_ceil(4)
    }

    #[test]
    fn outlines_take_at_most_half_the_budget_best_first_and_a_smaller_one_still_fits() {
        let count: Count = &|s: &str| s.len().div_ceil(4);
        let (all, _) = outlines(&[("a.py", Some(BIG)), ("b.py", Some(SMALL))], 10_000, count);
        let (big, small) = (
            cost(all[0].as_ref().unwrap()),
            cost(all[1].as_ref().unwrap()),
        );
        assert!(small < big);
        assert_eq!(all[0].as_ref().unwrap()[0].members.len(), 2);
        // Both fit in half of twice their sum; the first alone in half of twice its own.
        assert_eq!(
            outlines(
                &[("a.py", Some(BIG)), ("b.py", Some(SMALL))],
                2 * (big + small),
                count
            )
            .1,
            big + small
        );
        let (got, used) = outlines(
            &[("a.py", Some(BIG)), ("b.py", Some(SMALL))],
            2 * (big + small) - 1,
            count,
        );
        assert_eq!(
            (got[0].is_some(), got[1].is_some(), used),
            (true, false, big)
        );
        // The best file's does not fit; the next one's still does.
        let (got, used) = outlines(
            &[("a.py", Some(BIG)), ("b.py", Some(SMALL))],
            2 * small + 1,
            count,
        );
        assert_eq!(
            (got[0].is_some(), got[1].is_some(), used),
            (false, true, small)
        );
        // An unread file has none; a file of no known language has an empty one.
        let (got, _) = outlines(&[("a.py", None), ("notes.txt", Some("x\n"))], 100, count);
        assert_eq!(got, [None, Some(vec![])]);
    }

    #[test]
    fn pieces_give_way_from_the_end_until_all_fit() {
        assert_eq!(pieces_kept(&[10, 20, 30], 0, 60), 3);
        assert_eq!(pieces_kept(&[10, 20, 30], 1, 60), 2);
        assert_eq!(pieces_kept(&[10, 20, 30], 30, 60), 2);
        assert_eq!(pieces_kept(&[10, 20, 30], 31, 60), 1);
        assert_eq!(pieces_kept(&[10, 20, 30], 60, 60), 0);
        assert_eq!(pieces_kept(&[], 5, 0), 0);
    }
}
