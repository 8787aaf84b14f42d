//! One question: the files and regions that matter for a task, and the bundle.
//!
//! Every signal adds to a file's score on the scale of the best lexical match (1):
//! - `lexical`: BM25 of the task's terms over each file's terms, divided by the best file's;
//! - `symbols`: a definition named in the task (exact identifier) adds `W_SYMBOL`, shared
//!   among the files defining that name (÷ √files; names defined in more than
//!   `MAX_DEFINERS` files say nothing), half as much for a plain word (`render`) as for one
//!   that reads as code (`render_page`, `renderPage`, `` `render` ``, `render()`), and less
//!   in a file defining more names than the repository's median file (`DEFINES_DAMP`); a file
//!   the task names (`tasks/rank.rs`, `rank.rs`) adds the same, shared among the files the
//!   name may mean;
//! - `scopes`, `artifacts`, `project`: notes of the written context that match the task
//!   (tasks/written.rs; each source's best note counts 1) lift the files they speak for;
//! - `history`: the files that changed together with the top files (in the commits that
//!   changed them), the code files the last commits changed (`W_LAST`, half at the second
//!   commit back: a task often goes on from the commit before it), and small priors for
//!   recent and for frequent change (`W_CHURN`, for the files that match the task);
//! - `imports`: the top files share their score with the files they import and that import
//!   them (÷ √neighbours), lifting none past `IMPORTS_BELOW` of the best file's score.
//!
//! A file that is a test or not code counts a tenth of its score (`NOT_CODE`), and, with
//! `lexical` on, a file outside the part of the tree the task names at its start
//! (`[ty] …`, `fix(css): …`) half of it, or three quarters where only a file's name says the
//! part (tasks/scope.rs).
//!
//! When nothing scores (a task whose words no file holds: "Fix typos", "Minor tweaks"), the
//! code files are ranked by how lately they changed (`NOTHING_MATCHED`, with `history` on).
//!
//! `paths` the agent gives lift those files and pull their import neighbours up, whatever
//! signals are off. Regions of the top files are scored by the task's terms (BM25 with the
//! file index's IDF), a definition the task names, and annotations of matching artifacts;
//! a region's score is its file's (over the best file's, cubed: `FILE_FOCUS`), scaled by
//! how it compares with the file's best region (and, for a first file that fits the budget,
//! by how far it is ahead of the second: `focus::SURE`).

use super::bm25::tf_weight;
use super::bundle::{self, Count, Text};
use super::cuts::{Cut, Words, NO_REFS};
use super::files;
use super::focus;
use super::history;
use super::index::Index;
use super::meeting;
use super::outlines::{self, DefinitionOut};
use super::recent;
use super::regions::Region;
use super::scope;
use super::scores::Scores;
use super::terms;
use super::written::{Source, Target};
use crate::artifacts::srcindex::Globs;
use crate::tree::fs::Root;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The line of why of every file when nothing in the task matched and the files are ranked
/// by how lately they changed (the prompt hook stays silent on such an answer).
pub const NOTHING_MATCHED: &str = "nothing in the task matched: changed lately";

/// The signals, by the names `signals_off` takes.
pub const SIGNALS: &[&str] = &[
    "lexical",
    "symbols",
    "imports",
    "scopes",
    "artifacts",
    "project",
    "history",
];

const W_SYMBOL: f32 = 0.6;
const W_SCOPE: f32 = 0.3;
const W_ARTIFACT: f32 = 0.5;
const W_MODULE: f32 = 0.3;
const W_RECENT: f32 = 0.05;
/// What a file that matches the task gains for how often it changed (`History::churn`): code
/// that changed often changes again, and a page of examples that names the task's words
/// seldom does. Over the tuning halves of 40 histories (session 26) recall@10 summed +0.156
/// at 0.1, +0.281 at 0.2 and +0.120 at 0.3, MRR +0.153, +0.302 and +0.285.
const W_CHURN: f32 = 0.2;
const W_COCHANGE: f32 = 0.45;
/// What HEAD's commit changed (`last_commits`), half at the `LAST_HALF`th commit back.
const W_LAST: f32 = 0.4;
const LAST_HALF: f32 = 2.0;
/// The last commits whose files `last_commits` lifts: past them the lift is below the recency
/// prior's `W_RECENT`.
const LAST_COMMITS: u32 = 16;
/// More code files than this changed by the last commits share the lift out between them.
const LAST_SHARED: f32 = 24.0;
const W_IMPORT: f32 = 0.2;
/// What the imports may lift a file to, as a share of the best file's score before them.
const IMPORTS_BELOW: f32 = 0.9;
const W_PATH: f32 = 0.5;
/// A release's version file: as much as the best file's words, so it comes first.
const W_RELEASE: f32 = 1.0;
const MAX_DEFINERS: usize = 20;
/// A name counts (median ÷ n) to this power for a file defining n names, more than the
/// repository's median file: a file defining thousands of names matches a name of almost any
/// task, so each of its matches says less (earned per repository, from the index's counts).
const DEFINES_DAMP: f32 = 0.3;
/// The file paths of a task looked up (each is a pass over every path): a pasted log or stack
/// trace names hundreds, and its first ones say the most.
const MAX_NAMED_PATHS: usize = 32;
/// How many of the top files spread their score to co-changed files and import neighbours.
const SPREAD_FROM: usize = 10;
/// How many files are read for regions and offered to the bundle (at least `limit`): ten up to
/// an 8k budget, then one more for each `TOKENS_PER_FILE` of budget, at most `MAX_REGION_FILES`.
/// At 8k the files ranked past ten took 8 % of the bundle's lines and showed almost none of a
/// change's lines; at 32k the ten best files' regions are in and room is left (coverage@32k up
/// on the tuning halves, benches/README.md "Coverage@8k where it misses").
const REGION_FILES: usize = 10;
const MAX_REGION_FILES: usize = 20;
const TOKENS_PER_FILE: usize = 800;

/// The files a bundle of `budget` tokens draws on (`REGION_FILES`).
fn region_files(budget: usize) -> usize {
    (budget / TOKENS_PER_FILE).clamp(REGION_FILES, MAX_REGION_FILES)
}
/// A file's offers to the bundle weigh its score over the best file's to this power: the
/// budget goes to the top files' regions first, not to the best-matching lines of ten.
const FILE_FOCUS: i32 = 3;
/// Tests and files that are not code (docs, config) count this share of their score: a task
/// is done in the code, and its tests and docs follow it.
const NOT_CODE: f32 = 0.1;
/// And their regions are offered to the bundle at this share of their weight besides, so a
/// small budget holds the code first (a test ranked among the code filled gin's bundles).
const NOT_CODE_BUNDLE: f32 = 0.3;
/// How many of the top files the bundle looks at for lines that changed lately: past the
/// first few, a file's regions weigh little in the bundle (`FILE_FOCUS`).
const RECENT_FILES: usize = 8;
/// Regions listed per file.
const LISTED_REGIONS: usize = 3;

pub struct Ask<'a> {
    pub task: &'a str,
    pub budget: usize,
    pub paths: &'a [String],
    pub off: &'a [String],
    pub limit: usize,
    /// Give each listed file its outline (outlines.rs), within half the budget.
    pub outline: bool,
}

// The answer: declared once, here. Python reads it as `_core.TaskAnswer` (and its parts),
// typed in _core.pyi; `SCHEMA` is its JSON (`serde`) as the MCP tool's output schema, with
// what each field means, and a test holds the two to the same fields. (An outline's parts
// are declared in outlines.rs.)

/// A region of a ranked file.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, name = "TaskRegion", module = "repoctx._core")
)]
pub struct RegionOut {
    /// First line, 1-based.
    pub start: u32,
    /// Last line, inclusive.
    pub end: u32,
    /// The definition's name ("" for lines outside definitions).
    pub symbol: String,
    /// function, class, struct, enum, trait, impl, interface, module, or lines.
    pub kind: &'static str,
}

/// A ranked file.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, name = "TaskFile", module = "repoctx._core")
)]
pub struct FileOut {
    pub path: String,
    pub score: f64,
    pub why: String,
    pub regions: Vec<RegionOut>,
    /// Only with `outline`: the file's definitions and their members; absent when its outline
    /// did not fit in the budget's share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outline: Option<Vec<DefinitionOut>>,
}

