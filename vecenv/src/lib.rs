//! A batch of ZÈRTZ games stepped together: the reinforcement-learning environment.
//!
//! Why one file of this size: the crate is one type with its settings and buffers (the rules of
//! an episode are [`Episode`]'s, in a file of their own), and a third of the lines are the
//! documentation users read.
//!
//! [`VecEnv`] holds `N` games of one variant. [`VecEnv::step`] plays one single action (index in the
//! board's [`ActionSpace`]) in every game at once, on a thread pool of its own, and writes into
//! caller-owned buffers ([`Buffers`]):
//!
//! | buffer | shape | type | content |
//! |---|---|---|---|
//! | `planes` | `[N, C, H, W]` | f32 | observation planes ([`zertz_env::encode`]) |
//! | `globals` | `[N, G]` | f32 | global features |
//! | `mask` | `[N, A]` | bool | legal actions of the player to move |
//! | `to_play` | `[N]` | u8 | player to move, 0 = P0, 1 = P1 |
//! | `rewards` | `[N, 2]` | f32 | this step's reward of P0 and of P1: ±1 for a win or loss, 0 otherwise |
//! | `terminated` | `[N]` | bool | the game ended by the rules (win, draw by passes or third repetition) |
//! | `truncated` | `[N]` | bool | the game reached the step limit |
//!
//! A finished game is reset at once (its result is still in `rewards`, `terminated` and
//! `truncated`), so the observation, mask and player to move always describe a game in progress.
//!
//! The rules of an episode are those of every front end (the Python `VecEnv`, Gymnasium and
//! PettingZoo environments; `docs/vecenv.md`, "The rules of an episode"), written once in
//! [`Episode`], which the batch runs for each of its games and Python's `zertz.Episode`
//! is:
//!
//! - a step is one single action of the player to move; a game ends by the rules (`terminated`,
//!   rewards ±1 to the winner and loser, 0 each for a draw) or after `max_steps` actions
//!   (`truncated`, rewards 0);
//! - an action of the action space that is not legal now forfeits the game: it ends
//!   (`terminated`), the player who chose it gets -1 and the other +1, and
//!   [`VecEnv::forfeits`] names it (a policy that ignores the mask loses, as in PettingZoo's
//!   classic games, instead of stopping every game of the batch);
//! - an index outside the action space is no action: an error, and then no game is played.
//!
//! With [`VecEnv::set_opponents`] (an [`Opponent`] per game) or [`VecEnv::set_batch_opponent`]
//! (one [`BatchOpponent`] asked for many games at once), the batch is a single-agent
//! environment: the opponent plays the other side, its whole turn (a capture chain included)
//! inside the step, so that the observations, masks and `to_play` are always the learner's, and
//! a step's rewards hold the result of the game whoever's action ended it. Its answers are
//! judged by [`Episode::opponent_answer`], as a single episode's are: an opponent that fails or
//! answers an action that is not legal fails the step ([`Error::Opponent`]), and the batch then
//! refuses every step ([`Error::Failed`]) until [`VecEnv::reset`].
//!
//! The arrays of one step are bounded in memory ([`Config::max_bytes`], default
//! [`DEFAULT_MAX_BYTES`]; [`step_bytes`] says what a batch needs), not only in count.
//!
//! Every game has its own random generator seeded from the configured seed and its index, so runs
//! are reproducible whatever the number of threads.
//!
//! The thread pool is rebuilt when the process id changes, so a forked child (PyTorch DataLoader
//! workers fork) never waits on threads that do not exist in it.
//!
//! ```
//! use zertz_vecenv::{Buffers, Config, VecEnv};
//! let mut env = VecEnv::new(Config { num_envs: 4, seed: 7, ..Config::default() }).unwrap();
//! let mut buf = env.buffers();
//! env.reset(Some(7), &mut buf.view()).unwrap();
//! let mut actions = vec![0u32; 4];
//! for _ in 0..10 {
//!     env.sample_actions(&mut actions);
//!     env.step(&actions, &mut buf.view()).unwrap();
//! }
//! assert!(buf.mask.chunks(env.action_space().len()).all(|m| m.iter().any(|&x| x)));
//! ```

use std::fmt;

use rayon::prelude::*;
use zertz_env::encode::{GLOBALS, Shape};
use zertz_env::{Action, ActionSpace, Board, MarbleSet, Player, Position, SplitMix64, Variant};

mod episode;

pub use episode::{Episode, Step, StepError, Turn};

/// The player of the other side of a single-agent batch ([`VecEnv::set_opponents`]): one per game,
/// asked for each of its actions. This crate knows no players; the caller adapts its own
/// (`zertz_arena`'s bots, say).
pub trait Opponent: Send {
    /// A legal action in `pos`, a game in progress where this opponent is to move; an error (a
    /// player that failed) ends the step with [`Error::Opponent`].
    fn act(&mut self, pos: &Position) -> Result<Action, String>;
}

