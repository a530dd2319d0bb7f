//! Evaluators from Python arguments: "uniform", "rollout", or a callable that evaluates numpy
//! batches (any model: PyTorch, JAX, numpy). Rust calls the callable with the GIL taken back for
//! the call only.

use std::sync::{Arc, Mutex};

use numpy::{PyArray1, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use zertz_env::ActionSpace;
use zertz_env::encode::{GLOBALS, Shape};
use zertz_search::{Batch, EvalError, Evaluator, Output, RolloutEvaluator, UniformEvaluator};

use crate::error::Error;

/// An evaluator written in Python: called as `evaluator(planes, globals, masks)` with float32
/// `[B, C, H, W]`, float32 `[B, G]` and bool `[B, A]` arrays, it returns `(logits, values)`:
/// float32-compatible `[B, A]` and `[B]` arrays (values in -1..1 for the player to move).
///
/// An exception it raises is kept in `raised` (the first one, when several search threads call
/// it) and raised again, unchanged with its traceback, where the call from Python returns.
pub(crate) struct PyEvaluator {
    callable: Py<PyAny>,
    raised: Raised,
}

/// The first exception a Python evaluator raised, for the caller to raise again.
#[derive(Clone, Debug, Default)]
pub struct Raised(Arc<Mutex<Option<PyErr>>>);

impl Raised {
    /// Keeps `e` unless an exception is kept already.
    pub fn keep(&self, e: PyErr) {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(e);
    }

    pub fn take(&self) -> Option<PyErr> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// `e` as the caller's error: the evaluator's own exception when it raised one.
    pub fn or(&self, e: impl Into<Error>) -> Error {
        self.take().map_or_else(|| e.into(), Error::Python)
    }
}

/// Why a Python evaluator's call failed.
enum CallError {
    /// It raised (or a conversion of its answer did).
    Raised(PyErr),
    /// Its answer has the wrong form.
    Answer(String),
}

impl From<PyErr> for CallError {
    fn from(e: PyErr) -> CallError {
        CallError::Raised(e)
    }
}

impl PyEvaluator {
    fn call(
        &self,
        py: Python<'_>,
        batch: &Batch<'_>,
        out: &mut Output<'_>,
    ) -> Result<(), CallError> {
        let b = batch.len();
        let shape = Shape::of(batch.board);
        let a = ActionSpace::new(batch.board).len();
        let planes = PyArray1::from_slice(py, batch.planes).reshape([
            b,
            shape.planes,
            shape.height,
            shape.width,
        ])?;
        let globals = PyArray1::from_slice(py, batch.globals).reshape([b, GLOBALS])?;
        let masks = PyArray1::from_slice(py, batch.masks).reshape([b, a])?;
        let result = self.callable.call1(py, (planes, globals, masks))?;
        let (logits, values): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
            result.extract(py).map_err(|_| {
                CallError::Answer(
                    "the evaluator must return a tuple (logits [B, A], values [B])".to_string(),
                )
            })?;
        let np = py.import("numpy")?;
        let logits = as_f32(&np, logits, "logits", &[b, a])?;
        let values = as_f32(&np, values, "values", &[b])?;
        let answer = |e: numpy::AsSliceError| CallError::Answer(e.to_string());
        out.logits.copy_from_slice(logits.readonly().as_slice().map_err(answer)?);
        out.values.copy_from_slice(values.readonly().as_slice().map_err(answer)?);
        Ok(())
    }
}

/// `x` as a contiguous float32 array of the given shape.
fn as_f32<'py>(
    np: &Bound<'py, pyo3::types::PyModule>,
    x: Bound<'py, PyAny>,
    what: &str,
    shape: &[usize],
) -> Result<Bound<'py, numpy::PyArrayDyn<f32>>, CallError> {
    let answer = |e: &dyn std::fmt::Display| CallError::Answer(format!("{what}: {e}"));
    let arr = np.call_method1("ascontiguousarray", (x, "float32")).map_err(|e| answer(&e))?;
    let arr = arr.cast_into::<numpy::PyArrayDyn<f32>>().map_err(|e| answer(&e))?;
    if arr.shape() != shape {
        return Err(CallError::Answer(format!(
            "{what} has shape {:?}, expected {shape:?}",
            arr.shape()
        )));
    }
    Ok(arr)
}

impl Evaluator for PyEvaluator {
    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        Python::attach(|py| match self.call(py, batch, out) {
            Ok(()) => Ok(()),
            Err(CallError::Answer(message)) => Err(EvalError(message)),
            Err(CallError::Raised(e)) => {
                let message = e.to_string();
                self.raised.keep(e);
                Err(EvalError(message))
            }
        })
    }
}

/// The evaluator argument: `None`/"uniform", "rollout", or a callable; with the slot where a
/// callable's exception is kept.
pub fn evaluator(arg: Option<&Bound<'_, PyAny>>) -> Result<(Box<dyn Evaluator>, Raised), Error> {
    let raised = Raised::default();
    let Some(obj) = arg.filter(|o| !o.is_none()) else {
        return Ok((Box::new(UniformEvaluator), raised));
    };
    if let Ok(name) = obj.extract::<String>() {
        return match name.as_str() {
            "uniform" => Ok((Box::new(UniformEvaluator), raised)),
            "rollout" => Ok((Box::new(RolloutEvaluator::default()), raised)),
            _ => Err(Error::Shape(format!(
                "unknown evaluator {name:?}: use \"uniform\", \"rollout\" or a callable"
            ))),
        };
    }
    if !obj.is_callable() {
        return Err(Error::Type("evaluator must be a callable, \"uniform\" or \"rollout\"".into()));
    }
    let callable = obj.clone().unbind();
    Ok((Box::new(PyEvaluator { callable, raised: raised.clone() }), raised))
}
