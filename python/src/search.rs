//! `zertz.MCTS`: the batched search, driven by a Python callable evaluator (any model: PyTorch,
//! JAX, numpy) or a built-in one. Rust runs with the GIL released and takes it back only to call
//! the evaluator.

use numpy::{PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use zertz_arena::players::MAX_SIMULATIONS;
use zertz_env::{ActionSpace, Position};
use zertz_search::mcts::{Finished, Noise, Scratch, Tree, search_interruptible};
use zertz_search::{Evaluator, Preset, SearchConfig, SearchSettings};
use zertz_settings::from_layers;

use crate::convert::{describe_settings, settings_layer, to_python};
use crate::error::{Error, guard};
use crate::evaluators::Raised;
use crate::game::PyGame;
use crate::signals::Signals;

/// The search settings that `MCTS` does not take, with the reason.
const NOT_FOR_MCTS: [(&str, &str); 1] = [(
    "tree_reuse",
    "MCTS searches from new roots at each call; the setting is for players and self-play",
)];

/// The keywords of `zertz.MCTS` (the search's overrides, but those of [`NOT_FOR_MCTS`]), one
/// dict per keyword in order: `{"name", "type"` (its annotation), `"default"` (None: the
/// preset's), `"doc"}`. The stub's keywords are generated from it, and a test holds them to it.
#[pyfunction]
pub fn mcts_settings(py: Python<'_>) -> Result<Bound<'_, PyList>, Error> {
    let list = PyList::empty(py);
    for item in describe_settings::<SearchSettings>(py)?.iter() {
        let name: String = item.get_item("name")?.extract()?;
        if NOT_FOR_MCTS.iter().all(|(k, _)| *k != name) {
            list.append(item)?;
        }
    }
    Ok(list)
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
    #[pyo3(signature = (evaluator=None, *, preset=None, **settings))]
    fn new(
        evaluator: Option<&Bound<'_, PyAny>>,
        preset: Option<&str>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> Result<PyMcts, Error> {
        guard(|| {
            let preset = preset.map(str::parse::<Preset>).transpose().map_err(Error::Shape)?;
            let layer = settings_layer::<SearchSettings>("MCTS", settings, &NOT_FOR_MCTS)?;
            let settings = SearchSettings { preset, ..from_layers::<SearchSettings>([layer])? };
            let (evaluator, raised) = crate::evaluators::evaluator(evaluator)?;
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
    /// `(policies, values, visits)`: the root policies float32 `[N, A]` (the visit distributions;
    /// with `gumbel_actions`, the improved policies of a Gumbel root), the root values float32
    /// `[N]` (for the player to move) and root visits uint32 `[N]`. With `noise=True`,
    /// Dirichlet noise (alpha `noise_alpha_total / legal actions`, weight `noise_fraction`;
    /// None: the settings' `dirichlet_alpha_total` and `dirichlet_fraction`) is mixed into each
    /// root, seeded by `seed` (with `gumbel_actions`, the root's Gumbel draws instead). Ctrl-C
    /// stops it between rounds of evaluations (`KeyboardInterrupt`); an exception of the
    /// evaluator is raised as it is.
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
        // (None would be searched: every policy zero.)
        if !(1..=MAX_SIMULATIONS).contains(&simulations) {
            return Err(Error::Shape(format!(
                "simulations must be from 1 to {MAX_SIMULATIONS}, not {simulations}"
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
                if self.config.gumbel_actions > 0 {
                    t.set_gumbel_seed(n.seed ^ i as u64);
                } else {
                    t.add_noise(Noise { seed: n.seed ^ i as u64, ..n });
                }
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
            Ok(Ok(Finished::Done)) => Self::results(py, &trees, board, &self.config),
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
        config: &SearchConfig,
    ) -> Result<SearchResult<'py>, Error> {
        let a = ActionSpace::new(board).len();
        let mut policies = vec![0f32; trees.len() * a];
        for (t, row) in trees.iter().zip(policies.chunks_exact_mut(a)) {
            t.policy(config, row);
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