/// The player of the other side of a single-agent batch, asked for the actions of every game
/// where it is to move at once ([`VecEnv::set_batch_opponent`]): a batched policy, a network.
/// It is called on the thread that called the step (not on the batch's pool), so that a
/// caller's own runtime (Python's signals, a device's context) is where it expects it.
pub trait BatchOpponent: Send {
    /// Answers for the games `games` (indices of the batch, in increasing order), whose
    /// positions are `positions`: into `answers[k]`, a legal action of `positions[k]`, or why
    /// there is none (an error fails the step with [`Error::Opponent`]). Called with `answers`
    /// holding errors; an answer left so fails its game.
    fn act(&mut self, games: &[usize], positions: &[Position], answers: &mut [Answer]);
}

/// An opponent's answer: the action it chose, or why it could not choose.
pub type Answer = Result<Action, String>;

/// The opponent of a single-agent batch. (In mutexes so that the batch is `Sync`, as Python's
/// objects must be: a game's own opponent is locked by the one thread that plays the game.)
enum Opponents {
    /// One per game ([`VecEnv::set_opponents`]), each answering for its own game, in parallel
    /// on the batch's thread pool.
    PerGame(Vec<std::sync::Mutex<Box<dyn Opponent>>>),
    /// One for every game ([`VecEnv::set_batch_opponent`]), on the calling thread.
    Batch(std::sync::Mutex<Box<dyn BatchOpponent>>),
}

/// Who moves first in a new game.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FirstPlayer {
    /// Drawn at random for every game (the default).
    #[default]
    Random,
    /// Always P0.
    P0,
    /// Always P1.
    P1,
}

impl FirstPlayer {
    /// The word of each choice, as a front end takes it (`first_player="random"`).
    pub fn word(self) -> &'static str {
        match self {
            FirstPlayer::Random => "random",
            FirstPlayer::P0 => "P0",
            FirstPlayer::P1 => "P1",
        }
    }
}

impl fmt::Display for FirstPlayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

impl std::str::FromStr for FirstPlayer {
    type Err = Error;

    /// `random`, `P0` or `P1`, in any case: the one reading of every front end's
    /// `first_player`.
    fn from_str(text: &str) -> Result<FirstPlayer, Error> {
        [FirstPlayer::Random, FirstPlayer::P0, FirstPlayer::P1]
            .into_iter()
            .find(|p| p.word().eq_ignore_ascii_case(text))
            .ok_or_else(|| {
                Error::Config(format!(
                    "first_player must be \"random\", \"P0\" or \"P1\", not {text:?}"
                ))
            })
    }
}

/// The most games of one [`VecEnv`]: a count that [`Config::max_bytes`] bounds further in
/// memory.
pub const MAX_NUM_ENVS: usize = 1 << 20;

/// The most bytes of the arrays one step writes ([`step_bytes`]), by default
/// ([`Config::max_bytes`]): 1 GiB, about 170,000 games on 37 rings or 70,000 on 61. A front end
/// that returns new arrays at each step holds two steps' while its caller keeps the last.
pub const DEFAULT_MAX_BYTES: usize = 1 << 30;

/// The bytes of the arrays one step of `num_envs` games of `board` writes ([`Buffers`]: planes,
/// globals, mask, player to move, rewards, flags), which [`Config::max_bytes`] bounds.
///
/// ```
/// use zertz_env::Board;
/// use zertz_vecenv::step_bytes;
/// assert_eq!(step_bytes(1, Board::R37), 8 * 7 * 7 * 4 + 20 * 4 + 4441 + 1 + 8 + 2);
/// assert_eq!(step_bytes(usize::MAX, Board::R61), usize::MAX); // saturates
/// ```
pub fn step_bytes(num_envs: usize, board: Board) -> usize {
    let shape = Shape::of(board);
    let f32s = shape.planes_len() + GLOBALS + 2;
    let per_game = f32s * std::mem::size_of::<f32>() + ActionSpace::new(board).len() + 1 + 2;
    num_envs.saturating_mul(per_game)
}

/// The shared limits (`zertz_settings::limits`): the most worker threads of one
/// [`VecEnv`] (and of every other job), the actions after which an episode is truncated by
/// default, and those after which a match's or self-play's game is a draw.
pub use zertz_settings::limits::{DEFAULT_MAX_ACTIONS, DEFAULT_MAX_STEPS, MAX_THREADS};

