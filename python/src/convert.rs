//! Engine values to Python values: anything serde can write becomes the Python object that
//! `json.loads` makes of it (dicts, lists, numbers, strings, bools, None), so that a type's
//! fields are listed once, in Rust.

use pyo3::prelude::*;
use serde::Serialize;

use crate::error::Error;

/// `value` as Python data (through JSON).
pub fn to_python<'py, T: Serialize>(
    py: Python<'py>,
    value: &T,
) -> Result<Bound<'py, PyAny>, Error> {
    let text = serde_json::to_string(value)
        .map_err(|e| Error::Internal(format!("cannot convert to Python: {e}")))?;
    Ok(py.import("json")?.call_method1("loads", (text,))?)
}
