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
mod root;
mod tree;

pub use gumbel::considered_visits;
pub use noise::Noise;
pub use root::{ChildStats, RootInfo};
pub use tree::Tree;

use zertz_env::encode::{GLOBALS, Shape};
use zertz_env::{ActionSpace, Position};

use crate::config::SearchConfig;
use crate::evaluator::{Batch, EvalError, Evaluator, Output, encode_batch};

use tree::{Edge, Node, State};

const NONE: u32 = u32::MAX;

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
    logits: Vec<f32>,
    values: Vec<f32>,
    /// Evaluator calls and positions evaluated, for statistics.
    pub batches: u64,
    /// Positions evaluated.
    pub evaluated: u64,
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
    let space = ActionSpace::new(board);
    let shape = Shape::of(board);
    let gumbel = config.gumbel_actions > 0;
    for tree in trees.iter_mut() {
        // A Gumbel root starts again with each search (once its root is expanded, below).
        tree.gumbel = None;
    }
    loop {
        scratch.requests.clear();
        let mut busy = false;
        for (ti, tree) in trees.iter_mut().enumerate() {
            assert_eq!(tree.position().board(), board, "all trees must be of one board");
            // A proven root (a finished game included) needs no more search.
            if tree.root_proven() {
                continue;
            }
            if gumbel
                && tree.gumbel.is_none()
                && tree.nodes[tree.root as usize].state == State::Expanded
            {
                let left = targets[ti].saturating_sub(tree.root_visits());
                tree.begin_gumbel(left, config);
            }
            let leaves = config.leaves_per_round.max(1) as usize;
            let target = targets[ti];
            // Far from the budget the round cannot pass it, even if every leaf added the most it
            // could: no check per leaf.
            if tree.over_budget(leaves.saturating_sub(1).saturating_mul(tree.leaf_bytes())) {
                busy |= tree.select_near_budget(ti as u32, target, leaves, config, scratch);
                continue;
            }
            for _ in 0..leaves {
                // (A root proven in this round needs no more.)
                if tree.root_visits() >= target || tree.root_proven() {
                    break;
                }
                // `select_near_budget`'s loop without its count, written out: the usual round
                // stays as lean as before the budget (BENCHMARKS.md, issue 25).
                busy = true;
                let Some(leaf) = tree.select(config) else { break };
                let node = &mut tree.nodes[leaf as usize];
                if node.proof != UNPROVEN {
                    tree.backup_proven(leaf, config);
                } else {
                    node.state = State::Pending;
                    scratch.requests.push((ti as u32, leaf));
                }
            }
        }
        if scratch.requests.is_empty() {
            if busy {
                continue; // only terminal leaves this round
            }
            return Ok(Finished::Done);
        }
        let b = scratch.requests.len();
        scratch.positions.clear();
        scratch.positions.extend(
            scratch.requests.iter().map(|&(t, n)| trees[t as usize].nodes[n as usize].position),
        );
        let wants = evaluator.wants_encoding();
        if wants {
            let Scratch { positions, planes, globals, masks, .. } = &mut *scratch;
            encode_batch(board, positions, planes, globals, masks);
        }
        scratch.logits.resize(b * space.len(), 0.0);
        scratch.values.resize(b, 0.0);
        let batch = Batch {
            board,
            positions: &scratch.positions,
            planes: if wants { &scratch.planes[..b * shape.planes_len()] } else { &[] },
            globals: if wants { &scratch.globals[..b * GLOBALS] } else { &[] },
            masks: if wants { &scratch.masks[..b * space.len()] } else { &[] },
        };
        let mut out = Output {
            logits: &mut scratch.logits[..b * space.len()],
            values: &mut scratch.values[..b],
        };
        let evaluated = evaluator.evaluate(&batch, &mut out).and_then(|()| {
            check_outputs(&scratch.logits[..b * space.len()], &scratch.values[..b], batch.masks)
        });
        if let Err(e) = evaluated {
            // Leave the trees as they were: the leaves wait for nothing, the virtual losses go.
            for &(t, n) in &scratch.requests {
                let tree = &mut trees[t as usize];
                tree.nodes[n as usize].state = State::New;
                tree.undo_virtual(n, config);
            }
            return Err(e);
        }
        scratch.batches += 1;
        scratch.evaluated += b as u64;
        for (i, &(t, n)) in scratch.requests.iter().enumerate() {
            let tree = &mut trees[t as usize];
            let logits = &scratch.logits[i * space.len()..(i + 1) * space.len()];
            tree.expand(n, logits, config.policy_temperature);
            let v = scratch.values[i].clamp(-1.0, 1.0);
            tree.nodes[n as usize].raw = v;
            tree.backup(n, v, config);
        }
        if interrupted() {
            return Ok(Finished::Interrupted);
        }
    }
}

impl Tree {
    /// The leaves of one round of [`search_interruptible`] for a tree near its budget: as many
    /// of `leaves` as the budget holds, each counted as the edges it will have, for the tree
    /// `index` of the search; whether any simulation was started. Apart from the usual round so
    /// that the usual one stays as lean as it was.
    #[cold]
    #[inline(never)]
    fn select_near_budget(
        &mut self,
        index: u32,
        target: u32,
        leaves: usize,
        config: &SearchConfig,
        scratch: &mut Scratch,
    ) -> bool {
        let mut busy = false;
        let mut reserved = 0usize;
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

/// Refuses an evaluator's answers that are not numbers: a NaN or infinite value, or a NaN or
/// infinite logit of a legal action (`masks` `[B, A]`; empty for evaluators that take no
/// encoding, whose logits are not checked). Illegal actions' logits are never read.
fn check_outputs(logits: &[f32], values: &[f32], masks: &[bool]) -> Result<(), EvalError> {
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(EvalError(format!(
            "the value of position {i} of the batch is {}, not a finite number",
            values[i]
        )));
    }
    let bad = masks.iter().zip(logits).position(|(&legal, l)| legal && !l.is_finite());
    if let Some(k) = bad {
        let a = masks.len() / values.len().max(1);
        return Err(EvalError(format!(
            "the logit of legal action {} of position {} of the batch is {}, not a finite number",
            k % a,
            k / a,
            logits[k]
        )));
    }
    Ok(())
}
