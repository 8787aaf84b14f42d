//! Where the top files changed lately: code that changed in a file's last commits is likely to
//! change again (a fix follows a feature, a second pass follows the first). Each line of the
//! file now gets its age: k when it is not in the text the file had before its k-th last
//! change (1 the newest), 0 when it is in all of the last `VERSIONS` (git/recent.rs reads
//! them along HEAD's first parents). Edits not yet committed count as the newest change.
//!
//! The comparison is by lines, after the common head and tail: a line of the middle is old
//! when the earlier middle holds it as often (an unordered match: a moved line reads as old,
//! a line repeated elsewhere may too; it tells which regions changed, not the exact diff).
//! Kept per file by HEAD and by the file's stat key (an edit is read again), at most
//! `MAX_HELD` files: not by the cut, which the cut cache drops and makes again.

use super::cuts::Cut;
use super::files::StatKey;
use crate::git::recent::{earlier_texts, Kept};
use crate::git::view::Handle;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The changes of a file looked back through: the last (the two before it, at a lower weight,
/// made ruff's coverage@8k no better).
pub const VERSIONS: usize = 1;
/// The commits walked back at most, looking for them.
pub const MAX_COMMITS: usize = 200;
/// Files whose ages are kept; past it, all but those asked about are forgotten.
const MAX_HELD: usize = 256;

/// Lines' ages, by line (line n at n - 1).
pub type Ages = Arc<[u8]>;

/// A file asked about: its number, its path and its stat key.
pub type Asked<'a> = (u32, &'a str, StatKey);

/// A file asked about with its cut.
pub type File<'a> = (Asked<'a>, &'a Arc<Cut>);

#[derive(Default)]
pub struct Recent {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    view: Option<(PathBuf, Handle)>,
    /// What git's walks read, for the next walk (git/recent.rs).
    kept: Kept,
    held: HashMap<u32, (String, StatKey, Ages)>,
}

/// git's texts of files before their last changes (newest first), read for the files asked
/// whose ages were not held (`Recent::earlier`), by their numbers.
#[derive(Default)]
pub struct Earlier(HashMap<u32, Vec<Vec<u8>>>);

fn held_ages(
    held: &HashMap<u32, (String, StatKey, Ages)>,
    head: &str,
    (id, _, key): &Asked,
) -> Option<Ages> {
    held.get(id)
        .filter(|h| h.0 == head && h.1 == *key)
        .map(|h| h.2.clone())
}

impl Recent {
    /// git's earlier texts of those of `files` whose ages at `head` are not held: the part of
    /// `ages` that needs no cut, so a question reads it while it cuts the files.
    pub fn earlier(&self, root: &Path, head: &str, files: &[Asked]) -> Earlier {
        if head.is_empty() {
            return Earlier::default();
        }
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let state = &mut *guard;
        let missing: Vec<&Asked> = files
            .iter()
            .filter(|f| held_ages(&state.held, head, f).is_none())
            .collect();
        if missing.is_empty() {
            return Earlier::default();
        }
        if state.view.as_ref().is_none_or(|v| v.0 != root) {
            state.view = Some((root.to_path_buf(), Handle::new(root)));
            state.kept = Kept::default();
        }
        let handle = &state.view.as_ref().unwrap().1;
        let paths: Vec<&str> = missing.iter().map(|f| f.1).collect();
        let mut texts = earlier_texts(handle, &paths, VERSIONS, MAX_COMMITS, &mut state.kept)
            .unwrap_or_default()
            .into_iter();
        Earlier(
            missing
                .iter()
                .map(|f| (f.0, texts.next().unwrap_or_default()))
                .collect(),
        )
    }

    /// The ages of the lines of each of `files` at `head` (empty when there is no history: no
    /// ages): held, or made from their cuts and what `earlier` read for them.
    pub fn ages(&self, head: &str, files: &[File], earlier: Earlier) -> Vec<Ages> {
        let none: Ages = Arc::from(Vec::new());
        if head.is_empty() || files.is_empty() {
            return vec![none; files.len()];
        }
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let state = &mut *guard;
        let missing: Vec<(&File, &Vec<Vec<u8>>)> = files
            .iter()
            .filter_map(|f| Some((f, earlier.0.get(&f.0 .0)?)))
            .collect();
        if !missing.is_empty() && state.held.len() + missing.len() > MAX_HELD {
            // All but the files asked now are forgotten: theirs are part of this answer
            // (forgotten too, they would answer no ages, an answer that depended on the
            // questions before it).
            state
                .held
                .retain(|id, _| files.iter().any(|f| f.0 .0 == *id));
        }
        for (((id, _, key), cut), earlier) in missing {
            let ages: Ages = line_ages(&cut.text, earlier).into();
            state.held.insert(*id, (head.to_string(), *key, ages));
        }
        files
            .iter()
            .map(|f| held_ages(&state.held, head, &f.0).unwrap_or_else(|| none.clone()))
            .collect()
    }
}

