//! Players that pick single actions: baselines for matches and evaluation.
//!
//! - [`RandomPlayer`]: a uniformly random legal action.
//! - [`GreedyPlayer`]: the whole-turn move that gains the most towards a win set, minus the best
//!   gain it leaves the opponent one ply later; capture chains are played hop by hop as planned.
//! - [`MctsPlayer`]: [`search`] with any [`Evaluator`] and a fixed number of simulations per
//!   decision, no root noise, the most visited action, tree reuse between decisions.
//!
//! - [`AlphaBetaPlayer`]: the classic alpha-beta searcher ([`zertz_search::alphabeta`]) to a
//!   fixed depth or for a time per move.
//!
//! [`PlayerSpec`] names them in text (`random`, `greedy`, `mcts:1000`, `uniform:800`,
//! `nn:MODEL:400`, `alphabeta`, `alphabeta:3`, and `cmd:PROGRAM ARGS` for another program that
//! speaks the engine protocol, [`crate::command`]) for the command line and [`crate::matches`].
//! A searching player's spec may end with its own time per move, `:time=SECONDS`
//! (`alphabeta:time=0.5`, `mcts:time=2`, `nn:MODEL:time=1`): it then searches until that time is
//! spent ([`Player::set_move_time`]).
//!
//! ```
//! use zertz_env::{Player as Side, Position, Variant};
//! use zertz_arena::players::{parse_player, Player};
//! let pos = Position::new(Variant::default(), Side::P0);
//! let mut greedy = parse_player("greedy").unwrap();
//! let a = greedy.choose(&pos).unwrap();
//! assert!(pos.is_legal_action(&a));
//! assert!(parse_player("alphazero").is_err());
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use zertz_env::{Action, ByMarble, Hop, MarbleSet, Move, Outcome, Position, SplitMix64};

use zertz_search::alphabeta::MAX_DEPTH;
use zertz_search::config::MAX_GUMBEL_ACTIONS;
use zertz_search::evaluator::{EvalError, Evaluator, RolloutEvaluator, UniformEvaluator};
use zertz_search::mcts::{DEFAULT_MAX_TREE_BYTES, Scratch, Tree, search_interruptible};
use zertz_search::{Precision, Preset, SearchConfig};

pub use crate::alphabeta::AlphaBetaPlayer;
use crate::analysis::Analyzer;
use crate::command::{self, CommandPlayer, ProgramLimits};

/// Why a player could not choose an action. The message names the player (for a network's
/// player, `nn:MODEL:SIMS`, so the model file).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlayerError {
    /// The evaluator behind a search failed (a network that fails or answers NaN, say).
    #[error("player {player}: {error}")]
    Evaluator {
        /// The player's name.
        player: String,
        /// What the evaluator said.
        error: EvalError,
    },
    /// The player was asked to move in a position without a legal action (a finished game).
    #[error("player {player}: no legal action in {position}")]
    NoLegalAction {
        /// The player's name.
        player: String,
        /// The position, in the text format.
        position: String,
    },
    /// The program behind a `cmd:` player failed: its process ended, it broke the protocol,
    /// refused a command (its `?` message is in `error`) or answered an illegal move.
    #[error("player {player}: {error}")]
    Engine {
        /// The player's name (its spec, `cmd:PROGRAM ARGS`).
        player: String,
        /// What went wrong.
        error: String,
    },
}

impl PlayerError {
    fn no_legal_action(player: &str, pos: &Position) -> PlayerError {
        PlayerError::NoLegalAction { player: player.to_string(), position: pos.to_text() }
    }
}

/// A player spec that cannot be read, or a player that cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Not one of the kinds of player.
    #[error(
        "unknown player '{0}': expected random, greedy, mcts:SIMS, uniform:SIMS, \
         nn:MODEL[:SIMS][:PRECISION][:gumbel=K], alphabeta[:DEPTH] or cmd:PROGRAM ARGS (a \
         searching player may end with :time=SECONDS)"
    )]
    Unknown(String),
    /// An alpha-beta depth that is not a number from 1 to [`MAX_DEPTH`].
    #[error("bad player '{0}': the depth must be an integer from 1 to {MAX_DEPTH} (whole turns)")]
    Depth(String),
    /// A `:time=SECONDS` that is not a time per move ([`check_move_time`]), or on a player that
    /// does not search.
    #[error("bad player '{player}': {reason}")]
    Time {
        /// The spec.
        player: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A simulation count that is not a number from 1 to [`MAX_SIMULATIONS`].
    #[error(
        "bad player '{0}': the simulation count must be an integer from 1 to {MAX_SIMULATIONS}"
    )]
    Simulations(String),
    /// A `:gumbel=K` whose K is not a number from 2 to [`MAX_GUMBEL_ACTIONS`].
    #[error(
        "bad player '{0}': the Gumbel root's actions (gumbel=K) must be an integer from 2 to \
         {MAX_GUMBEL_ACTIONS}"
    )]
    Gumbel(String),
    /// `nn:` without a model file.
    #[error("bad player '{0}': name a model file, nn:MODEL[:SIMS]")]
    NoModel(String),
    /// `cmd:` without a program, or with a quote that is not closed.
    #[error("bad player '{player}': {reason}; write cmd:PROGRAM ARGS")]
    BadCommand {
        /// The spec.
        player: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The program of a `cmd:` player could not be started, or did not answer the protocol's
    /// `name` command.
    #[error("cannot start the engine '{program}': {error}")]
    Command {
        /// The program, as named in the spec.
        program: String,
        /// Why.
        error: String,
    },
    /// A network's player whose model the caller did not load ([`Models`]).
    #[error("player {player}: the model {model} is not loaded")]
    NotLoaded {
        /// The spec.
        player: String,
        /// The model file.
        model: String,
    },
}

