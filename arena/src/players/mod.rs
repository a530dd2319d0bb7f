//! Bots that pick single actions: baselines for matches and evaluation.
//!
//! The words: a [`Bot`] chooses actions; a player is one of a match's two sides, played by the
//! bot its [`PlayerSpec`] names; the side to move is a [`zertz_env::Player`] (`P0`, `P1`).
//!
//! - [`RandomBot`]: a uniformly random legal action.
//! - [`GreedyBot`]: the whole-turn move that gains the most towards a win set, minus the best
//!   gain it leaves the opponent one ply later; capture chains are played hop by hop as planned.
//! - [`MctsBot`]: [`search`](zertz_search::mcts::search) with any [`Evaluator`] and a fixed number of simulations per
//!   decision, no root noise, the most visited action, tree reuse between decisions.
//! - [`AlphaBetaBot`]: the classic alpha-beta searcher ([`zertz_search::alphabeta`]) to a
//!   fixed depth or for a time per move.
//!
//! [`PlayerSpec`] names them in text (`random`, `greedy`, `mcts:1000`, `uniform:800`,
//! `nn:MODEL:400`, `alphabeta`, `alphabeta:3`, and `cmd:PROGRAM ARGS` for another program that
//! speaks the engine protocol, [`command`]) for the command line and [`crate::matches`].
//! A searching player's spec may end with its own time per move, `:time=SECONDS`
//! (`alphabeta:time=0.5`, `mcts:time=2`, `nn:MODEL:time=1`): it then searches until that time is
//! spent ([`Bot::set_move_time`]).
//!
//! ```
//! use zertz_env::{Player, Position, Variant};
//! use zertz_arena::players::{parse_player, Bot};
//! let pos = Position::new(Variant::default(), Player::P0);
//! let mut greedy = parse_player("greedy").unwrap();
//! let a = greedy.choose(&pos).unwrap();
//! assert!(pos.is_legal_action(&a));
//! assert!(parse_player("alphazero").is_err());
//! ```

mod alphabeta;
pub mod command;
mod greedy;
mod mcts;
mod random;
mod spec;
mod timed;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use zertz_settings::{Kind, Range};

use zertz_env::{Action, Move, Outcome, Position};

use zertz_search::alphabeta::MAX_DEPTH;
use zertz_search::config::MAX_GUMBEL_ACTIONS;
use zertz_search::evaluator::EvalError;
#[cfg(doc)]
use zertz_search::evaluator::Evaluator;
use zertz_search::mcts::Tree;

pub use alphabeta::AlphaBetaBot;
pub use command::CommandBot;
pub(crate) use greedy::ChainPlan;
pub use greedy::GreedyBot;
pub use mcts::{GUMBEL_PLAN_HEADROOM, LEAVES_PER_SEARCH_THREAD, MctsBot, gumbel_plan};
pub use random::RandomBot;
pub use spec::{
    DEFAULT_ALPHABETA_TIME, DEFAULT_NEURAL_SIMULATIONS, DEFAULT_SIMULATIONS, ModelKey, Models,
    PlayerSpec, parse_player,
};

/// Why a player could not choose an action. The message names the player (for a network's
/// player, `nn:MODEL:SIMS`, so the model file).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BotError {
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

impl BotError {
    fn no_legal_action(player: &str, pos: &Position) -> BotError {
        BotError::NoLegalAction { player: player.to_string(), position: pos.to_text() }
    }
}

/// The grammar of a player spec, in words: the one text of it that errors, the program's help and
/// Python (`zertz.PLAYER_SPECS`) show.
pub const SPEC_GRAMMAR: &str = "random, greedy, mcts:SIMS (rollout MCTS), uniform:SIMS, \
     nn:MODEL[:SIMS][:PRECISION][:gumbel=K] (an exported network; nn:builtin, the built-in one), \
     alphabeta[:DEPTH] or cmd:PROGRAM ARGS (a program that speaks the engine protocol); a \
     searching player may end with :time=SECONDS";

/// A player spec that cannot be read, or a player that cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Not one of the kinds of player.
    #[error("unknown player '{0}': expected {SPEC_GRAMMAR}")]
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
    /// A part of a spec that belongs nowhere: a `:time=` before the end, or a word after a
    /// network's model that is no simulation count, precision or `gumbel=K`.
    #[error("bad player '{player}': '{part}' {reason}")]
    Part {
        /// The spec.
        player: String,
        /// The part.
        part: String,
        /// What is wrong with it.
        reason: String,
    },
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
/// `nn:MODEL:SIMS`): the search's.
pub use zertz_search::mcts::MAX_SIMULATIONS;

/// The shortest time per move: a searcher asked for less would answer before it started.
pub const MIN_MOVE_TIME: Duration = Duration::from_millis(1);
/// The longest time per move: an hour.
pub const MAX_MOVE_TIME: Duration = Duration::from_secs(3600);

/// The times per move a player takes, in seconds: [`MIN_MOVE_TIME`] to [`MAX_MOVE_TIME`].
pub const MOVE_TIME: Range =
    Range::between(MIN_MOVE_TIME.as_secs_f64(), MAX_MOVE_TIME.as_secs_f64());

/// A time per move in seconds (`--move-time`, `:time=`), checked against [`MOVE_TIME`].
pub fn check_move_time(seconds: f64) -> Result<Duration, String> {
    match MOVE_TIME.check(seconds, Kind::Seconds) {
        Ok(()) => Ok(Duration::from_secs_f64(seconds)),
        Err(reason) => Err(format!("the time per move {reason}, not {seconds}")),
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
pub trait Bot: Send {
    /// A short name for reports, such as `greedy` or `mcts:1000`.
    fn name(&self) -> &str;

    /// A legal action in `pos`, whose game is not over and where this player is to move; an error
    /// when the player cannot choose (its evaluator failed, or `pos` has no legal action).
    fn choose(&mut self, pos: &Position) -> Result<Action, BotError>;

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

    /// Ends every search of this player soon after `stop` is set (a match stopped by Ctrl-C or
    /// SIGTERM, an engine whose reader has gone): the search answers with what it found by then
    /// (alpha-beta its last whole iteration, MCTS the simulations it ran). Players that do not
    /// search here ignore it (a `cmd:` player's program is ended through its [`ProgramLimits`]).
    ///
    /// [`ProgramLimits`]: command::ProgramLimits
    fn set_stop(&mut self, stop: Arc<AtomicBool>) {
        let _ = stop;
    }

    /// Searches with `threads` threads, the calling one included ([`search_threads`]: each
    /// evaluates rounds of its own while the others work on the tree), from the next decision
    /// on. Players that do not search with an evaluator here ignore it.
    ///
    /// [`search_threads`]: zertz_search::mcts::search_threads
    fn set_search_threads(&mut self, threads: usize) {
        let _ = threads;
    }

    /// CPU time spent for this player so far outside the thread that calls [`Bot::choose`]: its
    /// search threads, or its program's process (a `cmd:` player). A match adds it to the
    /// calling thread's own to give each side's CPU seconds per move.
    fn cpu_elsewhere(&self) -> Duration {
        Duration::ZERO
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
