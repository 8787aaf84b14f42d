//! Binding glue: the Python shapes of the core's results and errors, used by the bindings in
//! lib.rs and by nothing else.

use crate::artifacts::annotate::Annotation;
use crate::caches::cache;
use crate::formats::yamlread::Parsed;
use crate::tree::fs;
use crate::tree::walk::{DirRow, LeftOut};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use std::path::Path;

/// One row of the walk table: (scope, fingerprint, source_bytes, files, has_context,
/// included, eligible, context_mtime_ns, context_size).
pub type Row = (String, String, u64, u32, bool, bool, bool, i64, u64);

pub fn row(r: &DirRow) -> Row {
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

/// `LiveIndex.changes_since`: (the (position, row) of each row changed, or None when rows came
/// or went; skipped, unreadable, generation).
pub type Changes = (Option<Vec<(usize, Row)>>, usize, Vec<LeftOut>, u64);

/// `scan_modules`, per module: (code files, key files as (path, role), import specifiers, ignored).
pub type ModuleRow = (u32, Vec<(String, &'static str)>, Vec<String>, bool);

/// `build_cache`: (entries as (id, version, file), content bytes, (path, why) of each file left out).
pub type BuiltCache = (Vec<(String, String, String)>, u64, cache::Skipped);

/// A cache path's stat key as Python passes it: (dev, inode, size, mtime ns, ctime ns).
pub type StatTuple = (u64, u64, u64, i64, i64);

/// One annotation: (path, line, kind, target, symbol_kind, symbol).
pub type AnnotationRow = (String, u32, &'static str, String, &'static str, String);

pub fn annotation_row(path: String, a: Annotation) -> AnnotationRow {
    (path, a.line, a.kind, a.target, a.symbol_kind, a.symbol)
}

/// One result of `read_yaml_many` as (tag, text): ("json", text), ("missing", ""),
/// ("too_large", ""), ("invalid", why) or ("refused", JSON {reason, line, column}).
pub fn parsed(p: Parsed) -> (&'static str, String) {
    match p {
        Parsed::Json(s) => ("json", s),
        Parsed::Missing => ("missing", String::new()),
        Parsed::TooLarge => ("too_large", String::new()),
        Parsed::Invalid(e) => ("invalid", e),
        Parsed::Refused(r) => ("refused", serde_json::json!({"reason": r.reason, "line": r.line, "column": r.column}).to_string()),
    }
}

pub fn os_err(e: std::io::Error) -> PyErr {
    PyOSError::new_err(e.to_string())
}

/// A cache's failure: ValueError((code, message)) of the contract, or OSError.
pub fn cache_err(e: cache::Fail) -> PyErr {
    match e {
        cache::Fail::Io(e) => os_err(e),
        cache::Fail::Code(code, message) => PyValueError::new_err((code, message)),
    }
}

pyo3::create_exception!(
    _core,
    LinkRefused,
    PyOSError,
    "A link in the repository leads outside it: not followed."
);

/// A confined layer's failure as the OSError (errno, text) Python would raise, or LinkRefused.
pub fn fs_err(e: fs::Error) -> PyErr {
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

/// Run `op` on the confined layer of `root`, without the GIL.
pub fn in_root<T>(py: Python<'_>, root: &Path, op: impl FnOnce(&fs::Root) -> fs::Result<T> + Send) -> PyResult<T>
where
    T: Send,
{
    py.detach(|| fs::Root::open(root).map_err(fs::Error::Io).and_then(|r| op(&r))).map_err(fs_err)
}
