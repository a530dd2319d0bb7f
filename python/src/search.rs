//! `zertz.MCTS` and `zertz.selfplay`: the batched search and the self-play driver, driven by a
//! Python callable evaluator (any model: PyTorch, JAX, numpy) or a built-in one.
//!
//! Rust runs with the GIL released and takes it back only to call the evaluator.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use numpy::{PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use zertz_arena::players::MAX_SIMULATIONS;
use zertz_env::encode::{GLOBALS, Shape};
use zertz_env::{ActionSpace, Position};
use zertz_search::mcts::{Finished, Noise, Scratch, Tree, search_interruptible};
use zertz_search::{Batch, EvalError, Evaluator, Output, RolloutEvaluator, UniformEvaluator};
use zertz_search::{Preset, SearchConfig, SearchSettings};
use zertz_selfplay::config::SelfPlayConfig;
use zertz_selfplay::driver::{self, SelfPlayError};

use crate::convert::to_python;
use crate::error::{Error, guard};
use crate::game::PyGame;

/// An evaluator written in Python: called as `evaluator(planes, globals, masks)` with float32
/// `[B, C, H, W]`, float32 `[B, G]` and bool `[B, A]` arrays, it returns `(logits, values)`:
/// float32-compatible `[B, A]` and `[B]` arrays (values in -1..1 for the player to move).
///
/// An exception it raises is kept in `raised` (the first one, when several search threads call
/// it) and raised again, unchanged with its traceback, where the call from Python returns.
struct PyEvaluator {
    callable: Py<PyAny>,
    raised: Raised,
}

/// The first exception a Python evaluator raised, for the caller to raise again.
#[derive(Clone, Debug, Default)]
struct Raised(Arc<Mutex<Option<PyErr>>>);

impl Raised {
    fn keep(&self, e: PyErr) {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(e);
    }