/// A piece of the bundle.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, name = "TaskPiece", module = "repoctx._core")
)]
pub struct PieceOut {
    pub path: String,
    pub start: u32,
    pub end: u32,
    /// Lines start..end of the file, as they are.
    pub text: String,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, name = "TaskAnswer", module = "repoctx._core")
)]
pub struct Answer {
    pub task: String,
    pub budget: usize,
    /// The bundle's tokens: the sum of its pieces' counts (with `outline`, and of the
    /// outlines' counts as compact JSON), never over the budget.
    pub tokens: usize,
    pub files: Vec<FileOut>,
    pub bundle: Vec<PieceOut>,
}

/// The JSON Schema of `Answer` as `serde` writes it (draft-07 keywords).
pub const SCHEMA: &str = include_str!("answer.schema.json");

fn has_glob(p: &str) -> bool {
    p.contains(['*', '?', '[', '{'])
}

/// The task's words as the ranking reads them.
struct Query {
    /// Every term of the task, in order, repeats kept.
    terms: Vec<String>,
    /// The task's terms the index holds: (term id, weight by how often the task says it,
    /// term), sorted by term, so sums run in one order and two processes give the same
    /// scores to the last bit.
    known: Vec<(u32, f32, String)>,
    /// Each term and the word the task used for it, for the lines of why.
    shown: HashMap<String, String>,
}

impl Query {
    fn new(ix: &Index, task: &str) -> Query {
        let terms = terms::terms(task);
        let mut qtf: HashMap<String, u32> = HashMap::new();
        for t in &terms {
            *qtf.entry(t.clone()).or_default() += 1;
        }
        let mut shown: HashMap<String, String> = HashMap::new();
        for (_, w) in terms::words(task) {
            for p in terms::parts(w) {
                if let Some(t) = terms::term(p) {
                    shown.entry(t).or_insert_with(|| p.to_ascii_lowercase());
                }
            }
        }
        let mut known: Vec<(u32, f32, String)> = qtf
            .iter()
            .filter_map(|(t, &c)| {
                ix.lex
                    .id(t)
                    .map(|id| (id, 1.0 + (c as f32).ln(), t.clone()))
            })
            .collect();
        known.sort_by(|a, b| a.2.cmp(&b.2));
        Query {
            terms,
            known,
            shown,
        }
    }
}

pub fn answer(ix: &Index, ask: &Ask, count: Count) -> Answer {
    let on = |s: &str| !ask.off.iter().any(|o| o == s);
    let n = ix.files.len();
    let mut sc = Scores::new(n);
    let q = Query::new(ix, ask.task);
    let lexical = on("lexical");
    if lexical {
        lexical_signal(ix, &q, &mut sc);
    }
    // `sure`: the files the task names, by their path or as a release's version file.
    let (named, sure) = if on("symbols") {
        let mut sure = release_signal(ix, ask.task, &mut sc);
        let (named, by_path) = symbols_signal(ix, ask.task, &mut sc);
        sure.extend(by_path);
        (named, sure)
    } else {
        (HashSet::new(), HashSet::new())
    };
    if lexical {
        path_signal(ix, &q, &mut sc);
    }
    let art_lines = written_signals(ix, &q, &on, &mut sc);
    if on("history") {
        history_signal(ix, &mut sc);
    }
    let mut adds = if on("imports") {
        imports_signal(ix, &sc)
    } else {
        Vec::new()
    };
    adds.extend(given_paths(ix, ask.paths));
    for (o, v, why) in adds {
        let r = sc.reason(why);
        sc.add(o, v, r);
    }
    if on("history") && sc.none() {
        changed_lately(ix, &mut sc);
    }
    sc.scale(NOT_CODE, |id| ix.file(id).is_some_and(|f| !f.code()));
    if lexical {
        scope_signal(ix, ask.task, &mut sc);
    }

    // The ranking, and the regions of its top files.
    let top = sc.top(ask.limit.max(region_files(ask.budget)), ix);
    let confined = Root::open(&ix.root).ok();
    // git's earlier texts of the first files (their lines' ages) are read while the files are cut.
    let recent_asked: Vec<recent::Asked> = if on("history") {
        top.iter()
            .take(RECENT_FILES)
            .filter_map(|&id| ix.file(id).map(|f| (id, ix.path(id), ix.key(f))))
            .collect()
    } else {
        Vec::new()
    };
    let (cuts, earlier): (Vec<Option<Arc<Cut>>>, _) = rayon::join(
        || {
            top.par_iter()
                .map(|&id| confined.as_ref().and_then(|r| ix.cut(r, id)))
                .collect()
        },
        || ix.recent.earlier(&ix.root, &ix.history.head, &recent_asked),
    );
    // (In term order, as `q.known` is.) Only the terms a file holds: an index that followed
    // edits still knows a word no file says any more, which a fresh build does not, and the
    // share of the task's words that meet (tasks/meeting.rs) must not count it.
    let idf: Vec<(&str, f32)> = if lexical {
        q.known
            .iter()
            .filter(|(id, _, _)| ix.lex.df(*id) > 0)
            .map(|(id, w, t)| (t.as_str(), ix.lex.idf(*id) * w))
            .collect()
    } else {
        Vec::new()
    };
    let said = Said::new(&q, ask.task, &named, lexical, on("symbols"));
    // Each file's regions scored, and how far the task's words meet in one of them.
    let (scored, meets): (Vec<Vec<(Region, f32)>>, Vec<f32>) = top
        .par_iter()
        .zip(&cuts)
        .map(|(&id, cut)| {
            let Some(cut) = cut else {
                return (Vec::new(), 0.0);
            };
            region_scores(
                cut,
                &idf,
                &said,
                art_lines.get(&id).map_or(&[][..], |v| v.as_slice()),
            )
        })
        .unzip();
    let ages = if on("history") {
        recent_ages(ix, &top, &cuts, earlier)
    } else {
        Vec::new()
    };
    let (mut files, named_files) = listing(ix, ask.limit, &q, &sc, &top, &scored, &meets, &sure);
    let outlined = if ask.outline {
        outline_listed(ix, &mut files, ask.limit, &top, &cuts, ask.budget, count)
    } else {
        0
    };
    // The listed files in the order of their scores with the words' meeting (tasks/meeting.rs),
    // once the outlines have shared the budget in the ranking's order.
    meeting::order(&mut files, &named_files, |f| f.score);
    let (bundle, tokens) = bundle_of(
        ix,
        ask.budget,
        outlined,
        count,
        &sc,
        &top,
        &cuts,
        &scored,
        &ages,
        on("symbols"),
    );
    Answer {
        task: ask.task.to_string(),
        budget: ask.budget,
        tokens,
        files,
        bundle,
    }
}

/// Files outside the part of the tree the task names at its start count `scope::OUTSIDE` of
/// their score when some file scored is under a directory of that name, else
/// `scope::OUTSIDE_NAMED` when some file scored is named so (tasks/scope.rs). The files inside
/// say so in their why, as strong as what they would have lost outside.
fn scope_signal(ix: &Index, task: &str, sc: &mut Scores) {
    let Some(name) = scope::of(task) else {
        return;
    };
    let mut under = vec![false; ix.files.len()];
    for (dir, ids) in &ix.by_dir {
        if scope::holds(&name, dir) {
            for &id in ids {
                under[id as usize] = true;
            }
        }
    }
    let named = |id: u32| scope::is_named(&name, ix.path(id).rsplit('/').next().unwrap_or(""));
    // The scored files inside, each once: (file, under a named directory, else named so).
    let kept: Vec<(u32, bool)> = sc
        .touched()
        .iter()
        .filter_map(|&id| {
            if under[id as usize] {
                Some((id, true))
            } else {
                named(id).then_some((id, false))
            }
        })
        .collect();
    let by = if kept.iter().any(|k| k.1) {
        scope::OUTSIDE
    } else if !kept.is_empty() {
        scope::OUTSIDE_NAMED
    } else {
        return;
    };
    let mut inside = under;
    for &(id, _) in &kept {
        inside[id as usize] = true;
    }
    sc.scale(by, |id| !inside[id as usize]);
    let in_dir = sc.reason(format!("under a directory the task's scope `{name}` names"));
    let by_name = sc.reason(format!("named for the task's scope `{name}`"));
    for (id, dir) in kept {
        sc.explain(
            id,
            sc.get(id) * (1.0 - by),
            if dir { in_dir } else { by_name },
        );
    }
}

