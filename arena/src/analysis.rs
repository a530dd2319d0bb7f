//! Analysis of one position: a search from scratch and what it found for every legal action at
//! the root, for the engine protocol's `analyze` ([`crate::protocol`]) and for programs that show
//! an engine's thoughts (a web board).
//!
//! [`analyze`] takes any [`Evaluator`] and [`SearchConfig`];
//! [`PlayerSpec::analyzer`](crate::PlayerSpec::analyzer) gives the pair a player spec searches
//! with (a network's player its network, the others a built-in evaluator), as an [`Analyzer`].
//!
//! ```
//! use zertz_arena::analysis::analyze;
//! use zertz_env::{Player, Position, Variant};
//! use zertz_search::{Preset, UniformEvaluator};
//! let pos = Position::new(Variant::default(), Player::P0);
//! let analysis = analyze(&UniformEvaluator, &Preset::Rollout.config(), &pos, 50).unwrap();
//! assert_eq!(analysis.simulations, 50);
//! assert_eq!(analysis.moves.len(), 1944); // every legal action of the opening
//! assert_eq!(analysis.moves.iter().map(|m| m.visits).sum::<u32>(), 49); // the root's own visit
//! assert_eq!(analysis.moves[0].notation, pos.action_to_string(&analysis.moves[0].action));
//! ```

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use zertz_env::{Action, Position};
use zertz_search::mcts::{DEFAULT_MAX_TREE_BYTES, Scratch, Tree, TurnOrder, search_threads};
use zertz_search::{EvalError, Evaluator, SearchConfig};

use zertz_search::mcts::MAX_SIMULATIONS;

/// What a search of one position found ([`analyze`]). Serialized (JSON, say) with its fields as
/// named, each move's action as its notation only.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Analysis {
    /// The value of the position from the perspective of its player to move, `-1..=1` (-1 a
    /// loss, 1 a win): the mean of every simulation's value, or the exact value once proven. A
    /// finished game's exact score.
    pub value: f32,
    /// The exact value for the player to move once the search proved it (1 a win, 0 a draw, -1
    /// a loss; a finished game's score), else `None`.
    pub proven: Option<i8>,
    /// Simulations run (0 for a finished game): those asked, or fewer when the search tree
    /// reached its memory budget or proved the position's value (no more search is needed).
    pub simulations: u32,
    /// Every legal single action of the position (a placement, one hop of a capture chain, or a
    /// pass; none in a finished game): proven wins first, then the others most visited first,
    /// proven losses last; ties by prior (highest first), then in the search's own order.
    pub moves: Vec<MoveStats>,
}

/// One legal action of an analysed position: what the search thought of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MoveStats {
    /// The single action (not serialized: `notation` says the same).
    #[serde(skip)]
    pub action: Action,
    /// The action in notation (`Wd4,a1`, `b4xd6`, `pass`): one hop of a chain, not the whole
    /// chain.
    pub notation: String,
    /// Simulations through it.
    pub visits: u32,
    /// Its prior in the search: the evaluator's policy (softmax at the config's policy
    /// temperature), to three significant digits.
    pub prior: f32,
    /// Its mean value from the perspective of the position's player to move, `-1..=1`; 0 when
    /// it was never visited.
    pub value: f32,
    /// Its exact value for the position's player to move once proven (1 a win, 0 a draw, -1 a
    /// loss), else `None`.
    pub proven: Option<i8>,
}

/// Searches `pos` with `simulations` simulations (at most [`MAX_SIMULATIONS`]; fewer are run
/// when more are asked) in a fresh tree of at most [`DEFAULT_MAX_TREE_BYTES`], guided by
/// `evaluator` with `config`, without root noise, and reports the root: its value and every legal
/// action's visits, prior and value. A search that fills the tree's memory budget stops there:
/// [`Analysis::simulations`] says how many it ran.
///
/// A finished game is not searched: its value is the exact score of its player to move, with no
/// moves. An error is the evaluator's (a network that fails or answers NaN).
pub fn analyze(
    evaluator: &dyn Evaluator,
    config: &SearchConfig,
    pos: &Position,
    simulations: u32,
) -> Result<Analysis, EvalError> {
    analyze_within(evaluator, config, pos, simulations, DEFAULT_MAX_TREE_BYTES)
}

