//! Python bindings of the repoctx core. Each heavy call releases the GIL.

mod annotate;
mod bpe;
mod cache;
mod extract;
mod fingerprint;
mod fs;
mod gitview;
mod ignorerules;
mod imports;
mod jsonrpc;
mod live;
mod modscan;
mod select;
mod srcindex;
mod tokens;
mod walk;
mod yamlread;
mod yamlwrite;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use std::collections::HashSet;
use std::ffi::OsString;
use std::path::PathBuf;

/// One row of the walk table: (scope, fingerprint, source_bytes, files, has_context,
/// included, eligible, context_mtime_ns, context_size).
type Row = (String, String, u64, u32, bool, bool, bool, i64, u64);

fn row(r: &walk::DirRow) -> Row {
    (
        r.scope.clone(),
        r.fingerprint.clone(),
        r.source_bytes,
        r.files,
        r.has_context,
        r.included,
        r.eligible,
        r.context_stat.0,
        r.context_stat.1,
    )
}

fn os_err(e: std::io::Error) -> PyErr {
    PyOSError::new_err(e.to_string())
}

#[pyfunction]
#[pyo3(name = "walk", signature = (root, extra_ignore, max_depth, min_tokens))]
fn walk_py(
    py: Python<'_>,
    root: PathBuf,
    extra_ignore: Vec<String>,
    max_depth: usize,
    min_tokens: i64,
) -> PyResult<(Vec<Row>, usize, Vec<walk::LeftOut>)> {
    let opts = walk::Options { extra_ignore, max_depth, min_tokens };
    let table = py.detach(|| walk::walk(&root, &opts, None)).map_err(os_err)?;
    Ok((table.rows.iter().map(row).collect(), table.skipped, table.unreadable))
}

/// The walk table kept in memory and kept true by file-system events (see live.rs).
#[pyclass(name = "LiveIndex")]
struct LiveIndexPy {
    inner: std::sync::Mutex<live::LiveIndex>,
}

#[pymethods]
impl LiveIndexPy {
    #[new]
    #[pyo3(signature = (root, extra_ignore, max_depth, min_tokens, watch=true))]
    fn new(py: Python<'_>, root: PathBuf, extra_ignore: Vec<String>, max_depth: usize, min_tokens: i64, watch: bool) -> PyResult<Self> {
        let opts = walk::Options { extra_ignore, max_depth, min_tokens };
        let index = py.detach(|| live::LiveIndex::new(&root, opts, watch)).map_err(os_err)?;
        Ok(LiveIndexPy { inner: std::sync::Mutex::new(index) })
    }

    /// Apply pending changes; returns the table's generation (unchanged: nothing moved).
    fn refresh(&self, py: Python<'_>) -> PyResult<u64> {
        py.detach(|| {
            let mut index = self.inner.lock().unwrap();
            index.refresh().map(|_| index.generation)
        })
        .map_err(os_err)
    }

    /// (rows, skipped, unreadable, generation, the generation at which each row last
    /// changed) as of the last refresh.
    fn table(&self) -> (Vec<Row>, usize, Vec<walk::LeftOut>, u64, Vec<u64>) {
        let index = self.inner.lock().unwrap();
        let (rows, skipped, unreadable) = index.table();
        (rows.iter().map(row).collect(), skipped, unreadable.to_vec(), index.generation, index.changed_at().to_vec())
    }

    /// (position, row) of each row changed after generation `since`, and the current
    /// generation; None for the rows when rows were added or removed after `since` (call table()).
    fn changes_since(&self, since: u64) -> (Option<Vec<(usize, Row)>>, usize, Vec<walk::LeftOut>, u64) {
        let index = self.inner.lock().unwrap();
        let (_, skipped, unreadable) = index.table();
        let changed = index.changes_since(since).map(|c| c.into_iter().map(|(i, r)| (i, row(r))).collect());
        (changed, skipped, unreadable.to_vec(), index.generation)
    }

    #[getter]
    fn watching(&self) -> bool {
        self.inner.lock().unwrap().watching()
    }

    #[getter]
    fn rescans(&self) -> u64 {
        self.inner.lock().unwrap().rescans
    }
}