/// Most simulations per decision of a player spec (`mcts:SIMS`, `uniform:SIMS`,
/// `nn:MODEL:SIMS`): a search keeps a few nodes per simulation, so a larger count only runs out of
/// memory.
pub const MAX_SIMULATIONS: u32 = 1 << 20;

/// The shortest time per move: a searcher asked for less would answer before it started.
pub const MIN_MOVE_TIME: Duration = Duration::from_millis(1);
/// The longest time per move: an hour.
pub const MAX_MOVE_TIME: Duration = Duration::from_secs(3600);

/// A time per move in seconds (`--move-time`, `:time=`), checked: a number from 0.001 to 3600.
pub fn check_move_time(seconds: f64) -> Result<Duration, String> {
    let (min, max) = (MIN_MOVE_TIME.as_secs_f64(), MAX_MOVE_TIME.as_secs_f64());
    if seconds.is_finite() && (min..=max).contains(&seconds) {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(format!(
            "the time per move must be a number of seconds from {min} to {max}, not {seconds}"
        ))
    }
}

/// What a player's searches count: positions (alpha-beta, quiescence included) or simulations
/// (MCTS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkUnit {
    /// Positions searched.
    Nodes,
    /// Simulations.
    Simulations,
}

impl WorkUnit {
    /// `nodes` or `simulations`.
    pub fn name(self) -> &'static str {
        match self {
            WorkUnit::Nodes => "nodes",
            WorkUnit::Simulations => "simulations",
        }
    }
}

/// Something that plays ZÈRTZ one single action at a time (a placement, one hop of a capture
/// chain, or a pass).
pub trait Player: Send {
    /// A short name for reports, such as `greedy` or `mcts:1000`.
    fn name(&self) -> &str;

    /// A legal action in `pos`, whose game is not over and where this player is to move; an error
    /// when the player cannot choose (its evaluator failed, or `pos` has no legal action).
    fn choose(&mut self, pos: &Position) -> Result<Action, PlayerError>;

    /// Told about every action played in the game, its own and the opponent's, with the position
    /// it was played in. Players that keep state between decisions (a search tree) follow the game
    /// with it; the default ignores it.
    fn observe(&mut self, before: &Position, action: &Action) {
        let _ = (before, action);
    }

    /// Drops what the player keeps between decisions only to decide faster (a search tree kept
    /// for reuse, which may hold hundreds of megabytes): the next decision starts afresh. Players
    /// that keep nothing of the kind ignore it.
    fn release_memory(&mut self) {}

    /// Bytes the player keeps between decisions (its search tree, [`Tree::bytes`]); 0 for
    /// players that keep nothing of the kind.
    fn kept_bytes(&self) -> usize {
        0
    }

    /// Bounds the memory of the player's search tree to `bytes` ([`Tree::with_max_bytes`]: a
    /// search stops adding simulations there). Players that do not search here ignore it.
    fn set_max_tree_bytes(&mut self, bytes: usize) {
        let _ = bytes;
    }

    /// Searches until `time` is spent at every decision (`None`: by its own measure, the
    /// simulations or depth of its spec). Players that do not search here ignore it.
    fn set_move_time(&mut self, time: Option<Duration>) {
        let _ = time;
    }

    /// What the player's searches have done since it was built, in total: `None` for players
    /// that do not search here.
    fn work(&self) -> Option<(WorkUnit, u64)> {
        None
    }
}

/// The only legal action of `pos`, if there is exactly one.
fn forced_action(pos: &Position) -> Option<Action> {
    if pos.count_legal_actions() == 1 { pos.nth_legal_action(0) } else { None }
}

/// A whole move after which the player to move has won, if any (every legal move is tried; in
/// the middle of a capture chain, the rest of the chain).
pub fn winning_move(pos: &Position) -> Option<Move> {
    let mover = pos.turn();
    pos.legal_moves()
        .into_iter()
        .find(|m| pos.play(m).is_ok_and(|p| p.outcome() == Some(Outcome::Win(mover))))
}

/// Whether `action` hands the opponent a win on its next turn: the game goes on, the opponent
/// moves next, and one of its moves wins. (A hop that continues the mover's own chain is not
/// judged here: false.)
pub fn hands_a_win(pos: &Position, action: &Action) -> bool {
    let Ok(next) = pos.play_action(action) else { return false };
    next.outcome().is_none() && next.turn() != pos.turn() && winning_move(&next).is_some()
}

/// The candidates (`(action, visits)`) less the most visited ones that hand the opponent a win
/// at once ([`hands_a_win`]), checked from the most visited down to the first that does not, and
/// among the candidates as visited as that one. When every candidate hands a win, the first
/// other legal action of the root that does not (in the tree's order: by prior), else the
/// candidates unchanged (every move loses at once).
fn without_handed_wins(
    pos: &Position,
    tree: &Tree,
    candidates: Vec<(Action, u32)>,
) -> Vec<(Action, u32)> {
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(candidates[i].1));
    let first_safe = order.into_iter().find(|&i| !hands_a_win(pos, &candidates[i].0));
    match first_safe {
        Some(safe) => {
            let top = candidates[safe].1;
            // The others as visited as the first safe one are checked too (it is checked).
            (0..candidates.len())
                .filter(|&i| {
                    let v = candidates[i].1;
                    v < top || i == safe || (v == top && !hands_a_win(pos, &candidates[i].0))
                })
                .map(|i| candidates[i])
                .collect()
        }
        None => match tree
            .root_children()
            .into_iter()
            .find(|c| c.visits == 0 && !hands_a_win(pos, &c.action))
        {
            Some(c) => vec![(c.action, 0)],
            None => candidates,
        },
    }
}

// ------------------------------------------------------------------------------------- random

/// Plays a uniformly random legal action.
#[derive(Clone, Debug)]
pub struct RandomPlayer {
    rng: SplitMix64,
}

