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
//! [`Episode`], which the batch runs for each of its games and Python's `zertz.episode.Episode`
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
//! With [`VecEnv::set_opponents`], the batch is a single-agent environment: every game has an
//! [`Opponent`] that plays the other side, its whole turn (a capture chain included) inside the
//! step, so that the observations, masks and `to_play` are always the learner's, and a step's
//! rewards hold the result of the game whoever's action ended it.
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

pub use episode::{Episode, EpisodeOver, Step};

/// The player of the other side of a single-agent batch ([`VecEnv::set_opponents`]): one per game,
/// asked for each of its actions. This crate knows no players; the caller adapts its own (the
/// engine's bots, say).
pub trait Opponent: Send {
    /// A legal action in `pos`, a game in progress where this opponent is to move; an error (a
    /// player that failed) ends the step with [`Error::Opponent`].
    fn act(&mut self, pos: &Position) -> Result<Action, String>;
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

/// The most games of one [`VecEnv`] (about 6 GB of observations per step on 37 rings).
pub const MAX_NUM_ENVS: usize = 1 << 20;
/// The most worker threads of one [`VecEnv`], and of every other job (self-play and matches
/// take this cap from here).
pub const MAX_THREADS: usize = 1024;

/// Single actions after which a game is truncated, by default: the one limit of every RL front
/// end (this environment, and the Gymnasium and PettingZoo ones of the Python package). A
/// truncated episode has no result (Gymnasium's `truncated`); a match or self-play game cut at
/// its cap is scored a draw instead, a result that counts, hence its own name there
/// ([`DEFAULT_MAX_ACTIONS`]).
pub const DEFAULT_MAX_STEPS: u32 = 1000;

/// Single actions after which an unfinished game of a match or of self-play is scored a draw
/// (their `max_actions`), by default: a result that counts (in the score, the Elo, the value
/// targets), where an RL front end's `max_steps` truncates ([`DEFAULT_MAX_STEPS`]). Real games
/// end long before either: the board shrinks with every placement.
pub const DEFAULT_MAX_ACTIONS: u32 = 1000;

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
    /// An opponent failed, or answered an action that is not legal. The games of that step may
    /// have moved on: reset the batch.
    #[error("game {env}: the opponent {message}")]
    Opponent {
        /// Game index.
        env: usize,
        /// What went wrong.
        message: String,
    },
}

impl zertz_env::Classify for Error {
    fn class(&self) -> zertz_env::ErrorClass {
        use zertz_env::{Cause, ErrorClass};
        match self {
            Error::Threads(_) | Error::Opponent { .. } => ErrorClass::refused(Cause::Failed),
            Error::Config(_) | Error::Length { .. } | Error::OutOfRange { .. } => {
                ErrorClass::refused(Cause::Invalid)
            }
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

/// A batch of games of one variant (see the crate docs).
pub struct VecEnv {
    config: Config,
    variant: Variant,
    space: ActionSpace,
    shape: Shape,
    games: Vec<GameState>,
    /// The opponent of every game and the side the learner plays, when the batch is a
    /// single-agent environment; `None` entries otherwise. (In a mutex only so that the batch
    /// is `Sync`, as Python's objects must be: every access is through `&mut`.)
    opponents: Vec<Option<std::sync::Mutex<Box<dyn Opponent>>>>,
    learner: Player,
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
            opponents: Vec::new(),
            learner: Player::P0,
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
            };
            seed_game(&mut g, env.config.seed, i);
            new_game(&env.config, variant, &mut g);
            env.games.push(g);
            env.opponents.push(None);
        }
        Ok(env)
    }

    /// Makes the batch a single-agent environment: `opponents[i]` plays game `i` on the side
    /// that is not `learner`'s, its whole turn inside each step (and the first turn of a game it
    /// begins, at [`VecEnv::reset`] and at every restart). Observations, masks and `to_play` are
    /// then always the learner's, and a step's rewards hold the result of a game that the
    /// opponent's action ended. The games are started again (call [`VecEnv::reset`]).
    pub fn set_opponents(
        &mut self,
        opponents: Vec<Box<dyn Opponent>>,
        learner: Player,
    ) -> Result<(), Error> {
        let n = self.games.len();
        if opponents.len() != n {
            return Err(Error::Length { name: "opponents", expected: n, found: opponents.len() });
        }
        self.opponents = opponents.into_iter().map(|o| Some(std::sync::Mutex::new(o))).collect();
        self.learner = learner;
        Ok(())
    }

