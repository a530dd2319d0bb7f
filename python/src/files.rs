//! Rust's readers of the files users name (`zertz_env::files`), for the Python package's
//! (`zertz.files`): regular files only, refused before they are opened, read within the bound of
//! their kind, which the error states.

use std::collections::BTreeMap;
use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zertz_env::files;

use crate::error::Error;

/// The bound of the kind of file `kind` (`zertz_env::files::limit`); ValueError for an unknown
/// kind.
fn limit(kind: &str) -> PyResult<(u64, &'static str)> {
    files::limit(kind).ok_or_else(|| {
        let kinds: Vec<&str> = files::LIMITS.iter().map(|(name, ..)| *name).collect();
        PyValueError::new_err(format!("unknown kind of file {kind:?}: one of {kinds:?}"))
    })
}

/// The bytes of a user's file of kind `kind` (a name of `file_limits()`): a regular file of at
/// most its kind's bound (`zertz_env::files::read_bounded`), opened without blocking. OSError
/// naming the file: the system's (`FileNotFoundError`), "not a regular file (a FIFO)", "3 GiB is
/// more than the 64 MiB that a metrics file may have".
#[pyfunction]
pub fn read_bounded<'py>(
    py: Python<'py>,
    path: PathBuf,
    kind: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let (max, what) = limit(kind)?;
    let bytes = py
        .detach(|| files::read_bounded(&path, max, what))
        .map_err(|source| Error::Io { path, source })?;
    Ok(PyBytes::new(py, &bytes))
}

/// A user's file opened for reading, of any size: its file descriptor, for `os.fdopen`. A
/// regular file only, checked before it is opened and again once open
/// (`zertz_env::files::open_bounded`); OSError naming the file otherwise.
#[cfg(unix)]
#[pyfunction]
pub fn open_regular(path: PathBuf) -> PyResult<i32> {
    use std::os::fd::IntoRawFd;
    let file = files::open_bounded(&path, u64::MAX, "a file")
        .map_err(|source| Error::Io { path, source })?;
    Ok(file.into_raw_fd())
}

/// The bound of each kind of file users name, in bytes, by the kind's name (`config`, `json`,
/// `metrics`, `network`, `checkpoint`): the constants of `zertz_env::files`.
#[pyfunction]
pub fn file_limits() -> BTreeMap<&'static str, u64> {
    files::LIMITS.iter().map(|&(name, bytes, _)| (name, bytes)).collect()
}

/// A count of bytes for people, as Rust's messages write it: "812 bytes", "64 MiB",
/// "2.5 GiB".
#[pyfunction]
pub fn size_text(bytes: u64) -> String {
    files::size_text(bytes)
}