/// BPE token counts of each text ("o200k" or "cl100k"), in parallel.
#[pyfunction]
fn count_tokens(py: Python<'_>, encoding: &str, texts: Vec<String>) -> PyResult<Vec<usize>> {
    py.detach(|| bpe::count(encoding, &texts))
        .ok_or_else(|| pyo3::exceptions::PyValueError::new_err(format!("unknown encoding {encoding:?}; known: o200k, cl100k")))
}

/// The path with every symlink resolved (realpath(3)), or None when that fails (a missing
/// component, a loop, no permission): the caller then falls back to Python's lenient
/// os.path.realpath. In C a handful of lstat calls; Python's own costs ~40 µs a path.
#[pyfunction]
fn real_path(path: PathBuf) -> Option<std::ffi::OsString> {
    std::fs::canonicalize(path).ok().map(PathBuf::into_os_string) // str, as os.path gives
}

#[pyfunction]
#[pyo3(name = "fingerprint")]
fn fingerprint_py(py: Python<'_>, dir: PathBuf) -> PyResult<String> {
    py.detach(|| fingerprint::fingerprint_dir(&dir)).map_err(|e| PyOSError::new_err(e.to_string()))
}

#[pyfunction]
fn is_source_file(name: &str) -> bool {
    walk::is_source_file(name)
}

/// Parse YAML files beneath `root` in parallel. Each result is ("json", text), ("missing", ""),
/// ("too_large", ""), ("invalid", why it was not read) or ("refused", JSON {reason, line, column}
/// of YAML the reader refused). OSError when the root cannot be opened.
#[pyfunction]
fn read_yaml_many(py: Python<'_>, root: PathBuf, rels: Vec<String>, max_bytes: u64) -> PyResult<Vec<(&'static str, String)>> {
    Ok(py
        .detach(|| yamlread::read_many(&root, &rels, max_bytes))
        .map_err(os_err)?
        .into_iter()
        .map(|p| match p {
            yamlread::Parsed::Json(s) => ("json", s),
            yamlread::Parsed::Missing => ("missing", String::new()),
            yamlread::Parsed::TooLarge => ("too_large", String::new()),
            yamlread::Parsed::Invalid(e) => ("invalid", e),
            yamlread::Parsed::Refused(r) => {
                ("refused", serde_json::json!({"reason": r.reason, "line": r.line, "column": r.column}).to_string())
            }
        })
        .collect())
}

/// One YAML document as JSON text, parsed with the bounds of yamlread.rs; a refused one
/// raises ValueError(reason, line, column, syntax).
#[pyfunction]
fn yaml_to_json(py: Python<'_>, data: &[u8]) -> PyResult<String> {
    py.detach(|| yamlread::to_json(data)).map_err(|r| PyValueError::new_err((r.reason, r.line, r.column, r.syntax)))
}

/// (whether a JSON-RPC line is one JSON object, its integer or string `id` where one can be read).
#[pyfunction]
fn jsonrpc_request_id(py: Python<'_>, line: &[u8]) -> PyResult<(bool, Option<Py<PyAny>>)> {
    let (whole, id) = py.detach(|| jsonrpc::request_id(line));
    let id = match id {
        Some(jsonrpc::Id::Int(n)) => Some(n.into_pyobject(py)?.into_any().unbind()),
        Some(jsonrpc::Id::Str(s)) => Some(s.into_pyobject(py)?.into_any().unbind()),
        None => None,
    };
    Ok((whole, id))
}

