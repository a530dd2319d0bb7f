//! AlphaZero-style PUCT search over single actions, batched across many trees.
//!
//! A capture chain is a sequence of decisions of the same player, so values are kept from the
//! perspective of the player to move at each node and are negated only where the player changes
//! (never below a hop that continues a chain). Terminal positions are scored exactly.
//!
//! Each tree is a flat arena of nodes and edges. The edges of a node are sorted by prior, so the
//! visited children are always a prefix and the best unvisited child is the next edge: selection
//! costs the number of visited children, not the number of legal actions (often 1000+). Below
//! the root, a node sorts its best 16 edges when it is expanded and more (twice as many) only
//! when those are all visited, so an expansion costs a pass over the legal actions rather than a
//! sort of them; the children visited are those of a full sort.
//!
//! [`search`] runs rounds: it collects up to `leaves_per_round` leaves from every tree (virtual
//! loss keeps them apart), evaluates all of them in one [`Evaluator`] call, then expands and backs
//! them up.
//!
//! A forced position below the root (one legal action) is not evaluated: a simulation passes
//! through it, so a line of compulsory captures is followed to its end at the price of one
//! evaluation.
//!
//! Decided positions are exact (an MCTS-solver): a finished game is proven won, lost or drawn for
//! its player to move, and a node is proven once one of its children is a proven win for its
//! player to move, or all of its children are proven (its value is then their best). A proven node
//! is never evaluated again: a simulation that reaches it backs up its exact value. Selection
//! never walks into a child proven lost for the chooser, and uses the exact value of a proven
//! draw. A tree whose root is proven takes no more simulations. Players and self-play choose among
//! [`Tree::root_candidates`]: a proven win when there is one, never a proven loss that can be
//! avoided.
//!
//! A Gumbel root ([`SearchConfig::gumbel_actions`]; Danihelka et al., ICLR 2022, as mctx's
//! `gumbel_muzero_policy`) replaces PUCT at the root: the search considers the actions with the
//! highest Gumbel draw plus log prior ([`Tree::set_gumbel_seed`]; without a seed the draws are
//! 0, a deterministic search), narrows them by sequential halving over its simulations, and
//! chooses ([`Tree::gumbel_action`]) the survivor with the highest draw plus log prior plus
//! `sigma(q)`. Its policy target ([`Tree::policy`]) is the improved policy
//! `softmax(log prior + sigma(completed q))`, where an unvisited action's q is the mixed value of
//! the root. Below the root the search is PUCT.
//!
//! A tree has a memory budget ([`Tree::max_bytes`], [`DEFAULT_MAX_TREE_BYTES`] unless set): its
//! nodes and edges ([`Tree::bytes`]) never pass it. A search adds no simulation to a tree that
//! has reached it ([`Tree::is_full`]); the tree stays consistent and its root visits say how many
//! simulations it holds.

mod gumbel;
mod noise;
mod parallel;
mod root;
mod tree;

pub use gumbel::considered_visits;
pub use noise::Noise;
pub use parallel::{MAX_SEARCH_THREADS, TurnOrder, search_threads};
pub use root::{ChildStats, RootInfo};
pub use tree::Tree;

use std::time::Duration;
use zertz_env::encode::{GLOBALS, Shape};

use zertz_env::{ActionSpace, Board, Position};

use crate::config::SearchConfig;
use crate::evaluator::{Batch, EvalError, Evaluated, Evaluator, encode_batch};
use crate::priors::Edge;

use tree::{Node, State};

/// A node's [`Node::proof`] while its value is not known exactly.
const UNPROVEN: i8 = i8::MIN;

/// The memory budget of a tree unless one is set ([`Tree::with_max_bytes`]): 1 GiB of nodes and
/// edges. An expanded node keeps an 8-byte edge per legal action (about 4,400 at the 61-ring
/// start), so the budget holds about 70,000 simulations of rollout MCTS from the 61-ring start
/// (40,000 with uniform priors, which spread wider), 225,000 from the 37-ring start, and more
/// later in a game; a search of a few thousand simulations stays far below it.
pub const DEFAULT_MAX_TREE_BYTES: usize = 1 << 30;

/// The largest memory budget that can be named (`zertz engine --tree-mib`, say): 1 TiB, past
/// any machine's memory.
pub const MAX_TREE_BYTES: usize = 1 << 40;

/// Most simulations of one search (a player's decision, an analysis, `zertz.MCTS.search`): a
/// search keeps a few nodes per simulation, so a larger count only runs out of memory.
pub const MAX_SIMULATIONS: u32 = 1 << 20;

/// Bytes of a node in the arena.
const NODE_BYTES: usize = std::mem::size_of::<Node>();
/// Bytes of an edge in the arena.
const EDGE_BYTES: usize = std::mem::size_of::<Edge>();