/// BM25's k1 for a file's score (regions and notes keep `bm25::K1`, 1.2): the file a task is
/// about says its words again and again, and at 1.2 a file saying them once in a few lines came
/// close (summed over 31 tuning halves, recall@10 +0.161 and MRR +0.089; on the held-out halves
/// the MRR carried, the recall did not: benches/README.md).
const K1_FILES: f32 = 2.0;

/// `lexical`: BM25 of the task's terms over each file's terms, divided by the best file's
/// (each file's share stays in `sc.lexical`).
fn lexical_signal(ix: &Index, q: &Query, sc: &mut Scores) {
    let query: Vec<(u32, f32)> = q.known.iter().map(|q| (q.0, q.1)).collect();
    ix.lex
        .each_score(&query, K1_FILES, |doc, v| sc.add_lexical(doc, v));
    sc.lexical_done();
}

/// The files the path words look at: the best by the other signals so far.
const PATH_POOL: usize = 100;
const W_PATH_WORDS: f32 = 0.6;

/// Path words apart from the body: among the `PATH_POOL` best files, the task's words in a
/// file's path (its directories and name, plumbing left out), each ÷ √(files of the pool whose
/// path holds it), × W_PATH_WORDS ÷ √(the path's word count). `examples/form/src/main.rs` for
/// "fix the form example"; a word many paths hold (`flag` in `flag_*.go`) chooses little.
/// The root, not the count: a name that qualifies the word (`cursed_renderer.go`, the
/// renderer that does the work) is not half as much about it as the bare `renderer.go` that
/// declares it.
fn path_signal(ix: &Index, q: &Query, sc: &mut Scores) {
    let said: HashSet<&str> = q.known.iter().map(|k| k.2.as_str()).collect();
    if said.is_empty() {
        return;
    }
    let mut found: Vec<(u32, Vec<String>, usize)> = Vec::new();
    let mut holders: HashMap<String, usize> = HashMap::new();
    for id in sc.top(PATH_POOL, ix) {
        let Some(path) = ix.held_path(id) else {
            continue;
        };
        let mut words: Vec<String> = Vec::new();
        for (_, w) in terms::words(files::path_stem(path)) {
            terms::each_part_term(w, |t| {
                if !scope::PLUMBING.contains(&t) && !words.iter().any(|h| h == t) {
                    words.push(t.to_string());
                }
            });
        }
        let n = words.len();
        let met: Vec<String> = words
            .into_iter()
            .filter(|t| said.contains(t.as_str()))
            .collect();
        if met.is_empty() {
            continue;
        }
        for t in &met {
            *holders.entry(t.clone()).or_default() += 1;
        }
        found.push((id, met, n));
    }
    for (id, met, n) in found {
        let v: f32 = met
            .iter()
            .map(|t| 1.0 / (holders[t] as f32).sqrt())
            .sum::<f32>()
            * W_PATH_WORDS
            / (n as f32).sqrt();
        let shown: Vec<&str> = met
            .iter()
            .map(|t| q.shown.get(t).map_or(t.as_str(), String::as_str))
            .collect();
        let r = sc.reason(format!("its path: {}", shown.join(", ")));
        sc.add(id, v, r);
    }
}

/// `symbols`: the definitions and files the task names; returns the names it wrote as code,
/// which also choose regions, and the files it names by their path.
fn symbols_signal(ix: &Index, task: &str, sc: &mut Scores) -> (HashSet<String>, HashSet<u32>) {
    let mut named: HashSet<String> = HashSet::new();
    let mut by_path: HashSet<u32> = HashSet::new();
    // A plain word (`fields`, `required`) that a file happens to define counts once per
    // file, its best: a large file defining thousands of names matches many words of any
    // task, and summed they pulled it above the file the task is about.
    let mut plain: HashMap<u32, (f32, String)> = HashMap::new();
    let damp = defines_damp(ix);
    for (name, code) in terms::identifiers(task) {
        let Some(files) = ix.definers(&name) else {
            continue;
        };
        if files.len() > MAX_DEFINERS {
            continue;
        }
        let w = W_SYMBOL * if code { 1.0 } else { 0.5 } / (files.len() as f32).sqrt();
        if !code {
            for &f in files {
                let w = w * damp(f);
                if plain.get(&f).is_none_or(|had| had.0 < w) {
                    plain.insert(f, (w, name.clone()));
                }
            }
            continue;
        }
        named.insert(name.clone());
        let r = sc.reason(format!("defines `{name}`"));
        for &f in files {
            sc.add(f, w * damp(f), r);
        }
    }
    let mut plain: Vec<(u32, (f32, String))> = plain.into_iter().collect();
    plain.sort_by_key(|p| p.0);
    for (f, (w, name)) in plain {
        let r = sc.reason(format!("defines `{name}`"));
        sc.add(f, w, r);
    }
    for p in terms::paths(task).into_iter().take(MAX_NAMED_PATHS) {
        let files = ix.named(p);
        if files.is_empty() || files.len() > MAX_DEFINERS {
            continue;
        }
        let w = W_SYMBOL / (files.len() as f32).sqrt();
        let r = sc.reason(format!("named in the task: {p}"));
        for f in files {
            sc.add(f, w, r);
            by_path.insert(f);
        }
    }
    (named, by_path)
}

/// The code files a release names by convention: named `version`, `versions`, `_version`,
/// `__version__`, `__about__` or `__init__` (any extension) and holding the word `version`.
const RELEASE_STEMS: &[&str] = &[
    "version",
    "versions",
    "_version",
    "__version__",
    "__about__",
    "__init__",
];
/// Where none of those holds it, a program's `main` (fzf's `main.go`: `var version = …`).
const RELEASE_MAIN: &[&str] = &["main"];
/// Sphinx's `conf.py` holds the release too (alembic's `release = "1.16.3"` changes alone in
/// its "- 1.16.4" commits), but in most projects it reads the version from the package: it
/// comes after the package's file, lifted by this share of W_RELEASE.
const RELEASE_CONF: &str = "conf.py";
const W_RELEASE_CONF: f32 = 0.25;

/// A task announcing a release (`terms::names_a_release`) names the file holding the version
/// by convention: W_RELEASE to each (÷ √files), none when more than MAX_DEFINERS qualify, and
/// W_RELEASE_CONF to each Sphinx `conf.py` holding the word. Returns those files.
fn release_signal(ix: &Index, task: &str, sc: &mut Scores) -> HashSet<u32> {
    if !terms::names_a_release(task) {
        return HashSet::new();
    }
    let Some(id) = terms::term("version").and_then(|t| ix.lex.id(&t)) else {
        return HashSet::new();
    };
    let holding = |named: &dyn Fn(&str) -> bool| -> Vec<u32> {
        ix.lex
            .postings(id)
            .map(|p| p.0)
            .filter(|&f| {
                ix.file(f).is_some_and(|file| {
                    let path = ix.path(f);
                    file.code() && named(path.rsplit('/').next().unwrap_or(path))
                })
            })
            .collect()
    };
    let stem_in = |stems: &'static [&'static str]| {
        move |name: &str| stems.contains(&name.split('.').next().unwrap_or(name))
    };
    let mut files = holding(&stem_in(RELEASE_STEMS));
    if files.is_empty() {
        files = holding(&stem_in(RELEASE_MAIN));
    }
    let confs = holding(&|name: &str| name == RELEASE_CONF);
    if files.is_empty() && confs.is_empty()
        || files.len() > MAX_DEFINERS
        || confs.len() > MAX_DEFINERS
    {
        return HashSet::new();
    }
    let r = sc.reason("holds the version a release changes".to_string());
    let w = W_RELEASE / (files.len().max(1) as f32).sqrt();
    for &f in &files {
        sc.add(f, w, r);
    }
    for &f in &confs {
        sc.add(
            f,
            W_RELEASE * W_RELEASE_CONF / (confs.len() as f32).sqrt(),
            r,
        );
    }
    files.into_iter().chain(confs).collect()
}