/// Settings of a [`VecEnv`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Number of games `N` (1 to [`MAX_NUM_ENVS`]).
    pub num_envs: usize,
    /// Board shape.
    pub board: Board,
    /// Marble set.
    pub marbles: MarbleSet,
    /// Worker threads (at most [`MAX_THREADS`]); 0 uses every core.
    pub threads: usize,
    /// A game is truncated after this many actions (0: never). Default [`DEFAULT_MAX_STEPS`].
    pub max_steps: u32,
    /// Who moves first.
    pub first_player: FirstPlayer,
    /// Random legal actions played at the start of every game. Default 0.
    pub opening_plies: u32,
    /// Seed of the games' random generators.
    pub seed: u64,
    /// The most bytes of the arrays of one step ([`step_bytes`]); a batch that needs more is
    /// refused. Default [`DEFAULT_MAX_BYTES`].
    pub max_bytes: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            num_envs: 1,
            board: Board::R37,
            marbles: MarbleSet::Standard,
            threads: 0,
            max_steps: DEFAULT_MAX_STEPS,
            first_player: FirstPlayer::Random,
            opening_plies: 0,
            seed: 0,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// What went wrong in a call to the environment. Nothing is changed when an error is returned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An invalid setting.
    #[error("invalid config: {0}")]
    Config(String),
    /// A buffer or action array of the wrong length.
    #[error("{name} has length {found}, expected {expected}")]
    Length {
        /// The buffer.
        name: &'static str,
        /// Required length.
        expected: usize,
        /// Given length.
        found: usize,
    },
    /// An action index past the end of the action space.
    #[error("game {env}: action {action} is out of range (the action space has {size} actions)")]
    OutOfRange {
        /// Game index.
        env: usize,
        /// The action index.
        action: u32,
        /// Action-space size.
        size: usize,
    },
    /// The thread pool could not be built.
    #[error("cannot start the thread pool: {0}")]
    Threads(String),
    /// An opponent failed to choose ([`Episode::opponent_answer`] says why). The games of that
    /// step may have moved on: the batch refuses every step ([`Error::Failed`]) until
    /// [`VecEnv::reset`].
    #[error("game {env}: {message}; reset the environment")]
    Opponent {
        /// Game index.
        env: usize,
        /// What went wrong.
        message: String,
    },
    /// An opponent answered an action that is not legal ([`Episode::opponent_answer`] says
    /// which). As [`Error::Opponent`], the batch refuses every step until [`VecEnv::reset`].
    #[error("game {env}: {message}; reset the environment")]
    IllegalAnswer {
        /// Game index.
        env: usize,
        /// The answer, and that it is not legal.
        message: String,
    },
    /// A step asked of a batch whose earlier step failed ([`VecEnv::fail`]): reset it.
    #[error("the environment needs a reset: {0}")]
    Failed(String),
}

impl Error {
    /// What a failed batch says at every later step ([`Error::Failed`]): the error without
    /// its advice to reset, which that error gives.
    fn failure(&self) -> String {
        match self {
            Error::Opponent { env, message } | Error::IllegalAnswer { env, message } => {
                format!("game {env}: {message}")
            }
            other => other.to_string(),
        }
    }
}

impl zertz_env::Classify for Error {
    fn class(&self) -> zertz_env::ErrorClass {
        use zertz_env::{Cause, ErrorClass};
        match self {
            Error::Threads(_) | Error::Opponent { .. } | Error::Failed(_) => {
                ErrorClass::refused(Cause::Failed)
            }
            Error::Config(_)
            | Error::Length { .. }
            | Error::OutOfRange { .. }
            | Error::IllegalAnswer { .. } => ErrorClass::refused(Cause::Invalid),
        }
    }
}

/// One game of the batch: its [`Episode`] and its random generators.
#[derive(Clone, Debug)]
pub struct GameState {
    episode: Episode,
    /// Draws first players and opening plies.
    rng: SplitMix64,
    /// Draws the actions of [`VecEnv::sample_actions`].
    sampler: SplitMix64,
    /// The position this game ended in at the last step, before it restarted.
    final_position: Option<Position>,
    /// Whether the last step's action was illegal here (and lost the game).
    forfeited: bool,
    /// How the game that the last step ended here ended (its result is reported once).
    ended: Option<End>,
    /// New games of this step that the opponent's first turn ended (see [`MAX_RESTARTS`]).
    restarts: u32,
}

impl GameState {
    /// The current position.
    pub fn position(&self) -> &Position {
        self.episode.position()
    }

    /// Actions played in this game.
    pub fn steps(&self) -> u32 {
        self.episode.steps()
    }
}

/// Caller-owned output buffers of a [`VecEnv`], as mutable slices (see the crate docs for shapes).
#[derive(Debug)]
pub struct Buffers<'a> {
    /// `[N, C, H, W]`.
    pub planes: &'a mut [f32],
    /// `[N, G]`.
    pub globals: &'a mut [f32],
    /// `[N, A]`.
    pub mask: &'a mut [bool],
    /// `[N]`.
    pub to_play: &'a mut [u8],
    /// `[N, 2]`.
    pub rewards: &'a mut [f32],
    /// `[N]`.
    pub terminated: &'a mut [bool],
    /// `[N]`.
    pub truncated: &'a mut [bool],
}

/// Owned buffers of the right sizes, for Rust callers ([`VecEnv::buffers`]).
#[derive(Clone, Debug, Default)]
pub struct OwnedBuffers {
    /// `[N, C, H, W]`.
    pub planes: Vec<f32>,
    /// `[N, G]`.
    pub globals: Vec<f32>,
    /// `[N, A]`.
    pub mask: Vec<bool>,
    /// `[N]`.
    pub to_play: Vec<u8>,
    /// `[N, 2]`.
    pub rewards: Vec<f32>,
    /// `[N]`.
    pub terminated: Vec<bool>,
    /// `[N]`.
    pub truncated: Vec<bool>,
}