    fn take(&self) -> Option<PyErr> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// `e` as the caller's error: the evaluator's own exception when it raised one.
    fn or(&self, e: impl Into<Error>) -> Error {
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
fn evaluator(arg: Option<&Bound<'_, PyAny>>) -> Result<(Box<dyn Evaluator>, Raised), Error> {
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

/// How often long calls look for a signal (Ctrl-C) while the GIL is released.
const SIGNAL_CHECK: Duration = Duration::from_millis(20);

/// Asks Python whether a signal handler raised (Ctrl-C: `KeyboardInterrupt`), at most once per
/// [`SIGNAL_CHECK`]; keeps the exception. Called with the GIL released, from the thread that
/// called in from Python (only the main thread runs signal handlers).
#[derive(Debug)]
struct Signals {
    last: Instant,
    raised: Option<PyErr>,
}

impl Signals {
    fn new() -> Signals {
        Signals { last: Instant::now(), raised: None }
    }

    /// Whether to stop: a handler raised, now or before.
    fn raised(&mut self) -> bool {
        if self.raised.is_none() && self.last.elapsed() >= SIGNAL_CHECK {
            self.last = Instant::now();
            self.raised = Python::attach(|py| py.check_signals().err());
        }
        self.raised.is_some()
    }
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
    raised: Raised,
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
    #[pyo3(signature = (evaluator=None, *, preset=None, c_puct=None, c_base=None,
                        fpu_reduction=None, virtual_loss=None, leaves_per_round=None,
                        policy_temperature=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        evaluator: Option<&Bound<'_, PyAny>>,
        preset: Option<&str>,
        c_puct: Option<f32>,
        c_base: Option<f32>,
        fpu_reduction: Option<f32>,
        virtual_loss: Option<f32>,
        leaves_per_round: Option<u32>,
        policy_temperature: Option<f32>,
    ) -> Result<PyMcts, Error> {
        guard(|| {
            let preset = preset.map(str::parse::<Preset>).transpose().map_err(Error::Shape)?;
            let settings = SearchSettings {
                preset,
                c_puct,
                c_base,
                fpu_reduction,
                virtual_loss,
                leaves_per_round,
                policy_temperature,
                ..SearchSettings::default()
            };
            let (evaluator, raised) = self::evaluator(evaluator)?;
            // The evaluator chooses the preset when none is named (rollouts: "rollout").
            let config = settings.resolve(evaluator.preset())?;
            Ok(PyMcts { evaluator, raised, config, scratch: Scratch::default(), trees: Vec::new() })
        })
    }

    /// The search settings in use (the preset with the overrides), as a dict.
    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>, Error> {
        to_python(py, &self.config)
    }

    /// Searches every game (all of one board) with `simulations` simulations each; returns
    /// `(policies, values, visits)`: the root visit distributions float32 `[N, A]`, the root
    /// values float32 `[N]` (for the player to move) and root visits uint32 `[N]`. With
    /// `noise=True`, Dirichlet noise (alpha `noise_alpha_total / legal actions`, weight
    /// `noise_fraction`; None: the settings' `dirichlet_alpha_total` and `dirichlet_fraction`)
    /// is mixed into each root, seeded by `seed`. Ctrl-C stops it between rounds of evaluations
    /// (`KeyboardInterrupt`); an exception of the evaluator is raised as it is.
    #[pyo3(signature = (games, simulations=800, *, noise=false, noise_alpha_total=None,
                        noise_fraction=None, seed=0))]
    #[allow(clippy::too_many_arguments)]
    fn search<'py>(
        &mut self,
        py: Python<'py>,
        games: Vec<PyRef<'py, PyGame>>,
        simulations: u32,
        noise: bool,
        noise_alpha_total: Option<f32>,
        noise_fraction: Option<f32>,
        seed: u64,
    ) -> Result<SearchResult<'py>, Error> {
        // The players' maximum: a search keeps a few nodes per simulation.
        if simulations > MAX_SIMULATIONS {
            return Err(Error::Shape(format!(
                "simulations must be at most {MAX_SIMULATIONS}, not {simulations}"
            )));
        }
        let noise = noise.then_some(Noise {
            alpha_total: noise_alpha_total.unwrap_or(self.config.dirichlet_alpha_total),
            fraction: noise_fraction.unwrap_or(self.config.dirichlet_fraction),
            seed,
        });
        if let Some(n) = noise {
            // Named by this method's keywords, not by the config keys.
            n.validate().map_err(|e| {
                let key = e.key.replace("dirichlet_", "noise_");
                Error::Shape(format!("{key}: {}", e.reason))
            })?;
        }
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
        if let Some(n) = noise {
            for (i, t) in trees.iter_mut().enumerate() {
                t.add_noise(Noise { seed: n.seed ^ i as u64, ..n });
            }
        }
        let sims = vec![simulations; trees.len()];
        let (evaluator, config, scratch) = (&*self.evaluator, &self.config, &mut self.scratch);
        let mut signals = Signals::new();
        let searched = py.detach(|| {
            guard(|| {
                let mut stop = || signals.raised();
                Ok(search_interruptible(&mut trees, &sims, config, evaluator, scratch, &mut stop))
            })
        });
        let out = match searched {
            Ok(Ok(Finished::Done)) => Self::results(py, &trees, board),
            Ok(Ok(Finished::Interrupted)) => {
                Err(Error::Python(signals.raised.take().expect("a search stops only on a signal")))
            }
            Ok(Err(e)) => Err(self.raised.or(e)),
            Err(e) => Err(e),
        };
        // The trees stay usable after an error, an interruption or a panic of the search: the
        // next call resets them.
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
/// (`games-*.jsonl`) into `out`, a new or empty folder (one that holds self-play output is
/// refused with `FileExistsError`: nothing is ever replaced); returns a summary dict. `config` is
/// a TOML file (see configs/selfplay.toml; None: the defaults); `games`, `threads` and `seed`
/// override it. Ctrl-C stops the workers after their round of evaluations; the games finished
/// by then are written whole, and `KeyboardInterrupt` is raised.
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
        Some(path) => SelfPlayConfig::from_file(path)?,
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
    cfg.validate()?;
    let (evaluator, raised) = self::evaluator(evaluator)?;
    let progress = driver::Progress::default();
    // The workers play on threads of their own; this thread, which Python called from, waits
    // for them with the GIL released and looks for a signal (Ctrl-C) meanwhile.
    let mut signals = Signals::new();
    let result = py.detach(|| {
        std::thread::scope(|scope| {
            let (cfg, evaluator, out, progress) = (&cfg, &*evaluator, &out, &progress);
            let runner =
                scope.spawn(move || guard(|| Ok(driver::run(cfg, evaluator, out, progress))));
            while !runner.is_finished() {
                std::thread::sleep(SIGNAL_CHECK);
                if signals.raised() {
                    progress.stop.store(true, Ordering::Relaxed);
                }
            }
            runner.join().unwrap_or_else(|payload| Err(Error::internal(payload.as_ref())))
        })
    });
    let summary = match result? {
        Ok(summary) => summary,
        Err(SelfPlayError::Stopped { .. }) if signals.raised.is_some() => {
            return Err(Error::Python(signals.raised.take().expect("checked")));
        }
        Err(e) => return Err(raised.or(e)),
    };
    Ok(to_python(py, &summary)?.cast_into::<PyDict>().map_err(PyErr::from)?)
}