/// What a name defined in file `f` counts for, as a share: 1 up to the repository's median
/// count of names defined per file (among files defining any), (median ÷ n)^`DEFINES_DAMP`
/// above it.
fn defines_damp(ix: &Index) -> impl Fn(u32) -> f32 + '_ {
    let median = ix.defines_median();
    move |f| {
        let n = ix.defined_count(f);
        if n > median {
            (median as f32 / n as f32).powf(DEFINES_DAMP)
        } else {
            1.0
        }
    }
}

/// What the notes of one source lift over the files that already score (the pool): an
/// artifact's path globs, a module's subtree.
#[derive(Default)]
struct Pooled {
    globs: Vec<(Globs, f32, u32)>,
    subtrees: Vec<(String, f32, u32)>,
}

/// `scopes`, `artifacts`, `project`: the notes of the written context that match the task,
/// in the order the notes match (one sum order, whatever is off); returns the annotated
/// lines of each file with their artifact's match, which also choose regions.
fn written_signals(
    ix: &Index,
    q: &Query,
    on: &dyn Fn(&str) -> bool,
    sc: &mut Scores,
) -> HashMap<u32, Vec<(u32, f32)>> {
    let mut art_lines: HashMap<u32, Vec<(u32, f32)>> = HashMap::new();
    let mut pooled = Pooled::default();
    for (note, s) in ix.written.matches(&q.terms) {
        match (&note.target, note.source) {
            (Target::Dir(d), Source::Scope) if on("scopes") => {
                let r = sc.reason(format!("{} describes it", note.label));
                for &f in ix.by_dir.get(d).into_iter().flatten() {
                    sc.add(f, W_SCOPE * s, r);
                }
            }
            (Target::File(p), Source::Scope) if on("scopes") => {
                if let Some(f) = ix.id_of(p) {
                    let r = sc.reason(format!("its purpose in {} matches", note.label));
                    sc.add(f, W_SCOPE * s, r);
                }
            }
            (Target::Artifact { id, paths }, Source::Artifact) if on("artifacts") => {
                artifact_note(
                    ix,
                    &note.label,
                    id,
                    paths,
                    s,
                    sc,
                    &mut art_lines,
                    &mut pooled,
                );
            }
            (Target::Module { path, key_files }, Source::Module) if on("project") => {
                let r = sc.reason(format!("key file of {}", note.label));
                for k in key_files {
                    if let Some(f) = ix.id_of(k.as_str()) {
                        sc.add(f, W_MODULE * s, r);
                    }
                }
                let r = sc.reason(format!("in {}", note.label));
                pooled.subtrees.push((path.clone(), s, r));
            }
            _ => {}
        }
    }
    if !pooled.globs.is_empty() || !pooled.subtrees.is_empty() {
        lift_pool(ix, &pooled, sc);
    }
    art_lines
}

/// One artifact that matches the task: the files annotated with it, and the files of its
/// paths (literal ones now, globs over the pool later).
#[allow(clippy::too_many_arguments)]
fn artifact_note(
    ix: &Index,
    label: &str,
    id: &str,
    paths: &[String],
    s: f32,
    sc: &mut Scores,
    art_lines: &mut HashMap<u32, Vec<(u32, f32)>>,
    pooled: &mut Pooled,
) {
    for &(f, line) in ix.annotated.get(id).into_iter().flatten() {
        art_lines.entry(f).or_default().push((line, s));
    }
    let mut lifted: HashSet<u32> = HashSet::new();
    let r = sc.reason(format!("annotated with {label}"));
    for &(f, _) in ix.annotated.get(id).into_iter().flatten() {
        if lifted.insert(f) {
            sc.add(f, W_ARTIFACT * s, r);
        }
    }
    let r = sc.reason(format!("in the paths of {label}"));
    let (globs, literal): (Vec<&String>, Vec<&String>) = paths.iter().partition(|p| has_glob(p));
    for p in literal {
        let p = p.trim_start_matches("./").trim_end_matches('/');
        let ids: Vec<u32> = match ix.id_of(p) {
            Some(f) => vec![f],
            None => ix.by_dir.get(p).cloned().unwrap_or_default(),
        };
        for f in ids {
            if lifted.insert(f) {
                sc.add(f, W_ARTIFACT * s * 0.5, r);
            }
        }
    }
    if !globs.is_empty() {
        let owned: Vec<String> = globs.into_iter().cloned().collect();
        pooled.globs.push((Globs::new(&owned), s, r));
    }
}

/// Artifacts' globs and modules' subtrees lift the files that already score: matching every
/// path of a large tree against them would cost more than the rest of the question.
fn lift_pool(ix: &Index, pooled: &Pooled, sc: &mut Scores) {
    // (Each file's notes add in the notes' order, whatever the order of the files.)
    let pool: Vec<u32> = sc
        .touched()
        .iter()
        .copied()
        .filter(|&i| sc.get(i) > 0.0)
        .collect();
    for id in pool {
        let Some(path) = ix.held_path(id) else {
            continue;
        };
        for (g, s, r) in &pooled.globs {
            if !g.matches(path).is_empty() {
                sc.add(id, W_ARTIFACT * s * 0.5, *r);
            }
        }
        for (dir, s, r) in &pooled.subtrees {
            let inside = path
                .strip_prefix(dir.as_str())
                .is_some_and(|rest| rest.starts_with('/'));
            if dir.is_empty() || dir == "." || inside {
                sc.add(id, W_MODULE * s * 0.3, *r);
            }
        }
    }
}

/// `history`: small priors for recent and frequent change, what the last commits changed, and
/// the files that changed together with the top files.
fn history_signal(ix: &Index, sc: &mut Scores) {
    let mut matched = false;
    // The code files one of the last commits changed, and how many commits back (one pass
    // over every file for both).
    let mut lately: Vec<(u32, u32)> = Vec::new();
    for id in 0..ix.files.len() as u32 {
        if sc.get(id) > 0.0 {
            matched = true;
            sc.bump(id, W_RECENT * ix.recency(id) + W_CHURN * ix.churn(id));
        }
        let age = history::commits_since(ix.recency(id)).filter(|&age| age < LAST_COMMITS);
        if let Some(age) = age.filter(|_| ix.file(id).is_some_and(|f| f.code())) {
            lately.push((id, age));
        }
    }
    // A task nothing matched is left to `changed_lately` (the hook stays silent on it).
    if matched {
        last_commits(&lately, sc);
    }
    let top = sc.top(SPREAD_FROM, ix);
    let best = top.first().map_or(0.0, |&t| sc.get(t));
    // A file co-changed with several top files counts its strongest tie only (they are
    // often the same commits); a tie is the share of the top file's commits that changed
    // both, damped for files with few commits (1 of 1 is 0.5).
    let mut ties: HashMap<u32, (f32, String)> = HashMap::new();
    for &t in &top {
        let Some(path) = ix.held_path(t) else {
            continue;
        };
        let share = sc.get(t) / best;
        let total = ix.history.changes(path) as f32;
        for (other, k) in ix.history.changed_with(path).into_iter().take(20) {
            let Some(o) = ix.id_of(other) else {
                continue;
            };
            let v = W_COCHANGE * share * k as f32 / (total + 1.0);
            if ties.get(&o).is_none_or(|had| had.0 < v) {
                ties.insert(
                    o,
                    (
                        v,
                        format!(
                            "changed with {path} in {k} commit{}",
                            if k == 1 { "" } else { "s" }
                        ),
                    ),
                );
            }
        }
    }
    let mut ties: Vec<(u32, (f32, String))> = ties.into_iter().collect();
    ties.sort_by_key(|t| t.0);
    for (o, (v, why)) in ties {
        let r = sc.reason(why);
        sc.add(o, v, r);
    }
}

/// What one of the last commits changed: each code file (not a test) that one of the last
/// `LAST_COMMITS` changed (`lifted`, with the commits since its last change, 0 for HEAD's)
/// adds `W_LAST` × `LAST_HALF` ÷ (`LAST_HALF` + commits since), whatever the task says, shared out (× `LAST_SHARED` ÷ their number)
/// when those commits changed more code files than `LAST_SHARED`. A task most often goes on from
/// the commit before it: a format or lint pass, review fixes, the next step of a series
/// ("cargo fmt", "improvements from PR review"), where the task says no word of the files it
/// changes. Where the last commits changed many files (many people at work on unrelated
/// things: ruff), any one of them is less likely to be the next task's.
fn last_commits(lifted: &[(u32, u32)], sc: &mut Scores) {
    let share = (LAST_SHARED / lifted.len().max(1) as f32).min(1.0);
    let mut reasons: Vec<Option<u32>> = vec![None; LAST_COMMITS as usize];
    for &(id, age) in lifted {
        let r = *reasons[age as usize].get_or_insert_with(|| {
            sc.reason(match age {
                0 => "changed in HEAD's commit".to_string(),
                1 => "changed in the commit before HEAD's".to_string(),
                n => format!("changed {n} commits before HEAD's"),
            })
        });
        sc.add(id, share * W_LAST * LAST_HALF / (LAST_HALF + age as f32), r);
    }
}

