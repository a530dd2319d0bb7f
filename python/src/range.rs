//! `zertz._zertz.Range`: Rust's range of a setting ([`zertz_settings::Range`]) for the
//! settings that Python declares (the training config's sections), so that their checks and
//! their words are Rust's, written once.

use pyo3::prelude::*;
use zertz_settings::{Bound, Kind, Range};

use crate::error::Error;

/// The values a number setting takes: finite numbers between two ends, and maybe one more
/// value outside them (Rust's `zertz_settings::Range`).
///
/// >>> from zertz._zertz import Range
/// >>> r = Range.between(1, 1000)
/// >>> r.contains(1000), r.contains(1001)
/// (True, False)
/// >>> r.reason("int")
/// 'must be between 1 and 1000'
/// >>> Range.above(0).reason("number")
/// 'must be a positive finite number'
#[pyclass(name = "Range", module = "zertz", frozen, eq)]
#[derive(Clone, Debug, PartialEq)]
pub struct PyRange(pub Range);

/// A kind of number by its Python name: "int", "number" or "seconds".
fn kind(name: &str) -> Result<Kind, Error> {
    match name {
        "int" => Ok(Kind::Int),
        "number" => Ok(Kind::Number),
        "seconds" => Ok(Kind::Seconds),
        _ => Err(Error::Shape(format!(
            "kind must be \"int\", \"number\" or \"seconds\", not {name:?}"
        ))),
    }
}

/// One end as Python sees it: None where open, else `(value, included)`.
fn end(bound: Bound) -> Option<(f64, bool)> {
    match bound {
        Bound::Open => None,
        Bound::Incl(b) => Some((b, true)),
        Bound::Excl(b) => Some((b, false)),
    }
}

#[pymethods]
impl PyRange {
    /// Any finite number.
    #[staticmethod]
    fn finite() -> Self {
        PyRange(Range::finite())
    }

    /// From `low` to `high`, both included.
    #[staticmethod]
    fn between(low: f64, high: f64) -> Self {
        PyRange(Range::between(low, high))
    }

    /// `low` or more.
    #[staticmethod]
    fn at_least(low: f64) -> Self {
        PyRange(Range::at_least(low))
    }

    /// `high` or less.
    #[staticmethod]
    fn at_most(high: f64) -> Self {
        PyRange(Range::at_most(high))
    }

    /// More than `low`.
    #[staticmethod]
    fn above(low: f64) -> Self {
        PyRange(Range::above(low))
    }

    /// The same range with an upper end `high` (included).
    fn up_to(&self, high: f64) -> Self {
        PyRange(self.0.up_to(high))
    }

    /// The same range, and `value` too (0 for "off").
    fn also(&self, value: f64) -> Self {
        PyRange(self.0.or(value))
    }

    /// The low end: None where there is none, else `(value, included)`.
    #[getter]
    fn low(&self) -> Option<(f64, bool)> {
        end(self.0.low)
    }

    /// The high end: None where there is none, else `(value, included)`.
    #[getter]
    fn high(&self) -> Option<(f64, bool)> {
        end(self.0.high)
    }

    /// The one value outside the ends that is taken too, if any.
    #[getter]
    fn extra(&self) -> Option<f64> {
        self.0.also
    }

    /// Whether `x` is in the range (never NaN nor an infinity).
    fn contains(&self, x: f64) -> bool {
        self.0.contains(x)
    }

    /// What a value of `kind` ("int", "number", "seconds") must be, as an error says it:
    /// `must be between 1 and 1000`.
    #[pyo3(signature = (kind = "number"))]
    fn reason(&self, kind: &str) -> Result<String, Error> {
        Ok(self.0.reason(self::kind(kind)?))
    }

    /// The range in words, as help texts say it: `1 to 1000`, `0 or more`.
    #[pyo3(signature = (kind = "number"))]
    fn describe(&self, kind: &str) -> Result<String, Error> {
        Ok(self.0.describe(self::kind(kind)?))
    }

    fn __repr__(&self) -> String {
        format!("Range({})", self.0.describe(Kind::Number))
    }
}