/// [`analyze`] in a tree of at most `max_tree_bytes` bytes ([`Tree::with_max_bytes`]).
pub fn analyze_within(
    evaluator: &dyn Evaluator,
    config: &SearchConfig,
    pos: &Position,
    simulations: u32,
    max_tree_bytes: usize,
) -> Result<Analysis, EvalError> {
    analyze_until(evaluator, config, pos, simulations, max_tree_bytes, &mut || false)
}

/// [`analyze_within`] that asks `stop` between simulations and reports the simulations run
/// when it says so.
pub fn analyze_until(
    evaluator: &dyn Evaluator,
    config: &SearchConfig,
    pos: &Position,
    simulations: u32,
    max_tree_bytes: usize,
    stop: &mut dyn FnMut() -> bool,
) -> Result<Analysis, EvalError> {
    analyze_on(evaluator, config, pos, simulations, max_tree_bytes, 1, stop)
}

/// [`analyze_until`] on `threads` search threads ([`search_threads`]).
fn analyze_on(
    evaluator: &dyn Evaluator,
    config: &SearchConfig,
    pos: &Position,
    simulations: u32,
    max_tree_bytes: usize,
    threads: usize,
    stop: &mut dyn FnMut() -> bool,
) -> Result<Analysis, EvalError> {
    if let Some(outcome) = pos.outcome() {
        let value = f32::from(outcome.score(pos.turn()));
        let proven = Some(outcome.score(pos.turn()));
        return Ok(Analysis { value, proven, simulations: 0, moves: Vec::new() });
    }
    let mut tree = Tree::with_max_bytes(*pos, max_tree_bytes);
    let simulations = simulations.min(MAX_SIMULATIONS);
    let mut scratches: Vec<Scratch> = (0..threads.max(1)).map(|_| Scratch::default()).collect();
    let order = TurnOrder::Fixed;
    search_threads(&mut tree, simulations, config, evaluator, &mut scratches, order, stop)?;
    let info = tree.root_info();
    let mut moves: Vec<MoveStats> = tree
        .root_children()
        .into_iter()
        .map(|c| MoveStats {
            action: c.action,
            notation: pos.action_to_string(&c.action),
            visits: c.visits,
            prior: c.prior,
            value: c.value,
            proven: c.proven,
        })
        .collect();
    // Stable: ties keep the tree's order (by prior, then by action).
    let rank = |m: &MoveStats| match m.proven {
        Some(1) => 0,
        Some(-1) => 2,
        _ => 1,
    };
    moves.sort_by(|a, b| {
        rank(a).cmp(&rank(b)).then(b.visits.cmp(&a.visits)).then(b.prior.total_cmp(&a.prior))
    });
    Ok(Analysis { value: info.value, proven: info.proven, simulations: info.total, moves })
}

/// An evaluator with the search settings to use it with: what [`analyze`] needs. A player spec
/// gives its own ([`PlayerSpec::analyzer`](crate::PlayerSpec::analyzer)).
#[derive(Clone)]
pub struct Analyzer {
    /// Guides the search.
    pub evaluator: Arc<dyn Evaluator>,
    /// The search settings.
    pub config: SearchConfig,
    /// The threads each search runs on ([`search_threads`]).
    pub threads: usize,
}

impl fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Analyzer")
            .field("config", &self.config)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl Analyzer {
    /// [`analyze`] with this evaluator and these settings.
    pub fn analyze(&self, pos: &Position, simulations: u32) -> Result<Analysis, EvalError> {
        self.analyze_within(pos, simulations, DEFAULT_MAX_TREE_BYTES)
    }

    /// [`analyze_within`] with this evaluator and these settings: a tree of at most
    /// `max_tree_bytes`.
    pub fn analyze_within(
        &self,
        pos: &Position,
        simulations: u32,
        max_tree_bytes: usize,
    ) -> Result<Analysis, EvalError> {
        self.analyze_until(pos, simulations, max_tree_bytes, &mut || false)
    }

    /// [`analyze_until`] with this evaluator and these settings.
    pub fn analyze_until(
        &self,
        pos: &Position,
        simulations: u32,
        max_tree_bytes: usize,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<Analysis, EvalError> {
        let (evaluator, config) = (self.evaluator.as_ref(), &self.config);
        analyze_on(evaluator, config, pos, simulations, max_tree_bytes, self.threads, stop)
    }
}