/// When nothing matched the task: each code file (not a test) by how lately it changed. A
/// task that says only "Fix typos" is most often about the code changing now (the recent
/// commits of a series), and an empty answer helps no one.
fn changed_lately(ix: &Index, sc: &mut Scores) {
    let r = sc.reason(NOTHING_MATCHED.to_string());
    for id in 0..ix.files.len() as u32 {
        if ix.file(id).is_some_and(|f| f.code()) {
            sc.add(id, W_RECENT * ix.recency(id), r);
        }
    }
}

/// `imports`: what the top files share with the files they import and that import them
/// (added by the caller, after the paths given are weighed on the same scores). A file is
/// lifted to at most `IMPORTS_BELOW` of the best file's score: a module most of the top files
/// import (`lib.rs`, `__init__.py`, `_types.py`) gathers a share from each and passed the
/// file the task is about; it still climbs among the rest.
fn imports_signal(ix: &Index, sc: &Scores) -> Vec<(u32, f32, String)> {
    let mut adds = Vec::new();
    let top = sc.top(SPREAD_FROM, ix);
    let best = top.first().map_or(0.0, |&t| sc.get(t));
    for &t in &top {
        let Some(path) = ix.held_path(t) else {
            continue;
        };
        let (out, inc) = ix.neighbours(t);
        let w = W_IMPORT * sc.get(t) / best / ((out.len() + inc.len()).max(1) as f32).sqrt();
        adds.extend(out.iter().map(|&o| (o, w, format!("imported by {path}"))));
        adds.extend(inc.iter().map(|&o| (o, w, format!("imports {path}"))));
    }
    let mut room: HashMap<u32, f32> = HashMap::new();
    for (o, v, _) in adds.iter_mut() {
        let left = room
            .entry(*o)
            .or_insert_with(|| (IMPORTS_BELOW * best - sc.get(*o)).max(0.0));
        *v = v.min(*left);
        *left -= *v;
    }
    adds
}

/// The paths the agent gave (files or directories) and their import neighbours, whatever
/// signals are off.
fn given_paths(ix: &Index, paths: &[String]) -> Vec<(u32, f32, String)> {
    let mut adds = Vec::new();
    for p in paths {
        let p = p.trim_start_matches("./").trim_end_matches('/');
        let given: Vec<u32> = match ix.id_of(p) {
            Some(f) => vec![f],
            None => ix
                .by_dir
                .get(if p.is_empty() { "." } else { p })
                .cloned()
                .unwrap_or_default(),
        };
        for g in given {
            adds.push((g, W_PATH * 0.5, format!("given: {p}")));
            let (out, inc) = ix.neighbours(g);
            let w = W_PATH / ((out.len() + inc.len()).max(1) as f32).sqrt();
            let gp = ix.held_path(g).unwrap_or(p);
            adds.extend(
                out.iter()
                    .map(|&o| (o, w, format!("imported by {gp} (given)"))),
            );
            adds.extend(inc.iter().map(|&o| (o, w, format!("imports {gp} (given)"))));
        }
    }
    adds
}

/// The listed files in the ranking's order, each with its three strongest lines of why, its
/// best regions, and its score with the task's words' meeting in one of them (`meets`, by
/// rank: tasks/meeting.rs; a tenth for tests and docs, as their score); and which of them the
/// task names (`sure`).
#[allow(clippy::too_many_arguments)]
fn listing(
    ix: &Index,
    limit: usize,
    q: &Query,
    sc: &Scores,
    top: &[u32],
    scored: &[Vec<(Region, f32)>],
    meets: &[f32],
    sure: &HashSet<u32>,
) -> (Vec<FileOut>, Vec<bool>) {
    let listed_ids: HashSet<u32> = top.iter().take(limit).copied().collect();
    let mut mine: HashMap<u32, Vec<(f32, String)>> = HashMap::new();
    for &(id, v, r) in &sc.contributions {
        if listed_ids.contains(&id) {
            mine.entry(id)
                .or_default()
                .push((v, sc.reasons[r as usize].clone()));
        }
    }
    let mut files = Vec::new();
    let mut named = Vec::new();
    for (rank, &id) in top.iter().enumerate().take(limit) {
        let Some(path) = ix.held_path(id) else {
            continue;
        };
        let mut whys: Vec<(f32, String)> = mine.remove(&id).unwrap_or_default();
        if sc.lexical(id) > 0.0 {
            let mut hit: Vec<(f32, &str)> = q
                .known
                .iter()
                .filter(|(t, _, _)| ix.lex.holds(*t, id))
                .map(|(t, _, word)| {
                    (
                        ix.lex.idf(*t),
                        q.shown.get(word).map_or(word.as_str(), String::as_str),
                    )
                })
                .collect();
            hit.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
            let words: Vec<&str> = hit.iter().take(4).map(|h| h.1).collect();
            whys.push((sc.lexical(id), format!("words: {}", words.join(", "))));
        }
        whys.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut seen = HashSet::new();
        let why: Vec<String> = whys
            .into_iter()
            .filter(|w| seen.insert(w.1.clone()))
            .take(3)
            .map(|w| w.1)
            .collect();
        let mut listed: Vec<&(Region, f32)> = scored[rank].iter().filter(|r| r.1 > 0.0).collect();
        listed.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.start.cmp(&b.0.start)));
        listed.truncate(LISTED_REGIONS); // best first
        let not_code = ix.file(id).is_some_and(|f| !f.code());
        let meet = meeting::W_MEET * meets[rank] * if not_code { NOT_CODE } else { 1.0 };
        files.push(FileOut {
            path: path.to_string(),
            score: ((sc.get(id) + meet) as f64 * 10_000.0).round() / 10_000.0,
            why: why.join("; "),
            regions: listed
                .into_iter()
                .map(|(r, _)| RegionOut {
                    start: r.start,
                    end: r.end,
                    symbol: r.symbol.clone(),
                    kind: r.kind,
                })
                .collect(),
            outline: None,
        });
        named.push(sure.contains(&id));
    }
    (files, named)
}

/// Give the listed files (the first `limit` of `top` the index holds) their outlines over
/// the text their cut read; returns the tokens the outlines take.
fn outline_listed(
    ix: &Index,
    files: &mut [FileOut],
    limit: usize,
    top: &[u32],
    cuts: &[Option<Arc<Cut>>],
    budget: usize,
    count: Count,
) -> usize {
    let texts: Vec<(&str, Option<&str>)> = top
        .iter()
        .zip(cuts)
        .take(limit)
        .filter_map(|(&id, cut)| {
            ix.file(id)?;
            Some((ix.path(id), cut.as_ref().map(|c| c.text.as_str())))
        })
        .collect();
    let (given, used) = outlines::outlines(&texts, budget, count);
    for (f, outline) in files.iter_mut().zip(given) {
        f.outline = outline;
    }
    used
}

