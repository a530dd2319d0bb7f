//! Opponents written in Python for a batch ([`PyBatchOpponent`]): a callable asked for the
//! actions of every game where the opponent is to move, with the observations and masks of
//! those games as numpy arrays. The rules of what its answers do are the episode's
//! (`zertz_vecenv::Episode::opponent_answer`); this converts them.

use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use zertz_env::encode::{GLOBALS, Shape};
use zertz_env::{ActionSpace, Board, Position};
use zertz_vecenv::{Answer, BatchOpponent};

use crate::evaluators::Raised;

/// A batched opponent written in Python: called as `opponent(observations, masks)` with
/// `observations` a dict `{"planes": float32 [K, C, H, W], "globals": float32 [K, G]}` and
/// `masks` bool `[K, A]` for the `K` games where it is to move, it returns `K` action indices
/// (any integer array-like). Called on the thread that steps the batch, with the GIL taken for
/// the call only.
///
/// An exception it raises fails each of those games' answers and is kept in `raised` (the
/// first one), for the caller to raise again, unchanged with its traceback.
#[derive(Debug)]
pub struct PyBatchOpponent {
    callable: Py<PyAny>,
    board: Board,
    raised: Raised,
}

impl PyBatchOpponent {
    /// `callable` as the opponent of games of `board`, keeping its exceptions in `raised`.
    pub fn new(callable: Py<PyAny>, board: Board, raised: Raised) -> PyBatchOpponent {
        PyBatchOpponent { callable, board, raised }
    }

    /// The observations and masks of `positions`, as the callable takes them.
    fn arguments<'py>(
        &self,
        py: Python<'py>,
        positions: &[Position],
    ) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyAny>)> {
        let (k, shape) = (positions.len(), Shape::of(self.board));
        let a = ActionSpace::new(self.board).len();
        let mut planes = vec![0.0f32; k * shape.planes_len()];
        let mut globals = vec![0.0f32; k * GLOBALS];
        let mut masks = vec![false; k * a];
        let rows = planes
            .chunks_exact_mut(shape.planes_len())
            .zip(globals.chunks_exact_mut(GLOBALS))
            .zip(masks.chunks_exact_mut(a));
        for (pos, ((p, g), m)) in positions.iter().zip(rows) {
            pos.encode(p, g);
            pos.legal_action_mask(m);
        }
        let observations = PyDict::new(py);
        let planes = PyArray1::from_vec(py, planes);
        observations
            .set_item("planes", planes.reshape([k, shape.planes, shape.height, shape.width])?)?;
        observations.set_item("globals", PyArray1::from_vec(py, globals).reshape([k, GLOBALS])?)?;
        let masks = PyArray1::from_vec(py, masks).reshape([k, a])?.into_any();
        Ok((observations, masks))
    }

    /// The callable's answers for `positions`: an action per game, or why there is none.
    fn call(&self, py: Python<'_>, positions: &[Position], answers: &mut [Answer]) -> PyResult<()> {
        let (observations, masks) = self.arguments(py, positions)?;
        let answer = self.callable.call1(py, (observations, masks))?;
        let array = py.import("numpy")?.call_method1("asarray", (answer.bind(py),))?;
        let kind = array.getattr("dtype")?.getattr("kind")?.extract::<String>()?;
        let shape = array.getattr("shape")?;
        let flat = array.call_method1("reshape", (-1,))?;
        let k = positions.len();
        let count = flat.len()?;
        if !(kind == "i" || kind == "u") || count != k {
            return Err(PyValueError::new_err(format!(
                "the opponent answered an array of dtype kind {kind:?} and shape {shape}, not \
                 {k} action indices (one for each game it is given)"
            )));
        }
        let flat = flat.call_method1("astype", ("int64",))?;
        let flat = flat.cast_into::<numpy::PyArray1<i64>>()?;
        let space = ActionSpace::new(self.board);
        let flat = flat.readonly();
        for (answer, &index) in answers.iter_mut().zip(flat.as_array().iter()) {
            let action = usize::try_from(index).ok().and_then(|i| space.decode(i));
            *answer = Ok(action.ok_or_else(|| {
                PyValueError::new_err(format!(
                    "the opponent answered {index}, which is no action (the action space has {} \
                     actions)",
                    space.len()
                ))
            })?);
        }
        Ok(())
    }
}

impl BatchOpponent for PyBatchOpponent {
    fn act(&mut self, _games: &[usize], positions: &[Position], answers: &mut [Answer]) {
        Python::attach(|py| {
            if let Err(e) = self.call(py, positions, answers) {
                let message = e.to_string();
                self.raised.keep(e);
                answers.iter_mut().for_each(|a| *a = Err(message.clone()));
            }
        });
    }
}