impl OwnedBuffers {
    /// Borrows every buffer.
    pub fn view(&mut self) -> Buffers<'_> {
        Buffers {
            planes: &mut self.planes,
            globals: &mut self.globals,
            mask: &mut self.mask,
            to_play: &mut self.to_play,
            rewards: &mut self.rewards,
            terminated: &mut self.terminated,
            truncated: &mut self.truncated,
        }
    }
}

/// A batch of games of one variant (see the crate docs).
pub struct VecEnv {
    config: Config,
    variant: Variant,
    space: ActionSpace,
    shape: Shape,
    games: Vec<GameState>,
    /// The opponent of the games, when the batch is a single-agent environment.
    opponent: Option<Opponents>,
    /// The side the learner plays against the opponent.
    learner: Player,
    /// Why the last step failed: every step is refused until a reset.
    failed: Option<String>,
    pool: rayon::ThreadPool,
    pool_pid: u32,
}

impl fmt::Debug for VecEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VecEnv")
            .field("config", &self.config)
            .field("threads", &self.pool.current_num_threads())
            .field("opponents", &self.has_opponents())
            .finish_non_exhaustive()
    }
}

fn build_pool(threads: usize) -> Result<rayon::ThreadPool, Error> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("zertz-vecenv-{i}"))
        .build()
        .map_err(|e| Error::Threads(e.to_string()))
}

impl VecEnv {
    /// A batch of new games; call [`VecEnv::reset`] to get the first observations.
    pub fn new(config: Config) -> Result<VecEnv, Error> {
        if !(1..=MAX_NUM_ENVS).contains(&config.num_envs) {
            return Err(Error::Config(format!(
                "num_envs must be between 1 and {MAX_NUM_ENVS}, not {}",
                config.num_envs
            )));
        }
        if config.threads > MAX_THREADS {
            return Err(Error::Config(format!(
                "threads must be at most {MAX_THREADS} (0: every core), not {}",
                config.threads
            )));
        }
        let bytes = step_bytes(config.num_envs, config.board);
        if bytes > config.max_bytes {
            return Err(Error::Config(format!(
                "{} games of {} rings write {} a step, more than max_bytes ({}); raise \
                 max_bytes to allow it, or step fewer games",
                config.num_envs,
                config.board.rings(),
                zertz_env::files::size_text(bytes as u64),
                zertz_env::files::size_text(config.max_bytes as u64)
            )));
        }
        let mut games = Vec::new();
        games.try_reserve_exact(config.num_envs).map_err(|_| {
            Error::Config(format!("not enough memory for {} games", config.num_envs))
        })?;
        let variant = Variant::new(config.board, config.marbles);
        let pool = build_pool(config.threads)?;
        let mut env = VecEnv {
            space: ActionSpace::new(config.board),
            shape: Shape::of(config.board),
            games,
            opponent: None,
            learner: Player::P0,
            failed: None,
            variant,
            pool,
            pool_pid: std::process::id(),
            config,
        };
        for i in 0..env.config.num_envs {
            let mut g = GameState {
                episode: Episode::new(Position::new(variant, Player::P0), env.config.max_steps),
                rng: SplitMix64(0),
                sampler: SplitMix64(0),
                final_position: None,
                forfeited: false,
                ended: None,
                restarts: 0,
            };
            seed_game(&mut g, env.config.seed, i);
            new_game(&env.config, variant, &mut g);
            env.games.push(g);
        }
        Ok(env)
    }

    /// Makes the batch a single-agent environment: `opponents[i]` plays game `i` on the side
    /// that is not `learner`'s, its whole turn inside each step (and the first turn of a game it
    /// begins, at [`VecEnv::reset`] and at every restart), the games' opponents in parallel.
    /// Observations, masks and `to_play` are then always the learner's, and a step's rewards
    /// hold the result of a game that the opponent's action ended. Call [`VecEnv::reset`] next.
    pub fn set_opponents(
        &mut self,
        opponents: Vec<Box<dyn Opponent>>,
        learner: Player,
    ) -> Result<(), Error> {
        let n = self.games.len();
        if opponents.len() != n {
            return Err(Error::Length { name: "opponents", expected: n, found: opponents.len() });
        }
        let opponents = opponents.into_iter().map(std::sync::Mutex::new).collect();
        self.opponent = Some(Opponents::PerGame(opponents));
        self.learner = learner;
        Ok(())
    }

    /// Makes the batch a single-agent environment as [`VecEnv::set_opponents`] does, with one
    /// opponent asked for every game where it is to move at once, in rounds: each round asks
    /// for one action in each such game (a capture chain takes a round a hop).
    pub fn set_batch_opponent(&mut self, opponent: Box<dyn BatchOpponent>, learner: Player) {
        self.opponent = Some(Opponents::Batch(std::sync::Mutex::new(opponent)));
        self.learner = learner;
    }

    /// Makes the batch a two-player environment again: its opponent is dropped.
    pub fn clear_opponents(&mut self) {
        self.opponent = None;
    }

