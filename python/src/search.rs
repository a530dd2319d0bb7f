//! `zertz.MCTS` and `zertz.selfplay`: the batched search and the self-play driver, driven by a
//! Python callable evaluator (any model: PyTorch, JAX, numpy) or a built-in one.
//!
//! Rust runs with the GIL released and takes it back only to call the evaluator.

use std::path::PathBuf;

use numpy::{PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use zertz_env::encode::{GLOBALS, Shape};
use zertz_env::{ActionSpace, Position};
use zertz_selfplay::config::SelfPlayConfig;
use zertz_selfplay::mcts::{Noise, Scratch, SearchConfig, Tree, search};
use zertz_selfplay::{
    Batch, EvalError, Evaluator, Output, RolloutEvaluator, UniformEvaluator, driver,
};

use crate::error::Error;
use crate::game::PyGame;

/// An evaluator written in Python: called as `evaluator(planes, globals, masks)` with float32
/// `[B, C, H, W]`, float32 `[B, G]` and bool `[B, A]` arrays, it returns `(logits, values)`:
/// float32-compatible `[B, A]` and `[B]` arrays (values in -1..1 for the player to move).
struct PyEvaluator {
    callable: Py<PyAny>,
}

impl PyEvaluator {
    fn call(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), String> {
        Python::attach(|py| -> Result<(), String> {
            let b = batch.len();
            let shape = Shape::of(batch.board);
            let a = ActionSpace::new(batch.board).len();
            let err = |e: PyErr| e.to_string();
            let planes = PyArray1::from_slice(py, batch.planes)
                .reshape([b, shape.planes, shape.height, shape.width])
                .map_err(err)?;
            let globals =
                PyArray1::from_slice(py, batch.globals).reshape([b, GLOBALS]).map_err(err)?;
            let masks = PyArray1::from_slice(py, batch.masks).reshape([b, a]).map_err(err)?;
            let result = self.callable.call1(py, (planes, globals, masks)).map_err(err)?;
            let (logits, values): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
                result.extract(py).map_err(|_| {
                    "the evaluator must return a tuple (logits [B, A], values [B])".to_string()
                })?;
            let np = py.import("numpy").map_err(err)?;
            let logits = as_f32(&np, logits, "logits", &[b, a])?;
            let values = as_f32(&np, values, "values", &[b])?;
            out.logits.copy_from_slice(logits.readonly().as_slice().map_err(|e| e.to_string())?);
            out.values.copy_from_slice(values.readonly().as_slice().map_err(|e| e.to_string())?);
            if out.values.iter().chain(out.logits.iter()).any(|v| v.is_nan()) {
                return Err("the evaluator returned NaN".to_string());
            }
            Ok(())
        })
    }
}

/// `x` as a contiguous float32 array of the given shape.
fn as_f32<'py>(
    np: &Bound<'py, pyo3::types::PyModule>,
    x: Bound<'py, PyAny>,
    what: &str,
    shape: &[usize],
) -> Result<Bound<'py, numpy::PyArrayDyn<f32>>, String> {
    let arr =
        np.call_method1("ascontiguousarray", (x, "float32")).map_err(|e| format!("{what}: {e}"))?;
    let arr = arr.cast_into::<numpy::PyArrayDyn<f32>>().map_err(|e| format!("{what}: {e}"))?;
    if arr.shape() != shape {
        return Err(format!("{what} has shape {:?}, expected {shape:?}", arr.shape()));
    }
    Ok(arr)
}

impl Evaluator for PyEvaluator {
    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        self.call(batch, out).map_err(EvalError)
    }
}

