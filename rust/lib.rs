//! Python bindings of the repoctx core. Each heavy call releases the GIL.

mod cache;
mod fingerprint;
mod live;
mod modscan;
mod select;
mod tokens;
mod walk;
mod yamlread;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
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
) -> PyResult<(Vec<Row>, usize, Vec<String>)> {
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

    /// (rows, skipped, unreadable, generation) as of the last refresh.
    fn table(&self) -> (Vec<Row>, usize, Vec<String>, u64) {
        let index = self.inner.lock().unwrap();
        let (rows, skipped, unreadable) = index.table();
        (rows.iter().map(row).collect(), skipped, unreadable.to_vec(), index.generation)
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

#[pyfunction]
#[pyo3(name = "fingerprint")]
fn fingerprint_py(py: Python<'_>, dir: PathBuf) -> PyResult<String> {
    py.detach(|| fingerprint::fingerprint_dir(&dir)).map_err(|e| PyOSError::new_err(e.to_string()))
}

#[pyfunction]
fn is_source_file(name: &str) -> bool {
    walk::is_source_file(name)
}

/// Parse YAML files in parallel. Each result is ("json", text), ("missing", ""),
/// ("too_large", "") or ("invalid", reason).
#[pyfunction]
fn read_yaml_many(py: Python<'_>, paths: Vec<String>, max_bytes: u64) -> Vec<(&'static str, String)> {
    py.detach(|| yamlread::read_many(&paths, max_bytes))
        .into_iter()
        .map(|p| match p {
            yamlread::Parsed::Json(s) => ("json", s),
            yamlread::Parsed::Missing => ("missing", String::new()),
            yamlread::Parsed::TooLarge => ("too_large", String::new()),
            yamlread::Parsed::Invalid(e) => ("invalid", e),
        })
        .collect()
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

/// A verified cache held in memory: its documents, their word index, and the
/// stat key each of its files had when read.
#[pyclass(frozen, name = "CacheView")]
struct CacheViewPy {
    view: select::View,
    watched: Vec<(PathBuf, cache::StatKey)>,
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
        CacheViewPy { view: py.detach(|| select::View::new(docs)), watched: Vec::new() }
    }

    /// Whether every file the view was read from still has the same stat key.
    fn fresh(&self, py: Python<'_>) -> bool {
        use rayon::prelude::*;
        py.detach(|| self.watched.par_iter().all(|(p, k)| cache::StatKey::lstat(p) == Some(*k)))
    }

    /// The newest ctime (ns) among those files.
    #[getter]
    fn newest_change_ns(&self) -> i64 {
        self.watched.iter().map(|(_, k)| k.4).max().unwrap_or(i64::MIN)
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
/// (id, version, file name in docs_dir); `watched` are further files with the stat
/// keys they had before they were read. Raises ValueError((code, message)) or OSError.
#[pyfunction]
fn load_cache(
    py: Python<'_>,
    docs_dir: PathBuf,
    entries: Vec<(String, String, String)>,
    watched: Vec<(PathBuf, StatTuple)>,
) -> PyResult<CacheViewPy> {
    py.detach(|| {
        let (docs, keys) = cache::load(&docs_dir, &entries)?;
        let mut all: Vec<(PathBuf, cache::StatKey)> =
            watched.into_iter().map(|(p, k)| (p, cache::StatKey(k.0, k.1, k.2, k.3, k.4))).collect();
        all.extend(keys);
        Ok(CacheViewPy { view: select::View::new(docs), watched: all })
    })
    .map_err(cache_err)
}

/// Build a cache's documents from `sources` into `docs_dir`: (entries sorted by id
/// as (id, version, file), content bytes, files skipped). Raises ValueError((code, message)) or OSError.
#[pyfunction]
fn build_cache(
    py: Python<'_>,
    sources: PathBuf,
    docs_dir: PathBuf,
    repository: bool,
) -> PyResult<(Vec<(String, String, String)>, u64, u64)> {
    let mode = if repository { cache::Mode::Repository } else { cache::Mode::Markdown };
    let built = py.detach(|| cache::build(&sources, &docs_dir, mode)).map_err(cache_err)?;
    let entries = built.entries.into_iter().map(|e| (e.id, e.version, e.file)).collect();
    Ok((entries, built.bytes, built.skipped))
}

/// Swap two directories atomically; OSError where the platform cannot.
#[pyfunction]
fn exchange_dirs(a: PathBuf, b: PathBuf) -> PyResult<()> {
    cache::exchange(&a, &b).map_err(os_err)
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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(walk_py, m)?)?;
    m.add_class::<LiveIndexPy>()?;
    m.add_function(wrap_pyfunction!(fingerprint_py, m)?)?;
    m.add_function(wrap_pyfunction!(is_source_file, m)?)?;
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    m.add_function(wrap_pyfunction!(read_yaml_many, m)?)?;
    m.add_function(wrap_pyfunction!(scan_modules, m)?)?;
    m.add_class::<CacheViewPy>()?;
    m.add_function(wrap_pyfunction!(load_cache, m)?)?;
    m.add_function(wrap_pyfunction!(build_cache, m)?)?;
    m.add_function(wrap_pyfunction!(exchange_dirs, m)?)?;
    m.add("SKIP_DIRS", walk::SKIP_DIRS.to_vec())?;
    Ok(())
}