    /// Whether the games have one opponent asked as a batch ([`VecEnv::set_batch_opponent`]).
    fn has_batch_opponent(&self) -> bool {
        matches!(self.opponent, Some(Opponents::Batch(_)))
    }

    /// Whether the games have an opponent ([`VecEnv::set_opponents`]).
    pub fn has_opponents(&self) -> bool {
        self.opponent.is_some()
    }

    /// The side the learner plays against the opponents (P0 when there are none).
    pub fn learner(&self) -> Player {
        self.learner
    }

    /// Ends the batch's games without a result: every step is refused with `reason`
    /// ([`Error::Failed`]) until [`VecEnv::reset`]. A failed opponent does it; a front end does
    /// it for a step whose results its caller never saw (one interrupted by Ctrl-C).
    pub fn fail(&mut self, reason: impl Into<String>) {
        self.failed.get_or_insert_with(|| reason.into());
    }

    /// Why the batch needs a reset ([`VecEnv::fail`]), if it does.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Number of games `N`.
    pub fn num_envs(&self) -> usize {
        self.games.len()
    }

    /// The action space of the board.
    pub fn action_space(&self) -> ActionSpace {
        self.space
    }

    /// Shape of one observation.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Game `i` (position, steps). Cloning a [`GameState`] snapshots it.
    pub fn game(&self, i: usize) -> Option<&GameState> {
        self.games.get(i)
    }

    /// Replaces game `i` with a snapshot taken earlier from a batch of the same variant.
    pub fn restore(&mut self, i: usize, state: GameState) -> Result<(), Error> {
        if state.position().variant() != self.variant {
            return Err(Error::Config(format!(
                "snapshot of a {} game cannot go into a {} batch",
                state.position().variant(),
                self.variant
            )));
        }
        let n = self.games.len();
        let slot = self.games.get_mut(i).ok_or(Error::Length {
            name: "game index",
            expected: n,
            found: i,
        })?;
        *slot = state;
        Ok(())
    }

    /// Owned buffers of the right sizes.
    pub fn buffers(&self) -> OwnedBuffers {
        let n = self.games.len();
        OwnedBuffers {
            planes: vec![0.0; n * self.shape.planes_len()],
            globals: vec![0.0; n * GLOBALS],
            mask: vec![false; n * self.space.len()],
            to_play: vec![0; n],
            rewards: vec![0.0; n * 2],
            terminated: vec![false; n],
            truncated: vec![false; n],
        }
    }

    fn check(&self, out: &Buffers<'_>) -> Result<(), Error> {
        let n = self.games.len();
        let lengths = [
            ("planes", out.planes.len(), n * self.shape.planes_len()),
            ("globals", out.globals.len(), n * GLOBALS),
            ("mask", out.mask.len(), n * self.space.len()),
            ("to_play", out.to_play.len(), n),
            ("rewards", out.rewards.len(), n * 2),
            ("terminated", out.terminated.len(), n),
            ("truncated", out.truncated.len(), n),
        ];
        for (name, found, expected) in lengths {
            if found != expected {
                return Err(Error::Length { name, expected, found });
            }
        }
        Ok(())
    }

    fn ensure_pool(&mut self) -> Result<(), Error> {
        let pid = std::process::id();
        if pid != self.pool_pid {
            // A forked child: the parent's worker threads do not exist here.
            self.pool = build_pool(self.config.threads)?;
            self.pool_pid = pid;
        }
        Ok(())
    }