impl RandomPlayer {
    /// A random player with its own seed.
    pub fn new(seed: u64) -> RandomPlayer {
        RandomPlayer { rng: SplitMix64(seed) }
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> &str {
        "random"
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, PlayerError> {
        let n = pos.count_legal_actions();
        if n == 0 {
            return Err(PlayerError::no_legal_action(self.name(), pos));
        }
        pos.nth_legal_action(self.rng.below(n))
            .ok_or_else(|| PlayerError::no_legal_action(self.name(), pos))
    }
}

// ------------------------------------------------------------------------------------- greedy

/// The value of a finished game for the greedy scores: far above any capture gain.
const WIN: f64 = 1000.0;

/// Above this many legal moves, the greedy player looks only at the captures its moves hand to the
/// opponent (compulsory, so cheap to list), not at every opponent placement.
const FULL_REPLY_LIMIT: usize = 300;

/// Progress of captures towards the closest win set, in `0..=1` (1: a win), plus a little for
/// every marble so that a capture off the closest set still counts.
fn progress(set: MarbleSet, caps: &ByMarble<u8>) -> f64 {
    if set.is_win(caps) {
        return WIN;
    }
    let single = set.single_colour_win();
    let each = set.each_colour_win();
    let mut best = 0.0f64;
    let mut mixed = 0.0;
    for c in 0..3 {
        let n = caps.0[c];
        best = best.max(f64::from(n.min(single.0[c])) / f64::from(single.0[c]));
        mixed += f64::from(n.min(each)) / f64::from(3 * each);
    }
    best.max(mixed) + 0.02 * f64::from(caps.total())
}

/// The rest of a capture chain that a player chose whole and plays hop by hop over its next
/// decisions, and the hash of the position where its next hop is due.
#[derive(Clone, Debug, Default)]
pub(crate) struct ChainPlan {
    hops: Vec<Hop>,
    at: u64,
}

impl ChainPlan {
    /// The next hop of the plan when `pos` is where it is due and it is legal there; else the
    /// plan is dropped and `None`.
    pub(crate) fn next(&mut self, pos: &Position) -> Option<Action> {
        if self.hops.is_empty() || pos.hash() != self.at {
            self.hops.clear();
            return None;
        }
        let a = Action::Hop(self.hops.remove(0));
        if !pos.is_legal_action(&a) {
            self.hops.clear();
            return None;
        }
        self.at = pos.play_action(&a).map_or(0, |p| p.hash());
        Some(a)
    }

    /// The first action of `m`, chosen in `pos`; the rest of its chain is planned.
    pub(crate) fn start(&mut self, pos: &Position, m: &Move) -> Action {
        let (first, rest) = split_chain(pos, m);
        self.hops = rest;
        if !self.hops.is_empty() {
            self.at = pos.play_action(&first).map_or(0, |p| p.hash());
        }
        first
    }
}

/// Plays whole-turn moves by a one-ply heuristic: the gain of the mover towards its closest win
/// set minus the best gain of the opponent's reply, ties broken at random. A capture chain is
/// planned whole and played hop by hop over the next decisions.
#[derive(Clone, Debug)]
pub struct GreedyPlayer {
    rng: SplitMix64,
    plan: ChainPlan,
    moves: Vec<Move>,
    replies: Vec<Move>,
    best: Vec<usize>,
}

impl GreedyPlayer {
    /// A greedy player; the seed breaks ties.
    pub fn new(seed: u64) -> GreedyPlayer {
        GreedyPlayer {
            rng: SplitMix64(seed),
            plan: ChainPlan::default(),
            moves: Vec::new(),
            replies: Vec::new(),
            best: Vec::new(),
        }
    }

    /// The score of playing `m` in `pos` (see the type's description).
    fn score(&mut self, pos: &Position, m: &Move, full_reply: bool) -> f64 {
        let me = pos.turn();
        let set = pos.marble_set();
        let mut after = *pos;
        after.play_unchecked(m);
        match after.outcome() {
            Some(Outcome::Win(p)) => return if p == me { WIN } else { -WIN },
            Some(Outcome::Draw) => return 0.0,
            None => {}
        }
        let gain = progress(set, &after.captures(me)) - progress(set, &pos.captures(me));
        if !full_reply && !after.has_capture() {
            return gain;
        }
        // The opponent's best reply (compulsory captures, or every move when it is cheap).
        let opp = after.turn();
        let base = progress(set, &after.captures(opp));
        self.replies.clear();
        after.legal_moves_into(&mut self.replies);
        let mut threat = 0.0f64;
        for r in &self.replies {
            let mut next = after;
            next.play_unchecked(r);
            let g = match next.outcome() {
                Some(Outcome::Win(p)) if p == opp => WIN,
                Some(Outcome::Win(_)) => -WIN,
                Some(Outcome::Draw) => 0.0,
                None => progress(set, &next.captures(opp)) - base,
            };
            threat = threat.max(g);
            if threat >= WIN {
                break;
            }
        }
        gain - threat
    }
}

impl Player for GreedyPlayer {
    fn name(&self) -> &str {
        "greedy"
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, PlayerError> {
        if let Some(a) = self.plan.next(pos) {
            return Ok(a);
        }
        let mut moves = std::mem::take(&mut self.moves);
        moves.clear();
        pos.legal_moves_into(&mut moves);
        if moves.is_empty() {
            self.moves = moves;
            return Err(PlayerError::no_legal_action(self.name(), pos));
        }
        let full = moves.len() <= FULL_REPLY_LIMIT;
        let mut best_score = f64::NEG_INFINITY;
        self.best.clear();
        for (i, m) in moves.iter().enumerate() {
            let s = self.score(pos, m, full);
            if s > best_score + 1e-9 {
                best_score = s;
                self.best.clear();
                self.best.push(i);
            } else if s >= best_score - 1e-9 {
                self.best.push(i);
            }
        }
        let pick = self.best[self.rng.below(self.best.len())];
        let chosen = moves[pick];
        self.moves = moves;
        Ok(self.plan.start(pos, &chosen))
    }
}

/// The first action of a whole-turn move and the hops that follow it, each from the ring where
/// the jumping marble has landed.
fn split_chain(pos: &Position, m: &Move) -> (Action, Vec<Hop>) {
    let mut actions = pos.move_actions(m).into_iter();
    let first = actions.next().unwrap_or(Action::Pass);
    let hops =
        actions.filter_map(|a| if let Action::Hop(h) = a { Some(h) } else { None }).collect();
    (first, hops)
}

// --------------------------------------------------------------------------------------- mcts

/// Searches every decision with [`search`]: a fixed number of new simulations per decision, no
/// root noise, the most visited root action (ties at random) among [`Tree::root_candidates`] (a
/// proven win when the search found one, never an avoidable proven loss); with a Gumbel root
/// ([`SearchConfig::gumbel_actions`]), [`Tree::gumbel_action`]. The tree follows the game through
/// [`Player::observe`] (or from its own actions) and keeps the subtree of the position reached;
/// a forced action is played without searching. The tree has a memory budget
/// ([`DEFAULT_MAX_TREE_BYTES`] unless [`Player::set_max_tree_bytes`] says otherwise): a decision
/// whose simulations would pass it gets fewer.
pub struct MctsPlayer {
    name: String,
    evaluator: Arc<dyn Evaluator>,
    simulations: u32,
    config: SearchConfig,
    tree: Option<Tree>,
    scratch: Scratch,
    rng: SplitMix64,
    /// The arena size past which a tree starts afresh instead of keeping a subtree.
    max_arena: usize,
    /// The memory budget of the tree.
    max_tree_bytes: usize,
    /// Search until this time is spent instead of counting simulations.
    move_time: Option<Duration>,
    /// Simulations run by every search so far.
    simulations_run: u64,
    /// Look one turn ahead at the root ([`MctsPlayer::with_tactics`]).
    tactics: bool,
    /// Simulations per second of the searches under a time per move so far (a running mean),
    /// which sizes a Gumbel root's schedule.
    rate: Option<f64>,
}

impl fmt::Debug for MctsPlayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MctsPlayer")
            .field("name", &self.name)
            .field("simulations", &self.simulations)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl MctsPlayer {
    /// A search player with any evaluator and `simulations` new simulations per decision.
    pub fn new(
        name: impl Into<String>,
        evaluator: Arc<dyn Evaluator>,
        simulations: u32,
        seed: u64,
    ) -> MctsPlayer {
        let simulations = simulations.max(1);
        MctsPlayer {
            name: name.into(),
            evaluator,
            simulations,
            config: SearchConfig::default(),
            tree: None,
            scratch: Scratch::default(),
            rng: SplitMix64(seed),
            // Expanded nodes carry every legal action as an edge (up to ~2000 in the opening), so
            // keep a few searches' worth of nodes at most.
            max_arena: 4 * simulations as usize + 1024,
            max_tree_bytes: DEFAULT_MAX_TREE_BYTES,
            move_time: None,
            simulations_run: 0,
            tactics: false,
            rate: None,
        }
    }

    /// Classic Monte Carlo tree search: uniform priors, one random playout per leaf, one leaf per
    /// round (no virtual loss in the way): [`Preset::Rollout`]. Named `mcts:SIMS`.
    pub fn rollout(simulations: u32, seed: u64) -> MctsPlayer {
        let eval = Arc::new(RolloutEvaluator { rollouts: 1, seed });
        MctsPlayer::new(format!("mcts:{simulations}"), eval, simulations, seed)
            .with_config(Preset::Rollout.config())
    }

    /// Search with uniform priors and value 0 everywhere: only terminal positions count,
    /// [`Preset::Rollout`]. Named `uniform:SIMS`.
    pub fn uniform(simulations: u32, seed: u64) -> MctsPlayer {
        let eval = Arc::new(UniformEvaluator);
        MctsPlayer::new(format!("uniform:{simulations}"), eval, simulations, seed)
            .with_config(Preset::Rollout.config())
    }

    /// Search guided by a network: PUCT with [`Preset::Network`] (the defaults with flattened
    /// priors), eight leaves per round, no root noise. Named `name` (the spec,
    /// `nn:MODEL:SIMS`).
    pub fn neural(
        name: impl Into<String>,
        evaluator: Arc<dyn Evaluator>,
        simulations: u32,
        seed: u64,
    ) -> MctsPlayer {
        MctsPlayer::new(name, evaluator, simulations, seed)
            .with_config(Preset::Network.config())
            .with_tactics(true)
    }

    /// The same player with (or without) a look one turn ahead at the root: a move that wins at
    /// once is played without a search, and of the searched moves the most visited one that does
    /// not hand the opponent a win on its next turn is chosen (when there is one, among every
    /// legal action). A network's player ([`MctsPlayer::neural`]) has it; the rollout and uniform
    /// players, yardsticks of earlier figures, do not.
    pub fn with_tactics(mut self, tactics: bool) -> MctsPlayer {
        self.tactics = tactics;
        self
    }

    /// The same player with other search settings.
    pub fn with_config(mut self, config: SearchConfig) -> MctsPlayer {
        self.config = config;
        self
    }

    /// Simulations per decision.
    pub fn simulations(&self) -> u32 {
        self.simulations
    }

    /// The search tree, rooted at the position after the last action it followed.
    pub fn tree(&self) -> Option<&Tree> {
        self.tree.as_ref()
    }
}

/// How far a Gumbel root under a time per move plans past the simulations its measured rate
/// fits in the time. The rate varies by a tenth or two from one position to the next: planning
/// for exactly the expected count leaves the time unused whenever a search runs faster than the
/// mean, while a plan the time cuts short only leaves the last halving (between the two or four
/// best candidates) unfinished, where the better-scored candidate is chosen anyway.
pub const GUMBEL_PLAN_HEADROOM: f64 = 1.25;

/// The simulations a Gumbel root plans for under `move_time`: the spec's count until a rate
/// (simulations per second) has been measured, then [`GUMBEL_PLAN_HEADROOM`] times what that
/// rate fits in the time, from 1 to [`MAX_SIMULATIONS`].
pub fn gumbel_plan(rate: Option<f64>, simulations: u32, move_time: Duration) -> u32 {
    rate.map_or(simulations, |r| {
        (r * move_time.as_secs_f64() * GUMBEL_PLAN_HEADROOM).clamp(1.0, f64::from(MAX_SIMULATIONS))
            as u32
    })
}

impl Player for MctsPlayer {
    fn name(&self) -> &str {
        &self.name
    }

    /// An error names this player when its evaluator fails (or `pos` has no legal action).
    fn choose(&mut self, pos: &Position) -> Result<Action, PlayerError> {
        if pos.count_legal_actions() == 0 {
            return Err(PlayerError::no_legal_action(&self.name, pos));
        }
        let forced = forced_action(pos);
        // (Looked for only where there is a choice.)
        let won = if self.tactics && forced.is_none() { winning_move(pos) } else { None };
        let action = match (forced, won) {
            (Some(a), _) => a,
            (None, Some(m)) => pos.move_actions(&m)[0],
            (None, None) => {
                let tree = match &mut self.tree {
                    Some(t) if t.position() == pos => t,
                    Some(t) => {
                        t.reset(*pos);
                        t
                    }
                    None => self.tree.insert(Tree::with_max_bytes(*pos, self.max_tree_bytes)),
                };
                let before = tree.root_visits();
                let started = Instant::now();
                // Under a time per move, as many simulations as the time (and the tree's memory
                // budget) allow. A Gumbel root halves its candidates on a schedule of the
                // search's simulations, so it plans for somewhat more than the time gave before
                // (the spec's count at first), and the time stops it.
                let (simulations, deadline) = match self.move_time {
                    Some(t) if self.config.gumbel_actions > 0 => {
                        (gumbel_plan(self.rate, self.simulations, t), Some(started + t))
                    }
                    Some(t) => (MAX_SIMULATIONS, Some(started + t)),
                    None => (self.simulations, None),
                };
                let searched = search_interruptible(
                    std::slice::from_mut(tree),
                    &[simulations],
                    &self.config,
                    self.evaluator.as_ref(),
                    &mut self.scratch,
                    &mut || deadline.is_some_and(|d| Instant::now() >= d),
                );
                let ran = tree.root_visits().saturating_sub(before);
                self.simulations_run += u64::from(ran);
                let seconds = started.elapsed().as_secs_f64();
                if self.move_time.is_some() && ran > 0 && seconds > 0.0 {
                    let rate = f64::from(ran) / seconds;
                    self.rate = Some(self.rate.map_or(rate, |r| 0.5 * (r + rate)));
                }
                if let Err(error) = searched {
                    // The tree may hold half-finished statistics: start afresh next time.
                    self.tree = None;
                    return Err(PlayerError::Evaluator { player: self.name.clone(), error });
                }
                // A Gumbel root's own choice, unless it hands the opponent a win.
                let gumbel = tree.gumbel_action(&self.config);
                if let Some(a) = gumbel.filter(|a| !self.tactics || !hands_a_win(pos, a)) {
                    self.observe(pos, &a);
                    return Ok(a);
                }
                // A proven win if there is one; never a proven loss that can be avoided.
                let mut candidates = tree.root_candidates();
                if self.tactics {
                    candidates = without_handed_wins(pos, tree, candidates);
                }
                let most = candidates.iter().map(|&(_, v)| v).max().unwrap_or(0);
                let best: Vec<Action> =
                    candidates.iter().filter(|&&(_, v)| v == most).map(|&(a, _)| a).collect();
                match best.len() {
                    0 => pos
                        .nth_legal_action(self.rng.below(pos.count_legal_actions()))
                        .ok_or_else(|| PlayerError::no_legal_action(&self.name, pos))?,
                    n => best[self.rng.below(n)],
                }
            }
        };
        self.observe(pos, &action);
        Ok(action)
    }

    fn observe(&mut self, before: &Position, action: &Action) {
        if !self.config.tree_reuse {
            self.tree = None;
        } else if let Some(t) = &mut self.tree {
            if t.position() == before {
                t.advance(action, self.max_arena);
            }
        }
    }

    fn release_memory(&mut self) {
        self.tree = None;
        self.scratch = Scratch::default();
    }

    fn kept_bytes(&self) -> usize {
        self.tree.as_ref().map_or(0, Tree::bytes)
    }

    fn set_max_tree_bytes(&mut self, bytes: usize) {
        self.max_tree_bytes = bytes;
        if let Some(t) = &mut self.tree {
            t.set_max_bytes(bytes);
        }
    }

    /// Under a time per move the simulation count is not used: each search runs until the time
    /// is spent (or its tree reaches its memory budget), and the tree keeps the subtree of the
    /// position reached whatever its size. A Gumbel root plans its schedule for a quarter more
    /// simulations than the time allowed its earlier searches ([`gumbel_plan`]; the count at
    /// first), and stops there or when the time is spent, whichever is first.
    fn set_move_time(&mut self, time: Option<Duration>) {
        self.move_time = time;
        self.max_arena = match time {
            Some(_) => usize::MAX,
            None => 4 * self.simulations as usize + 1024,
        };
    }

    fn work(&self) -> Option<(WorkUnit, u64)> {
        Some((WorkUnit::Simulations, self.simulations_run))
    }
}

// ------------------------------------------------------------------------------------- timed

/// A searching player with its own time per move (`SPEC:time=SECONDS`), named by its whole spec;
/// a match's time per move does not replace its own.
struct TimedPlayer {
    name: String,
    inner: Box<dyn Player>,
}

impl Player for TimedPlayer {
    fn name(&self) -> &str {
        &self.name
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, PlayerError> {
        self.inner.choose(pos).map_err(|e| match e {
            PlayerError::Evaluator { error, .. } => {
                PlayerError::Evaluator { player: self.name.clone(), error }
            }
            other => other,
        })
    }

    fn observe(&mut self, before: &Position, action: &Action) {
        self.inner.observe(before, action);
    }

    fn release_memory(&mut self) {
        self.inner.release_memory();
    }

    fn kept_bytes(&self) -> usize {
        self.inner.kept_bytes()
    }

    fn set_max_tree_bytes(&mut self, bytes: usize) {
        self.inner.set_max_tree_bytes(bytes);
    }

    fn work(&self) -> Option<(WorkUnit, u64)> {
        self.inner.work()
    }
}

// -------------------------------------------------------------------------------------- specs

/// A player named in text: `random`, `greedy`, `mcts:SIMS` (rollout MCTS), `uniform:SIMS`,
/// `nn:MODEL[:SIMS][:PRECISION][:gumbel=K]` (search guided by an exported network, in its own
/// precision `fp32`, `bf16`, `fp16` or `auto` when one is named, else in the job's; with a Gumbel
/// root that considers K actions when `gumbel=K` is given, else PUCT's; the evaluator of each
/// model comes from the caller through [`Models`], since this crate does not load networks), or
/// `cmd:PROGRAM ARGS` (another program that speaks the engine protocol, [`CommandPlayer`]; the
/// words are split on whitespace, and a word in double quotes may hold spaces: `cmd:"my
/// engine" --player nn:"runs/a b/model.pt"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    /// [`RandomPlayer`].
    Random,
    /// [`GreedyPlayer`].
    Greedy,
    /// [`MctsPlayer::rollout`] with this many simulations.
    Mcts(u32),
    /// [`MctsPlayer::uniform`] with this many simulations.
    Uniform(u32),
    /// [`MctsPlayer::neural`]: a model file and simulations per decision.
    Neural {
        /// The model file, as written in the spec.
        model: String,
        /// Simulations per decision.
        simulations: u32,
        /// The precision the spec names (None: the job's).
        precision: Option<Precision>,
        /// Actions a Gumbel root considers (`:gumbel=K`, [`SearchConfig::gumbel_actions`]);
        /// None: a PUCT root.
        gumbel: Option<u32>,
    },
    /// [`CommandPlayer`]: a program and its arguments (at least the program).
    Command(Vec<String>),
    /// [`AlphaBetaPlayer`] to a fixed depth in whole turns (`alphabeta:DEPTH`), or deepening
    /// for its time per move (`alphabeta`: [`DEFAULT_ALPHABETA_TIME`] unless a match or
    /// `:time=` sets one).
    AlphaBeta(Option<u32>),
    /// A searching player (alpha-beta, MCTS or a network's) with its own time per move:
    /// `SPEC:time=SECONDS`. A match's time per move does not replace it, so two players may have
    /// different times (a handicap).
    Timed {
        /// The player.
        spec: Box<PlayerSpec>,
        /// Its time per move ([`check_move_time`]).
        time: Duration,
    },
}

/// The time per move of `alphabeta` when neither its spec nor the match gives one.
pub const DEFAULT_ALPHABETA_TIME: Duration = Duration::from_secs(1);

/// Simulations of `mcts` and `uniform` without a count.
pub const DEFAULT_SIMULATIONS: u32 = 1000;
/// Simulations of `nn:MODEL` without a count.
pub const DEFAULT_NEURAL_SIMULATIONS: u32 = 400;

/// A neural player's network: the model file as written in its spec and the precision the spec
/// names, if any ([`PlayerSpec::network`]).
pub type ModelKey = (String, Option<Precision>);

/// The evaluators of neural players, by model file and precision as written in their specs (see
/// [`PlayerSpec::network`]). One evaluator serves every game of a match, so that a batching
/// evaluator can merge the searches of all games.
#[derive(Clone, Default)]
pub struct Models(pub BTreeMap<ModelKey, Arc<dyn Evaluator>>);

impl fmt::Debug for Models {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

impl Models {
    /// No models: only non-neural players can be built.
    pub fn new() -> Models {
        Models::default()
    }

    /// Adds the evaluator of `model` for the specs that name no precision.
    pub fn insert(&mut self, model: impl Into<String>, evaluator: Arc<dyn Evaluator>) {
        self.0.insert((model.into(), None), evaluator);
    }

    /// Adds the evaluator of a network ([`PlayerSpec::network`]).
    pub fn insert_key(&mut self, key: ModelKey, evaluator: Arc<dyn Evaluator>) {
        self.0.insert(key, evaluator);
    }

    /// Whether the network of `key` is loaded.
    pub fn contains(&self, model: &str, precision: Option<Precision>) -> bool {
        self.0.contains_key(&(model.to_string(), precision))
    }
}

impl PlayerSpec {
    /// The model file of a neural player.
    pub fn model(&self) -> Option<&str> {
        self.network().map(|(model, _)| model)
    }

    /// The network of a neural player: its model file and the precision it names, if any.
    pub fn network(&self) -> Option<(&str, Option<Precision>)> {
        match self {
            PlayerSpec::Neural { model, precision, .. } => Some((model, *precision)),
            PlayerSpec::Timed { spec, .. } => spec.network(),
            _ => None,
        }
    }

    /// The player without its own time per move (`SPEC` of `SPEC:time=SECONDS`).
    pub fn untimed(&self) -> &PlayerSpec {
        match self {
            PlayerSpec::Timed { spec, .. } => spec,
            other => other,
        }
    }

    /// The time per move the spec gives its player (`:time=`), if any.
    pub fn own_time(&self) -> Option<Duration> {
        match self {
            PlayerSpec::Timed { time, .. } => Some(*time),
            _ => None,
        }
    }

    /// Whether the player searches here, so that a time per move applies to it (alpha-beta,
    /// MCTS and networks' players; not `random`, `greedy` or a `cmd:` program).
    pub fn searches(&self) -> bool {
        match self {
            PlayerSpec::Mcts(_)
            | PlayerSpec::Uniform(_)
            | PlayerSpec::Neural { .. }
            | PlayerSpec::AlphaBeta(_)
            | PlayerSpec::Timed { .. } => true,
            PlayerSpec::Random | PlayerSpec::Greedy | PlayerSpec::Command(_) => false,
        }
    }

    /// The program and arguments of a `cmd:` player.
    pub fn command(&self) -> Option<&[String]> {
        match self {
            PlayerSpec::Command(words) => Some(words),
            _ => None,
        }
    }

    /// The evaluator of a neural player, from `models`; an error names a missing one.
    fn network_evaluator(&self, models: &Models) -> Result<Option<Arc<dyn Evaluator>>, SpecError> {
        let Some((model, precision)) = self.network() else { return Ok(None) };
        match models.0.get(&(model.to_string(), precision)) {
            Some(eval) => Ok(Some(eval.clone())),
            None => {
                Err(SpecError::NotLoaded { player: self.to_string(), model: model.to_string() })
            }
        }
    }

    /// A fresh player; `seed` drives its random choices (and playouts). A neural player takes its
    /// evaluator from `models`; an error names a missing one. A `cmd:` player starts its program
    /// (one process per player built; see [`CommandPlayer::start`]).
    pub fn build(&self, seed: u64, models: &Models) -> Result<Box<dyn Player>, SpecError> {
        self.build_with(seed, models, &ProgramLimits::default())
    }

    /// [`PlayerSpec::build`] whose `cmd:` player holds its program to `limits`.
    pub fn build_with(
        &self,
        seed: u64,
        models: &Models,
        limits: &ProgramLimits,
    ) -> Result<Box<dyn Player>, SpecError> {
        Ok(match self {
            PlayerSpec::Random => Box::new(RandomPlayer::new(seed)),
            PlayerSpec::Greedy => Box::new(GreedyPlayer::new(seed)),
            PlayerSpec::Mcts(n) => Box::new(MctsPlayer::rollout(*n, seed)),
            PlayerSpec::Uniform(n) => Box::new(MctsPlayer::uniform(*n, seed)),
            PlayerSpec::Neural { simulations, gumbel, .. } => {
                let eval = self.network_evaluator(models)?.expect("a neural player's network");
                // A Gumbel root when the spec asks for one (0: PUCT's, the preset's own).
                let config = SearchConfig {
                    gumbel_actions: gumbel.unwrap_or(0),
                    ..Preset::Network.config()
                };
                Box::new(
                    MctsPlayer::neural(self.to_string(), eval, *simulations, seed)
                        .with_config(config),
                )
            }
            PlayerSpec::Command(words) => {
                Box::new(CommandPlayer::start_with(words, limits.clone())?)
            }
            PlayerSpec::AlphaBeta(depth) => Box::new(AlphaBetaPlayer::new(*depth)),
            PlayerSpec::Timed { spec, time } => {
                let mut inner = spec.build_with(seed, models, limits)?;
                inner.set_move_time(Some(*time));
                Box::new(TimedPlayer { name: self.to_string(), inner })
            }
        })
    }

    /// [`PlayerSpec::build_with`] for a game at `move_time` per move (`None`: each player's own
    /// measure): a searching player without its own `:time=` searches for that time.
    pub fn build_for_time(
        &self,
        seed: u64,
        models: &Models,
        limits: &ProgramLimits,
        move_time: Option<Duration>,
    ) -> Result<Box<dyn Player>, SpecError> {
        let mut player = self.build_with(seed, models, limits)?;
        if move_time.is_some() && self.own_time().is_none() {
            player.set_move_time(move_time);
        }
        Ok(player)
    }

    /// The evaluator and search settings with which this player's positions are analysed
    /// ([`crate::analysis::analyze`]): a network's player (`nn:`) its network from `models` with
    /// [`Preset::Network`]; `uniform:` the [`UniformEvaluator`] with [`Preset::Rollout`]; every
    /// other player (`mcts:`, and `random`, `greedy` and `cmd:`, which do not search here)
    /// random playouts seeded by `seed` ([`RolloutEvaluator`], one per leaf) with
    /// [`Preset::Rollout`], as `mcts:` searches. A Gumbel root (`gumbel=K`) is not analysed as
    /// such: an analysis reports every legal action's visits, which a PUCT root spreads by the
    /// priors and a Gumbel root gives to its K candidates only, so the analysis searches with the
    /// player's PUCT root. An error names a network missing from `models`.
    pub fn analyzer(&self, seed: u64, models: &Models) -> Result<Analyzer, SpecError> {
        let (evaluator, preset): (Arc<dyn Evaluator>, Preset) = match self {
            PlayerSpec::Neural { .. } => (
                self.network_evaluator(models)?.expect("a neural player's network"),
                Preset::Network,
            ),
            PlayerSpec::Uniform(_) => (Arc::new(UniformEvaluator), Preset::Rollout),
            PlayerSpec::Timed { spec, .. } => return spec.analyzer(seed, models),
            PlayerSpec::Random
            | PlayerSpec::Greedy
            | PlayerSpec::Mcts(_)
            | PlayerSpec::AlphaBeta(_)
            | PlayerSpec::Command(_) => {
                (Arc::new(RolloutEvaluator { rollouts: 1, seed }), Preset::Rollout)
            }
        };
        Ok(Analyzer { evaluator, config: preset.config() })
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerSpec::Random => write!(f, "random"),
            PlayerSpec::Greedy => write!(f, "greedy"),
            PlayerSpec::Mcts(n) => write!(f, "mcts:{n}"),
            PlayerSpec::Uniform(n) => write!(f, "uniform:{n}"),
            PlayerSpec::Neural { model, simulations, precision, gumbel } => {
                write!(f, "nn:{model}:{simulations}")?;
                if let Some(p) = precision {
                    write!(f, ":{p}")?;
                }
                match gumbel {
                    Some(k) => write!(f, ":gumbel={k}"),
                    None => Ok(()),
                }
            }
            PlayerSpec::Command(words) => write!(f, "cmd:{}", command::join_words(words)),
            PlayerSpec::AlphaBeta(None) => write!(f, "alphabeta"),
            PlayerSpec::AlphaBeta(Some(d)) => write!(f, "alphabeta:{d}"),
            PlayerSpec::Timed { spec, time } => write!(f, "{spec}:time={}", time.as_secs_f64()),
        }
    }
}

impl FromStr for PlayerSpec {
    type Err = SpecError;

    fn from_str(spec: &str) -> Result<PlayerSpec, SpecError> {
        let spec = spec.trim();
        // A searching player's own time per move: SPEC:time=SECONDS (not inside a program's
        // words).
        let is_cmd = spec.get(..4).is_some_and(|k| k.eq_ignore_ascii_case("cmd:"));
        if let Some((inner, tail)) = spec.rsplit_once(':') {
            let tail = tail.trim();
            let is_time = tail.get(..5).is_some_and(|k| k.eq_ignore_ascii_case("time="));
            if is_time && !is_cmd {
                let bad = |reason: String| SpecError::Time { player: spec.to_string(), reason };
                let seconds = tail[5..]
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| bad(format!("'{}' is not a number of seconds", &tail[5..])))?;
                let time = check_move_time(seconds).map_err(bad)?;
                let inner: PlayerSpec = inner.parse()?;
                return match inner {
                    PlayerSpec::Timed { .. } => Err(bad("one time per move at most".into())),
                    _ if !inner.searches() => {
                        Err(bad(format!("{inner} does not search, so it takes no time per move")))
                    }
                    _ => Ok(PlayerSpec::Timed { spec: Box::new(inner), time }),
                };
            }
        }
        let (kind, arg) = match spec.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (spec, None),
        };
        let sims = |arg: Option<&str>, default: u32| -> Result<u32, SpecError> {
            match arg {
                None => Ok(default),
                Some(a) => match a.trim().parse::<u32>() {
                    Ok(n) if (1..=MAX_SIMULATIONS).contains(&n) => Ok(n),
                    _ => Err(SpecError::Simulations(spec.to_string())),
                },
            }
        };
        match (kind.to_ascii_lowercase().as_str(), arg) {
            ("cmd", Some(rest)) => {
                let bad = |reason: &str| SpecError::BadCommand {
                    player: spec.to_string(),
                    reason: reason.to_string(),
                };
                let words = command::split_words(rest).map_err(bad)?;
                if words.first().is_none_or(|w| w.is_empty()) {
                    return Err(bad("name a program"));
                }
                Ok(PlayerSpec::Command(words))
            }
            ("cmd", None) => Err(SpecError::BadCommand {
                player: spec.to_string(),
                reason: "name a program".into(),
            }),
            ("random", None) => Ok(PlayerSpec::Random),
            ("greedy", None) => Ok(PlayerSpec::Greedy),
            ("mcts", a) => Ok(PlayerSpec::Mcts(sims(a, DEFAULT_SIMULATIONS)?)),
            ("uniform", a) => Ok(PlayerSpec::Uniform(sims(a, DEFAULT_SIMULATIONS)?)),
            ("alphabeta", None) => Ok(PlayerSpec::AlphaBeta(None)),
            ("alphabeta", Some(d)) => match d.trim().parse::<u32>() {
                Ok(d) if (1..=MAX_DEPTH).contains(&d) => Ok(PlayerSpec::AlphaBeta(Some(d))),
                _ => Err(SpecError::Depth(spec.to_string())),
            },
            ("nn", Some(rest)) => {
                // nn:MODEL[:SIMS][:PRECISION][:gumbel=K] (a model path may itself hold colons).
                let (rest, gumbel) = match rest.rsplit_once(':') {
                    Some((m, g))
                        if g.get(..7).is_some_and(|k| k.eq_ignore_ascii_case("gumbel=")) =>
                    {
                        match g[7..].trim().parse::<u32>() {
                            Ok(k) if (2..=MAX_GUMBEL_ACTIONS).contains(&k) => (m, Some(k)),
                            _ => return Err(SpecError::Gumbel(spec.to_string())),
                        }
                    }
                    _ => (rest, None),
                };
                let (rest, precision) = match rest.rsplit_once(':') {
                    Some((m, p)) => match p.parse::<Precision>() {
                        Ok(p) => (m, Some(p)),
                        Err(_) => (rest, None),
                    },
                    None => (rest, None),
                };
                let (model, n) = match rest.rsplit_once(':') {
                    Some((m, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                        (m, sims(Some(n), DEFAULT_NEURAL_SIMULATIONS)?)
                    }
                    _ => (rest, DEFAULT_NEURAL_SIMULATIONS),
                };
                if model.trim().is_empty() {
                    return Err(SpecError::NoModel(spec.to_string()));
                }
                Ok(PlayerSpec::Neural {
                    model: model.trim().to_string(),
                    simulations: n,
                    precision,
                    gumbel,
                })
            }
            _ => Err(SpecError::Unknown(spec.to_string())),
        }
    }
}

/// A fresh non-neural player from its text spec (seed 0); see [`PlayerSpec`].
pub fn parse_player(spec: &str) -> Result<Box<dyn Player>, SpecError> {
    spec.parse::<PlayerSpec>()?.build(0, &Models::new())
}
