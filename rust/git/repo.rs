//! The repository a root is in, opened with gix once it is known to be sound, and what must
//! keep its stat for it to stay right.

use crate::git::answer::{cannot, Answer, CannotTell};
use crate::git::bounds::MAX_GIT_FILE_BYTES;
use crate::git::discover::{git_dir_is_sound, git_dirs};
use crate::git::ignores::Ignores;
use crate::git::index::IndexView;
use crate::git::paths::clean_path;
use crate::git::trees::Trees;
use crate::tree::os::{self, now_ns, Key, PlainDir as Dir};
use gix::hash::ObjectId;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Counts of the work done, for tests and benchmarks.
#[derive(Clone, Copy, Default, Debug)]
pub struct Stats {
    pub opens: u64,
    pub index_reads: u64,
    pub trees_read: u64,
    pub files_hashed: u64,
    pub hashes_reused: u64,
    pub ignore_files_read: u64,
}

pub(super) struct Repo {
    pub(super) repo: gix::Repository,
    /// The worktree's top, and the root asked about relative to it ("" or "a/b").
    pub(super) workdir: PathBuf,
    pub(super) top: Dir,
    pub(super) prefix: Vec<u8>,
    /// What must keep its stat for this handle to stay right: `<top>/.git`, the configuration
    /// files, and that no directory from the root up to the top grew a `.git` of its own.
    pub(super) watched: Vec<(PathBuf, Option<Key>)>,
    pub(super) file_mode: bool,
    pub(super) excludes_file: Option<PathBuf>,
    /// The common git directory (canonical), whose `info/exclude` is read beneath it.
    pub(super) common_dir: PathBuf,
    pub(super) index_path: PathBuf,
    pub(super) index: Arc<IndexView>,
    pub(super) index_trusted: bool,
    pub(super) trees: Trees,
    pub(super) hashes: HashMap<Box<[u8]>, (Key, ObjectId)>,
    /// Directories found to hold only tracked files, with their stat key and the index's then:
    /// while both hold, no entry came or went and none is untracked (git's untracked cache).
    pub(super) all_tracked: HashMap<Box<[u8]>, (Key, Key)>,
    pub(super) ignores: Ignores,
}

/// What a `.git` is: a directory by its identity alone (git writes inside it all the time,
/// moving its times), a file or link by its whole stat.
pub(super) fn dot_git_key(p: &Path) -> Option<Key> {
    let md = fs::symlink_metadata(p).ok()?;
    let key = Key::of(&md);
    Some(if md.is_dir() {
        Key {
            size: 0,
            mtime: 0,
            ctime: 0,
            ..key
        }
    } else {
        key
    })
}

pub(super) fn stat_key(p: &Path) -> Option<Key> {
    Key::stat(p)
}