/// Reusable buffers of [`search`].
#[derive(Debug, Default)]
pub struct Scratch {
    requests: Vec<(u32, u32)>,
    positions: Vec<Position>,
    planes: Vec<f32>,
    globals: Vec<f32>,
    masks: Vec<bool>,
    /// The evaluator's answers: values and priors.
    answers: Evaluated,
    /// Evaluator calls and positions evaluated, for statistics.
    pub batches: u64,
    /// Positions evaluated.
    pub evaluated: u64,
    /// CPU time of the threads [`search_threads`] started with this scratch (its helpers).
    pub cpu: Duration,
}

/// Runs `simulations[i]` more simulations in `trees[i]` for every tree, evaluating the leaves of
/// all trees together. All trees must be of one board.
pub fn search(
    trees: &mut [Tree],
    simulations: &[u32],
    config: &SearchConfig,
    evaluator: &dyn Evaluator,
    scratch: &mut Scratch,
) -> Result<(), EvalError> {
    search_interruptible(trees, simulations, config, evaluator, scratch, &mut || false).map(|_| ())
}

/// How a [`search_interruptible`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finished {
    /// Every tree has its simulations, or as many as its memory budget holds
    /// ([`Tree::is_full`]; its root visits say how many it has).
    Done,
    /// `interrupted` said stop; the trees hold the simulations of the rounds before, and are
    /// consistent (no leaf waits, no virtual loss is left), so a later search goes on from them.
    Interrupted,
}

/// [`search`] that asks `interrupted` after every round of evaluations (a Ctrl-C, a deadline, a
/// stop flag) and stops when it says so.
///
/// A tree that reaches its memory budget ([`Tree::max_bytes`]) takes no more simulations in this
/// search: it stays consistent, with fewer simulations than asked (its root visits count them).
pub fn search_interruptible(
    trees: &mut [Tree],
    simulations: &[u32],
    config: &SearchConfig,
    evaluator: &dyn Evaluator,
    scratch: &mut Scratch,
    interrupted: &mut dyn FnMut() -> bool,
) -> Result<Finished, EvalError> {
    assert_eq!(trees.len(), simulations.len(), "one simulation count per tree");
    let Some(board) = trees.first().map(|t| t.position().board()) else {
        return Ok(Finished::Done);
    };
    let targets: Vec<u32> =
        trees.iter().zip(simulations).map(|(t, &s)| t.root_visits() + s).collect();
    for tree in trees.iter_mut() {
        // A Gumbel root starts again with each search (once its root is expanded, below).
        tree.gumbel = None;
    }
    let leaves = config.leaves_per_round.max(1) as usize;
    loop {
        scratch.requests.clear();
        let mut busy = false;
        for (ti, tree) in trees.iter_mut().enumerate() {
            assert_eq!(tree.position().board(), board, "all trees must be of one board");
            busy |= tree.select_round(ti as u32, targets[ti], leaves, 0, config, scratch);
        }
        if scratch.requests.is_empty() {
            if busy {
                continue; // only terminal leaves this round
            }
            return Ok(Finished::Done);
        }
        let evaluated = evaluate_round(trees, board, config, evaluator, scratch);
        if let Err(e) = evaluated {
            // Leave the trees as they were: the leaves wait for nothing, the virtual losses go.
            abandon_round(trees, &scratch.requests, config);
            return Err(e);
        }
        expand_round(trees, config, scratch);
        if interrupted() {
            return Ok(Finished::Interrupted);
        }
    }
}

/// Evaluates the leaves of `scratch.requests` (their positions copied, and encoded when the
/// evaluator wants it): their values and priors are in `scratch.answers` after.
fn evaluate_round(
    trees: &[Tree],
    board: Board,
    config: &SearchConfig,
    evaluator: &dyn Evaluator,
    scratch: &mut Scratch,
) -> Result<(), EvalError> {
    copy_positions(trees, scratch);
    evaluate_positions(board, config, evaluator, scratch)
}

/// Copies the positions of the leaves of `scratch.requests` into `scratch.positions`, to be
/// evaluated.
fn copy_positions(trees: &[Tree], scratch: &mut Scratch) {
    scratch.positions.clear();
    scratch.positions.extend(
        scratch.requests.iter().map(|&(t, n)| trees[t as usize].nodes[n as usize].position),
    );
}

/// Evaluates `scratch.positions` (encoded first when the evaluator wants it): their values and
/// priors are in `scratch.answers` after, checked.
fn evaluate_positions(
    board: Board,
    config: &SearchConfig,
    evaluator: &dyn Evaluator,
    scratch: &mut Scratch,
) -> Result<(), EvalError> {
    let b = scratch.positions.len();
    let wants = evaluator.wants_encoding();
    if wants {
        let Scratch { positions, planes, globals, masks, .. } = &mut *scratch;
        encode_batch(board, positions, planes, globals, masks);
    }
    let (shape, actions) = (Shape::of(board), ActionSpace::new(board).len());
    let batch = Batch {
        board,
        positions: &scratch.positions,
        planes: if wants { &scratch.planes[..b * shape.planes_len()] } else { &[] },
        globals: if wants { &scratch.globals[..b * GLOBALS] } else { &[] },
        masks: if wants { &scratch.masks[..b * actions] } else { &[] },
    };
    let answers = &mut scratch.answers;
    evaluator
        .evaluate_priors(&batch, config.policy_temperature, answers)
        .and_then(|()| check_answers(answers, b))
}