/// The bundle: every region of the top files offered at its file's focus and its own score,
/// cut to the budget; its last pieces give way to `outlined` tokens. Returns the pieces and
/// the tokens they and the outlines take.
#[allow(clippy::too_many_arguments)]
fn bundle_of(
    ix: &Index,
    budget: usize,
    outlined: usize,
    count: Count,
    sc: &Scores,
    top: &[u32],
    cuts: &[Option<Arc<Cut>>],
    scored: &[Vec<(Region, f32)>],
    ages: &[recent::Ages],
    link: bool,
) -> (Vec<PieceOut>, usize) {
    let paths: Vec<String> = top.iter().map(|&id| ix.path(id).to_string()).collect();
    let cut_texts: Vec<Text> = cuts
        .iter()
        .map(|c| Text::new(c.as_ref().map_or("", |c| c.text.as_str())))
        .collect();
    let focus: Vec<focus::Scored> = scored
        .iter()
        .zip(cuts)
        .enumerate()
        .map(|(rank, (regions, cut))| focus::Scored {
            weight: (sc.get(top[rank]) / sc.get(top[0])).powi(FILE_FOCUS)
                * if ix.file(top[rank]).is_some_and(|f| !f.code()) {
                    NOT_CODE_BUNDLE
                } else {
                    1.0
                },
            regions,
            refs: cut.as_ref().map_or(&NO_REFS, |c| &c.refs),
            ages: ages.get(rank).map_or(&[][..], |a| a),
        })
        .collect();
    let lead = match (top, cuts.first()) {
        ([first, second, ..], Some(Some(cut)))
            if sc.get(*first) > 0.0 && count(&cut.text) <= budget =>
        {
            1.0 - sc.get(*second) / sc.get(*first)
        }
        _ => 0.0,
    };
    let offers = focus::offers(&focus, link, lead);
    let (mut pieces, mut tokens) = bundle::cut(&cut_texts, &offers, budget, count);
    if outlined > 0 {
        let counts: Vec<usize> = pieces.iter().map(|p| p.tokens).collect();
        pieces.truncate(outlines::pieces_kept(&counts, outlined, budget));
        tokens = pieces.iter().map(|p| p.tokens).sum::<usize>() + outlined;
    }
    let bundle = pieces
        .into_iter()
        .map(|p| PieceOut {
            path: paths[p.file].clone(),
            start: p.start,
            end: p.end,
            text: cut_texts[p.file].slice(p.start, p.end).to_string(),
        })
        .collect();
    (bundle, tokens)
}

/// The ages of the lines of the first `RECENT_FILES` of `top` (tasks/recent.rs), by rank, from
/// the texts `earlier` read for them.
fn recent_ages(
    ix: &Index,
    top: &[u32],
    cuts: &[Option<Arc<Cut>>],
    earlier: recent::Earlier,
) -> Vec<recent::Ages> {
    let files: Vec<(usize, recent::File)> = top
        .iter()
        .zip(cuts)
        .take(RECENT_FILES)
        .enumerate()
        .filter_map(|(rank, (&id, cut))| {
            let f = ix.file(id)?;
            Some((rank, ((id, ix.path(id), ix.key(f)), cut.as_ref()?)))
        })
        .collect();
    let asked: Vec<recent::File> = files.iter().map(|f| f.1).collect();
    let got = ix.recent.ages(&ix.history.head, &asked, earlier);
    let mut ages: Vec<recent::Ages> = vec![Arc::from(Vec::new()); top.len().min(RECENT_FILES)];
    for ((rank, _), a) in files.iter().zip(got) {
        ages[*rank] = a;
    }
    ages
}

/// What the task says that regions are scored by beyond their words: its terms (for the
/// names of definitions, when `names`), the names it writes as code (when `code`) and the
/// definitions it names (`symbols_signal`); built once a question, hashed with `terms::Fnv`
/// (each is looked up by every region of the top files).
struct Said<'a> {
    terms: terms::WordSet<'a>,
    code: terms::NameSet,
    named: terms::WordSet<'a>,
    names: bool,
}

impl<'a> Said<'a> {
    fn new(
        q: &'a Query,
        task: &str,
        named: &'a HashSet<String>,
        names: bool,
        code: bool,
    ) -> Said<'a> {
        let code = if code {
            terms::identifiers(task)
                .into_iter()
                .filter(|(_, code)| *code)
                .map(|(name, _)| name)
                .collect()
        } else {
            terms::NameSet::default()
        };
        Said {
            terms: q.terms.iter().map(String::as_str).collect(),
            code,
            named: named.iter().map(String::as_str).collect(),
            names,
        }
    }
}

/// Each region of a file with how much the task speaks for it: BM25 of the task's terms in
/// it, each term weighted by its IDF over the index and over the file's regions (over the
/// file's best region), 1 for a definition the task names as code, and the match of an
/// artifact annotated inside it, and what `said` gives it (tasks/focus.rs). `query` is the
/// task's terms with their weights, in byte order (the order of each region's words, so sums
/// run as they did over the words). With them, how far the task's words meet in one region
/// (`meeting::together`).
fn region_scores(
    cut: &Cut,
    query: &[(&str, f32)],
    said: &Said,
    art: &[(u32, f32)],
) -> (Vec<(Region, f32)>, f32) {
    let avg = cut.counts.iter().map(|c| c.0 as f32).sum::<f32>() / cut.counts.len().max(1) as f32;
    // The task's terms in each region, (term, count) in term order, each word looked up once
    // (it was twice, with SipHash: most of a warm question's time on ruff's large files).
    let place = query_places(&cut.terms, query);
    let mut hits: Vec<(u32, u32)> = Vec::new();
    let mut ends: Vec<usize> = Vec::with_capacity(cut.counts.len());
    for (_, words) in &cut.counts {
        shared_terms(words, &place, |q, tf| hits.push((q as u32, tf)));
        ends.push(hits.len());
    }
    // A word in most regions of the file (`type` all through types.rs) tells none of them
    // apart: each word's weight is its IDF over the index times its IDF over the regions.
    let mut in_regions = vec![0u32; query.len()];
    for &(q, _) in &hits {
        in_regions[q as usize] += 1;
    }
    let local = |q: u32| super::bm25::idf(cut.counts.len() as u32, in_regions[q as usize]);
    let mut from = 0;
    let lex: Vec<f32> = cut
        .counts
        .iter()
        .zip(&ends)
        .map(|((len, _), &end)| {
            let sum = hits[from..end]
                .iter()
                .map(|&(q, tf)| {
                    query[q as usize].1 * local(q) * tf_weight(tf as f32, *len as f32, avg)
                })
                .sum();
            from = end;
            sum
        })
        .collect();
    let best = lex.iter().copied().fold(0f32, f32::max);
    let meets = meeting::together(query, &hits, &ends, cut.counts.iter().map(|c| c.0));
    let named = focus::named(&cut.refs.names, &said.code);
    let scored = cut
        .regions
        .iter()
        .cloned()
        .zip(lex)
        .zip(&cut.refs.of)
        .map(|((r, l), refs)| {
            let mut raw = if best > 0.0 { l / best } else { 0.0 };
            if !r.symbol.is_empty() && r.kind != "lines" && said.named.contains(r.symbol.as_str()) {
                raw += 1.0;
            }
            if said.names && r.kind != "lines" {
                raw += focus::W_NAME * focus::name_words(&r.symbol, &said.terms);
            }
            if focus::uses_named(refs, &named) {
                raw += focus::W_USES_NAMED;
            }
            raw += art
                .iter()
                .filter(|(line, _)| r.start <= *line && *line <= r.end)
                .map(|(_, s)| 0.5 * s)
                .fold(0f32, f32::max);
            (r, raw)
        })
        .collect();
    (scored, meets)
}

/// Each term of a cut (`Cut::terms`), its place in the query, if it is there: each term of the
/// file looked up once.
fn query_places(cut_terms: &[Box<str>], query: &[(&str, f32)]) -> Vec<Option<u32>> {
    let at: terms::WordMap<u32> = query
        .iter()
        .enumerate()
        .map(|(i, q)| (q.0, i as u32))
        .collect();
    cut_terms.iter().map(|t| at.get(&**t).copied()).collect()
}

