//! `zertz.VecEnv`: the batched environment of `zertz-vecenv` with numpy arrays.
//!
//! Every call returns new numpy arrays that Rust fills directly (no copy), with the GIL released
//! while the games are played and encoded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use numpy::{
    AllowTypeChange, IntoPyArray, PyArray1, PyArray2, PyArray4, PyArrayDescrMethods, PyArrayLike1,
    PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use zertz_arena::{Bot, Models};
use zertz_env::encode::Shape;
use zertz_env::{Action, ActionSpace, MarbleSet, Player, Position};
use zertz_pycommon::evaluators::Raised;
use zertz_pycommon::opponents::PyBatchOpponent;
use zertz_pycommon::signals::run_detached;
use zertz_vecenv::{Buffers, Config, FirstPlayer, Opponent, VecEnv};

use crate::args::{BoardArg, IntArg};
use crate::error::{Error, guard, lock_or_busy};
use crate::game::PyGame;

/// One of Rust's players as the opponent of one game, keeping at most `kept` bytes between its
/// decisions (its search tree or table; more is released after the decision).
struct BotOpponent {
    bot: Box<dyn Bot>,
    kept: usize,
}

impl Opponent for BotOpponent {
    fn act(&mut self, pos: &Position) -> Result<Action, String> {
        let action = self.bot.choose(pos).map_err(|e| e.to_string());
        if self.bot.kept_bytes() > self.kept {
            self.bot.release_memory();
        }
        action
    }
}