/// Expands each leaf of `scratch.requests` with its answers and backs up its value.
fn expand_round(trees: &mut [Tree], config: &SearchConfig, scratch: &mut Scratch) {
    let answers = &scratch.answers;
    for (i, &(t, n)) in scratch.requests.iter().enumerate() {
        let tree = &mut trees[t as usize];
        let (edges, sorted) = answers.priors.get(i);
        tree.expand(n, edges, sorted);
        let v = answers.values[i].clamp(-1.0, 1.0);
        tree.nodes[n as usize].raw = v;
        tree.backup(n, v, config);
    }
    scratch.batches += 1;
    scratch.evaluated += scratch.requests.len() as u64;
}

/// Takes the leaves of `requests` back: they wait for nothing, their virtual losses go.
fn abandon_round(trees: &mut [Tree], requests: &[(u32, u32)], config: &SearchConfig) {
    for &(t, n) in requests {
        let tree = &mut trees[t as usize];
        tree.nodes[n as usize].state = State::New;
        tree.undo_virtual(n, config);
    }
}

impl Tree {
    /// Selects the leaves of one round of the tree `index` of a search: up to `leaves` of them
    /// (fewer when the tree reaches `target` root visits, is proven, or nears its memory budget
    /// with `reserved` bytes of other leaves waiting), pushed on `scratch.requests`; whether any
    /// simulation was started (a proven leaf's is backed up at once). A Gumbel root begins its
    /// schedule here once the root is expanded.
    #[inline]
    fn select_round(
        &mut self,
        index: u32,
        target: u32,
        leaves: usize,
        reserved: usize,
        config: &SearchConfig,
        scratch: &mut Scratch,
    ) -> bool {
        // A proven root (a finished game included) needs no more search.
        if self.root_proven() {
            return false;
        }
        if config.gumbel_actions > 0
            && self.gumbel.is_none()
            && self.nodes[self.root as usize].state == State::Expanded
        {
            let left = target.saturating_sub(self.root_visits());
            self.begin_gumbel(left, config);
        }
        // Far from the budget the round cannot pass it, even if every leaf added the most it
        // could: no check per leaf.
        let most = leaves.saturating_sub(1).saturating_mul(self.leaf_bytes());
        if self.over_budget(most.saturating_add(reserved)) {
            return self.select_near_budget(index, target, leaves, reserved, config, scratch);
        }
        let mut busy = false;
        for _ in 0..leaves {
            // (A root proven in this round needs no more.)
            if self.root_visits() >= target || self.root_proven() {
                break;
            }
            // `select_near_budget`'s loop without its count, written out: the usual round
            // stays as lean as before the budget (BENCHMARKS.md, "Simulations per second in Rust").
            busy = true;
            let Some(leaf) = self.select(config) else { break };
            let node = &mut self.nodes[leaf as usize];
            if node.proof != UNPROVEN {
                self.backup_proven(leaf, config);
            } else {
                node.state = State::Pending;
                scratch.requests.push((index, leaf));
            }
        }
        busy
    }

    /// The leaves of one round of a search for a tree near its budget: as many of `leaves` as
    /// the budget holds with `reserved` bytes of other leaves waiting, each counted as the edges
    /// it will have, for the tree `index` of the search; whether any simulation was started.
    /// Apart from the usual round so that the usual one stays as lean as it was.
    #[cold]
    #[inline(never)]
    fn select_near_budget(
        &mut self,
        index: u32,
        target: u32,
        leaves: usize,
        mut reserved: usize,
        config: &SearchConfig,
        scratch: &mut Scratch,
    ) -> bool {
        let mut busy = false;
        for _ in 0..leaves {
            if self.root_visits() >= target || self.root_proven() || self.over_budget(reserved) {
                break;
            }
            busy = true;
            let Some(leaf) = self.select(config) else { break };
            let node = &mut self.nodes[leaf as usize];
            if node.proof != UNPROVEN {
                self.backup_proven(leaf, config);
            } else {
                node.state = State::Pending;
                reserved += node.position.count_legal_actions() * EDGE_BYTES;
                scratch.requests.push((index, leaf));
            }
        }
        busy
    }
}

/// Refuses an evaluator's answers to a batch of `b` positions that are not all there (a value
/// and priors for each position) or not numbers (a NaN or infinite value; the logits were checked
/// as the priors were made from them).
fn check_answers(answers: &Evaluated, b: usize) -> Result<(), EvalError> {
    if answers.values.len() != b || answers.priors.len() != b {
        return Err(EvalError(format!(
            "the evaluator answered {} values and {} priors for {b} positions",
            answers.values.len(),
            answers.priors.len()
        )));
    }
    if let Some(i) = answers.values.iter().position(|v| !v.is_finite()) {
        return Err(EvalError(format!(
            "the value of position {i} of the batch is {}, not a finite number",
            answers.values[i]
        )));
    }
    Ok(())
}