/// Calls `hit(query index, count)` for each of `words` that the query holds (`place`, from
/// `query_places`), in the order of `words` (by term).
fn shared_terms(words: &Words, place: &[Option<u32>], mut hit: impl FnMut(usize, u32)) {
    for &(w, tf) in words {
        if let Some(i) = place[w as usize] {
            hit(i as usize, tf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::options::Options;
    use crate::testing::TempTree;

    fn ask<'a>(task: &'a str, paths: &'a [String], off: &'a [String]) -> Ask<'a> {
        Ask {
            task,
            budget: 2000,
            paths,
            off,
            limit: 10,
            outline: false,
        }
    }

    fn tree() -> TempTree {
        let mut big = String::from("\"\"\"Orders: building, pricing and shipping.\"\"\"\nfrom shop.tax import tax_rate\n\n");
        for i in 0..30 {
            big.push_str(&format!(
                "def helper_{i}(order):\n    return order.lines[{i}]\n\n\n"
            ));
        }
        big.push_str("def apply_discount(order, coupon):\n    \"\"\"Take a coupon's percentage off the order total.\"\"\"\n    return order.total * (1 - coupon.percent / 100)\n\n\n");
        for i in 30..60 {
            big.push_str(&format!(
                "def helper_{i}(order):\n    return order.lines[{i}]\n\n\n"
            ));
        }
        TempTree::with(
            "task-rank",
            &[
                ("shop/orders.py", &big),
                ("shop/tax.py", "def tax_rate(country):\n    return 0.2\n"),
                (
                    "shop/cli.py",
                    "from shop.orders import helper_1\n\ndef main():\n    helper_1(None)\n",
                ),
                ("docs/guide.md", "# Guide\n\nHow to ship an order.\n"),
                (
                    "web/page.ts",
                    "export function renderPage(): string {\n  return 'coupon';\n}\n",
                ),
            ],
        )
    }

    fn index(t: &TempTree) -> Index {
        index_of(t, &[".", "shop", "docs", "web"])
    }

    /// The index of the listed directories of `t`, made current.
    fn index_of(t: &TempTree, dirs: &[&str]) -> Index {
        let dirs: Vec<String> = dirs.iter().map(|s| s.to_string()).collect();
        let mut ix = Index::build(
            t.path(),
            Options {
                extra_ignore: vec![],
                prefix: "@".into(),
                contextia: None,
            },
            &dirs,
        )
        .unwrap();
        ix.prepare(false);
        ix
    }

    #[test]
    fn a_question_s_answer_does_not_depend_on_the_question_before() {
        let t = tree();
        let ix = index(&t);
        let count = bundle::counter("bytes4").unwrap();
        let first = answer(&ix, &ask("apply_discount coupon", &[], &[]), &*count);
        answer(
            &ix,
            &ask("renderPage tax_rate ship order", &[], &[]),
            &*count,
        );
        let again = answer(&ix, &ask("apply_discount coupon", &[], &[]), &*count);
        assert_eq!(first, again);
    }

    #[test]
    fn the_named_function_ranks_first_and_is_in_the_bundle() {
        let t = tree();
        let ix = index(&t);
        let count: Count = &|s: &str| s.len().div_ceil(4);
        let a = answer(
            &ix,
            &Ask {
                budget: 40,
                ..ask("Fix apply_discount: coupon percentages are wrong", &[], &[])
            },
            count,
        );
        assert_eq!(a.files[0].path, "shop/orders.py", "{:?}", a.files);
        assert!(
            a.files[0].why.contains("defines `apply_discount`"),
            "{}",
            a.files[0].why
        );
        assert_eq!(a.files[0].regions[0].symbol, "apply_discount");
        // The region is chosen, with two lines of context on either side, not the head of the file.
        assert!(
            !a.bundle.iter().any(|p| p.text.contains("def helper_")),
            "{:?}",
            a.bundle
        );
        let b = &a.bundle[0];
        assert_eq!(b.path, "shop/orders.py");
        assert!(
            b.text
                .starts_with("\n\ndef apply_discount(order, coupon):\n"),
            "{b:?}"
        );
        assert!(a.tokens <= 40);
    }

    #[test]
    fn imports_pull_neighbours_and_given_paths_pull_theirs() {
        let t = tree();
        let ix = index(&t);
        let count: Count = &|s: &str| s.len().div_ceil(4);
        let a = answer(&ix, &ask("apply_discount coupon", &[], &[]), count);
        let tax = a
            .files
            .iter()
            .find(|f| f.path == "shop/tax.py")
            .expect("an imported neighbour of the top file");
        assert!(
            tax.why.contains("imported by shop/orders.py"),
            "{}",
            tax.why
        );
        let off = vec!["imports".to_string()];
        let a = answer(&ix, &ask("apply_discount coupon", &[], &off), count);
        assert!(
            a.files.iter().all(|f| f.path != "shop/tax.py"),
            "imports off: {:?}",
            a.files
        );
        // A given path pulls the files it imports and that import it.
        let given = vec!["shop/orders.py".to_string()];
        let a = answer(&ix, &ask("render the page", &given, &off), count);
        let paths: Vec<&str> = a.files.iter().map(|f| f.path.as_str()).collect();
        assert!(
            paths.contains(&"shop/tax.py") && paths.contains(&"shop/cli.py"),
            "{paths:?}"
        );
    }

    #[test]
    fn a_named_file_ranks_first_and_code_comes_before_its_tests_and_docs() {
        let t = tree();
        let ix = index(&t);
        let count: Count = &|s: &str| s.len().div_ceil(4);
        let a = answer(
            &ix,
            &ask(
                "The rate in tax.py is wrong for orders with a coupon",
                &[],
                &[],
            ),
            count,
        );
        assert_eq!(a.files[0].path, "shop/tax.py", "{:?}", a.files);
        assert!(
            a.files[0].why.contains("named in the task: tax.py"),
            "{}",
            a.files[0].why
        );
        let words = "Shipping weight rounding: ship parcels by weight\n";
        let t = TempTree::with(
            "task-kinds",
            &[
                ("src/ship.py", words),
                ("tests/test_ship.py", words),
                ("docs/ship.md", words),
                ("src/other.py", "x = 1\n"),
            ],
        );
        let ix = index_of(&t, &[".", "src", "tests", "docs"]);
        let a = answer(&ix, &ask("ship parcels by weight", &[], &[]), count);
        assert_eq!(a.files[0].path, "src/ship.py", "{:?}", a.files);
        assert!(
            a.files[0].score > a.files[1].score * 8.0,
            "tests and docs count a tenth: {:?}",
            a.files
        );
    }

    #[test]
    fn plain_words_a_large_file_defines_do_not_add_up() {
        // `big.rs` defines a function for each plain word of the task; `stub.rs` is what the task is about.
        let mut big: String = ["fields", "required", "stub", "generated", "constructors"]
            .iter()
            .map(|w| format!("pub fn {w}() -> u32 {{\n    1\n}}\n\n"))
            .collect();
        for i in 0..30 {
            big.push_str(&format!(
                "pub fn step_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n\n"
            ));
        }
        let t = TempTree::with(
            "task-plain",
            &[
                ("src/big.rs", &big),
                ("src/stub.rs", "/// Stub files: fields of a generated constructor are kept when required.\npub fn keep_stub_fields() {}\n"),
                ("src/other.rs", "pub fn unrelated() {}\n"),
            ],
        );
        let ix = index_of(&t, &[".", "src"]);
        let count: Count = &|s: &str| s.len().div_ceil(4);
        let a = answer(
            &ix,
            &ask(
                "Preserve required stub fields in generated constructors",
                &[],
                &[],
            ),
            count,
        );
        assert_eq!(a.files[0].path, "src/stub.rs", "{:?}", a.files);
        let big = a
            .files
            .iter()
            .find(|f| f.path == "src/big.rs")
            .expect("it defines the words");
        assert_eq!(
            big.why.matches("defines").count(),
            1,
            "one plain word counts: {}",
            big.why
        );
    }

    #[test]
    fn a_name_that_qualifies_a_path_word_keeps_more_than_half_its_share() {
        // Both names hold the task's `render`; the one that says more (`ansi_render`) is not
        // half as much about it, but 1 ÷ √2 as much.
        let t = TempTree::with(
            "task-path-words",
            &[
                ("render.py", "class Renderer:\n    pass\n"),
                ("ansi_render.py", "class AnsiRenderer:\n    pass\n"),
                ("other.py", "def unrelated():\n    pass\n"),
            ],
        );
        let ix = index_of(&t, &["."]);
        let q = Query::new(&ix, "render the frame");
        let mut sc = Scores::new(ix.files.len());
        lexical_signal(&ix, &q, &mut sc);
        path_signal(&ix, &q, &mut sc);
        let share = |path: &str| -> f32 {
            sc.contributions
                .iter()
                .filter(|c| ix.path(c.0) == path)
                .filter(|c| sc.reasons[c.2 as usize] == "its path: render")
                .map(|c| c.1)
                .sum()
        };
        let (bare, qualified) = (share("render.py"), share("ansi_render.py"));
        assert!(qualified > 0.0, "{bare} {qualified}");
        assert!(
            (bare / qualified - 2f32.sqrt()).abs() < 1e-4,
            "{bare} {qualified}"
        );
    }

    #[test]
    fn a_word_all_through_a_large_file_does_not_choose_its_region() {
        // Every function of orders.py but one says "order" many times; that one says "refund".
        let mut src = String::new();
        for i in 0..12 {
            src.push_str(&format!("def order_step_{i}(order):\n    order.check(order)\n    return order.next(order)\n\n\n"));
        }
        src.push_str("def settle(amount):\n    ledger = books.ledger\n    total = sum(ledger)\n    limit = total - amount\n    return refund(limit)\n\n\n");
        let t = TempTree::with(
            "task-local-idf",
            &[
                ("shop/orders.py", &src),
                ("shop/tax.py", "def rate():\n    return 1\n"),
            ],
        );
        let ix = index_of(&t, &[".", "shop"]);
        let count: Count = &|s: &str| s.len().div_ceil(4);
        let a = answer(
            &ix,
            &Ask {
                budget: 60,
                ..ask("order refund", &[], &[])
            },
            count,
        );
        assert_eq!(a.files[0].path, "shop/orders.py");
        assert_eq!(
            a.files[0].regions[0].symbol, "settle",
            "{:?}",
            a.files[0].regions
        );
        assert!(
            a.bundle.iter().any(|p| p.text.contains("refund(limit)")),
            "{:?}",
            a.bundle
        );
    }

    #[test]
    fn shared_terms_are_the_intersection_in_term_order() {
        // Every pair of subsets of a small vocabulary.
        let vocab = ["a", "ab", "b", "ba", "c", "d", "dd", "e"];
        let cut_terms: Vec<Box<str>> = vocab.iter().map(|&v| v.into()).collect();
        for wm in 0u32..256 {
            let words: Words = (0..8)
                .filter(|i| wm & (1 << i) != 0)
                .map(|i| (i, i + 1))
                .collect();
            for qm in (0u32..256).step_by(7) {
                let query: Vec<(&str, f32)> = (0..8)
                    .filter(|i| qm & (1 << i) != 0)
                    .map(|i| (vocab[i], 0.0))
                    .collect();
                let mut got = Vec::new();
                let place = query_places(&cut_terms, &query);
                shared_terms(&words, &place, |q, tf| got.push((query[q].0, tf)));
                let want: Vec<(&str, u32)> = words
                    .iter()
                    .filter(|(w, _)| query.iter().any(|q| q.0 == vocab[*w as usize]))
                    .map(|(w, tf)| (vocab[*w as usize], *tf))
                    .collect();
                assert_eq!(got, want, "{words:?} {query:?}");
            }
        }
    }

    /// Every field of a value the schema describes is in it with its type (the ones it does
    /// not require may be absent), and no other.
    fn conforms(schema: &serde_json::Value, value: &serde_json::Value, at: &str) {
        match schema["type"].as_str().unwrap() {
            "object" => {
                let props = schema["properties"].as_object().unwrap();
                let fields = value.as_object().unwrap_or_else(|| panic!("{at}: {value}"));
                for k in fields.keys() {
                    assert!(props.contains_key(k), "{at}: {k} is not in the schema");
                }
                for k in schema["required"].as_array().unwrap() {
                    let k = k.as_str().unwrap();
                    assert!(props.contains_key(k), "{at}: {k} required, not described");
                    assert!(fields.contains_key(k), "{at}: {k} is missing");
                }
                for (k, v) in fields {
                    conforms(&props[k], v, &format!("{at}.{k}"));
                }
            }
            "array" => {
                for v in value.as_array().unwrap() {
                    conforms(&schema["items"], v, &format!("{at}[]"));
                }
            }
            "string" => assert!(value.is_string(), "{at}"),
            "integer" => assert!(value.is_u64(), "{at}"),
            "number" => assert!(value.is_number(), "{at}"),
            t => panic!("{at}: type {t}"),
        }
    }

    #[test]
    fn the_schema_is_the_answer_s_shape() {
        let t = tree();
        let ix = index(&t);
        let count: Count = &|s: &str| s.len().div_ceil(4);
        let a = answer(&ix, &ask("apply_discount coupon", &[], &[]), count);
        assert!(!a.files.is_empty() && !a.files[0].regions.is_empty() && !a.bundle.is_empty());
        let schema: serde_json::Value = serde_json::from_str(SCHEMA).unwrap();
        conforms(&schema, &serde_json::to_value(&a).unwrap(), "answer");
        let shaped = answer(
            &ix,
            &Ask {
                outline: true,
                budget: 100_000,
                ..ask("apply_discount coupon", &[], &[])
            },
            count,
        );
        let json = serde_json::to_value(&shaped).unwrap();
        assert!(
            json["files"][0]["outline"][0]["signature"].is_string(),
            "{json}"
        );
        conforms(&schema, &json, "answer");
        // `outline` is not required: it is absent unless asked for.
        assert!(!schema["properties"]["files"]["items"]["required"]
            .as_array()
            .is_some_and(|r| r.iter().any(|k| k == "outline")));
    }

    #[test]
    fn outlines_share_the_budget_with_the_bundle() {
        let t = tree();
        let ix = index(&t);
        let count: Count = &|s: &str| s.len().div_ceil(4);
        for budget in [0, 1, 10, 50, 100, 333, 1000, 5000, 100_000] {
            let task = ask("order coupon discount shipping", &[], &[]);
            let plain = answer(&ix, &Ask { budget, ..task }, count);
            let a = answer(
                &ix,
                &Ask {
                    budget,
                    outline: true,
                    ..ask("order coupon discount shipping", &[], &[])
                },
                count,
            );
            let outlined: usize = a
                .files
                .iter()
                .filter_map(|f| f.outline.as_ref())
                .map(|o| count(&serde_json::to_string(o).unwrap()))
                .sum();
            let pieces: usize = a.bundle.iter().map(|p| count(&p.text)).sum();
            assert!(outlined <= budget / 2, "{budget}: {outlined}");
            assert_eq!(a.tokens, outlined + pieces, "{budget}");
            assert!(a.tokens <= budget, "{budget}: {}", a.tokens);
            // The same ranking; the bundle is the plain one's first pieces.
            let paths = |x: &Answer| x.files.iter().map(|f| f.path.clone()).collect::<Vec<_>>();
            assert_eq!(paths(&a), paths(&plain));
            assert_eq!(a.bundle[..], plain.bundle[..a.bundle.len()], "{budget}");
            assert!(plain.files.iter().all(|f| f.outline.is_none()));
            if budget == 100_000 {
                assert!(a.files.iter().all(|f| f.outline.is_some()));
                assert_eq!(a.bundle, plain.bundle);
                let orders = a.files[0].outline.as_ref().unwrap();
                assert_eq!(a.files[0].path, "shop/orders.py");
                assert_eq!(orders.len(), 61, "{orders:?}");
                assert_eq!(orders[30].name, "apply_discount");
                assert_eq!(orders[30].signature, "def apply_discount(order, coupon):");
            }
        }
    }

    #[test]
    fn budgets_hold_and_signals_switch_off() {
        let t = tree();
        let ix = index(&t);
        let count: Count = &|s: &str| s.len().div_ceil(4);
        for budget in [0, 1, 10, 50, 100, 333, 1000, 5000, 100_000] {
            let a = answer(
                &ix,
                &Ask {
                    task: "order coupon discount shipping",
                    budget,
                    paths: &[],
                    off: &[],
                    limit: 10,
                    outline: false,
                },
                count,
            );
            let recount: usize = a.bundle.iter().map(|p| count(&p.text)).sum();
            assert_eq!(recount, a.tokens);
            assert!(a.tokens <= budget, "{budget}: {}", a.tokens);
        }
        let all: Vec<String> = SIGNALS.iter().map(|s| s.to_string()).collect();
        let a = answer(&ix, &ask("apply_discount coupon", &[], &all), count);
        assert!(a.files.is_empty() && a.bundle.is_empty());
        let only_symbols: Vec<String> = SIGNALS
            .iter()
            .filter(|s| **s != "symbols")
            .map(|s| s.to_string())
            .collect();
        let a = answer(
            &ix,
            &ask("apply_discount coupon", &[], &only_symbols),
            count,
        );
        assert_eq!(
            a.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
            ["shop/orders.py"]
        );
    }
}
