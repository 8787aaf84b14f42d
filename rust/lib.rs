//! Python bindings of the repoctx core. Each heavy call releases the GIL.
//!
//! The bindings (`bindings` below, and `py.rs`) are the default `python` feature; without it
//! the pure core builds and its tests run where no Python is (Windows under wine).
#![cfg_attr(not(feature = "python"), allow(dead_code))]

mod artifacts;
mod caches;
mod formats;
mod git;
mod lang;
mod project;
#[cfg(feature = "python")]
mod py;
mod scopes;
mod tasks;
#[cfg(test)]
mod testing;
mod tree;

#[cfg(feature = "python")]
mod bindings {
    // (not indented: the module only gates the bindings on the feature)
    use crate::artifacts::{annotate, bpe, srcindex};
    use crate::caches::{cache, fresh, select};
    use crate::formats::{gomod, jsonrpc, yamlread, yamlwrite};
    use crate::git::view as git;
    use crate::project::modscan;
    use crate::scopes::sources;
    use crate::tree::{count, fingerprint, fs, live, os, walk};
    use crate::{lang, py, tasks};

    use py::{cache_err, in_root, os_err, os_err_at, LinkRefused};
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;
    use std::collections::HashSet;
    use std::ffi::OsString;
    use std::path::PathBuf;

    // --- the tree (tree/): the walk, the live index, fingerprints ----------------------------

    #[pyfunction]
    #[pyo3(name = "walk", signature = (root, extra_ignore, max_depth, min_tokens, keep_files=false, count=None))]
    fn walk_py(
        py: Python<'_>,
        root: PathBuf,
        extra_ignore: Vec<String>,
        max_depth: usize,
        min_tokens: i64,
        keep_files: bool,
        count: Option<&FileCountPy>,
    ) -> PyResult<py::Table> {
        let opts = walk::Options {
            extra_ignore,
            max_depth,
            min_tokens,
        };
        if !keep_files {
            if count.is_some() {
                return Err(PyValueError::new_err(
                    "a walk counts its files only as it keeps them",
                ));
            }
            let table = py
                .detach(|| walk::walk(&root, &opts, None))
                .map_err(os_err_at(&root))?;
            return py::Table::walked(py, &table);
        }
        let count = count.map(|c| &c.inner);
        let (table, kept) = py
            .detach(|| walk::walk_keeping(&root, &opts, count))
            .map_err(os_err_at(&root))?;
        let files = py::WalkFiles {
            kept: std::sync::Mutex::new(Some(kept)),
        };
        Ok(py::Table {
            files: Some(Py::new(py, files)?),
            ..py::Table::walked(py, &table)?
        })
    }

    /// A walk's running count of files (tree/count.rs), for a load of the saved task index
    /// beside it (`TaskIndex.load`).
    #[pyclass(frozen, name = "FileCount", module = "repoctx._core")]
    struct FileCountPy {
        inner: count::FileCount,
    }

    #[pymethods]
    impl FileCountPy {
        #[new]
        fn new() -> Self {
            FileCountPy {
                inner: count::FileCount::default(),
            }
        }

        /// The walk is over and found `files` files (None: it failed); a load waiting on the
        /// count goes on.
        fn close(&self, files: Option<u64>) {
            self.inner.close(files);
        }
    }

    /// The walk table kept in memory and kept true by file-system events (see tree/live.rs),
    /// with the last table handed to Python (py::Shown).
    #[pyclass(frozen, name = "LiveIndex", module = "repoctx._core")]
    struct LiveIndexPy {
        inner: std::sync::Mutex<(live::LiveIndex, Option<py::Shown>)>,
    }

    #[pymethods]
    impl LiveIndexPy {
        #[new]
        #[pyo3(signature = (root, extra_ignore, max_depth, min_tokens, watch=true))]
        fn new(
            py: Python<'_>,
            root: PathBuf,
            extra_ignore: Vec<String>,
            max_depth: usize,
            min_tokens: i64,
            watch: bool,
        ) -> PyResult<Self> {
            let opts = walk::Options {
                extra_ignore,
                max_depth,
                min_tokens,
            };
            let index = py
                .detach(|| live::LiveIndex::new(&root, opts, watch))
                .map_err(os_err_at(&root))?;
            Ok(LiveIndexPy {
                inner: std::sync::Mutex::new((index, None)),
            })
        }

        /// Apply pending changes; returns the table's generation (unchanged: nothing moved).
        fn refresh(&self, py: Python<'_>) -> PyResult<u64> {
            py.detach(|| {
                let index = &mut self.inner.lock().unwrap().0;
                index.refresh().map(|_| index.generation)
            })
            .map_err(os_err)
        }

        /// The table as of the last refresh: the same object while nothing changed, and the
        /// same row objects where rows did not.
        fn table(&self, py: Python<'_>) -> PyResult<Py<py::Table>> {
            let (index, shown) = &mut *self.inner.lock().unwrap();
            py::live_table(py, index, shown)
        }

        #[getter]
        fn watching(&self) -> bool {
            self.inner.lock().unwrap().0.watching()
        }

        /// Which watching is in force: "inotify", "fsevents", "windows", "polling" or "none".
        #[getter]
        fn watching_by(&self) -> &'static str {
            self.inner.lock().unwrap().0.watching_by()
        }

        /// Why that watching is in force.
        #[getter]
        fn watch_reason(&self) -> String {
            self.inner.lock().unwrap().0.watch_reason()
        }