impl Repo {
    /// The repository holding `root` (git's discovery: upwards from it, a `.git` directory or
    /// file, a linked worktree), or None when there is none or it is not sound.
    pub(super) fn open(root: &Path) -> Answer<Repo> {
        // git -C root: from the directory's physical path.
        let real_root = fs::canonicalize(root).map_err(cannot)?;
        // Before gix reads anything of a git directory on the way up, it must be one git's view
        // may read (git_dirs) and sound.
        let mut checked = None;
        for dir in real_root.ancestors() {
            if fs::symlink_metadata(dir.join(".git")).is_ok() {
                let (git_dir, common) = git_dirs(dir).ok_or(CannotTell)?;
                if !git_dir_is_sound(&git_dir) || (common != git_dir && !git_dir_is_sound(&common))
                {
                    return Err(CannotTell);
                }
                checked = Some(git_dir);
                break;
            }
            // A directory that may itself be a (bare) git directory has its HEAD read.
            match fs::symlink_metadata(dir.join("HEAD")) {
                Ok(md) if !md.is_file() || md.len() > MAX_GIT_FILE_BYTES => return Err(CannotTell),
                _ => {}
            }
        }
        let checked = checked.ok_or(CannotTell)?;
        let options = gix::discover::upwards::Options::default().apply_environment();
        let (path, trust) = gix::discover::upwards_opts(&real_root, options).map_err(cannot)?;
        let (git_dir, workdir) = path.into_repository_and_work_tree_directories();
        let workdir = workdir.ok_or(CannotTell)?; // bare: no worktree to compare
        if fs::canonicalize(&git_dir).ok() != Some(checked) {
            return Err(CannotTell); // (GIT_DIR in the environment, or a change since the check)
        }
        let mut perms = gix::open::Permissions::default();
        perms.config.git_binary = false; // never run git to find its installation's config
        perms.config.includes = false; // no config file the repository names (it could be anything)
        perms.env.git_prefix = gix::sec::Permission::Deny; // GIT_WORK_TREE, GIT_INDEX_FILE: gitstate.py never let git see them
        let opts = gix::open::Options::default()
            .permissions(perms)
            .bail_if_untrusted(true)
            .with(trust);
        let repo = gix::ThreadSafeRepository::open_opts(git_dir, opts)
            .map_err(cannot)?
            .to_thread_local();
        let workdir = fs::canonicalize(&workdir).map_err(cannot)?;
        let prefix = real_root
            .strip_prefix(&workdir)
            .map_err(cannot)?
            .as_os_str();
        let prefix = crate::tree::paths::slashed(os::bytes_of(prefix)).into_owned();
        if !prefix.is_empty() && !clean_path(&prefix) {
            return Err(CannotTell);
        }
        let (file_mode, excludes_file) = {
            let snapshot = repo.config_snapshot();
            let excludes_file = match snapshot.trusted_path("core.excludesFile") {
                Ok(Some(p)) => Some(p),
                Ok(None) => default_excludes_file(),
                Err(_) => return Err(CannotTell),
            };
            (
                snapshot.boolean("core.fileMode").unwrap_or(true),
                excludes_file,
            )
        };
        // git reads config.worktree only with extensions.worktreeConfig (set in a config watched here).
        let worktree_config = repo
            .config_snapshot()
            .boolean("extensions.worktreeConfig")
            .unwrap_or(false);
        let mut watched = vec![(workdir.join(".git"), dot_git_key(&workdir.join(".git")))];
        let mut configs = vec![
            repo.git_dir().join("config"),
            repo.common_dir().join("config"),
        ];
        if worktree_config {
            configs.push(repo.git_dir().join("config.worktree"));
        }
        for config in configs {
            if !watched.iter().any(|(p, _)| *p == config) {
                let key = stat_key(&config);
                watched.push((config, key));
            }
        }
        for dir in real_root.ancestors().take_while(|d| *d != workdir) {
            watched.push((dir.join(".git"), None));
        }
        Ok(Repo {
            top: Dir::top(&workdir).ok_or(CannotTell)?,
            common_dir: fs::canonicalize(repo.common_dir()).map_err(cannot)?,
            index_path: repo.index_path(),
            repo,
            workdir,
            prefix,
            watched,
            file_mode,
            excludes_file,
            index: Arc::new(IndexView::default()),
            index_trusted: false,
            trees: Trees::default(),
            hashes: HashMap::new(),
            all_tracked: HashMap::new(),
            ignores: Ignores::default(),
        })
    }

    /// Whether what the handle was opened on still holds.
    pub(super) fn still_holds(&self) -> bool {
        self.watched.iter().all(|(p, k)| {
            if p.file_name() == Some(OsStr::new(".git")) {
                dot_git_key(p) == *k
            } else {
                stat_key(p) == *k
            }
        })
    }

    /// The index as it is now: read again when its stat changed (or was racy when read).
    pub(super) fn refresh_index(&mut self, stats: &mut Stats) -> Answer<()> {
        let key = stat_key(&self.index_path);
        if self.index_trusted && key == self.index.key {
            return Ok(());
        }
        stats.index_reads += 1;
        let view = IndexView::load(&self.index_path)?;
        self.index_trusted =
            view.key.is_some_and(|k| !k.racy(now_ns())) || view.key.is_none() && key.is_none();
        self.index = Arc::new(view);
        Ok(())
    }

    pub(super) fn head(&self) -> Answer<String> {
        let id = self.repo.head_id().map_err(cannot)?.detach();
        let tree = self.peel(id, gix::objs::Kind::Commit)?;
        Ok(tree.to_string())
    }
}

pub(super) fn default_excludes_file() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".config"),
    };
    Some(base.join("git").join("ignore"))
}
