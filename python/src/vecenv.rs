//! `zertz.VecEnv`: the batched environment of `zertz-vecenv` with numpy arrays.
//!
//! Every call returns new numpy arrays that Rust fills directly (no copy), with the GIL released
//! while the games are played and encoded.

use numpy::{
    AllowTypeChange, IntoPyArray, PyArray1, PyArray2, PyArray4, PyArrayDescrMethods, PyArrayLike1,
    PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use zertz_arena::{Bot, Models};
use zertz_env::{Action, MarbleSet, Player, Position};
use zertz_vecenv::{Buffers, Config, FirstPlayer, Opponent, VecEnv};

use crate::args::{BoardArg, IntArg};
use crate::error::{Error, guard};
use crate::game::PyGame;

/// An engine player as the opponent of one game.
struct BotOpponent(Box<dyn Bot>);

impl Opponent for BotOpponent {
    fn act(&mut self, pos: &Position) -> Result<Action, String> {
        self.0.choose(pos).map_err(|e| e.to_string())
    }
}

/// One opponent per game from `spec` (each seeded as player B of game `i` of a match seeded
/// `seed`); networks' players and programs are refused.
fn opponents(spec: &str, n: usize, seed: u64) -> Result<Vec<Box<dyn Opponent>>, Error> {
    let parsed = zertz_pycommon::players::parse_spec(spec)?;
    if parsed.network().is_some() || parsed.command().is_some() {
        return Err(Error::Shape(format!(
            "opponent {spec:?}: the vector environment's opponents are the engine's players \
             without a network or a program (random, greedy, mcts:N, uniform:N, alphabeta[:D]); \
             a network's plays in a single game (zertz.gymnasium.ZertzEnv)"
        )));
    }
    (0..n)
        .map(|i| {
            let seed = zertz_arena::matches::player_seed(seed, i, 1);
            let bot =
                parsed.build(seed, &Models::new()).map_err(|e| Error::Shape(e.to_string()))?;
            Ok(Box::new(BotOpponent(bot)) as Box<dyn Opponent>)
        })
        .collect()
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

    /// Runs `f` on mutable views of every array, with the GIL released.
    fn fill(
        &self,
        py: Python<'py>,
        f: impl FnOnce(&mut Buffers<'_>) -> Result<(), zertz_vecenv::Error> + Send,
    ) -> Result<(), Error> {
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
        py.detach(|| f(&mut buffers))?;
        Ok(())
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
/// holds `"legal_mask"` (bool [N, A]), `"action_mask"` (the same as int8), `"to_play"` (uint8
/// [N], 0 = P0, 1 = P1) and `"illegal_action"` (bool [N]: the step's action forfeited the game).
/// Rewards are float32 [N, 2]: this step's reward of P0 and of P1 (+1 win, -1 loss, 0
/// otherwise). Finished games restart at once; their result is still in that step's rewards,
/// terminations and truncations. Every call returns new arrays. The rules of an episode are those
/// of every front end (docs/vecenv.md).
///
/// With `opponent` (the spec of a player without a network or a program, in the grammar of
/// `zertz.PLAYER_SPECS`: `greedy`, `mcts:200`), it is a single-agent environment: the learner is
/// P0 in every game, and the opponent, P1, plays its whole turn inside each step (and its first
/// turn at a reset or restart, in the games it begins: `first_player` says who begins). The
/// observations, masks and `to_play` are then always P0's, and the rewards of the step that ends
/// a game hold its result, whoever's action ended it.
#[pyclass(name = "VecEnv", module = "zertz")]
#[derive(Debug)]
pub struct PyVecEnv {
    env: VecEnv,
}

impl PyVecEnv {
    /// Reads `actions` (an integer array-like of length N) as action indices.
    fn action_indices(
        &self,
        py: Python<'_>,
        actions: &Bound<'_, PyAny>,
    ) -> Result<Vec<u32>, Error> {
        let n = self.env.num_envs();
        let size = self.env.action_space().len();
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
}

#[pymethods]
impl PyVecEnv {
    /// `first_player` is "random" (default), "P0" or "P1"; `threads=0` uses every core;
    /// `max_steps` truncates a game after that many actions (0: never).
    #[new]
    #[pyo3(
        signature = (num_envs, board=BoardArg(zertz_env::Board::R37), blitz=false, *, threads=0,
                     max_steps=zertz_vecenv::DEFAULT_MAX_STEPS, first_player="random",
                     opening_plies=0, seed=0, opponent=None),
        text_signature = "(num_envs, board=37, blitz=False, *, threads=0, max_steps=1000, \
                          first_player='random', opening_plies=0, seed=0, opponent=None)"
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
        opponent: Option<&str>,
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
        };
        let env = py.detach(|| {
            guard(|| {
                let mut env = VecEnv::new(config)?;
                if let Some(spec) = opponent {
                    env.set_opponents(opponents(spec, num_envs, seed)?, Player::P0)?;
                }
                Ok(env)
            })
        })?;
        Ok(PyVecEnv { env })
    }

    /// Number of games `N`.
    #[getter]
    fn num_envs(&self) -> usize {
        self.env.num_envs()
    }

    /// Board size in rings.
    #[getter]
    fn board(&self) -> usize {
        self.env.config().board.rings()
    }

    /// Whether the games use the blitz marble set.
    #[getter]
    fn blitz(&self) -> bool {
        self.env.config().marbles == MarbleSet::Blitz
    }

    /// Worker threads.
    #[getter]
    fn threads(&self) -> usize {
        self.env.threads()
    }

    /// Number of action indices `A`.
    #[getter]
    fn action_space_size(&self) -> usize {
        self.env.action_space().len()
    }

    /// `((C, H, W), G)`: shapes of one observation's planes and globals.
    #[getter]
    fn observation_shape(&self) -> ((usize, usize, usize), usize) {
        let s = self.env.shape();
        ((s.planes, s.height, s.width), s.globals)
    }

    /// Starts new games everywhere (reseeding first when `seed` is given); returns
    /// `(observation, infos)`.
    #[pyo3(signature = (seed=None))]
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        seed: Option<u64>,
    ) -> Result<ResetResult<'py>, Error> {
        guard(|| {
            let arrays = Arrays::new(py, &self.env)?;
            let env = &mut self.env;
            arrays.fill(py, |b| env.reset(seed, b))?;
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
        &mut self,
        py: Python<'py>,
        actions: &Bound<'py, PyAny>,
        active: Option<numpy::PyReadonlyArray1<'py, bool>>,
    ) -> Result<StepResult<'py>, Error> {
        guard(|| {
            let indices = self.action_indices(py, actions)?;
            let active: Option<Vec<bool>> = active.map(|a| a.as_array().to_vec());
            let arrays = Arrays::new(py, &self.env)?;
            let env = &mut self.env;
            arrays.fill(py, |b| env.step_some(&indices, active.as_deref(), b))?;
            Ok((
                arrays.observation(py)?,
                arrays.rewards.clone(),
                arrays.terminated.clone(),
                arrays.truncated.clone(),
                arrays.infos(py, &self.env.forfeits())?,
            ))
        })
    }

    /// A uniform random legal action index for every game (int64 [N]), from generators seeded
    /// with the environment.
    fn sample_actions<'py>(&mut self, py: Python<'py>) -> Result<Bound<'py, PyArray1<i64>>, Error> {
        guard(|| {
            Ok({
                let mut actions = vec![0u32; self.env.num_envs()];
                let env = &mut self.env;
                py.detach(|| env.sample_actions(&mut actions));
                PyArray1::from_iter(py, actions.into_iter().map(i64::from))
            })
        })
    }

    /// A copy of game `i` as a `zertz.Game` (its current position; earlier moves are not kept).
    /// An index out of range raises IndexError.
    fn game(&self, i: IntArg) -> Result<PyGame, Error> {
        guard(|| {
            let n = self.env.num_envs();
            let g =
                i.0.as_ref()
                    .ok()
                    .and_then(|&i| usize::try_from(i).ok())
                    .and_then(|i| self.env.game(i));
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
        guard(|| {
            let finals = self.env.final_positions();
            let shape = self.env.shape();
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
        self.env.num_envs()
    }

    fn __repr__(&self) -> String {
        let c = self.env.config();
        format!(
            "VecEnv(num_envs={}, board={}, blitz={}, threads={})",
            c.num_envs,
            c.board.rings(),
            if c.marbles == MarbleSet::Blitz { "True" } else { "False" },
            self.env.threads()
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