        #[getter]
        fn rescans(&self) -> u64 {
            self.inner.lock().unwrap().0.rescans
        }
    }

    #[pyfunction]
    #[pyo3(name = "fingerprint")]
    fn fingerprint_py(py: Python<'_>, dir: PathBuf) -> PyResult<String> {
        py.detach(|| fingerprint::fingerprint_dir(&dir))
            .map_err(os_err_at(&dir))
    }

    #[pyfunction]
    fn is_source_file(name: &str) -> bool {
        walk::is_source_file(name)
    }

    /// The path with every symlink resolved (realpath(3)), or None when that fails (a missing
    /// component, a loop, no permission): the caller then falls back to Python's lenient
    /// os.path.realpath. In C a handful of lstat calls; Python's own costs ~40 µs a path.
    #[pyfunction]
    fn real_path(path: PathBuf) -> Option<OsString> {
        std::fs::canonicalize(path)
            .ok()
            .map(PathBuf::into_os_string) // str, as os.path gives
    }

    // --- git's view (git/view.rs) -----------------------------------------------------------

    /// git's view of one root, kept between questions (see git/view.rs).
    #[pyclass(frozen, name = "GitRepo")]
    struct GitRepoPy(git::Handle);

    /// What a GitRepo has done so far.
    #[pyclass(frozen, get_all, name = "GitStats")]
    struct GitStatsPy {
        opens: u64,
        index_reads: u64,
        trees_read: u64,
        files_hashed: u64,
        hashes_reused: u64,
        ignore_files_read: u64,
    }

    #[pymethods]
    impl GitRepoPy {
        #[new]
        fn new(root: PathBuf) -> Self {
            GitRepoPy(git::Handle::new(&root))
        }

        /// The commit checked out (full hex), or None outside a repository or before the first commit.
        fn head(&self, py: Python<'_>) -> Option<String> {
            py.detach(|| self.0.head())
        }

        /// The directories among or under `scopes` holding a file that differs from `commit` or
        /// that git neither tracks nor ignores; None when git cannot tell.
        fn changed_dirs(
            &self,
            py: Python<'_>,
            commit: &str,
            scopes: Vec<String>,
        ) -> Option<HashSet<OsString>> {
            py.detach(|| self.0.changed_dirs(commit, &scopes))
                .map(|dirs| dirs.into_iter().map(PathBuf::into_os_string).collect())
        }

        /// The scopes among `scopes` whose own files are as at `commit`; None when git cannot tell.
        fn unchanged(
            &self,
            py: Python<'_>,
            commit: &str,
            scopes: Vec<String>,
        ) -> Option<HashSet<String>> {
            py.detach(|| self.0.unchanged(commit, &scopes))
                .map(|s| s.into_iter().collect())
        }

        #[getter]
        fn stats(&self) -> GitStatsPy {
            let s = self.0.stats();
            GitStatsPy {
                opens: s.opens,
                index_reads: s.index_reads,
                trees_read: s.trees_read,
                files_hashed: s.files_hashed,
                hashes_reused: s.hashes_reused,
                ignore_files_read: s.ignore_files_read,
            }
        }
    }

    // --- the confined file-system layer (tree/fs.rs) -----------------------------------------

    /// A regular file's bytes beneath the root, at most `max_bytes`.
    #[pyfunction]
    fn fs_read(
        py: Python<'_>,
        root: PathBuf,
        rel: PathBuf,
        max_bytes: u64,
    ) -> PyResult<Py<pyo3::types::PyBytes>> {
        let data = in_root(py, &root, |r| r.read(&rel, max_bytes))?;
        Ok(pyo3::types::PyBytes::new(py, &data).unbind())
    }

    /// The first `n` bytes of a regular file beneath the root.
    #[pyfunction]
    fn fs_read_head(
        py: Python<'_>,
        root: PathBuf,
        rel: PathBuf,
        n: u64,
    ) -> PyResult<Py<pyo3::types::PyBytes>> {
        let data = in_root(py, &root, |r| r.read_head(&rel, n))?;
        Ok(pyo3::types::PyBytes::new(py, &data).unbind())
    }

    #[pyfunction]
    fn fs_write(py: Python<'_>, root: PathBuf, rel: PathBuf, data: &[u8]) -> PyResult<()> {
        in_root(py, &root, |r| r.write_atomic(&rel, data))
    }

    #[pyfunction]
    fn fs_makedirs(py: Python<'_>, root: PathBuf, rel: PathBuf) -> PyResult<()> {
        in_root(py, &root, |r| r.create_dir_all(&rel))
    }

    /// The descriptor of a directory opened beneath the root (the caller closes it).
    #[pyfunction]
    fn fs_open_dir(py: Python<'_>, root: PathBuf, rel: PathBuf) -> PyResult<i32> {
        in_root(py, &root, |r| Ok(fs::dir_into_fd(r.open_dir(&rel)?)?))
    }

    #[pyfunction]
    fn fs_list(py: Python<'_>, root: PathBuf, rel: PathBuf) -> PyResult<Vec<py::DirEntry>> {
        let listed = in_root(py, &root, |r| r.list(&rel))?;
        Ok(listed
            .into_iter()
            .map(|(name, k)| py::DirEntry {
                name,
                kind: k.letter(),
            })
            .collect())
    }

    #[pyfunction]
    fn fs_stat(
        py: Python<'_>,
        root: PathBuf,
        rel: PathBuf,
        follow: bool,
    ) -> PyResult<Option<py::Stat>> {
        in_root(py, &root, |r| {
            r.stat(&rel, follow).map(|m| m.as_ref().map(py::Stat::of))
        })
    }

    #[pyfunction]
    fn fs_remove(py: Python<'_>, root: PathBuf, rel: PathBuf) -> PyResult<()> {
        in_root(py, &root, |r| r.remove_file(&rel))
    }

    #[pyfunction]
    fn fs_remove_tree(py: Python<'_>, root: PathBuf, rel: PathBuf) -> PyResult<()> {
        in_root(py, &root, |r| r.remove_tree(&rel))
    }

    #[pyfunction]
    fn fs_rename(py: Python<'_>, root: PathBuf, src: PathBuf, dst: PathBuf) -> PyResult<()> {
        in_root(py, &root, |r| r.rename(&src, &dst, true))
    }

    #[pyfunction]
    fn fs_exchange(py: Python<'_>, root: PathBuf, a: PathBuf, b: PathBuf) -> PyResult<()> {
        in_root(py, &root, |r| r.exchange(&a, &b))
    }

    // --- formats (formats/): YAML in and out, JSON-RPC ids -----------------------------------

    /// Parse YAML files beneath `root` in parallel, one py::YamlFile each. OSError when the root
    /// cannot be opened.
    #[pyfunction]
    fn read_yaml_many(
        py: Python<'_>,
        root: PathBuf,
        rels: Vec<String>,
        max_bytes: u64,
    ) -> PyResult<Vec<Py<py::YamlFile>>> {
        py.detach(|| yamlread::read_many(&root, &rels, max_bytes))
            .map_err(os_err_at(&root))?
            .into_iter()
            .map(|p| py::yaml_file(py, p))
            .collect()
    }

    /// One YAML document as JSON text, parsed with the bounds of formats/yamlread.rs; a refused one
    /// raises YamlRefused (reason, line, column, syntax).
    #[pyfunction]
    fn yaml_to_json(py: Python<'_>, data: &[u8]) -> PyResult<String> {
        py.detach(|| yamlread::to_json(data))
            .map_err(py::yaml_refused)
    }

    /// YAML text (keys in order, strings double-quoted) for a JSON object.
    #[pyfunction]
    fn to_yaml(json: &[u8]) -> PyResult<String> {
        yamlwrite::to_yaml(json).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Write each (path under `root`, JSON) as YAML (with raw=True, each (path, text) as it is)
    /// to a temporary file beside it, through the confined layer; returns the temporary paths.
    #[pyfunction]
    #[pyo3(signature = (root, items, raw=false))]
    fn stage_yaml(
        py: Python<'_>,
        root: PathBuf,
        items: Vec<(PathBuf, Vec<u8>)>,
        raw: bool,
    ) -> PyResult<Vec<PathBuf>> {
        in_root(py, &root, |r| yamlwrite::stage(r, &root, &items, raw))
    }

    /// Flush staged (temporary, final) pairs, rename them into place in order, flush again.
    #[pyfunction]
    fn commit_staged(
        py: Python<'_>,
        root: PathBuf,
        pairs: Vec<(PathBuf, PathBuf)>,
    ) -> PyResult<()> {
        in_root(py, &root, |r| yamlwrite::commit(r, &root, &pairs))
    }

    /// Whether a JSON-RPC line is one JSON object, and its integer or string `id` where one can be read.
    #[pyfunction]
    fn jsonrpc_request_id(py: Python<'_>, line: &[u8]) -> PyResult<py::RequestId> {
        let (is_object, id) = py.detach(|| jsonrpc::request_id(line));
        let has_id = id.is_some();
        let id = match id {
            Some(jsonrpc::Id::Int(n)) => Some(n.into_pyobject(py)?.into_any().unbind()),
            Some(jsonrpc::Id::Str(s)) => Some(s.into_pyobject(py)?.into_any().unbind()),
            Some(jsonrpc::Id::Invalid) | None => None,
        };
        Ok(py::RequestId {
            is_object,
            id,
            has_id,
        })
    }

    /// What a go.mod or go.work declares (formats/gomod.rs: the one parser of their syntax). A
    /// string that is not valid Unicode (a lone surrogate) is read with U+FFFD in its place.
    #[pyfunction]
    fn parse_go(py: Python<'_>, text: &Bound<'_, pyo3::types::PyString>) -> PyResult<py::GoFile> {
        let text = match text.to_str() {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => {
                let units = text.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
                let units: Vec<u16> = units
                    .extract::<Vec<u8>>()?
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect();
                std::borrow::Cow::Owned(String::from_utf16_lossy(&units))
            }
        };
        let parsed = py.detach(|| gomod::parse(&text));
        py::go_file(py, parsed)
    }

    // --- scopes (scopes/sources.rs) ----------------------------------------------------------

    /// What `.context.yaml` derives from the sources of a tree: built once over the
    /// table's directories, then asked for the facts of scopes.
    #[pyclass(frozen, name = "ScopeSources", module = "repoctx._core")]
    struct ScopeSourcesPy {
        inner: sources::Index,
    }

    #[pymethods]
    impl ScopeSourcesPy {
        #[new]
        #[pyo3(signature = (root, dirs, extra_ignore=Vec::new(), manifests=Vec::new()))]
        fn new(
            py: Python<'_>,
            root: PathBuf,
            dirs: Vec<String>,
            extra_ignore: Vec<String>,
            manifests: Vec<String>,
        ) -> Self {
            ScopeSourcesPy {
                inner: py.detach(|| sources::Index::build(&root, dirs, &extra_ignore, manifests)),
            }
        }

        /// For each scope, the files its context file lists (not hidden, source, not ignored).
        fn source_files(&self, py: Python<'_>, scopes: Vec<String>) -> Vec<Vec<String>> {
            py.detach(|| self.inner.source_files(&scopes))
        }

        /// The facts of each scope as one JSON array, in the order given.
        fn extract(&self, py: Python<'_>, scopes: Vec<String>) -> String {
            py.detach(|| self.inner.extract(&scopes))
        }

        /// For each (scope, names): the names that no file of the scope exports.
        fn missing_exports(
            &self,
            py: Python<'_>,
            items: Vec<(String, Vec<String>)>,
        ) -> Vec<Vec<String>> {
            py.detach(|| self.inner.missing_exports(&items))
        }

        /// The languages of the whole table, most files first.
        #[getter]
        fn languages(&self) -> Vec<py::Language> {
            self.inner
                .languages
                .iter()
                .map(|(name, files)| py::Language {
                    name: name.clone(),
                    files: *files,
                })
                .collect()
        }
    }

    // --- caches (caches/) --------------------------------------------------------------------

    /// A watch on a cache's directories, begun before the cache is read (see caches/fresh.rs).
    #[pyclass(frozen, name = "CacheWatch", module = "repoctx._core")]
    struct CacheWatchPy {
        inner: std::sync::Mutex<Option<fresh::Watcher>>,
    }

    #[pymethods]
    impl CacheWatchPy {
        #[new]
        fn new(dirs: Vec<PathBuf>) -> Self {
            CacheWatchPy {
                inner: std::sync::Mutex::new(fresh::Watcher::new(&dirs)),
            }
        }
    }

    /// A verified cache held in memory: its documents, their word index, and how to
    /// tell that none of its files changed since they were read.
    #[pyclass(frozen, name = "CacheView", module = "repoctx._core")]
    struct CacheViewPy {
        view: select::View,
        freshness: fresh::Freshness,
    }

    #[pymethods]
    impl CacheViewPy {
        /// A view of (id, version, content) documents held in memory, with no files to watch.
        #[staticmethod]
        fn from_documents(py: Python<'_>, docs: Vec<(String, String, String)>) -> Self {
            let docs = docs
                .into_iter()
                .map(|(id, version, content)| select::Doc {
                    id,
                    version,
                    content,
                })
                .collect();
            CacheViewPy {
                view: py.detach(|| select::View::new(docs)),
                freshness: fresh::Freshness::of_nothing(),
            }
        }

        /// Whether no file the view was read from has changed (caches/fresh.rs).
        fn fresh(&self, py: Python<'_>) -> bool {
            py.detach(|| self.freshness.fresh())
        }

        /// Whether a watch follows the documents (else fresh() stats each of them).
        #[getter]
        fn watching(&self) -> bool {
            self.freshness.watching()
        }

        /// The newest ctime (ns) among the files read.
        #[getter]
        fn newest_change_ns(&self) -> i64 {
            self.freshness.newest_change_ns()
        }

        /// The SelectionResult JSON for a query and budget.
        fn resolve(&self, py: Python<'_>, query: &str, budget: u64) -> String {
            py.detach(|| {
                self.view
                    .to_json(query, budget, &self.view.select(query, budget))
            })
        }

        fn __len__(&self) -> usize {
            self.view.len()
        }
    }

    /// Read and verify a cache's documents into a view, each opened through `docs_fd` (a
    /// descriptor of the directory at `docs_dir`, which the caller keeps; None on Windows, where
    /// the directory is opened by that path). `entries` are the
    /// manifest's (id, version, file name in docs_dir); `stats` are the cache's own paths with their
    /// `os.stat_result` from before anything was read; `watch` was begun before that.
    /// Raises CacheRefused (code, message) or OSError.
    #[pyfunction]
    fn load_cache(
        py: Python<'_>,
        docs_dir: PathBuf,
        docs_fd: Option<i32>,
        entries: Vec<(String, String, String)>,
        stats: std::collections::HashMap<PathBuf, py::StatResult>,
        watch: &CacheWatchPy,
    ) -> PyResult<CacheViewPy> {
        let watcher = watch.inner.lock().unwrap().take();
        let meta = stats.into_iter().map(|(p, st)| (p, st.key())).collect();
        let docs_handle = fs::dir_held(docs_fd, &docs_dir).map_err(os_err_at(&docs_dir))?;
        py.detach(|| {
            let (docs, keys) = cache::load(&docs_handle, &docs_dir, &entries)?;
            Ok(CacheViewPy {
                view: select::View::new(docs),
                freshness: fresh::Freshness::new(meta, keys, watcher),
            })
        })
        .map_err(cache_err)
    }

    /// Build a cache's documents from `sources` into `documents/` of the directory `rel` beneath
    /// `root` (py::BuiltCache). Raises CacheRefused (code, message), LinkRefused or OSError.
    #[pyfunction]
    fn build_cache(
        py: Python<'_>,
        sources: PathBuf,
        root: PathBuf,
        rel: PathBuf,
        repository: bool,
    ) -> PyResult<py::BuiltCache> {
        let mode = if repository {
            cache::Mode::Repository
        } else {
            cache::Mode::Markdown
        };
        let out = in_root(py, &root, |r| r.open_dir(&rel))?;
        let built = py
            .detach(|| cache::build(&sources, &out, mode))
            .map_err(cache_err)?;
        py::built_cache(py, built)
    }

    // --- artifacts (artifacts/) --------------------------------------------------------------

    /// The annotations of one file (`rel` names its language), read now.
    #[pyfunction]
    fn annotate_file(
        py: Python<'_>,
        path: PathBuf,
        rel: String,
        prefix: String,
    ) -> PyResult<Vec<Py<py::Annotation>>> {
        let found =
            py.detach(|| srcindex::scan_path(&path, &rel, &prefix, &annotate::finder(&prefix)).1);
        py::annotations(py, found.into_iter().map(|a| (rel.clone(), a)))
    }

    /// Glob patterns compiled once (see artifacts/srcindex.rs for the syntax).
    #[pyclass(frozen, name = "Globs", module = "repoctx._core")]
    struct GlobsPy(srcindex::Globs);

    #[pymethods]
    impl GlobsPy {
        #[new]
        fn new(patterns: Vec<String>) -> Self {
            GlobsPy(srcindex::Globs::new(&patterns))
        }

        /// Indices of the patterns matching `path`.
        fn matches(&self, path: &str) -> Vec<usize> {
            self.0.matches(path)
        }

        #[getter]
        fn invalid(&self) -> Vec<usize> {
            self.0.invalid.clone()
        }

        fn __len__(&self) -> usize {
            self.0.len
        }
    }

    /// The annotation index of a tree (see artifacts/srcindex.rs).
    #[pyclass(frozen, name = "SourceIndex", module = "repoctx._core")]
    struct SourceIndexPy(srcindex::Index);

    #[pymethods]
    impl SourceIndexPy {
        #[new]
        fn new(
            py: Python<'_>,
            root: PathBuf,
            prefix: String,
            scan_paths: Vec<String>,
        ) -> PyResult<Self> {
            let index = py
                .detach(|| srcindex::Index::build(&root, &prefix, &scan_paths))
                .map_err(os_err_at(&root))?;
            Ok(SourceIndexPy(index))
        }

        #[pyo3(signature = (query=None))]
        fn is_current(&self, py: Python<'_>, query: Option<Bound<'_, GlobsPy>>) -> bool {
            let q = query.as_ref().map(|g| &g.get().0);
            py.detach(|| self.0.is_current(q))
        }

        #[getter]
        fn file_count(&self) -> usize {
            self.0.files.len()
        }

        #[pyo3(signature = (query=None))]
        fn annotations(
            &self,
            py: Python<'_>,
            query: Option<Bound<'_, GlobsPy>>,
        ) -> PyResult<Vec<Py<py::Annotation>>> {
            let q = query.as_ref().map(|g| &g.get().0);
            py::annotations(py, py.detach(|| self.0.annotations(q)))
        }

        fn match_counts(&self, py: Python<'_>, globs: Bound<'_, GlobsPy>) -> Vec<u64> {
            let g = &globs.get().0;
            py.detach(|| self.0.match_counts(g))
        }

        fn overlaps(
            &self,
            py: Python<'_>,
            query: Bound<'_, GlobsPy>,
            globs: Bound<'_, GlobsPy>,
        ) -> Vec<bool> {
            let (q, g) = (&query.get().0, &globs.get().0);
            py.detach(|| self.0.overlaps(q, g))
        }
    }

    /// BPE token counts of each text ("o200k" or "cl100k"), in parallel.
    #[pyfunction]
    fn count_tokens(py: Python<'_>, encoding: &str, texts: Vec<String>) -> PyResult<Vec<usize>> {
        py.detach(|| bpe::count(encoding, &texts)).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown encoding {encoding:?}; known: o200k, cl100k"
            ))
        })
    }

    // --- task context (tasks/) ----------------------------------------------------------------

    /// The task index of a tree (tasks/index.rs): its files' terms, definitions, imports and
    /// annotations, the written context and git's history; kept true by `update`.
    #[pyclass(frozen, name = "TaskIndex", module = "repoctx._core")]
    struct TaskIndexPy {
        inner: std::sync::Mutex<tasks::index::Index>,
    }

    #[pymethods]
    impl TaskIndexPy {
        /// `saved`: the bytes of an earlier `save()`, or `saved_at`: (the path from the root of
        /// a file holding them, read a piece at a time, the most bytes it may hold). Untrusted:
        /// anything that is not a save of this build for this root and these options is ignored,
        /// `refused` says why; the files whose stat is the one saved are taken from them rather
        /// than read.
        #[new]
        #[allow(clippy::too_many_arguments)]
        #[pyo3(signature = (root, dirs, extra_ignore, prefix="@".to_string(), contextia=None, saved=None, saved_at=None, files=None))]
        fn new(
            py: Python<'_>,
            root: PathBuf,
            dirs: Vec<String>,
            extra_ignore: Vec<String>,
            prefix: String,
            contextia: Option<PathBuf>,
            saved: Option<&[u8]>,
            saved_at: Option<(PathBuf, u64)>,
            files: Option<&py::WalkFiles>,
        ) -> PyResult<Self> {
            let opts = tasks::options::Options {
                extra_ignore,
                prefix,
                contextia,
            };
            let saved = match (saved, &saved_at) {
                (Some(b), _) => Some(tasks::index::Saved::Bytes(b)),
                (None, Some((rel, cap))) => Some(tasks::index::Saved::File(rel, *cap)),
                (None, None) => None,
            };
            let kept = files.and_then(py::WalkFiles::take);
            let index = py
                .detach(|| tasks::index::Index::build_from(&root, opts, &dirs, saved, kept))
                .map_err(os_err_at(&root))?;
            Ok(TaskIndexPy {
                inner: std::sync::Mutex::new(index),
            })
        }

        /// The first half of `TaskIndex(root, dirs, …, saved_at=…)`, before the walk has found
        /// `dirs`: the saved file at `saved_at`'s path adopted once the walk's count of files
        /// (its `FileCount`) holds its size (`saved_bytes_cap`), or left for `settle` when the
        /// walk ends short of it.
        #[staticmethod]
        #[pyo3(signature = (root, extra_ignore, prefix, contextia, saved_at))]
        fn load(
            py: Python<'_>,
            root: PathBuf,
            extra_ignore: Vec<String>,
            prefix: String,
            contextia: Option<PathBuf>,
            saved_at: (PathBuf, Bound<'_, FileCountPy>),
        ) -> PyResult<TaskIndexLoadPy> {
            let opts = tasks::options::Options {
                extra_ignore,
                prefix,
                contextia,
            };
            let saved = tasks::index::Saved::Counted(&saved_at.0, &saved_at.1.get().inner);
            let loaded = py
                .detach(|| tasks::index::Index::load(&root, opts, Some(saved), None))
                .map_err(os_err_at(&root))?;
            Ok(TaskIndexLoadPy {
                inner: std::sync::Mutex::new(Some(loaded)),
            })
        }

        /// What the index keeps of each file, as bytes for a later process (tasks/store.rs);
        /// `changed` is 0 from then on.
        fn save<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
            let bytes = py.detach(|| self.inner.lock().unwrap().save());
            pyo3::types::PyBytes::new(py, &bytes)
        }

        /// `save()` written to file `rel` beneath the root as it is encoded, when it holds at
        /// most `most` bytes (whether it did): its bytes are never all held (nor copied into
        /// Python's), and a save refused or failed leaves the file as it was.
        fn save_to(&self, py: Python<'_>, rel: PathBuf, most: u64) -> PyResult<bool> {
            let root = self.inner.lock().unwrap().root.clone();
            in_root(py, &root, |r| {
                // (the index is held while it is encoded, not while the file is synced)
                let save = |w: &mut dyn std::io::Write| {
                    self.inner.lock().unwrap().save_into(w, most).map(drop)
                };
                match r.write_atomic_with(&rel, save) {
                    Err(fs::Error::Io(e)) if tasks::store::TooLarge::is(&e) => Ok(false),
                    other => other.map(|()| true),
                }
            })
        }

        /// Offer the bytes of an earlier `save_history()` (untrusted: checked, and used by the next
        /// question only when HEAD is the commit they were read at); why they cannot be used, or None.
        fn offer_history(&self, py: Python<'_>, saved: &[u8]) -> Option<String> {
            py.detach(|| {
                let mut ix = self.inner.lock().unwrap();
                let root = ix.root.clone();
                ix.history.offer(&root, saved).err()
            })
        }

        /// Whether git's history was read from git by a question and not saved since.
        #[getter]
        fn history_unsaved(&self) -> bool {
            self.inner.lock().unwrap().history.unsaved()
        }

        /// That read as bytes for a later process (tasks/history_store.rs), once; None without one.
        fn save_history<'py>(&self, py: Python<'py>) -> Option<Bound<'py, pyo3::types::PyBytes>> {
            let bytes = py.detach(|| {
                let mut ix = self.inner.lock().unwrap();
                let root = ix.root.clone();
                ix.history.save(&root)
            })?;
            Some(pyo3::types::PyBytes::new(py, &bytes))
        }

        /// How many files differ from the last saved bytes: read, dropped, or saved but changed or
        /// gone since (every file held, after a build without usable saved bytes).
        #[getter]
        fn changed(&self) -> usize {
            self.inner.lock().unwrap().changed
        }

        /// Files the build took from the saved bytes rather than read.
        #[getter]
        fn loaded(&self) -> usize {
            self.inner.lock().unwrap().loaded
        }

        /// Why the saved bytes given to the build were not used (None: used, or none given).
        #[getter]
        fn refused(&self) -> Option<String> {
            self.inner.lock().unwrap().refused.clone()
        }

        /// List again the directories in `changed` and read their files whose stat changed; with
        /// `all` (every directory of the table), also drop the ones gone and index the new ones.
        /// OSError when the index would grow too big (tasks/limits.rs): it is then unusable.
        #[pyo3(signature = (changed, all=None))]
        fn update(
            &self,
            py: Python<'_>,
            changed: Vec<String>,
            all: Option<Vec<String>>,
        ) -> PyResult<()> {
            py.detach(|| self.inner.lock().unwrap().update(&changed, all.as_deref()))
                .map_err(|e| os_err(e.into()))
        }

        /// The ranked files and the bundle for a task (tasks/rank.rs `Answer`); ValueError for
        /// an unknown tokenizer.
        #[allow(clippy::too_many_arguments)]
        #[pyo3(signature = (task, budget, paths, signals_off, limit, tokenizer, outline=false))]
        fn query(
            &self,
            py: Python<'_>,
            task: &str,
            budget: usize,
            paths: Vec<String>,
            signals_off: Vec<String>,
            limit: usize,
            tokenizer: &str,
            outline: bool,
        ) -> PyResult<tasks::rank::Answer> {
            let ask = tasks::rank::Ask {
                task,
                budget,
                paths: &paths,
                off: &signals_off,
                limit,
                outline,
            };
            py.detach(|| tasks::query(&mut self.inner.lock().unwrap(), &ask, tokenizer))
                .map_err(PyValueError::new_err)
        }

        #[getter]
        fn file_count(&self) -> usize {
            self.inner.lock().unwrap().file_count()
        }

        /// The index's own count of the bytes it holds.
        #[getter]
        fn heap_bytes(&self) -> usize {
            self.inner.lock().unwrap().heap_bytes()
        }

        /// `heap_bytes` by structure: (what, bytes) pairs.
        #[getter]
        fn heap_parts(&self) -> Vec<(&'static str, usize)> {
            self.inner.lock().unwrap().heap_parts()
        }
    }

    /// The most bytes a saved task index of a tree of `files` files is read up to.
    #[pyfunction]
    fn saved_bytes_cap(files: u64) -> u64 {
        tasks::store::saved_cap(files)
    }

    /// A saved task index adopted before the walk (`TaskIndex.load`), for `settle`.
    #[pyclass(frozen, name = "TaskIndexLoad", module = "repoctx._core")]
    struct TaskIndexLoadPy {
        inner: std::sync::Mutex<Option<tasks::index::Loaded>>,
    }

    #[pymethods]
    impl TaskIndexLoadPy {
        /// The index of `dirs`, brought up to date from what was adopted; `saved_cap` is the
        /// most bytes the saved file may hold for this tree (a larger one is refused); with
        /// `history`, git's history made beside the load, which it takes. Once.
        #[pyo3(signature = (dirs, saved_cap, history=None, files=None))]
        fn settle(
            &self,
            py: Python<'_>,
            dirs: Vec<String>,
            saved_cap: u64,
            history: Option<&TaskHistoryPy>,
            files: Option<&py::WalkFiles>,
        ) -> PyResult<TaskIndexPy> {
            let loaded = self.inner.lock().unwrap().take();
            let loaded = loaded.ok_or_else(|| PyValueError::new_err("settled already"))?;
            let history = history.and_then(|h| h.inner.lock().unwrap().take());
            let kept = files.and_then(py::WalkFiles::take);
            let index = py
                .detach(|| {
                    let mut index = loaded.settle(&dirs, saved_cap, kept)?;
                    if let Some(h) = history {
                        index.history = h;
                    }
                    Ok(index)
                })
                .map_err(|e: tasks::limits::TooBig| os_err(e.into()))?;
            Ok(TaskIndexPy {
                inner: std::sync::Mutex::new(index),
            })
        }
    }

    /// git's history of a root as a question reads it (tasks/history.rs), made while a load
    /// adopts the saved index (`TaskIndexLoad.settle` takes it): from the bytes of an earlier
    /// `save_history()` when they hold HEAD's (untrusted: checked), else from git.
    #[pyclass(frozen, name = "TaskHistory", module = "repoctx._core")]
    struct TaskHistoryPy {
        inner: std::sync::Mutex<Option<tasks::history::History>>,
        /// Why the saved bytes cannot be used, or None.
        #[pyo3(get)]
        refused: Option<String>,
    }

    #[pymethods]
    impl TaskHistoryPy {
        #[new]
        #[pyo3(signature = (root, saved=None))]
        fn new(py: Python<'_>, root: PathBuf, saved: Option<&[u8]>) -> Self {
            let (history, refused) = py.detach(|| {
                let mut h = tasks::history::History::default();
                let refused = saved.and_then(|b| h.offer(&root, b).err());
                h.refresh(&root);
                (h, refused)
            });
            TaskHistoryPy {
                inner: std::sync::Mutex::new(Some(history)),
                refused,
            }
        }
    }

    #[pymethods]
    impl tasks::rank::Answer {
        /// Its JSON Schema (the MCP tool's output schema), as text.
        #[classattr]
        const JSON_SCHEMA: &'static str = tasks::rank::SCHEMA;

        /// The answer as compact JSON, fields in declaration order.
        fn json(&self) -> String {
            serde_json::to_string(self).expect("an answer is plain data")
        }
    }

    // --- languages (lang/) ----------------------------------------------------------------------

    /// The one table of file kinds: extension or name, label, language, code, import grammar.
    #[pyfunction]
    fn file_kinds() -> Vec<py::FileKind> {
        lang::FILE_KINDS.iter().map(py::file_kind).collect()
    }

    /// The row of the table a file name (no directory) falls in: by its whole name, else its
    /// extension ("Source file" with no language when the table has neither).
    #[pyfunction]
    fn file_kind(name: &str) -> py::FileKind {
        py::file_kind(lang::kind_of(name))
    }

    /// The outline of `text`, the content of `path` (with `/`), as JSON: definitions with
    /// kind, name, 1-based start and end, signature and members.
    #[pyfunction]
    fn outline(py: Python<'_>, path: &str, text: &str) -> String {
        py.detach(|| lang::outline::outline_json(path, text))
    }

    // --- project (project/modscan.rs) --------------------------------------------------------

    /// What each module directory holds (py::ModuleScan), in the order given.
    #[pyfunction]
    fn scan_modules(
        py: Python<'_>,
        root: PathBuf,
        dirs: Vec<String>,
    ) -> PyResult<Vec<Py<py::ModuleScan>>> {
        py.detach(|| modscan::scan_modules(&root, &dirs))
            .into_iter()
            .map(|m| py::module_scan(py, m))
            .collect()
    }

    /// How this core was built: crate version, debug or release, target arch and OS.
    #[pyfunction]
    fn build_info() -> py::BuildInfo {
        py::BuildInfo {
            version: env!("CARGO_PKG_VERSION"),
            profile: if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            },
            target: format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS),
        }
    }

    #[pymodule]
    fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add_function(wrap_pyfunction!(walk_py, m)?)?;
        m.add_function(wrap_pyfunction!(count_tokens, m)?)?;
        m.add_class::<LiveIndexPy>()?;
        m.add_function(wrap_pyfunction!(fingerprint_py, m)?)?;
        m.add_function(wrap_pyfunction!(real_path, m)?)?;
        m.add_function(wrap_pyfunction!(is_source_file, m)?)?;
        m.add_function(wrap_pyfunction!(build_info, m)?)?;
        m.add_function(wrap_pyfunction!(read_yaml_many, m)?)?;
        m.add_function(wrap_pyfunction!(yaml_to_json, m)?)?;
        m.add_function(wrap_pyfunction!(jsonrpc_request_id, m)?)?;
        m.add_function(wrap_pyfunction!(parse_go, m)?)?;
        m.add_function(wrap_pyfunction!(scan_modules, m)?)?;
        m.add_function(wrap_pyfunction!(file_kinds, m)?)?;
        m.add_function(wrap_pyfunction!(file_kind, m)?)?;
        m.add_function(wrap_pyfunction!(outline, m)?)?;
        m.add_class::<py::FileKind>()?;
        m.add_class::<CacheViewPy>()?;
        m.add_class::<CacheWatchPy>()?;
        m.add_function(wrap_pyfunction!(load_cache, m)?)?;
        m.add_function(wrap_pyfunction!(build_cache, m)?)?;
        m.add_function(wrap_pyfunction!(annotate_file, m)?)?;
        m.add_class::<GlobsPy>()?;
        m.add_class::<SourceIndexPy>()?;
        m.add_class::<ScopeSourcesPy>()?;
        m.add_class::<GitRepoPy>()?;
        m.add_class::<GitStatsPy>()?;
        // The named results: their types, for the stub and for isinstance.
        m.add_class::<py::Table>()?;
        m.add_class::<py::WalkFiles>()?;
        m.add_class::<py::DirRow>()?;
        m.add_class::<py::LeftOut>()?;
        m.add_class::<py::YamlFile>()?;
        m.add_class::<py::RequestId>()?;
        m.add_class::<py::GoFile>()?;
        m.add_class::<py::GoRequire>()?;
        m.add_class::<py::BuildInfo>()?;
        m.add_class::<py::ModuleScan>()?;
        m.add_class::<py::KeyFile>()?;
        m.add_class::<py::BuiltCache>()?;
        m.add_class::<py::CacheEntry>()?;
        m.add_class::<py::Annotation>()?;
        m.add_class::<py::Language>()?;
        m.add_class::<py::DirEntry>()?;
        m.add_class::<py::Stat>()?;
        m.add_function(wrap_pyfunction!(to_yaml, m)?)?;
        m.add_function(wrap_pyfunction!(stage_yaml, m)?)?;
        m.add_function(wrap_pyfunction!(commit_staged, m)?)?;
        m.add("LinkRefused", m.py().get_type::<LinkRefused>())?;
        m.add("CacheRefused", m.py().get_type::<py::CacheRefused>())?;
        m.add("YamlRefused", m.py().get_type::<py::YamlRefused>())?;
        m.add("CoreRefused", m.py().get_type::<py::CoreRefused>())?;
        // A panic left anywhere in the core raises this, a BaseException: exported so the
        // handlers that answer whatever happens catch it by name (python/repoctx/base/failures.py).
        m.add(
            "PanicException",
            m.py().get_type::<pyo3::panic::PanicException>(),
        )?;
        for f in [
            wrap_pyfunction!(fs_read, m)?,
            wrap_pyfunction!(fs_read_head, m)?,
            wrap_pyfunction!(fs_write, m)?,
            wrap_pyfunction!(fs_makedirs, m)?,
            wrap_pyfunction!(fs_open_dir, m)?,
            wrap_pyfunction!(fs_list, m)?,
            wrap_pyfunction!(fs_stat, m)?,
            wrap_pyfunction!(fs_remove, m)?,
            wrap_pyfunction!(fs_remove_tree, m)?,
            wrap_pyfunction!(fs_rename, m)?,
            wrap_pyfunction!(fs_exchange, m)?,
        ] {
            m.add_function(f)?;
        }
        m.add("FILE_LABELS", lang::labels())?;
        m.add("SKIP_DIRS", walk::SKIP_DIRS.to_vec())?;
        m.add("RACY_NS", os::RACY_NS)?;
        m.add_class::<TaskIndexPy>()?;
        m.add_class::<TaskIndexLoadPy>()?;
        m.add_class::<FileCountPy>()?;
        m.add_function(wrap_pyfunction!(saved_bytes_cap, m)?)?;
        m.add("MAX_SAVED_BYTES", tasks::store::MOST_SAVED_BYTES)?;
        m.add_class::<TaskHistoryPy>()?;
        m.add_class::<tasks::rank::Answer>()?;
        m.add_class::<tasks::rank::FileOut>()?;
        m.add_class::<tasks::rank::RegionOut>()?;
        m.add_class::<tasks::rank::PieceOut>()?;
        m.add_class::<tasks::outlines::DefinitionOut>()?;
        m.add_class::<tasks::outlines::MemberOut>()?;
        m.add("TASK_SIGNALS", tasks::rank::SIGNALS.to_vec())?;
        m.add("TASK_NOTHING_MATCHED", tasks::rank::NOTHING_MATCHED)?;
        Ok(())
    }
}