/// The evaluator argument: `None`/"uniform", "rollout", or a callable.
fn evaluator(py: Python<'_>, arg: Option<&Bound<'_, PyAny>>) -> Result<Box<dyn Evaluator>, Error> {
    let Some(obj) = arg.filter(|o| !o.is_none()) else { return Ok(Box::new(UniformEvaluator)) };
    if let Ok(name) = obj.extract::<String>() {
        return match name.as_str() {
            "uniform" => Ok(Box::new(UniformEvaluator)),
            "rollout" => Ok(Box::new(RolloutEvaluator::default())),
            _ => Err(Error::Shape(format!(
                "unknown evaluator {name:?}: use \"uniform\", \"rollout\" or a callable"
            ))),
        };
    }
    if !obj.is_callable() {
        return Err(Error::Type("evaluator must be a callable, \"uniform\" or \"rollout\"".into()));
    }
    let _ = py;
    Ok(Box::new(PyEvaluator { callable: obj.clone().unbind() }))
}

/// `(policies [N, A], values [N], visits [N])` of `MCTS.search`.
type SearchResult<'py> =
    (Bound<'py, PyArray2<f32>>, Bound<'py, PyArray1<f32>>, Bound<'py, PyArray1<u32>>);

/// Batched PUCT search over single actions (AlphaZero), for a list of games at once.
///
/// `evaluator` is "uniform" (default: search cost alone), "rollout" (random playouts) or a
/// callable `evaluator(planes, globals, masks) -> (logits, values)` on numpy batches.
#[pyclass(name = "MCTS", module = "zertz")]
pub struct PyMcts {
    evaluator: Box<dyn Evaluator>,
    config: SearchConfig,
    scratch: Scratch,
    /// Trees kept between calls: their arenas keep their capacity.
    trees: Vec<Tree>,
}

impl std::fmt::Debug for PyMcts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MCTS").field("config", &self.config).finish_non_exhaustive()
    }
}

#[pymethods]
impl PyMcts {
    #[new]
    #[pyo3(signature = (evaluator=None, *, c_puct=1.25, c_base=19652.0, fpu_reduction=0.2,
                        virtual_loss=1.0, leaves_per_round=8, policy_temperature=1.0))]
    fn new(
        py: Python<'_>,
        evaluator: Option<&Bound<'_, PyAny>>,
        c_puct: f32,
        c_base: f32,
        fpu_reduction: f32,
        virtual_loss: f32,
        leaves_per_round: u32,
        policy_temperature: f32,
    ) -> Result<PyMcts, Error> {
        if c_puct <= 0.0 || c_base <= 0.0 || leaves_per_round == 0 {
            return Err(Error::Shape(
                "c_puct and c_base must be positive and leaves_per_round at least 1".into(),
            ));
        }
        if !(policy_temperature > 0.0 && policy_temperature.is_finite()) {
            return Err(Error::Shape("policy_temperature must be a positive number".into()));
        }
        Ok(PyMcts {
            evaluator: self::evaluator(py, evaluator)?,
            config: SearchConfig {
                c_puct,
                c_base,
                fpu_reduction,
                virtual_loss,
                leaves_per_round,
                policy_temperature,
            },
            scratch: Scratch::default(),
            trees: Vec::new(),
        })
    }

    /// Searches every game (all of one board) with `simulations` simulations each; returns
    /// `(policies, values, visits)`: the root visit distributions float32 `[N, A]`, the root
    /// values float32 `[N]` (for the player to move) and root visits uint32 `[N]`. With
    /// `noise=True`, Dirichlet noise (alpha `noise_alpha_total / legal actions`, weight
    /// `noise_fraction`) is mixed into each root, seeded by `seed`.
    #[pyo3(signature = (games, simulations=800, *, noise=false, noise_alpha_total=10.83,
                        noise_fraction=0.25, seed=0))]
    #[allow(clippy::too_many_arguments)]
    fn search<'py>(
        &mut self,
        py: Python<'py>,
        games: Vec<PyRef<'py, PyGame>>,
        simulations: u32,
        noise: bool,
        noise_alpha_total: f32,
        noise_fraction: f32,
        seed: u64,
    ) -> Result<SearchResult<'py>, Error> {
        let positions: Vec<Position> = games.iter().map(|g| *g.current()).collect();
        drop(games);
        let Some(board) = positions.first().map(Position::board) else {
            return Err(Error::Shape("search needs at least one game".into()));
        };
        if positions.iter().any(|p| p.board() != board) {
            return Err(Error::Shape("all games of one search must be of one board".into()));
        }
        let mut trees = std::mem::take(&mut self.trees);
        trees.truncate(positions.len());
        for (t, &p) in trees.iter_mut().zip(&positions) {
            t.reset(p);
        }
        trees.extend(positions[trees.len()..].iter().map(|&p| Tree::new(p)));
        if noise {
            for (i, t) in trees.iter_mut().enumerate() {
                t.add_noise(Noise {
                    alpha_total: noise_alpha_total,
                    fraction: noise_fraction,
                    seed: seed ^ i as u64,
                });
            }
        }
        let sims = vec![simulations; trees.len()];
        let (evaluator, config, scratch) = (&*self.evaluator, &self.config, &mut self.scratch);
        let searched = py.detach(|| search(&mut trees, &sims, config, evaluator, scratch));
        let result = searched.map_err(|e| Error::Shape(e.to_string()));
        let out = result.and_then(|()| Self::results(py, &trees, board));
        self.trees = trees;
        out
    }
}