/// Per module directory: (code files, key files as (path, role), import specifiers, ignored).
#[pyfunction]
fn scan_modules(
    py: Python<'_>,
    root: PathBuf,
    dirs: Vec<String>,
) -> Vec<(u32, Vec<(String, &'static str)>, Vec<String>, bool)> {
    py.detach(|| modscan::scan_modules(&root, &dirs))
        .into_iter()
        .map(|m| (m.code_files, m.key_files, m.imports, m.ignored))
        .collect()
}

// --- caches (cache.rs, select.rs) -------------------------------------------

/// A watch on a cache's directories, begun before the cache is read (see cache::Watcher).
#[pyclass(frozen, name = "CacheWatch")]
struct CacheWatchPy {
    inner: std::sync::Mutex<Option<cache::Watcher>>,
}

#[pymethods]
impl CacheWatchPy {
    #[new]
    fn new(dirs: Vec<PathBuf>) -> Self {
        CacheWatchPy { inner: std::sync::Mutex::new(cache::Watcher::new(&dirs)) }
    }
}

/// A verified cache held in memory: its documents, their word index, and how to
/// tell that none of its files changed since they were read.
#[pyclass(frozen, name = "CacheView")]
struct CacheViewPy {
    view: select::View,
    meta: Vec<(PathBuf, cache::StatKey)>, // the cache's own directories and files
    docs: Vec<(PathBuf, cache::StatKey)>, // each document file
    watcher: Option<cache::Watcher>,
}

type StatTuple = (u64, u64, u64, i64, i64);

fn cache_err(e: cache::Fail) -> PyErr {
    match e {
        cache::Fail::Io(e) => os_err(e),
        cache::Fail::Code(code, message) => PyValueError::new_err((code, message)),
    }
}

#[pymethods]
impl CacheViewPy {
    /// A view of (id, version, content) documents held in memory, with no files to watch.
    #[staticmethod]
    fn from_documents(py: Python<'_>, docs: Vec<(String, String, String)>) -> Self {
        let docs = docs.into_iter().map(|(id, version, content)| select::Doc { id, version, content }).collect();
        CacheViewPy { view: py.detach(|| select::View::new(docs)), meta: Vec::new(), docs: Vec::new(), watcher: None }
    }

    /// Whether no file the view was read from has changed: the cache's own paths keep
    /// their stat keys, and the watch saw nothing (without a watch: every document
    /// file keeps its stat key).
    fn fresh(&self, py: Python<'_>) -> bool {
        py.detach(|| {
            self.meta.iter().all(|(p, k)| cache::StatKey::lstat(p) == Some(*k))
                && match &self.watcher {
                    Some(w) => !w.changed(),
                    None => cache::unchanged(&self.docs),
                }
        })
    }

    /// Whether a watch follows the documents (else fresh() stats each of them).
    #[getter]
    fn watching(&self) -> bool {
        self.watcher.is_some()
    }

    /// The newest ctime (ns) among the files read.
    #[getter]
    fn newest_change_ns(&self) -> i64 {
        self.meta.iter().chain(&self.docs).map(|(_, k)| k.4).max().unwrap_or(i64::MIN)
    }

    /// The SelectionResult JSON for a query and budget.
    fn resolve(&self, py: Python<'_>, query: &str, budget: u64) -> String {
        py.detach(|| self.view.to_json(query, budget, &self.view.select(query, budget)))
    }

    fn __len__(&self) -> usize {
        self.view.len()
    }
}

/// Read and verify a cache's documents into a view. `entries` are the manifest's
/// (id, version, file name in docs_dir); `meta` are the cache's own paths with the
/// stat keys they had before anything was read; `watch` was begun before that.
/// Raises ValueError(code, message) or OSError.
#[pyfunction]
fn load_cache(
    py: Python<'_>,
    docs_dir: PathBuf,
    entries: Vec<(String, String, String)>,
    meta: Vec<(PathBuf, StatTuple)>,
    watch: &CacheWatchPy,
) -> PyResult<CacheViewPy> {
    let watcher = watch.inner.lock().unwrap().take();
    py.detach(|| {
        let (docs, keys) = cache::load(&docs_dir, &entries)?;
        let meta = meta.into_iter().map(|(p, k)| (p, cache::StatKey(k.0, k.1, k.2, k.3, k.4))).collect();
        Ok(CacheViewPy { view: select::View::new(docs), meta, docs: keys, watcher })
    })
    .map_err(cache_err)
}

/// Build a cache's documents from `sources` into `documents/` of the directory `rel` beneath
/// `root`: (entries sorted by id as (id, version, file), content bytes, (path, why) of each
/// file a repository build left out, sorted by path).
/// Raises ValueError((code, message)), LinkRefused or OSError.
#[pyfunction]
fn build_cache(
    py: Python<'_>,
    sources: PathBuf,
    root: PathBuf,
    rel: PathBuf,
    repository: bool,
) -> PyResult<(Vec<(String, String, String)>, u64, Vec<(String, &'static str)>)> {
    let mode = if repository { cache::Mode::Repository } else { cache::Mode::Markdown };
    let out = in_root(py, &root, |r| r.open_dir(&rel))?;
    let built = py.detach(|| cache::build(&sources, &out, mode)).map_err(cache_err)?;
    let entries = built.entries.into_iter().map(|e| (e.id, e.version, e.file)).collect();
    Ok((entries, built.bytes, built.skipped))
}

/// One annotation: (path, line, kind, target, symbol_kind, symbol).
type AnnotationRow = (String, u32, &'static str, String, &'static str, String);

fn annotation_row(path: String, a: annotate::Annotation) -> AnnotationRow {
    (path, a.line, a.kind, a.target, a.symbol_kind, a.symbol)
}

/// The annotations of one file (`rel` names its language), read now.
#[pyfunction]
fn annotate_file(py: Python<'_>, path: PathBuf, rel: String, prefix: String) -> Vec<AnnotationRow> {
    py.detach(|| srcindex::scan_path(&path, &rel, &prefix, &annotate::finder(&prefix)).1)
        .into_iter()
        .map(|a| annotation_row(rel.clone(), a))
        .collect()
}

/// Glob patterns compiled once (see srcindex.rs for the syntax).
#[pyclass(frozen, name = "Globs")]
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

/// The annotation index of a tree (see srcindex.rs).
#[pyclass(frozen, name = "SourceIndex")]
struct SourceIndexPy(srcindex::Index);

#[pymethods]
impl SourceIndexPy {
    #[new]
    fn new(py: Python<'_>, root: PathBuf, prefix: String, scan_paths: Vec<String>) -> PyResult<Self> {
        let index = py.detach(|| srcindex::Index::build(&root, &prefix, &scan_paths)).map_err(os_err)?;
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
    fn annotations(&self, py: Python<'_>, query: Option<Bound<'_, GlobsPy>>) -> Vec<AnnotationRow> {
        let q = query.as_ref().map(|g| &g.get().0);
        py.detach(|| self.0.annotations(q)).into_iter().map(|(p, a)| annotation_row(p, a)).collect()
    }

    fn match_counts(&self, py: Python<'_>, globs: Bound<'_, GlobsPy>) -> Vec<u64> {
        let g = &globs.get().0;
        py.detach(|| self.0.match_counts(g))
    }

    fn overlaps(&self, py: Python<'_>, query: Bound<'_, GlobsPy>, globs: Bound<'_, GlobsPy>) -> Vec<bool> {
        let (q, g) = (&query.get().0, &globs.get().0);
        py.detach(|| self.0.overlaps(q, g))
    }
}

/// How this core was built: crate version, debug or release, target arch and OS.
#[pyfunction]
fn build_info() -> Vec<(&'static str, String)> {
    vec![
        ("version", env!("CARGO_PKG_VERSION").to_string()),
        ("profile", if cfg!(debug_assertions) { "debug" } else { "release" }.to_string()),
        ("target", format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS)),
    ]
}

// --- the confined file-system layer (fs.rs) ------------------------------------

pyo3::create_exception!(
    _core,
    LinkRefused,
    PyOSError,
    "A link in the repository leads outside it: not followed."
);

fn fs_err(e: fs::Error) -> PyErr {
    let message = e.to_string();
    match e {
        fs::Error::Outside(_) => LinkRefused::new_err((libc::ELOOP, message)),
        fs::Error::NotRegular(_, dir) => PyOSError::new_err((if dir { libc::EISDIR } else { libc::EINVAL }, message)),
        fs::Error::TooLarge(..) => PyOSError::new_err((libc::EFBIG, message)),
        // OSError(errno, text) is the errno's own subclass (FileNotFoundError, …) with strerror set.
        fs::Error::Io(e) => match e.raw_os_error() {
            Some(n) => PyOSError::new_err((n, message.trim_end_matches(&format!(" (os error {n})")).to_string())),
            None => os_err(e),
        },
    }
}

fn in_root<T>(py: Python<'_>, root: &std::path::Path, op: impl FnOnce(&fs::Root) -> fs::Result<T> + Send) -> PyResult<T>
where
    T: Send,
{
    py.detach(|| fs::Root::open(root).map_err(fs::Error::Io).and_then(|r| op(&r))).map_err(fs_err)
}

/// A regular file's bytes beneath the root, at most `max_bytes`.
#[pyfunction]
fn fs_read(py: Python<'_>, root: PathBuf, rel: PathBuf, max_bytes: u64) -> PyResult<Py<pyo3::types::PyBytes>> {
    let data = in_root(py, &root, |r| r.read(&rel, max_bytes))?;
    Ok(pyo3::types::PyBytes::new(py, &data).unbind())
}

/// The first `n` bytes of a regular file beneath the root.
#[pyfunction]
fn fs_read_head(py: Python<'_>, root: PathBuf, rel: PathBuf, n: u64) -> PyResult<Py<pyo3::types::PyBytes>> {
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
fn fs_list(py: Python<'_>, root: PathBuf, rel: PathBuf) -> PyResult<Vec<(std::ffi::OsString, &'static str)>> {
    let listed = in_root(py, &root, |r| r.list(&rel))?;
    Ok(listed.into_iter().map(|(n, k)| (n, k.letter())).collect())
}

#[pyfunction]
fn fs_stat(py: Python<'_>, root: PathBuf, rel: PathBuf, follow: bool) -> PyResult<Option<fs::StatTuple>> {
    in_root(py, &root, |r| r.stat(&rel, follow).map(|m| m.as_ref().map(fs::stat_tuple)))
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

// --- git's view (gitview.rs) ------------------------------------------------------

/// git's view of one root, kept between questions (see gitview.rs).
#[pyclass(frozen, name = "GitRepo")]
struct GitRepoPy(gitview::Handle);

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
        GitRepoPy(gitview::Handle::new(&root))
    }

    /// The commit checked out (full hex), or None outside a repository or before the first commit.
    fn head(&self, py: Python<'_>) -> Option<String> {
        py.detach(|| self.0.head())
    }

    /// The directories among or under `scopes` holding a file that differs from `commit` or
    /// that git neither tracks nor ignores; None when git cannot tell.
    fn changed_dirs(&self, py: Python<'_>, commit: &str, scopes: Vec<String>) -> Option<HashSet<OsString>> {
        py.detach(|| self.0.changed_dirs(commit, &scopes)).map(|dirs| dirs.into_iter().map(PathBuf::into_os_string).collect())
    }

    /// The scopes among `scopes` whose own files are as at `commit`; None when git cannot tell.
    fn unchanged(&self, py: Python<'_>, commit: &str, scopes: Vec<String>) -> Option<HashSet<String>> {
        py.detach(|| self.0.unchanged(commit, &scopes)).map(|s| s.into_iter().collect())
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

// --- scope writes (extract.rs, yamlwrite.rs) ---------------------------------

/// What `.context.yaml` derives from the sources of a tree: built once over the
/// table's directories, then asked for the facts of scopes.
#[pyclass(frozen, name = "ScopeSources")]
struct ScopeSourcesPy {
    inner: extract::Index,
}

#[pymethods]
impl ScopeSourcesPy {
    #[new]
    #[pyo3(signature = (root, dirs, extra_ignore=Vec::new()))]
    fn new(py: Python<'_>, root: PathBuf, dirs: Vec<String>, extra_ignore: Vec<String>) -> Self {
        ScopeSourcesPy { inner: py.detach(|| extract::Index::build(&root, dirs, &extra_ignore)) }
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
    fn missing_exports(&self, py: Python<'_>, items: Vec<(String, Vec<String>)>) -> Vec<Vec<String>> {
        py.detach(|| self.inner.missing_exports(&items))
    }

    /// (language, files) over the whole table, most files first.
    #[getter]
    fn languages(&self) -> Vec<(String, u64)> {
        self.inner.languages.clone()
    }
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
fn stage_yaml(py: Python<'_>, root: PathBuf, items: Vec<(PathBuf, Vec<u8>)>, raw: bool) -> PyResult<Vec<PathBuf>> {
    in_root(py, &root, |r| yamlwrite::stage(r, &root, &items, raw))
}

/// Flush staged (temporary, final) pairs, rename them into place in order, flush again.
#[pyfunction]
fn commit_staged(py: Python<'_>, root: PathBuf, pairs: Vec<(PathBuf, PathBuf)>) -> PyResult<()> {
    in_root(py, &root, |r| yamlwrite::commit(r, &root, &pairs))
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
    m.add_function(wrap_pyfunction!(scan_modules, m)?)?;
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
    m.add_function(wrap_pyfunction!(to_yaml, m)?)?;
    m.add_function(wrap_pyfunction!(stage_yaml, m)?)?;
    m.add_function(wrap_pyfunction!(commit_staged, m)?)?;
    m.add("LinkRefused", m.py().get_type::<LinkRefused>())?;
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
    m.add("FILE_LABELS", extract::labels())?;
    m.add("SKIP_DIRS", walk::SKIP_DIRS.to_vec())?;
    Ok(())
}