    /// Runs `f` on every game in parallel, with the game's own opponent where the opponents are
    /// per game, and then (with `write`) writes the game's outputs into its slot of `out`: the
    /// result of the game the step ended there (rewards and flags; cleared where none ended)
    /// and the observation of the game in progress. The error of the first game (by index)
    /// that fails is returned once every game is done.
    fn for_each_game<F>(&mut self, out: &mut Buffers<'_>, write: bool, f: F) -> Result<(), Error>
    where
        F: Fn(usize, &mut GameState, Option<&mut dyn Opponent>) -> Result<(), Error> + Sync,
    {
        self.check(out)?;
        self.ensure_pool()?;
        let n = self.games.len();
        let chunk = n.div_ceil(self.pool.current_num_threads() * 4).max(1);
        let (p, a) = (self.shape.planes_len(), self.space.len());
        let per_game: &[std::sync::Mutex<Box<dyn Opponent>>] = match &self.opponent {
            Some(Opponents::PerGame(opponents)) => opponents,
            _ => &[],
        };
        let games = &mut self.games;
        let failed: std::sync::Mutex<Option<(usize, Error)>> = std::sync::Mutex::new(None);
        self.pool.install(|| {
            (
                games.par_chunks_mut(chunk),
                out.planes.par_chunks_mut(chunk * p),
                out.globals.par_chunks_mut(chunk * GLOBALS),
                out.mask.par_chunks_mut(chunk * a),
                out.to_play.par_chunks_mut(chunk),
                out.rewards.par_chunks_mut(chunk * 2),
                out.terminated.par_chunks_mut(chunk),
                out.truncated.par_chunks_mut(chunk),
            )
                .into_par_iter()
                .enumerate()
                .for_each(
                    |(c, (gs, planes, globals, mask, to_play, rewards, term, trunc))| {
                        let slots = planes
                            .chunks_exact_mut(p)
                            .zip(globals.chunks_exact_mut(GLOBALS))
                            .zip(mask.chunks_exact_mut(a))
                            .zip(to_play.iter_mut())
                            .zip(rewards.chunks_exact_mut(2))
                            .zip(term.iter_mut().zip(trunc.iter_mut()));
                        for (j, (g, (((((pl, gl), m), tp), r), (te, tr)))) in
                            gs.iter_mut().zip(slots).enumerate()
                        {
                            let i = c * chunk + j;
                            let mut held = per_game
                                .get(i)
                                .map(|o| o.lock().unwrap_or_else(|p| p.into_inner()));
                            let opponent: Option<&mut dyn Opponent> = match held.as_mut() {
                                Some(o) => Some(&mut ***o),
                                None => None,
                            };
                            let result = f(i, g, opponent);
                            if let Err(e) = result {
                                let mut first = failed.lock().unwrap_or_else(|p| p.into_inner());
                                if first.as_ref().is_none_or(|(k, _)| i < *k) {
                                    *first = Some((i, e));
                                }
                            }
                            if write {
                                let slot = Slot {
                                    planes: pl,
                                    globals: gl,
                                    mask: m,
                                    to_play: tp,
                                    rewards: r,
                                    terminated: te,
                                    truncated: tr,
                                };
                                write_slot(g, slot);
                            }
                        }
                    },
                );
        });
        match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some((_, e)) => {
                self.failed.get_or_insert_with(|| e.failure());
                Err(e)
            }
            None => Ok(()),
        }
    }

    /// Plays the batch opponent's turn in every game where it is to move, in rounds of one
    /// action a game, until the learner is to move everywhere (see [`opponent_turn`] for what
    /// each answer does). Nothing to do without a batch opponent: the per-game ones play inside
    /// the pass over their game.
    fn batch_opponent_turns(&mut self) -> Result<(), Error> {
        let Some(Opponents::Batch(opponent)) = self.opponent.as_mut() else { return Ok(()) };
        let opponent = opponent.get_mut().unwrap_or_else(|p| p.into_inner());
        let (config, variant, learner) = (self.config.clone(), self.variant, self.learner);
        loop {
            let (games, positions): (Vec<usize>, Vec<Position>) = self
                .games
                .iter()
                .enumerate()
                .filter(|(_, g)| g.episode.opponent_to_move(learner))
                .map(|(i, g)| (i, *g.position()))
                .unzip();
            if games.is_empty() {
                break;
            }
            let mut answers: Vec<Answer> =
                vec![Err("it gave no answer for this game".to_string()); games.len()];
            opponent.act(&games, &positions, &mut answers);
            let mut first: Option<Error> = None;
            for (&i, answer) in games.iter().zip(answers) {
                if let Err(e) = play_answer(&config, variant, &mut self.games[i], answer, i) {
                    first.get_or_insert(e);
                }
            }
            if let Some(e) = first {
                self.failed.get_or_insert_with(|| e.failure());
                return Err(e);
            }
        }
        Ok(())
    }

    /// Starts new games in every slot (reseeding first when `seed` is given) and writes the first
    /// observations; rewards, terminated and truncated are cleared. An opponent that begins a
    /// game plays its first turn. A batch that needed a reset ([`VecEnv::fail`]) is whole again.
    pub fn reset(&mut self, seed: Option<u64>, out: &mut Buffers<'_>) -> Result<(), Error> {
        self.check(out)?;
        if let Some(s) = seed {
            self.config.seed = s;
        }
        self.failed = None;
        let (config, variant, reseed) = (self.config.clone(), self.variant, seed.is_some());
        let (learner, batch) = (self.learner, self.has_batch_opponent());
        self.for_each_game(out, !batch, |i, g, opponent| {
            if reseed {
                seed_game(g, config.seed, i);
            }
            g.final_position = None;
            g.forfeited = false;
            g.restarts = 0;
            new_game(&config, variant, g);
            // A new game's result is never reported: one that the opponent's first turn ends
            // starts again.
            g.ended = Some(End::Truncated);
            let turn =
                opponent.map_or(Ok(()), |o| opponent_turn(&config, variant, g, o, learner, i));
            if !batch {
                g.ended = None;
            }
            turn
        })?;
        if batch {
            let turns = self.batch_opponent_turns();
            for g in &mut self.games {
                g.ended = None;
            }
            turns?;
            self.for_each_game(out, true, |_, _, _| Ok(()))?;
        }
        Ok(())
    }

    /// The games that ended at the last [`VecEnv::step`] (terminated or truncated), with the
    /// position each ended in before it restarted, in index order (none after a reset). For the
    /// final observations that vector-environment APIs hand over with a finished episode.
    pub fn final_positions(&self) -> Vec<(usize, Position)> {
        let finals = self.games.iter().enumerate();
        finals.filter_map(|(i, g)| g.final_position.map(|p| (i, p))).collect()
    }