/// One opponent per game from `specs` (game `i` plays `specs[i % specs.len()]`, seeded as player
/// B of game `i` of a match seeded `seed`, its searches ended by `stop`, keeping its share of
/// `max_bytes` between decisions); networks' players and programs are refused. Whether any of
/// them searches.
fn opponents(
    specs: &[String],
    n: usize,
    seed: u64,
    stop: &Arc<AtomicBool>,
    max_bytes: usize,
) -> Result<(Vec<Box<dyn Opponent>>, bool), Error> {
    if specs.is_empty() || specs.len() > n {
        return Err(Error::Shape(format!(
            "opponent: a list of engine players' specs holds 1 to num_envs ({n}) of them, one \
             for each game in turn, not {}",
            specs.len()
        )));
    }
    let parsed = specs
        .iter()
        .map(|spec| {
            let parsed = zertz_pycommon::players::parse_spec(spec)?;
            if parsed.network().is_some() || parsed.command().is_some() {
                return Err(Error::Shape(format!(
                    "opponent {spec:?}: the vector environment's opponents are the engine's \
                     players without a network or a program (random, greedy, mcts:N, \
                     uniform:N, alphabeta[:D]), or a batched Python policy; a network's plays \
                     in a single game (zertz.gymnasium.ZertzEnv)"
                )));
            }
            Ok(parsed)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let kept = max_bytes / n;
    let bots = (0..n)
        .map(|i| {
            let seed = zertz_arena::matches::player_seed(seed, i, 1);
            let mut bot = parsed[i % parsed.len()]
                .build(seed, &Models::new())
                .map_err(|e| Error::Shape(e.to_string()))?;
            bot.set_stop(stop.clone());
            Ok(Box::new(BotOpponent { bot, kept }) as Box<dyn Opponent>)
        })
        .collect::<Result<_, Error>>()?;
    Ok((bots, parsed.iter().any(|p| p.searches())))
}

/// The arrays of one call, allocated by numpy and filled by Rust.
#[derive(Debug)]
struct Arrays<'py> {
    planes: Bound<'py, PyArray4<f32>>,
    globals: Bound<'py, PyArray2<f32>>,
    mask: Bound<'py, PyArray2<bool>>,
    to_play: Bound<'py, PyArray1<u8>>,
    rewards: Bound<'py, PyArray2<f32>>,
    terminated: Bound<'py, PyArray1<bool>>,
    truncated: Bound<'py, PyArray1<bool>>,
}

impl<'py> Arrays<'py> {
    /// New arrays for `env`. Their contents are not initialised: every element is written by
    /// `VecEnv::reset`, `observe` or `step` before Python sees them. (numpy's failure to allocate
    /// panics in rust-numpy: [`guard`] makes it an exception.)
    #[allow(unsafe_code)]
    fn new(py: Python<'py>, env: &VecEnv) -> Result<Arrays<'py>, Error> {
        guard(|| {
            Ok({
                let n = env.num_envs();
                let s = env.shape();
                let a = env.action_space().len();
                // SAFETY: the elements are plain numbers and bools, and the caller overwrites all
                // of them (VecEnv writes every element of every buffer) before the arrays reach
                // Python code; on an error the arrays are dropped unseen.
                unsafe {
                    Arrays {
                        planes: PyArray4::new(py, [n, s.planes, s.height, s.width], false),
                        globals: PyArray2::new(py, [n, s.globals], false),
                        mask: PyArray2::new(py, [n, a], false),
                        to_play: PyArray1::new(py, [n], false),
                        rewards: PyArray2::new(py, [n, 2], false),
                        terminated: PyArray1::new(py, [n], false),
                        truncated: PyArray1::new(py, [n], false),
                    }
                }
            })
        })
    }

    /// Runs `f` on mutable views of every array, as `run` runs it (with the GIL released).
    fn fill(&self, run: impl FnOnce(&mut Buffers<'_>) -> Result<(), Error>) -> Result<(), Error> {
        let mut planes = self.planes.readwrite();
        let mut globals = self.globals.readwrite();
        let mut mask = self.mask.readwrite();
        let mut to_play = self.to_play.readwrite();
        let mut rewards = self.rewards.readwrite();
        let mut terminated = self.terminated.readwrite();
        let mut truncated = self.truncated.readwrite();
        let mut buffers = Buffers {
            planes: planes.as_slice_mut().map_err(contiguous)?,
            globals: globals.as_slice_mut().map_err(contiguous)?,
            mask: mask.as_slice_mut().map_err(contiguous)?,
            to_play: to_play.as_slice_mut().map_err(contiguous)?,
            rewards: rewards.as_slice_mut().map_err(contiguous)?,
            terminated: terminated.as_slice_mut().map_err(contiguous)?,
            truncated: truncated.as_slice_mut().map_err(contiguous)?,
        };
        run(&mut buffers)
    }

    fn observation(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let obs = PyDict::new(py);
        obs.set_item("planes", &self.planes)?;
        obs.set_item("globals", &self.globals)?;
        Ok(obs)
    }

    /// The infos of a step or reset: the masks, the player to move, and which games the step's
    /// action forfeited (`forfeits`, by index; none after a reset).
    fn infos(&self, py: Python<'py>, forfeits: &[usize]) -> PyResult<Bound<'py, PyDict>> {
        let infos = PyDict::new(py);
        let mut illegal = vec![false; self.to_play.len()];
        for &i in forfeits {
            illegal[i] = true;
        }
        infos.set_item("illegal_action", illegal.into_pyarray(py))?;
        infos.set_item("legal_action_mask", &self.mask)?;
        // The mask's old name, kept one release (docs/python.md, "Names that changed").
        infos.set_item("legal_mask", &self.mask)?;
        // The same mask as int8, Gymnasium's and PettingZoo's action-mask type (a view: no copy).
        infos.set_item("action_mask", self.mask.call_method1("view", ("int8",))?)?;
        infos.set_item("to_play", &self.to_play)?;
        Ok(infos)
    }
}

fn contiguous(e: numpy::AsSliceError) -> Error {
    Error::Type(e.to_string())
}

/// `(observation, infos)` of `reset`.
type ResetResult<'py> = (Bound<'py, PyDict>, Bound<'py, PyDict>);

/// `(observation, rewards, terminations, truncations, infos)` of `step`.
type StepResult<'py> = (
    Bound<'py, PyDict>,
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray1<bool>>,
    Bound<'py, PyArray1<bool>>,
    Bound<'py, PyDict>,
);

/// A batch of `num_envs` games stepped together on a thread pool (Gymnasium-style vector API).
///
/// Observations are dicts `{"planes": float32 [N, C, H, W], "globals": float32 [N, G]}`; `infos`
/// holds `"legal_action_mask"` (bool [N, A]), `"action_mask"` (the same as int8), `"to_play"` (uint8
/// [N], 0 = P0, 1 = P1) and `"illegal_action"` (bool [N]: the step's action forfeited the game).
/// Rewards are float32 [N, 2]: this step's reward of P0 and of P1 (+1 win, -1 loss, 0
/// otherwise). Finished games restart at once; their result is still in that step's rewards,
/// terminations and truncations. Every call returns new arrays. The rules of an episode are those
/// of every front end (docs/vecenv.md).
///
/// With `opponent`, it is a single-agent environment: the learner is P0 in every game, and the
/// opponent, P1, plays its whole turn inside each step (and its first turn at a reset or
/// restart, in the games it begins: `first_player` says who begins). The observations, masks
/// and `to_play` are then always P0's, and the rewards of the step that ends a game hold its
/// result, whoever's action ended it. The opponent is the spec of a player without a network or
/// a program, in the grammar of `zertz.PLAYER_SPECS` (`greedy`, `mcts:200`: one per game, played
/// in Rust, keeping `max_bytes` between their decisions together), a list of such specs (game
/// `i` plays the `i % len`-th: `["greedy"] * 3 + ["random"]` trains against a mix), or a
/// batched Python policy
/// `opponent(observations, masks) -> actions`, given the observations and masks of the games
/// where it is to move and answering one action index for each.
///
/// An opponent that raises or answers an action that is not legal fails the step: its
/// exception comes through as itself (the answer's error is a RuntimeError naming the game),
/// and every later step raises RuntimeError, naming that failure, until `reset`. So does a step
/// interrupted by Ctrl-C (its searches end at once). An opponent cannot call the environment
/// it plays in (RuntimeError): it is given what it needs.
///
/// The arrays of one step are bounded in memory: a batch whose arrays need more than
/// `max_bytes` (default `zertz.VECENV_MAX_BYTES`) is refused, saying how much it needs.
#[pyclass(name = "VecEnv", module = "zertz")]
#[derive(Debug)]
pub struct PyVecEnv {
    /// The batch; locked by each call that reads or plays it, so that a call made while
    /// another runs (an opponent that calls its own environment) is refused, not waited for.
    env: Mutex<VecEnv>,
    /// Its settings, which no call changes (read without the lock).
    config: Config,
    /// Its worker threads.
    threads: usize,
    /// The stop its opponents' searches look at (Ctrl-C during a step).
    stop: Arc<AtomicBool>,
    /// Whether its opponents search: then a step looks for Ctrl-C while they think.
    searches: bool,
    /// The first exception a Python opponent raised, to raise again where its step returns.
    raised: Raised,
    /// The Python opponent, which the batch holds too: for Python's garbage collector, which
    /// must see it (an opponent may hold the environment, as the learner's own policy does).
    callable: Option<Py<PyAny>>,
}

/// The error of a call made while the environment is in a step: from its own opponent (or
/// another thread).
const BUSY: &str = "the environment is in a step: an opponent cannot step or reset the \
                    environment it plays in (nor read it: it is given what it needs)";

impl PyVecEnv {
    /// The batch, locked; [`BUSY`] while a call (a step) holds it.
    fn env(&self) -> Result<MutexGuard<'_, VecEnv>, Error> {
        lock_or_busy(&self.env, BUSY)
    }

    /// Reads `actions` (an integer array-like of length N) as action indices.
    fn action_indices(
        &self,
        py: Python<'_>,
        actions: &Bound<'_, PyAny>,
    ) -> Result<Vec<u32>, Error> {
        let n = self.config.num_envs;
        let size = ActionSpace::new(self.config.board).len();
        let array = py.import("numpy")?.call_method1("asarray", (actions,))?;
        let array = array.cast::<PyUntypedArray>().map_err(|e| Error::Type(e.to_string()))?;
        let kind = array.dtype().kind();
        if kind != b'i' && kind != b'u' {
            return Err(Error::Type(format!(
                "actions must be integers, not an array of dtype {}",
                array.dtype()
            )));
        }
        if array.shape() != [n] {
            return Err(Error::Shape(format!(
                "actions must have shape ({n},), not {:?}",
                array.shape()
            )));
        }
        let array: PyArrayLike1<'_, i64, AllowTypeChange> = array.extract()?;
        let mut out = Vec::with_capacity(n);
        for (env, &a) in array.as_array().iter().enumerate() {
            match u32::try_from(a) {
                Ok(i) if (i as usize) < size => out.push(i),
                _ => {
                    return Err(Error::Shape(format!(
                        "game {env}: action {a} is out of range (the action space has {size} actions)"
                    )));
                }
            }
        }
        Ok(out)
    }

    /// Runs `f` on the batch as a step runs: with the GIL released, and where the opponents
    /// search, on a thread of its own while this one looks for Ctrl-C, which ends their
    /// searches and leaves the batch needing a reset (its caller never sees that step). A
    /// Python opponent's exception comes back as itself.
    fn run(
        &self,
        py: Python<'_>,
        env: &mut VecEnv,
        f: impl FnOnce(&mut VecEnv) -> Result<(), zertz_vecenv::Error> + Send,
    ) -> Result<(), Error> {
        self.raised.take();
        let result = if self.searches {
            self.stop.store(false, Ordering::Relaxed);
            let (result, signal) = run_detached(py, &self.stop, || Ok(f(&mut *env)?));
            if let Some(e) = signal {
                let name =
                    e.get_type(py).name().map_or_else(|_| "a signal".into(), |n| n.to_string());
                env.fail(format!("a step was interrupted ({name}) before it returned"));
                return Err(Error::Python(e));
            }
            result
        } else {
            py.detach(|| guard(|| Ok(f(env)?)))
        };
        result.map_err(|e| self.raised.or(e))
    }
}

#[pymethods]
impl PyVecEnv {
    /// `first_player` is "random" (default), "P0" or "P1"; `threads=0` uses every core;
    /// `max_steps` truncates a game after that many actions (0: never); `opponent` is a spec or
    /// a batched policy (see the class docs); `max_bytes` bounds a step's arrays.
    #[new]
    #[pyo3(
        signature = (num_envs, board=BoardArg(zertz_env::Board::R37), blitz=false, *, threads=0,
                     max_steps=zertz_vecenv::DEFAULT_MAX_STEPS, first_player="random",
                     opening_plies=0, seed=0, opponent=None,
                     max_bytes=zertz_vecenv::DEFAULT_MAX_BYTES),
        text_signature = "(num_envs, board=37, blitz=False, *, threads=0, max_steps=1000, \
                          first_player='random', opening_plies=0, seed=0, opponent=None, \
                          max_bytes=1073741824)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        num_envs: usize,
        board: BoardArg,
        blitz: bool,
        threads: usize,
        max_steps: u32,
        first_player: &str,
        opening_plies: u32,
        seed: u64,
        opponent: Option<&Bound<'_, PyAny>>,
        max_bytes: usize,
    ) -> Result<PyVecEnv, Error> {
        let first_player: FirstPlayer = first_player.parse()?;
        let config = Config {
            num_envs,
            board: board.0,
            marbles: MarbleSet::of_blitz(blitz),
            threads,
            max_steps,
            first_player,
            opening_plies,
            seed,
            max_bytes,
        };
        let opponent = opponent.filter(|o| !o.is_none());
        // A spec, or a list (or tuple) of specs: one for each game in turn.
        let specs = opponent.and_then(|o| match o.extract::<String>() {
            Ok(spec) => Some(vec![spec]),
            Err(_) if o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>() => {
                o.extract::<Vec<String>>().ok()
            }
            Err(_) => None,
        });
        let callable = match opponent {
            Some(o) if specs.is_none() && o.is_callable() => Some(o.clone().unbind()),
            Some(o) if specs.is_none() => {
                return Err(Error::Type(format!(
                    "opponent must be an engine player's spec, a list of specs (one for each \
                     game in turn), a batched policy or None, not an object of type {}",
                    o.get_type().name().map_or_else(|_| "?".to_string(), |n| n.to_string())
                )));
            }
            _ => None,
        };
        let (stop, raised) = (Arc::new(AtomicBool::new(false)), Raised::default());
        let (mut env, searches) = py.detach(|| {
            guard(|| {
                let mut env = VecEnv::new(config)?;
                let mut searches = false;
                if let Some(specs) = &specs {
                    let (bots, search) = opponents(specs, num_envs, seed, &stop, max_bytes)?;
                    env.set_opponents(bots, Player::P0)?;
                    searches = search;
                }
                Ok((env, searches))
            })
        })?;
        if let Some(callable) = &callable {
            let opponent = PyBatchOpponent::new(callable.clone_ref(py), board.0, raised.clone());
            env.set_batch_opponent(Box::new(opponent), Player::P0);
        }
        let (config, threads) = (env.config().clone(), env.threads());
        Ok(PyVecEnv { env: Mutex::new(env), config, threads, stop, searches, raised, callable })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(callable) = &self.callable {
            visit.call(callable)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        if self.callable.take().is_some() {
            self.env.get_mut().unwrap_or_else(|p| p.into_inner()).clear_opponents();
        }
    }

    /// Why the environment needs a reset (its opponent failed, or a step was interrupted), or
    /// None.
    #[getter]
    fn failure(&self) -> Result<Option<String>, Error> {
        Ok(self.env()?.failure().map(str::to_string))
    }

    /// Number of games `N`.
    #[getter]
    fn num_envs(&self) -> usize {
        self.config.num_envs
    }

    /// Board size in rings.
    #[getter]
    fn board(&self) -> usize {
        self.config.board.rings()
    }

    /// Whether the games use the blitz marble set.
    #[getter]
    fn blitz(&self) -> bool {
        self.config.marbles == MarbleSet::Blitz
    }

    /// Worker threads.
    #[getter]
    fn threads(&self) -> usize {
        self.threads
    }

    /// Number of action indices `A`.
    #[getter]
    fn action_space_size(&self) -> usize {
        ActionSpace::new(self.config.board).len()
    }

    /// `((C, H, W), G)`: shapes of one observation's planes and globals.
    #[getter]
    fn observation_shape(&self) -> ((usize, usize, usize), usize) {
        let s = Shape::of(self.config.board);
        ((s.planes, s.height, s.width), s.globals)
    }

    /// Starts new games everywhere (reseeding first when `seed` is given); returns
    /// `(observation, infos)`. A batch that needed a reset is whole again.
    #[pyo3(signature = (seed=None))]
    fn reset<'py>(&self, py: Python<'py>, seed: Option<u64>) -> Result<ResetResult<'py>, Error> {
        let mut env = self.env()?;
        guard(|| {
            let arrays = Arrays::new(py, &env)?;
            arrays.fill(|b| self.run(py, &mut env, |env| env.reset(seed, b)))?;
            Ok((arrays.observation(py)?, arrays.infos(py, &[])?))
        })
    }

    /// Plays `actions[i]` (an action index, any integer array-like of length N) in game `i`;
    /// returns `(observation, rewards, terminations, truncations, infos)`. An action that is not
    /// legal in its game forfeits it: the game ends (terminated), its mover gets -1 and the other
    /// +1, and `infos["illegal_action"]` is True there. An index outside the action space raises
    /// ValueError naming the game, and then nothing is played. With `active` (bool [N]), only
    /// the games where it is True are played; the others are observed as they stand (their
    /// rewards 0), so that a caller can play some games' opponents itself.
    #[pyo3(signature = (actions, active=None))]
    fn step<'py>(
        &self,
        py: Python<'py>,
        actions: &Bound<'py, PyAny>,
        active: Option<numpy::PyReadonlyArray1<'py, bool>>,
    ) -> Result<StepResult<'py>, Error> {
        let mut env = self.env()?;
        guard(|| {
            let indices = self.action_indices(py, actions)?;
            let active: Option<Vec<bool>> = active.map(|a| a.as_array().to_vec());
            let arrays = Arrays::new(py, &env)?;
            let active = active.as_deref();
            arrays.fill(|b| self.run(py, &mut env, |env| env.step_some(&indices, active, b)))?;
            Ok((
                arrays.observation(py)?,
                arrays.rewards.clone(),
                arrays.terminated.clone(),
                arrays.truncated.clone(),
                arrays.infos(py, &env.forfeits())?,
            ))
        })
    }

    /// A uniform random legal action index for every game (int64 [N]), from generators seeded
    /// with the environment.
    fn sample_actions<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyArray1<i64>>, Error> {
        let mut env = self.env()?;
        guard(|| {
            Ok({
                let mut actions = vec![0u32; env.num_envs()];
                let env = &mut *env;
                py.detach(|| env.sample_actions(&mut actions));
                PyArray1::from_iter(py, actions.into_iter().map(i64::from))
            })
        })
    }

    /// A copy of game `i` as a `zertz.Game` (its current position; earlier moves are not kept).
    /// An index out of range raises IndexError.
    fn game(&self, i: IntArg) -> Result<PyGame, Error> {
        let env = self.env()?;
        guard(|| {
            let n = env.num_envs();
            let g =
                i.0.as_ref().ok().and_then(|&i| usize::try_from(i).ok()).and_then(|i| env.game(i));
            let g = g.ok_or_else(|| {
                Error::Index(format!("game index {i} is out of range (the batch has {n} games)"))
            })?;
            Ok(PyGame::from_position(*g.position()))
        })
    }

    /// The games that ended at the last `step` (terminated or truncated) and the observations of
    /// the positions they ended in, before they restarted: `(indices int64 [K], {"planes": float32
    /// [K, C, H, W], "globals": float32 [K, G]})`, seen from the player to move there (empty
    /// after a reset).
    fn final_observations<'py>(
        &self,
        py: Python<'py>,
    ) -> Result<(Bound<'py, PyArray1<i64>>, Bound<'py, PyDict>), Error> {
        let env = self.env()?;
        guard(|| {
            let finals = env.final_positions();
            let shape = env.shape();
            let k = finals.len();
            let mut planes = vec![0.0f32; k * shape.planes_len()];
            let mut globals = vec![0.0f32; k * shape.globals];
            let rows = planes
                .chunks_exact_mut(shape.planes_len())
                .zip(globals.chunks_exact_mut(shape.globals));
            for ((_, pos), (p, g)) in finals.iter().zip(rows) {
                pos.encode(p, g);
            }
            let indices: Vec<i64> = finals.iter().map(|&(i, _)| i as i64).collect();
            let obs = PyDict::new(py);
            obs.set_item(
                "planes",
                planes.into_pyarray(py).reshape([k, shape.planes, shape.height, shape.width])?,
            )?;
            obs.set_item("globals", globals.into_pyarray(py).reshape([k, shape.globals])?)?;
            Ok((indices.into_pyarray(py), obs))
        })
    }

    fn __len__(&self) -> usize {
        self.config.num_envs
    }

    fn __repr__(&self) -> String {
        let c = &self.config;
        format!(
            "VecEnv(num_envs={}, board={}, blitz={}, threads={})",
            c.num_envs,
            c.board.rings(),
            if c.marbles == MarbleSet::Blitz { "True" } else { "False" },
            self.threads
        )
    }
}

/// The word of a first player (`"random"`, `"P0"` or `"P1"`) as `text` names it in any case:
/// the one reading of `first_player` in every front end (`VecEnv`, `zertz.gymnasium`,
/// `zertz.sb3`). ValueError for any other text.
#[pyfunction]
pub fn parse_first_player(text: &str) -> Result<&'static str, Error> {
    Ok(text.parse::<FirstPlayer>()?.word())
}
