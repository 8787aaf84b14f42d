//! Python bindings of the repoctx core. Each heavy call releases the GIL.

mod fingerprint;
mod walk;
mod yamlread;

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use std::path::PathBuf;

/// One row of the walk table: (scope, fingerprint, source_bytes, files, has_context, included, eligible).
type Row = (String, String, u64, u32, bool, bool, bool);

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
    let table = py
        .detach(|| walk::walk(&root, opts))
        .map_err(|e| PyOSError::new_err(e.to_string()))?;
    let rows = table
        .rows
        .into_iter()
        .map(|r| (r.scope, r.fingerprint, r.source_bytes, r.files, r.has_context, r.included, r.eligible))
        .collect();
    Ok((rows, table.skipped, table.unreadable))
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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(walk_py, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint_py, m)?)?;
    m.add_function(wrap_pyfunction!(is_source_file, m)?)?;
    m.add_function(wrap_pyfunction!(read_yaml_many, m)?)?;
    m.add("SKIP_DIRS", walk::SKIP_DIRS.to_vec())?;
    Ok(())
}