    /// The games whose action at the last [`VecEnv::step`] was illegal, in index order: each
    /// lost by forfeit (see the crate docs) and restarted.
    pub fn forfeits(&self) -> Vec<usize> {
        self.games.iter().enumerate().filter_map(|(i, g)| g.forfeited.then_some(i)).collect()
    }

    /// Writes the current observations without playing (rewards and flags cleared).
    pub fn observe(&mut self, out: &mut Buffers<'_>) -> Result<(), Error> {
        self.for_each_game(out, true, |_, g, _| {
            g.ended = None;
            Ok(())
        })
    }

    /// Plays `actions[i]` in game `i` for every game (and then the opponent's turn, where there
    /// are opponents), resets the games that end, and writes the results and the next
    /// observations. An action that is not legal in its game forfeits it ([`VecEnv::forfeits`]);
    /// an index past the action space is an error naming the game, and then no game is played.
    pub fn step(&mut self, actions: &[u32], out: &mut Buffers<'_>) -> Result<(), Error> {
        self.step_some(actions, None, out)
    }

    /// [`VecEnv::step`] in the games where `active[i]` is true only (every game with `None`):
    /// the others are not played, and their outputs are those of [`VecEnv::observe`] (their
    /// actions are not read). A caller that plays some games' opponents itself steps those games
    /// alone with it.
    pub fn step_some(
        &mut self,
        actions: &[u32],
        active: Option<&[bool]>,
        out: &mut Buffers<'_>,
    ) -> Result<(), Error> {
        let n = self.games.len();
        if actions.len() != n {
            return Err(Error::Length { name: "actions", expected: n, found: actions.len() });
        }
        if let Some(a) = active.filter(|a| a.len() != n) {
            return Err(Error::Length { name: "active", expected: n, found: a.len() });
        }
        self.check(out)?;
        if let Some(reason) = &self.failed {
            return Err(Error::Failed(reason.clone()));
        }
        let space = self.space;
        let plays = |i: usize| active.is_none_or(|a| a[i]);
        if let Some((env, &action)) =
            actions.iter().enumerate().find(|&(i, a)| plays(i) && *a as usize >= space.len())
        {
            return Err(Error::OutOfRange { env, action, size: space.len() });
        }
        let (config, variant, learner) = (self.config.clone(), self.variant, self.learner);
        let batch = self.has_batch_opponent();
        self.for_each_game(out, !batch, |i, g, opponent| {
            g.final_position = None;
            g.forfeited = false;
            g.ended = None;
            g.restarts = 0;
            if !plays(i) {
                return Ok(());
            }
            let action = space.decode(actions[i] as usize).expect("checked above");
            let step = play(g, &action);
            g.forfeited = step.illegal;
            if step.ends() {
                end_game(&config, variant, g, step);
            }
            opponent.map_or(Ok(()), |o| opponent_turn(&config, variant, g, o, learner, i))
        })?;
        if batch {
            self.batch_opponent_turns()?;
            self.for_each_game(out, true, |_, _, _| Ok(()))?;
        }
        Ok(())
    }

    /// Draws a uniform random legal action for every game into `actions`, from a generator that
    /// is separate from the games' own, so sampling does not change how games start.
    pub fn sample_actions(&mut self, actions: &mut [u32]) {
        let space = self.space;
        let games = &mut self.games;
        let sample = |(g, a): (&mut GameState, &mut u32)| {
            let position = g.episode.position();
            let k = g.sampler.below(position.count_legal_actions());
            *a =
                position.nth_legal_action(k).map_or(space.pass_index(), |x| space.index(&x)) as u32;
        };
        if self.pool_pid == std::process::id() {
            self.pool.install(|| games.par_iter_mut().zip(actions.par_iter_mut()).for_each(sample));
        } else {
            games.iter_mut().zip(actions.iter_mut()).for_each(sample);
        }
    }
}