fn lines(text: &[u8]) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = text.split(|&c| c == b'\n').collect();
    if out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

/// Each line's age in `text` given the texts it had before its last changes, newest first.
pub fn line_ages(text: &str, earlier: &[Vec<u8>]) -> Vec<u8> {
    let now = lines(text.as_bytes());
    let mut ages = vec![0u8; now.len()];
    for (k, old) in earlier.iter().enumerate() {
        for i in changed(&now, &lines(old)) {
            if ages[i] == 0 {
                ages[i] = (k + 1).min(u8::MAX as usize) as u8;
            }
        }
    }
    ages
}

/// The lines of `now` that `old` does not hold (see the module's note).
fn changed(now: &[&[u8]], old: &[&[u8]]) -> Vec<usize> {
    let head = now.iter().zip(old).take_while(|(a, b)| a == b).count();
    let tail = now[head..]
        .iter()
        .rev()
        .zip(old[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mut held: HashMap<&[u8], u32> = HashMap::new();
    for l in &old[head..old.len() - tail] {
        *held.entry(l).or_default() += 1;
    }
    (head..now.len() - tail)
        .filter(|&i| match held.get_mut(now[i]) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_as_old_as_the_first_earlier_text_without_it() {
        let now = "a\nb2\nc\nd3\ne\n";
        let earlier = [
            b"a\nb2\nc\nd\ne\n".to_vec(), // before the last change: d was d
            b"a\nb\nc\nd\ne\n".to_vec(),  // before the one before: b was b
        ];
        assert_eq!(line_ages(now, &earlier), [0, 2, 0, 1, 0]);
        assert_eq!(line_ages(now, &earlier[..1]), [0, 0, 0, 1, 0]);
        assert_eq!(
            line_ages("x\ny", &[Vec::new()]),
            [1, 1],
            "a new file is all new"
        );
        assert_eq!(line_ages("x\n", &[]), [0]);
    }

    #[test]
    #[cfg_attr(windows, ignore = "runs git, which a wine prefix has no git.exe for")]
    fn a_file_asked_again_keeps_its_ages_when_the_others_are_forgotten() {
        use crate::git::history::tests::git;
        use crate::testing::TempTree;
        let names: Vec<String> = (0..=MAX_HELD).map(|i| format!("f{i}.py")).collect();
        let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "a\n")).collect();
        let t = TempTree::with("recentheld", &files);
        let root = t.path();
        git(root, &["init", "-q", "-b", "main"], 0);
        git(root, &["add", "."], 0);
        git(root, &["commit", "-qm", "one"], 1);
        t.write("f0.py", "a\nb\n");
        git(root, &["commit", "-qam", "two"], 2);
        let head = Handle::new(root).head().unwrap();
        let cuts: Vec<Arc<Cut>> = names
            .iter()
            .map(|n| Arc::new(Cut::new(n, std::fs::read_to_string(root.join(n)).unwrap())))
            .collect();
        let file = |i: usize| ((i as u32, names[i].as_str(), StatKey::default()), &cuts[i]);
        let recent = Recent::default();
        let ages = |files: &[File]| {
            let asked: Vec<Asked> = files.iter().map(|f| f.0).collect();
            recent.ages(&head, files, recent.earlier(root, &head, &asked))
        };
        assert_eq!(&*ages(&[file(0)])[0], [0, 1]);
        // f0's ages are held; the others are new and fill what is held past its bound.
        let all: Vec<File> = (1..=MAX_HELD).chain([0]).map(file).collect();
        let again = ages(&all);
        assert_eq!(
            &*again[MAX_HELD],
            [0, 1],
            "the same ages, whatever was asked before"
        );
        assert!(
            again[..MAX_HELD].iter().all(|a| **a == [1]),
            "made by the first commit"
        );
    }

    #[test]
    fn moved_and_repeated_lines_are_matched_as_often_as_held() {
        let old: Vec<&[u8]> = vec![b"f", b"}", b"g", b"}"];
        let now: Vec<&[u8]> = vec![b"g", b"}", b"f", b"}", b"}"];
        assert_eq!(
            changed(&now, &old),
            [3],
            "one brace more: the tail matched the last"
        );
        assert_eq!(changed(&old, &old), Vec::<usize>::new());
    }
}
