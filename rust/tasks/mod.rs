//! Task context: the files and regions of a repository that matter for a task, ranked, with
//! one line each on why, and a bundle of their text within a token budget (issue 23; the MCP
//! tool `task_context`, CLI `repoctx context`).
//!
//! `terms` splits code and task text into the same words; `bm25` scores them; `regions`
//! cuts a file into line ranges along its definitions (`cuts` keeps them between
//! questions); `files` reads what the index keeps of a file; `graph` resolves imports to files; `written` holds the notes of scopes,
//! artifacts and project.yaml; `history` scores git's (read by git/history.rs, saved per HEAD by `history_store`); `index` keeps all of it for a tree and
//! follows edits (up to the `limits` of its buffers) (`median` keeps the median count of names a file defines, `keys` each file's stat key packed) (built with `options`); `store` puts what it keeps of each file on disk for a later process (numbers as `varint`s, as the packed index holds them);
//! `rank` answers a question (on `scores`, one value a file; `recent` tells which lines of its top files changed lately, `meeting` which listed file holds the task's words together), `bundle` cuts its text to the budget and `outlines` gives the
//! ranked files' outlines when asked.

pub mod arena;
pub mod bm25;
pub mod bundle;
pub mod cuts;
pub mod files;
pub mod focus;
pub mod graph;
pub mod history;
pub mod history_store;
pub mod index;
pub mod keys;
pub mod limits;
pub mod median;
pub mod meeting;
pub mod options;
pub mod outlines;
pub mod paths;
pub mod rank;
pub mod recent;
pub mod regions;
pub mod scope;
pub mod scores;
pub mod store;
pub mod terms;
pub mod varint;
pub mod vocab;
pub mod written;

/// The answer to one question (`rank::Answer`), the index made current first; Err for a
/// tokenizer that is not known.
pub fn query(
    ix: &mut index::Index,
    ask: &rank::Ask,
    tokenizer: &str,
) -> Result<rank::Answer, String> {
    let count = bundle::counter(tokenizer)
        .ok_or_else(|| format!("unknown tokenizer {tokenizer:?}; known: bytes4, o200k, cl100k"))?;
    ix.prepare(!ask.off.iter().any(|s| s == "history"));
    Ok(rank::answer(ix, ask, &*count))
}