/// Seeds the generators of game `i` from the batch seed.
fn seed_game(g: &mut GameState, seed: u64, i: usize) {
    let mut s = SplitMix64(seed ^ (i as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
    g.rng = SplitMix64(s.next_u64());
    g.sampler = SplitMix64(s.next_u64());
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq)]
enum End {
    /// By the rules or by forfeit: the rewards of P0 and P1.
    Terminated([f32; 2]),
    /// At the step limit.
    Truncated,
}

/// Plays `action` in `g` under the rules of an episode ([`Episode::step`]). A game of the batch
/// is restarted as soon as it ends, so it is never over here.
fn play(g: &mut GameState, action: &Action) -> Step {
    let mover = g.position().turn();
    g.episode.step(action).unwrap_or(Step {
        mover,
        rewards: [0.0; 2],
        terminated: true,
        truncated: false,
        illegal: false,
    })
}

/// New games of one step that the opponent's first turn may end before the step fails (random
/// opening plies and a `max_steps` within the opponent's first turn allow it).
const MAX_RESTARTS: u32 = 100;

/// A game that `step` ended: its result, unless the step gave one for this slot already (a new
/// game that the opponent's first turn ended), and a new game.
fn end_game(config: &Config, variant: Variant, g: &mut GameState, step: Step) {
    if g.ended.is_none() {
        g.ended =
            Some(if step.terminated { End::Terminated(step.rewards) } else { End::Truncated });
        g.final_position = Some(*g.position());
    } else {
        g.restarts += 1;
    }
    new_game(config, variant, g);
}

/// The error of game `i` whose episode refused its opponent's answer.
fn answer_error(e: StepError, i: usize) -> Error {
    match e {
        StepError::Illegal(message) => Error::IllegalAnswer { env: i, message },
        StepError::Failed(message) => Error::Opponent { env: i, message },
        StepError::Over => Error::Opponent { env: i, message: e.to_string() },
    }
}

/// After the opponent's `last` step in game `i`: where it ended the game, the game's end
/// ([`end_game`]) and a new game, and whether the opponent begins it (then its turn goes on).
fn after_answer(
    config: &Config,
    variant: Variant,
    g: &mut GameState,
    last: Option<Step>,
    i: usize,
) -> Result<bool, Error> {
    let Some(step) = last.filter(Step::ends) else { return Ok(false) };
    end_game(config, variant, g, step);
    if g.restarts >= MAX_RESTARTS {
        return Err(Error::Opponent {
            env: i,
            message: format!(
                "the opponent ended {MAX_RESTARTS} new games in its first turn (max_steps {} \
                 leaves the learner no move)",
                config.max_steps
            ),
        });
    }
    Ok(true)
}

/// Plays the opponent's `answer` in game `i` ([`Episode::opponent_answer`]), for a batch
/// opponent's round, ending the game where it ends.
fn play_answer(
    config: &Config,
    variant: Variant,
    g: &mut GameState,
    answer: Answer,
    i: usize,
) -> Result<(), Error> {
    let step = g.episode.opponent_answer(answer).map_err(|e| answer_error(e, i))?;
    after_answer(config, variant, g, Some(step), i).map(drop)
}

/// Plays the turn of game `i`'s own opponent ([`Episode::opponent_turn`]), and its first turn
/// of each new game that the turn's end starts where it begins.
fn opponent_turn(
    config: &Config,
    variant: Variant,
    g: &mut GameState,
    opponent: &mut dyn Opponent,
    learner: Player,
    i: usize,
) -> Result<(), Error> {
    loop {
        let turn = g.episode.opponent_turn(learner, &mut |pos, _| opponent.act(pos));
        let turn = turn.map_err(|e| answer_error(e, i))?;
        if !after_answer(config, variant, g, turn.last, i)? {
            return Ok(());
        }
    }
}

/// The outputs of one game, cut from [`Buffers`].
struct Slot<'a> {
    planes: &'a mut [f32],
    globals: &'a mut [f32],
    mask: &'a mut [bool],
    to_play: &'a mut u8,
    rewards: &'a mut [f32],
    terminated: &'a mut bool,
    truncated: &'a mut bool,
}

/// Writes game `g`'s outputs: the result of the game the last step ended there (rewards and
/// flags; cleared where none ended) and the observation of the game in progress.
fn write_slot(g: &GameState, slot: Slot<'_>) {
    let (rewards, terminated, truncated) = match g.ended {
        None => ([0.0; 2], false, false),
        Some(End::Terminated(r)) => (r, true, false),
        Some(End::Truncated) => ([0.0; 2], false, true),
    };
    slot.rewards.copy_from_slice(&rewards);
    (*slot.terminated, *slot.truncated) = (terminated, truncated);
    let position = g.position();
    position.encode(slot.planes, slot.globals);
    position.legal_action_mask(slot.mask);
    *slot.to_play = position.turn().index() as u8;
}

/// Starts a new game in `g`: first player, random opening plies (drawn again should they end the
/// game; after 100 such draws the game starts without them).
fn new_game(config: &Config, variant: Variant, g: &mut GameState) {
    for attempt in 0..=100 {
        let plies = if attempt == 100 { 0 } else { config.opening_plies };
        let first = match config.first_player {
            FirstPlayer::P0 => Player::P0,
            FirstPlayer::P1 => Player::P1,
            FirstPlayer::Random => {
                if g.rng.next_u64() & 1 == 0 {
                    Player::P0
                } else {
                    Player::P1
                }
            }
        };
        g.episode.restart(Position::new(variant, first));
        for _ in 0..plies {
            let n = g.position().count_legal_actions();
            if n == 0 {
                break;
            }
            let k = g.rng.below(n);
            if let Some(a) = g.position().nth_legal_action(k) {
                g.episode.play_opening(&a);
            }
        }
        if !g.position().is_over() {
            return;
        }
    }
}

/// The Rust examples of the rules page, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/rules.md")]
struct RulesDocDoctests;

/// The Rust examples of the vectorized environment's page, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/vecenv.md")]
struct VecEnvDocDoctests;