    /// Whether the games have opponents ([`VecEnv::set_opponents`]).
    pub fn has_opponents(&self) -> bool {
        self.opponents.first().is_some_and(Option::is_some)
    }

    /// The side the learner plays against the opponents (P0 when there are none).
    pub fn learner(&self) -> Player {
        self.learner
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

    /// Runs `f` on every game with its opponent (if any) and its slot of the buffers, in
    /// parallel; the first error of a game is returned once every game is done.
    fn for_each_game<F>(&mut self, out: &mut Buffers<'_>, f: F) -> Result<(), Error>
    where
        F: Fn(usize, &mut GameState, Option<&mut dyn Opponent>, Slot<'_>) -> Result<(), Error>
            + Sync,
    {
        self.check(out)?;
        self.ensure_pool()?;
        let n = self.games.len();
        let chunk = n.div_ceil(self.pool.current_num_threads() * 4).max(1);
        let (p, a) = (self.shape.planes_len(), self.space.len());
        let (games, opponents) = (&mut self.games, &mut self.opponents);
        let failed: std::sync::Mutex<Option<(usize, Error)>> = std::sync::Mutex::new(None);
        self.pool.install(|| {
            (
                (games.par_chunks_mut(chunk), opponents.par_chunks_mut(chunk)),
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
                    |(c, ((gs, opps), planes, globals, mask, to_play, rewards, term, trunc))| {
                        let slots = planes
                            .chunks_exact_mut(p)
                            .zip(globals.chunks_exact_mut(GLOBALS))
                            .zip(mask.chunks_exact_mut(a))
                            .zip(to_play.iter_mut())
                            .zip(rewards.chunks_exact_mut(2))
                            .zip(term.iter_mut().zip(trunc.iter_mut()));
                        for (j, ((g, opp), (((((pl, gl), m), tp), r), (te, tr)))) in
                            gs.iter_mut().zip(opps.iter_mut()).zip(slots).enumerate()
                        {
                            let slot = Slot {
                                planes: pl,
                                globals: gl,
                                mask: m,
                                to_play: tp,
                                rewards: r,
                                terminated: te,
                                truncated: tr,
                            };
                            let i = c * chunk + j;
                            let opp = opp.as_mut().map(|o| {
                                &mut **o.get_mut().unwrap_or_else(|p| p.into_inner())
                                    as &mut dyn Opponent
                            });
                            if let Err(e) = f(i, g, opp, slot) {
                                let mut first = failed.lock().unwrap_or_else(|p| p.into_inner());
                                if first.as_ref().is_none_or(|(k, _)| i < *k) {
                                    *first = Some((i, e));
                                }
                            }
                        }
                    },
                );
        });
        match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    }

    /// Starts new games in every slot (reseeding first when `seed` is given) and writes the first
    /// observations; rewards, terminated and truncated are cleared. An opponent that begins a
    /// game plays its first turn.
    pub fn reset(&mut self, seed: Option<u64>, out: &mut Buffers<'_>) -> Result<(), Error> {
        self.check(out)?;
        if let Some(s) = seed {
            self.config.seed = s;
        }
        let (config, variant, reseed) = (self.config.clone(), self.variant, seed.is_some());
        let learner = self.learner;
        self.for_each_game(out, |i, g, opp, slot| {
            if reseed {
                seed_game(g, config.seed, i);
            }
            g.final_position = None;
            g.forfeited = false;
            slot.rewards.fill(0.0);
            *slot.terminated = false;
            *slot.truncated = false;
            restart(&config, variant, g, opp, learner, i)?;
            observe(g, slot);
            Ok(())
        })
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
        self.for_each_game(out, |_, g, _, slot| {
            slot.rewards.fill(0.0);
            *slot.terminated = false;
            *slot.truncated = false;
            observe(g, slot);
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
        let space = self.space;
        let plays = |i: usize| active.is_none_or(|a| a[i]);
        if let Some((env, &action)) =
            actions.iter().enumerate().find(|&(i, a)| plays(i) && *a as usize >= space.len())
        {
            return Err(Error::OutOfRange { env, action, size: space.len() });
        }
        let (config, variant, learner) = (self.config.clone(), self.variant, self.learner);
        self.for_each_game(out, |i, g, mut opp, slot| {
            slot.rewards.fill(0.0);
            *slot.terminated = false;
            *slot.truncated = false;
            g.final_position = None;
            if !plays(i) {
                g.forfeited = false;
                observe(g, slot);
                return Ok(());
            }
            let action = space.decode(actions[i] as usize).expect("checked above");
            let step = play(g, &action);
            g.forfeited = step.illegal;
            let mut end = End::of(step);
            if let (End::Continues, Some(o)) = (&end, opp.as_deref_mut()) {
                end = opponent_turn(g, o, learner, i)?;
            }
            match end {
                End::Continues => {}
                End::Terminated(r) => {
                    slot.rewards.copy_from_slice(&r);
                    *slot.terminated = true;
                }
                End::Truncated => *slot.truncated = true,
            }
            if *slot.terminated || *slot.truncated {
                g.final_position = Some(*g.position());
                restart(&config, variant, g, opp, learner, i)?;
            }
            observe(g, slot);
            Ok(())
        })
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

/// How a game stands after an action.
enum End {
    /// It goes on.
    Continues,
    /// It ended by the rules or by forfeit: the rewards of P0 and P1.
    Terminated([f32; 2]),
    /// It reached the step limit.
    Truncated,
}

impl End {
    fn of(step: Step) -> End {
        if step.terminated {
            End::Terminated(step.rewards)
        } else if step.truncated {
            End::Truncated
        } else {
            End::Continues
        }
    }
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

/// Plays the opponent's actions in game `i` until the learner is to move or the game ends.
fn opponent_turn(
    g: &mut GameState,
    opponent: &mut dyn Opponent,
    learner: Player,
    i: usize,
) -> Result<End, Error> {
    while g.position().turn() != learner {
        let action = opponent
            .act(g.position())
            .map_err(|message| Error::Opponent { env: i, message: format!("failed: {message}") })?;
        if !g.position().is_legal_action(&action) {
            return Err(Error::Opponent {
                env: i,
                message: format!("answered an illegal action ({action:?})"),
            });
        }
        match End::of(play(g, &action)) {
            End::Continues => {}
            end => return Ok(end),
        }
    }
    Ok(End::Continues)
}

/// Starts a new game in `g` ([`new_game`]); with an opponent that begins, plays its first turn.
/// A game that this turn ends (random opening plies may allow it) is started again, up to 100
/// times; then the error says so (a `max_steps` that the opponent's first turn reaches).
fn restart(
    config: &Config,
    variant: Variant,
    g: &mut GameState,
    mut opponent: Option<&mut dyn Opponent>,
    learner: Player,
    i: usize,
) -> Result<(), Error> {
    for _ in 0..100 {
        new_game(config, variant, g);
        let Some(o) = opponent.as_deref_mut() else { return Ok(()) };
        if let End::Continues = opponent_turn(g, o, learner, i)? {
            return Ok(());
        }
    }
    Err(Error::Opponent {
        env: i,
        message: format!(
            "ended 100 new games in its first turn (max_steps {} leaves the learner no move)",
            config.max_steps
        ),
    })
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

fn observe(g: &GameState, slot: Slot<'_>) {
    let position = g.position();
    position.encode(slot.planes, slot.globals);
    position.legal_action_mask(slot.mask);
    *slot.to_play = position.turn().index() as u8;
}

/// The Rust examples of the rules page, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/rules.md")]
struct RulesDocDoctests;

/// The Rust examples of the vectorized environment's page, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/vecenv.md")]
struct VecEnvDocDoctests;