impl PyMcts {
    fn results<'py>(
        py: Python<'py>,
        trees: &[Tree],
        board: zertz_env::Board,
    ) -> Result<SearchResult<'py>, Error> {
        let a = ActionSpace::new(board).len();
        let mut policies = vec![0f32; trees.len() * a];
        for (t, row) in trees.iter().zip(policies.chunks_exact_mut(a)) {
            t.visit_policy(row);
        }
        let values: Vec<f32> = trees.iter().map(|t| t.root_info().value).collect();
        let visits: Vec<u32> = trees.iter().map(Tree::root_visits).collect();
        Ok((
            PyArray1::from_vec(py, policies).reshape([trees.len(), a])?,
            PyArray1::from_vec(py, values),
            PyArray1::from_vec(py, visits),
        ))
    }
}

/// Runs self-play and writes shards (`.npz`, read with `zertz.load_shards`) and game records
/// (`games-*.jsonl`) into `out`; returns a summary dict. `config` is a TOML file
/// (see configs/selfplay.toml; None: the defaults); `games`, `threads` and `seed` override it.
#[pyfunction]
#[pyo3(signature = (out, evaluator=None, *, config=None, games=None, threads=None, seed=None))]
#[allow(clippy::too_many_arguments)]
pub fn selfplay<'py>(
    py: Python<'py>,
    out: PathBuf,
    evaluator: Option<&Bound<'py, PyAny>>,
    config: Option<PathBuf>,
    games: Option<u32>,
    threads: Option<usize>,
    seed: Option<u64>,
) -> Result<Bound<'py, PyDict>, Error> {
    let mut cfg = match &config {
        Some(path) => SelfPlayConfig::from_file(path).map_err(|e| Error::Shape(e.to_string()))?,
        None => SelfPlayConfig::default(),
    };
    if let Some(g) = games {
        cfg.games = g;
    }
    if let Some(t) = threads {
        cfg.threads = t;
    }
    if let Some(s) = seed {
        cfg.seed = s;
    }
    cfg.validate().map_err(|e| Error::Shape(e.to_string()))?;
    let evaluator = self::evaluator(py, evaluator)?;
    let progress = driver::Progress::default();
    let summary = py
        .detach(|| driver::run(&cfg, evaluator.as_ref(), &out, &progress))
        .map_err(|e| Error::Shape(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("games", summary.games)?;
    d.set_item("first_player_wins", summary.first_wins)?;
    d.set_item("second_player_wins", summary.second_wins)?;
    d.set_item("draws", summary.draws)?;
    d.set_item("samples", summary.samples)?;
    let shards: Vec<String> = summary.shards.iter().map(|p| p.display().to_string()).collect();
    d.set_item("shards", shards)?;
    d.set_item("mean_batch", summary.mean_batch)?;
    d.set_item("false_resignations", summary.false_resignations)?;
    d.set_item("playouts_checked", summary.playouts_checked)?;
    Ok(d)
}
