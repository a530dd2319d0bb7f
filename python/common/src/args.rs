//! Arguments read from Python objects, with the errors of [`Error`] (ValueError for a value that
//! is out of range, TypeError for a wrong type) instead of Python's own overflow errors.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString};
use zertz_env::{Action, ActionSpace, Board};

use crate::error::Error;

/// The name of a Python object's type, for messages.
fn type_name(obj: &Borrowed<'_, '_, PyAny>) -> String {
    obj.get_type().name().map_or_else(|_| "?".to_string(), |n| n.to_string())
}

/// A Python int (or an object with `__index__`, such as a numpy integer of any width): its value
/// when it fits in an `i64`, else its decimal text (so that `np.uint64(2**64 - 1)` is reported as
/// itself, not as -1). Bools are refused.
fn int(obj: &Borrowed<'_, '_, PyAny>, what: &str) -> Result<Result<i64, String>, Error> {
    let is_bool = obj.is_instance_of::<PyBool>()
        || obj.get_type().name().is_ok_and(|n| n.to_cow().is_ok_and(|n| n == "bool"));
    if !is_bool {
        let index = if obj.is_instance_of::<PyInt>() {
            Some((**obj).clone())
        } else if obj.hasattr("__index__").unwrap_or(false) {
            obj.call_method0("__index__").ok().filter(|i| i.is_instance_of::<PyInt>())
        } else {
            None
        };
        if let Some(i) = index {
            return Ok(match i.extract::<i64>() {
                Ok(i) => Ok(i),
                Err(_) => Err(i.str()?.to_cow()?.into_owned()),
            });
        }
    }
    Err(Error::Type(format!("{what} must be an int, not {}", type_name(obj))))
}

/// An int argument: its value when it fits in an `i64`, else its decimal text.
#[derive(Clone, Debug)]
pub struct IntArg(pub Result<i64, String>);

impl std::fmt::Display for IntArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Ok(i) => write!(f, "{i}"),
            Err(text) => f.write_str(text),
        }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for IntArg {
    type Error = Error;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> Result<IntArg, Error> {
        Ok(IntArg(int(&obj, "an index")?))
    }
}

/// A board shape given by its number of rings.
#[derive(Clone, Copy, Debug)]
pub struct BoardArg(pub Board);

impl<'a, 'py> FromPyObject<'a, 'py> for BoardArg {
    type Error = Error;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> Result<BoardArg, Error> {
        match int(&obj, "board")? {
            Ok(n) => Ok(BoardArg(n.to_string().parse()?)),
            Err(text) => Err(Error::UnknownBoard(zertz_env::UnknownBoard(text))),
        }
    }
}

/// An index into an action space.
#[derive(Clone, Debug)]
pub struct IndexArg(Result<i64, String>);

impl IndexArg {
    /// The index and its action in `space`, or an error when it is out of range.
    pub fn decode(&self, space: &ActionSpace) -> Result<(usize, Action), Error> {
        let out_of_range = || Error::IndexRange {
            index: match &self.0 {
                Ok(i) => i.to_string(),
                Err(text) => text.clone(),
            },
            len: space.len(),
        };
        let i =
            self.0.clone().ok().and_then(|i| usize::try_from(i).ok()).ok_or_else(out_of_range)?;
        let a = space.decode(i).ok_or_else(out_of_range)?;
        Ok((i, a))
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for IndexArg {
    type Error = Error;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> Result<IndexArg, Error> {
        Ok(IndexArg(int(&obj, "an action index")?))
    }
}

/// What `Game.play` takes: notation, or an action index.
#[derive(Clone, Debug)]
pub enum MoveArg {
    /// A whole move or a single action in notation.
    Text(String),
    /// An index of the action space.
    Index(IndexArg),
}

impl<'a, 'py> FromPyObject<'a, 'py> for MoveArg {
    type Error = Error;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> Result<MoveArg, Error> {
        if let Ok(s) = obj.cast::<PyString>() {
            return Ok(MoveArg::Text(s.to_cow()?.into_owned()));
        }
        match int(&obj, "a move") {
            Ok(i) => Ok(MoveArg::Index(IndexArg(i))),
            Err(_) => Err(Error::Type(format!(
                "a move is notation (str) or an action index (int), not {}",
                type_name(&obj)
            ))),
        }
    }
}
