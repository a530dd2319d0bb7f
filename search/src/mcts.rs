//! AlphaZero-style PUCT search over single actions, batched across many trees.
//!
//! A capture chain is a sequence of decisions of the same player, so values are kept from the
//! perspective of the player to move at each node and are negated only where the player changes
//! (never below a hop that continues a chain). Terminal positions are scored exactly.
//!
//! Each tree is a flat arena of nodes and edges. The edges of a node are sorted by prior, so the
//! visited children are always a prefix and the best unvisited child is the next edge: selection
//! costs the number of visited children, not the number of legal actions (often 1000+).
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

use zertz_env::encode::{GLOBALS, Shape};
use zertz_env::{Action, ActionSpace, Position, SplitMix64};

use crate::config::{SearchConfig, SettingError, check};
use crate::evaluator::{Batch, EvalError, Evaluator, Output};

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Not evaluated yet.
    New,
    /// Waiting in the current batch.
    Pending,
    /// Evaluated; its edges exist.
    Expanded,
    /// The game is over here.
    Terminal,
}

#[derive(Clone, Debug)]
struct Node {
    position: Position,
    parent: u32,
    edges_start: u32,
    edges_len: u32,
    /// Edges `edges_start .. edges_start + visited` have children.
    visited: u32,
    visits: u32,
    /// Sum of values from the perspective of the player who chose this node (the parent's player
    /// to move); for the root, of its own player to move.
    value_sum: f32,
    state: State,
    /// The exact value for its own player to move once proven (1 a win, 0 a draw, -1 a loss),
    /// else [`UNPROVEN`].
    proof: i8,
    /// The evaluator's value of the position for its own player to move (0 until evaluated):
    /// the Gumbel root's mixed value starts from it.
    raw: f32,
}

/// An edge of the tree: 8 bytes, since a node stores one per legal action (often 1000+).
#[derive(Clone, Copy, Debug)]
struct Edge {
    child: u32,
    /// The prior as a bfloat16 (the top 16 bits of an `f32`, rounded): 3 significant digits are
    /// plenty for PUCT, and the bits of non-negative values sort like the values.
    prior: u16,
    action: u16,
}

impl Edge {
    #[inline]
    fn prior(&self) -> f32 {
        f32::from_bits((self.prior as u32) << 16)
    }

    #[inline]
    fn set_prior(&mut self, p: f32) {
        let bits = p.max(0.0).to_bits();
        // Round to nearest, ties to even.
        self.prior = (bits.saturating_add(0x7FFF + ((bits >> 16) & 1)) >> 16) as u16;
    }
}

/// One search tree over single actions.
#[derive(Clone, Debug)]
pub struct Tree {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    root: u32,
    /// Dirichlet noise to mix into the root priors once the root is expanded.
    pending_noise: Option<Noise>,
    /// Scratch for the softmax of an expansion.
    priors: Vec<f32>,
    /// The memory budget of `nodes` and `edges`, in bytes.
    max_bytes: usize,
    /// Seed of the Gumbel draws of the next Gumbel search at this root ([`Tree::set_gumbel_seed`]).
    gumbel_seed: Option<u64>,
    /// The Gumbel root of the last search with [`SearchConfig::gumbel_actions`], while the root
    /// stays.
    gumbel: Option<GumbelRoot>,
}

/// A Gumbel search's state at the root.
#[derive(Clone, Debug, Default)]
struct GumbelRoot {
    /// Sequential halving: the visits (in this search) that the child chosen by the root's `k`-th
    /// simulation of this search must have had ([`considered_visits`]).
    schedule: Vec<u32>,
    /// Per root edge, in the edges' order (kept in step when edges are swapped): the Gumbel draw
    /// plus the log prior.
    scores: Vec<f64>,
    /// Per root edge: the child's visits when the search began (a reused subtree's).
    base: Vec<u32>,
}

/// Floor of a log prior: a prior that rounds to 0 still has a finite score (mctx's `low_logit`).
const LOW_LOGIT: f64 = -1e9;

/// The log of a prior, at least [`LOW_LOGIT`].
fn log_prior(p: f32) -> f64 {
    if p > 0.0 { f64::from(p).ln().max(LOW_LOGIT) } else { LOW_LOGIT }
}

/// Sequential halving over `n` simulations and `m` considered actions (mctx's
/// `get_sequence_of_considered_visits`): for each simulation, the visits the chosen action must
/// already have. Each phase gives every remaining action the same visits, then halves them (to
/// no fewer than 2), over `ceil(log2 m)` phases.
pub fn considered_visits(m: u32, n: u32) -> Vec<u32> {
    if m <= 1 {
        return (0..n).collect();
    }
    let log2 = u32::BITS - (m - 1).leading_zeros();
    let mut sequence = Vec::with_capacity(n as usize);
    let mut visits = vec![0u32; m as usize];
    let mut considered = m;
    while sequence.len() < n as usize {
        let extra = (n / (log2 * considered)).max(1);
        for _ in 0..extra {
            sequence.extend_from_slice(&visits[..considered as usize]);
            visits[..considered as usize].iter_mut().for_each(|v| *v += 1);
        }
        considered = (considered / 2).max(2);
    }
    sequence.truncate(n as usize);
    sequence
}

/// What the value transform of a Gumbel root needs: `sigma(q) = scale * (q - low) / span`.
struct Sigma {
    scale: f64,
    low: f64,
    span: f64,
    /// The completed value of an unvisited child: the root's mixed value.
    mixed: f64,
}

impl Sigma {
    #[inline]
    fn of(&self, q: Option<f64>) -> f64 {
        self.scale * (q.unwrap_or(self.mixed) - self.low) / self.span
    }
}

/// Dirichlet noise at the root: `alpha = alpha_total / legal actions`, mixed with weight
/// `fraction`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Noise {
    /// Total concentration, spread over the legal actions (KataGo: 10.83).
    pub alpha_total: f32,
    /// Weight of the noise in the root priors (AlphaZero: 0.25).
    pub fraction: f32,
    /// Seed of the noise.
    pub seed: u64,
}

impl Noise {
    /// Checks the concentration (positive and finite) and the weight (0 to 1).
    pub fn validate(&self) -> Result<(), SettingError> {
        check(
            self.alpha_total > 0.0 && self.alpha_total.is_finite(),
            "dirichlet_alpha_total",
            "must be a positive finite number",
        )?;
        check((0.0..=1.0).contains(&self.fraction), "dirichlet_fraction", "must be between 0 and 1")
    }
}

/// What a search found at a root.
#[derive(Clone, Debug, PartialEq)]
pub struct RootInfo {
    /// Visits of every root child, as `(action, visits)`, in prior order.
    pub visits: Vec<(Action, u32)>,
    /// Root visits (all simulations through the root, reused ones included).
    pub total: u32,
    /// Value of the root from the perspective of its player to move, `-1..=1` (exact when the
    /// root is proven).
    pub value: f32,
    /// The root's exact value for its player to move once proven (1 a win, 0 a draw, -1 a loss).
    pub proven: Option<i8>,
}

/// One child of the root ([`Tree::root_children`]): its action, prior, visits and mean value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChildStats {
    /// The single action that leads to the child.
    pub action: Action,
    /// Its prior in the search (the evaluator's policy, with root noise if any was added), kept
    /// to three significant digits.
    pub prior: f32,
    /// Simulations through the child (0 for a child never visited).
    pub visits: u32,
    /// Its mean value from the perspective of the root's player to move, `-1..=1` (0 for a child
    /// never visited). Below a hop that continues a chain the same player moves again, so this is
    /// always the value for the player who chooses at the root.
    pub value: f32,
    /// Its exact value for the player who chooses at the root, once proven (1 a win, 0 a draw,
    /// -1 a loss).
    pub proven: Option<i8>,
}

impl Tree {
    /// A tree whose root is `position`, with the memory budget [`DEFAULT_MAX_TREE_BYTES`].
    pub fn new(position: Position) -> Tree {
        Tree::with_max_bytes(position, DEFAULT_MAX_TREE_BYTES)
    }

    /// A tree whose root is `position` whose nodes and edges stay within `max_bytes`
    /// ([`Tree::bytes`]): a search stops adding simulations to it there. The root is always
    /// evaluated, whatever the budget.
    pub fn with_max_bytes(position: Position, max_bytes: usize) -> Tree {
        let mut t = Tree {
            nodes: Vec::new(),
            edges: Vec::new(),
            root: 0,
            pending_noise: None,
            priors: Vec::new(),
            max_bytes,
            gumbel_seed: None,
            gumbel: None,
        };
        t.reset(position);
        t
    }

    /// The memory budget of the tree's nodes and edges, in bytes.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Sets the memory budget (a tree already past it takes no more simulations).
    pub fn set_max_bytes(&mut self, max_bytes: usize) {
        self.max_bytes = max_bytes;
    }

    /// Bytes of the nodes and edges in the arena (reused and dropped subtrees included): what the
    /// budget bounds. The vectors may reserve more address space than this as they grow; the
    /// memory touched is this.
    pub fn bytes(&self) -> usize {
        self.nodes.len() * NODE_BYTES + self.edges.len() * EDGE_BYTES
    }

    /// Whether the tree has reached its budget: one more simulation could pass it (it adds a node
    /// and, once evaluated, an edge per legal action of the leaf), so a search adds none.
    pub fn is_full(&self) -> bool {
        self.over_budget(0)
    }

    /// The most one simulation adds: a node, and an edge for every action of the board.
    #[inline]
    fn leaf_bytes(&self) -> usize {
        NODE_BYTES + ActionSpace::new(self.position().board()).len() * EDGE_BYTES
    }

    /// Whether one more simulation could pass the budget, when the leaves already waiting in this
    /// round will add `reserved` bytes once evaluated. A tree whose root is not evaluated yet is
    /// never over: the first simulation always runs.
    #[inline]
    fn over_budget(&self, reserved: usize) -> bool {
        self.nodes[self.root as usize].state != State::New
            && self.bytes().saturating_add(reserved).saturating_add(self.leaf_bytes())
                > self.max_bytes
    }

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

    /// Drops everything and starts from `position` (the budget stays).
    pub fn reset(&mut self, position: Position) {
        self.nodes.clear();
        self.edges.clear();
        self.nodes.push(Node::new(position, NONE));
        self.root = 0;
        self.pending_noise = None;
        self.gumbel_seed = None;
        self.gumbel = None;
    }

    /// Seeds the Gumbel draws of the next search at this root that has a Gumbel root
    /// ([`SearchConfig::gumbel_actions`]): self-play's exploration, in place of Dirichlet noise.
    /// Without a seed the draws are 0 and the search is deterministic. A new root forgets it.
    pub fn set_gumbel_seed(&mut self, seed: u64) {
        self.gumbel_seed = Some(seed);
    }

    /// The root position.
    pub fn position(&self) -> &Position {
        &self.nodes[self.root as usize].position
    }

    /// Visits of the root so far.
    pub fn root_visits(&self) -> u32 {
        self.nodes[self.root as usize].visits
    }

    /// Nodes in the arena (reused subtrees and dropped ones included).
    pub fn arena_len(&self) -> usize {
        self.nodes.len()
    }

    /// Mixes Dirichlet noise into the root priors (now, or once the root is expanded).
    pub fn add_noise(&mut self, noise: Noise) {
        if self.nodes[self.root as usize].state == State::Expanded {
            self.apply_noise(noise);
        } else {
            self.pending_noise = Some(noise);
        }
    }

    fn apply_noise(&mut self, noise: Noise) {
        let root = &self.nodes[self.root as usize];
        let (start, len, visited) =
            (root.edges_start as usize, root.edges_len as usize, root.visited as usize);
        if len < 2 || noise.fraction <= 0.0 {
            return;
        }
        let mut rng = SplitMix64(noise.seed);
        let alpha = noise.alpha_total / len as f32;
        // In f64: the draws of a huge concentration would overflow an f32 sum.
        let draws: Vec<f64> = (0..len).map(|_| gamma(&mut rng, alpha)).collect();
        let sum: f64 = draws.iter().sum::<f64>().max(f64::MIN_POSITIVE);
        let f = noise.fraction as f64;
        for (e, d) in self.edges[start..start + len].iter_mut().zip(&draws) {
            e.set_prior(((1.0 - f) * e.prior() as f64 + f * d / sum) as f32);
        }
        // Keep the visited prefix, re-sort the rest by prior.
        sort_edges(&mut self.edges[start + visited..start + len]);
    }

    /// Makes the child reached by `action` the new root, keeping its subtree; a fresh tree when
    /// the child was never visited or the arena has grown past `max_arena` nodes. An action that
    /// is illegal at the root leaves the tree unchanged. An arena past half the memory budget
    /// keeps only the subtree ([`Tree::compact`]), so that the next search has room.
    pub fn advance(&mut self, action: &Action, max_arena: usize) {
        let root = &self.nodes[self.root as usize];
        let next = root.position.play_action(action).ok();
        let Some(next) = next else { return };
        let space = ActionSpace::new(next.board());
        let index = space.index(action) as u32;
        let (start, visited) = (root.edges_start as usize, root.visited as usize);
        let child = self.edges[start..start + visited]
            .iter()
            .find(|e| e.action as u32 == index)
            .map(|e| e.child);
        match child {
            Some(c) if self.nodes.len() <= max_arena => {
                let chooser = root.position.turn();
                let node = &mut self.nodes[c as usize];
                if node.position.turn() != chooser {
                    node.value_sum = -node.value_sum;
                }
                node.parent = NONE;
                self.root = c;
                self.pending_noise = None;
                self.gumbel_seed = None;
                self.gumbel = None;
                if self.bytes() > self.max_bytes / 2 {
                    self.compact();
                }
            }
            _ => self.reset(next),
        }
    }

    /// Keeps only the root's subtree: its nodes and their edges are copied into fresh vectors, in
    /// breadth-first order, and the rest of the arena (subtrees of earlier roots) is dropped. The
    /// tree searches on exactly as before; only its memory changes.
    pub fn compact(&mut self) {
        let mut new_index = vec![NONE; self.nodes.len()];
        let mut order = vec![self.root];
        new_index[self.root as usize] = 0;
        let mut i = 0;
        while let Some(&old) = order.get(i) {
            let node = &self.nodes[old as usize];
            let start = node.edges_start as usize;
            for e in &self.edges[start..start + node.visited as usize] {
                new_index[e.child as usize] = order.len() as u32;
                order.push(e.child);
            }
            i += 1;
        }
        let mut nodes = Vec::with_capacity(order.len());
        let mut edges = Vec::new();
        for &old in &order {
            let mut node = self.nodes[old as usize].clone();
            if node.parent != NONE {
                node.parent = new_index[node.parent as usize];
            }
            let start = node.edges_start as usize;
            node.edges_start = edges.len() as u32;
            edges.extend(self.edges[start..start + node.edges_len as usize].iter().map(|e| {
                let child = if e.child == NONE { NONE } else { new_index[e.child as usize] };
                Edge { child, ..*e }
            }));
            nodes.push(node);
        }
        self.nodes = nodes;
        self.edges = edges;
        self.root = 0;
    }

    /// Visits of the root's children and the root value.
    pub fn root_info(&self) -> RootInfo {
        let root = &self.nodes[self.root as usize];
        let space = ActionSpace::new(root.position.board());
        let start = root.edges_start as usize;
        let visits = self.edges[start..start + root.visited as usize]
            .iter()
            .map(|e| {
                let a = space.decode(e.action as usize).expect("edge action in range");
                (a, self.nodes[e.child as usize].visits)
            })
            .collect();
        let proven = (root.proof != UNPROVEN).then_some(root.proof);
        let value = match proven {
            Some(p) => f32::from(p),
            None if root.visits == 0 => 0.0,
            None => root.value_sum / root.visits as f32,
        };
        RootInfo { visits, total: root.visits, value, proven }
    }

    /// Every child of the root, one per legal action once the root is expanded (none before, and
    /// none in a finished game): the visited ones first, then the others, each group in prior
    /// order (highest first) after a PUCT search (a Gumbel root visits its children in its own
    /// order).
    pub fn root_children(&self) -> Vec<ChildStats> {
        let root = &self.nodes[self.root as usize];
        let space = ActionSpace::new(root.position.board());
        let start = root.edges_start as usize;
        self.edges[start..start + root.edges_len as usize]
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let action = space.decode(e.action as usize).expect("edge action in range");
                let (visits, value, proven) = if i < root.visited as usize {
                    // A child's sum is from the perspective of the player who chose it: the
                    // root's player to move.
                    let child = &self.nodes[e.child as usize];
                    let q =
                        if child.visits == 0 { 0.0 } else { child.value_sum / child.visits as f32 };
                    (child.visits, q, self.chooser_proof(self.root, e.child))
                } else {
                    (0, 0.0, None)
                };
                ChildStats { action, prior: e.prior(), visits, value, proven }
            })
            .collect()
    }

    /// Writes the visit distribution of the root over the action space (`[A]`, summing to 1 when
    /// the root has visited children) into `out`: over [`Tree::root_candidates`], so that proven
    /// wins take the whole target and avoidable proven losses none of it.
    pub fn visit_policy(&self, out: &mut [f32]) {
        out.fill(0.0);
        let mut total = 0u32;
        for (index, v) in self.candidates() {
            out[index] = v as f32;
            total += v;
        }
        if total > 0 {
            out.iter_mut().for_each(|x| *x /= total as f32);
        }
    }

    /// The root's visited children a player should choose among, as `(action, visits)` in prior
    /// order: the proven wins when there are any; else every child not proven lost (all of them
    /// when every one is lost).
    pub fn root_candidates(&self) -> Vec<(Action, u32)> {
        let space = ActionSpace::new(self.position().board());
        self.candidates()
            .map(|(index, v)| (space.decode(index).expect("edge action in range"), v))
            .collect()
    }

    /// [`Tree::root_candidates`] as action indices.
    fn candidates(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        let root = &self.nodes[self.root as usize];
        let start = root.edges_start as usize;
        let edges = &self.edges[start..start + root.visited as usize];
        let keep = self.candidate_filter();
        edges
            .iter()
            .filter(move |e| keep(self.chooser_proof(self.root, e.child)))
            .map(|e| (e.action as usize, self.nodes[e.child as usize].visits))
    }

    /// Whether a root child of this proof (for the root's player; none when unproven) is a
    /// candidate: the proven wins when any visited child is one; else every child not proven
    /// lost (all of them when every visited child is).
    fn candidate_filter(&self) -> impl Fn(Option<i8>) -> bool + use<> {
        let visited = self.nodes[self.root as usize].visited as usize;
        let proofs = || (0..visited).map(|i| self.edge_proof(i));
        let any_win = proofs().any(|p| p == Some(1));
        let all_lost = visited > 0 && proofs().all(|p| p == Some(-1));
        move |p| if any_win { p == Some(1) } else { all_lost || p != Some(-1) }
    }

    /// The proof of `child` for the player to move at `parent`, if it is proven.
    #[inline]
    fn chooser_proof(&self, parent: u32, child: u32) -> Option<i8> {
        let c = &self.nodes[child as usize];
        if c.proof == UNPROVEN {
            return None;
        }
        let same = self.nodes[parent as usize].position.turn() == c.position.turn();
        Some(if same { c.proof } else { -c.proof })
    }

    /// Whether the root's value is known exactly (a finished game, or a proven one).
    pub fn root_proven(&self) -> bool {
        self.nodes[self.root as usize].proof != UNPROVEN
    }

    /// Writes the policy target of the last search into `out` (`[A]`): with a Gumbel root
    /// ([`SearchConfig::gumbel_actions`]) the improved policy `softmax(log prior + sigma(completed
    /// q))` over every legal action, else the visit distribution ([`Tree::visit_policy`]). Either
    /// way proven wins take the whole target when there are any, and avoidable proven losses
    /// none of it; all zeros before the root is expanded.
    pub fn policy(&self, config: &SearchConfig, out: &mut [f32]) {
        if config.gumbel_actions == 0 {
            return self.visit_policy(out);
        }
        out.fill(0.0);
        let root = &self.nodes[self.root as usize];
        if root.state != State::Expanded {
            return;
        }
        let (start, len) = (root.edges_start as usize, root.edges_len as usize);
        let sigma = self.sigma(config);
        let keep = self.candidate_filter();
        let mut weights: Vec<(usize, f64)> = Vec::with_capacity(len);
        for i in 0..len {
            let e = &self.edges[start + i];
            if keep(self.edge_proof(i)) {
                weights.push((e.action as usize, log_prior(e.prior()) + sigma.of(self.edge_q(i))));
            }
        }
        let max = weights.iter().map(|w| w.1).fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = weights.iter().map(|w| (w.1 - max).exp()).sum();
        for (a, w) in weights {
            out[a] = ((w - max).exp() / sum) as f32;
        }
    }

    /// The action a Gumbel search ([`SearchConfig::gumbel_actions`]) chooses: among
    /// [`Tree::root_candidates`], those visited most in the last search, and of them the one
    /// with the highest Gumbel draw plus log prior plus `sigma(q)`. `None` when the last search
    /// had no Gumbel root or visited nothing.
    pub fn gumbel_action(&self, config: &SearchConfig) -> Option<Action> {
        let g = self.gumbel.as_ref()?;
        let root = &self.nodes[self.root as usize];
        let start = root.edges_start as usize;
        let sigma = self.sigma(config);
        let keep = self.candidate_filter();
        let mut best: Option<(u32, f64, usize)> = None;
        for i in 0..root.visited as usize {
            let child = &self.nodes[self.edges[start + i].child as usize];
            let visits = child.visits - g.base[i];
            if !keep(self.edge_proof(i)) || visits == 0 {
                continue;
            }
            let score = g.scores[i] + sigma.of(self.edge_q(i));
            if best.is_none_or(|(v, s, _)| (visits, score) > (v, s)) {
                best = Some((visits, score, i));
            }
        }
        let (_, _, i) = best?;
        let space = ActionSpace::new(root.position.board());
        space.decode(self.edges[start + i].action as usize)
    }

    /// The proof of the root's `i`-th edge's child for the root's player (none when unvisited).
    fn edge_proof(&self, i: usize) -> Option<i8> {
        let root = &self.nodes[self.root as usize];
        if i >= root.visited as usize {
            return None;
        }
        self.chooser_proof(self.root, self.edges[root.edges_start as usize + i].child)
    }

    /// The value of the root's `i`-th edge's child for the root's player: exact once proven,
    /// else its mean; none when it has no visit.
    fn edge_q(&self, i: usize) -> Option<f64> {
        let root = &self.nodes[self.root as usize];
        if i >= root.visited as usize {
            return None;
        }
        let child = &self.nodes[self.edges[root.edges_start as usize + i].child as usize];
        match self.edge_proof(i) {
            Some(p) => Some(f64::from(p)),
            None if child.visits == 0 => None,
            None => Some(f64::from(child.value_sum) / f64::from(child.visits)),
        }
    }

    /// The Gumbel root's value transform (mctx's `qtransform_completed_by_mix_value`): the mixed
    /// value `(raw + N * sum(p q) / sum(p)) / (N + 1)` over the visited children completes the
    /// unvisited ones, the completed values are rescaled to 0..1 by their range, and scaled by
    /// `(c_visit + max visits) * c_scale`. In f64: the scale of extreme settings overflows f32.
    fn sigma(&self, config: &SearchConfig) -> Sigma {
        let root = &self.nodes[self.root as usize];
        let start = root.edges_start as usize;
        let (mut visits, mut max_visits, mut prior_sum, mut weighted) = (0.0, 0u32, 0.0, 0.0);
        let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
        for i in 0..root.visited as usize {
            let Some(q) = self.edge_q(i) else { continue };
            let child = &self.nodes[self.edges[start + i].child as usize];
            let p = f64::from(self.edges[start + i].prior()).max(f64::from(f32::MIN_POSITIVE));
            visits += f64::from(child.visits);
            max_visits = max_visits.max(child.visits);
            prior_sum += p;
            weighted += p * q;
            low = low.min(q);
            high = high.max(q);
        }
        let mut mixed = f64::from(root.raw);
        if prior_sum > 0.0 {
            mixed = (mixed + visits * weighted / prior_sum) / (visits + 1.0);
        }
        // Every child of the root unvisited but one, at least: the mixed value is a completed q.
        if visits == 0.0 || (root.visited as usize) < root.edges_len as usize {
            low = low.min(mixed);
            high = high.max(mixed);
        }
        let scale = (f64::from(config.gumbel_c_visit) + f64::from(max_visits))
            * f64::from(config.gumbel_c_scale);
        Sigma { scale, low, span: (high - low).max(1e-8), mixed }
    }

    /// Starts the Gumbel root of a search whose root is expanded and takes `simulations` more:
    /// the draws (from the seed, else 0), the visits each child has now, the schedule.
    fn begin_gumbel(&mut self, simulations: u32, config: &SearchConfig) {
        let root = &self.nodes[self.root as usize];
        let (start, len, visited) =
            (root.edges_start as usize, root.edges_len as usize, root.visited as usize);
        let mut rng = self.gumbel_seed.map(SplitMix64);
        let mut scores = Vec::with_capacity(len);
        let mut base = Vec::with_capacity(len);
        for (i, e) in self.edges[start..start + len].iter().enumerate() {
            let draw = rng.as_mut().map_or(0.0, |r| {
                let u = ((r.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
                -(-u.ln()).ln()
            });
            scores.push(draw + log_prior(e.prior()));
            base.push(if i < visited { self.nodes[e.child as usize].visits } else { 0 });
        }
        let considered = config.gumbel_actions.min(len as u32);
        let schedule = considered_visits(considered, simulations);
        self.gumbel = Some(GumbelRoot { schedule, scores, base });
    }

    /// The root edge a simulation of a Gumbel search takes (mctx's
    /// `gumbel_muzero_root_action_selection`): of the children whose visits in this search are
    /// the schedule's for this simulation, the one with the highest draw plus log prior plus
    /// `sigma(q)`, never a proven loss; past the schedule (or when a proven loss leaves its
    /// place empty), the highest of every child not proven lost. Moved to the front of the
    /// unvisited edges when it has no child yet, so that visited edges stay a prefix.
    fn gumbel_select(&mut self, config: &SearchConfig) -> usize {
        let g = self.gumbel.as_ref().expect("a Gumbel root");
        let root = &self.nodes[self.root as usize];
        let (start, len, visited) =
            (root.edges_start as usize, root.edges_len as usize, root.visited as usize);
        let relative = |i: usize| {
            if i < visited {
                self.nodes[self.edges[start + i].child as usize].visits - g.base[i]
            } else {
                0
            }
        };
        let k: u32 = (0..visited).map(relative).sum();
        let wanted = g.schedule.get(k as usize).copied();
        let sigma = self.sigma(config);
        let mut best: Option<(f64, usize)> = None;
        let mut fallback: Option<(f64, usize)> = None;
        for i in 0..len {
            if self.edge_proof(i) == Some(-1) {
                continue;
            }
            let score = g.scores[i] + sigma.of(self.edge_q(i));
            if fallback.is_none_or(|(s, _)| score > s) {
                fallback = Some((score, i));
            }
            if Some(relative(i)) == wanted && best.is_none_or(|(s, _)| score > s) {
                best = Some((score, i));
            }
        }
        // Every child proven lost: the root is proven and no simulation comes here.
        let i = best.or(fallback).map_or(0, |(_, i)| i);
        if i > visited {
            self.edges.swap(start + i, start + visited);
            let g = self.gumbel.as_mut().expect("a Gumbel root");
            g.scores.swap(i, visited);
            g.base.swap(i, visited);
            return visited;
        }
        i
    }

    /// After `n` was proven: proves its ancestors that this decides (one of their children a
    /// proven win for their player to move, or every child proven), as far as it goes.
    fn propagate_proof(&mut self, mut n: u32) {
        while n != self.root {
            let parent = self.nodes[n as usize].parent;
            let p = &self.nodes[parent as usize];
            if p.proof != UNPROVEN {
                return;
            }
            let (start, len, visited) =
                (p.edges_start as usize, p.edges_len as usize, p.visited as usize);
            let mut best = UNPROVEN;
            let mut all = visited == len;
            for e in &self.edges[start..start + visited] {
                match self.chooser_proof(parent, e.child) {
                    Some(v) => best = best.max(v),
                    None => all = false,
                }
            }
            if best == 1 || (all && best != UNPROVEN) {
                self.nodes[parent as usize].proof = best;
                n = parent;
            } else {
                return;
            }
        }
    }

    /// Backs up the exact value of the proven node `leaf` and proves what it decides.
    fn backup_proven(&mut self, leaf: u32, config: &SearchConfig) {
        let v = f32::from(self.nodes[leaf as usize].proof);
        self.backup(leaf, v, config);
        self.propagate_proof(leaf);
    }

    /// Value of a node from the perspective of its own player to move.
    fn own_value(&self, n: u32) -> f32 {
        let node = &self.nodes[n as usize];
        if node.visits == 0 {
            return 0.0;
        }
        let q = node.value_sum / node.visits as f32;
        match node.parent {
            NONE => q,
            p if self.nodes[p as usize].position.turn() == node.position.turn() => q,
            _ => -q,
        }
    }

    /// Walks from the root to a leaf by PUCT, adding virtual loss; returns the leaf, or `None`
    /// when it runs into a leaf already waiting for evaluation (the virtual loss is taken back).
    fn select(&mut self, config: &SearchConfig) -> Option<u32> {
        let mut n = self.root;
        self.nodes[n as usize].visits += 1;
        loop {
            let node = &self.nodes[n as usize];
            if node.proof != UNPROVEN {
                return Some(n); // exact: backed up without an evaluation
            }
            match node.state {
                // A forced position below the root (one legal action: a compulsory capture, a
                // pass) costs no evaluation: the simulation goes on through its only action, so
                // that a line of forced replies is followed to its end in one simulation.
                State::New if n != self.root && node.position.count_legal_actions() == 1 => {
                    self.expand_forced(n);
                    continue;
                }
                State::New | State::Terminal => return Some(n),
                State::Pending => {
                    self.undo_virtual(n, config);
                    return None;
                }
                State::Expanded => {}
            }
            let (start, visited) = (node.edges_start as usize, node.visited as usize);
            let best = if n == self.root && self.gumbel.is_some() {
                self.gumbel_select(config)
            } else {
                self.puct_select(n, config)
            };
            let child = if best == visited {
                self.create_child(n, start + visited)
            } else {
                self.edges[start + best].child
            };
            let node = &mut self.nodes[child as usize];
            node.visits += 1;
            node.value_sum -= config.virtual_loss;
            n = child;
        }
    }

    /// The edge of the expanded node `n` with the highest PUCT score (its next unvisited edge
    /// standing for every unvisited one, at the first-play urgency), never a child proven lost.
    #[inline]
    fn puct_select(&self, n: u32, config: &SearchConfig) -> usize {
        let node = &self.nodes[n as usize];
        let (start, len, visited) =
            (node.edges_start as usize, node.edges_len as usize, node.visited as usize);
        let parent_n = node.visits as f32;
        let c = config.c_puct + ((parent_n + config.c_base + 1.0) / config.c_base).ln();
        let scale = c * parent_n.sqrt();
        let mut best = usize::MAX;
        let mut best_score = f32::NEG_INFINITY;
        let mut visited_prior = 0.0;
        let turn = node.position.turn();
        for (i, e) in self.edges[start..start + visited].iter().enumerate() {
            let child = &self.nodes[e.child as usize];
            let q = if child.proof == UNPROVEN {
                child.value_sum / child.visits.max(1) as f32
            } else {
                let p = if child.position.turn() == turn { child.proof } else { -child.proof };
                if p < 0 {
                    visited_prior += e.prior();
                    continue; // a proven loss for the chooser: never again
                }
                f32::from(p)
            };
            let prior = e.prior();
            let score = q + scale * prior / (1.0 + child.visits as f32);
            visited_prior += prior;
            if score > best_score {
                best_score = score;
                best = i;
            }
        }
        if visited < len {
            // KataGo's first-play urgency: the reduction grows with the prior mass already
            // explored, so a node with few visited children still tries new ones.
            let fpu = self.own_value(n) - config.fpu_reduction * visited_prior.sqrt();
            let score = fpu + scale * self.edges[start + visited].prior();
            if score > best_score {
                best = visited;
            }
        }
        if best == usize::MAX {
            // Every score was NaN: settings that `SearchConfig::validate` refuses. Walk on
            // rather than index out of bounds.
            best = 0;
        }
        best
    }

    /// Expands the forced node `n` (one legal action) without an evaluation: one edge, prior 1.
    fn expand_forced(&mut self, n: u32) {
        let pos = self.nodes[n as usize].position;
        let action = pos.nth_legal_action(0).expect("a forced position has its action");
        let mut edge = Edge {
            child: NONE,
            prior: 0,
            action: ActionSpace::new(pos.board()).index(&action) as u16,
        };
        edge.set_prior(1.0);
        let node = &mut self.nodes[n as usize];
        node.edges_start = self.edges.len() as u32;
        node.edges_len = 1;
        node.state = State::Expanded;
        self.edges.push(edge);
    }

    fn create_child(&mut self, parent: u32, edge: usize) -> u32 {
        let space = ActionSpace::new(self.nodes[parent as usize].position.board());
        let action = space.decode(self.edges[edge].action as usize).expect("edge action in range");
        let mut position = self.nodes[parent as usize].position;
        position.play_action_unchecked(&action);
        let child = self.nodes.len() as u32;
        self.nodes.push(Node::new(position, parent));
        self.edges[edge].child = child;
        self.nodes[parent as usize].visited += 1;
        child
    }

    /// Takes back the virtual visits and losses on the path from `leaf` to the root.
    fn undo_virtual(&mut self, leaf: u32, config: &SearchConfig) {
        let mut n = leaf;
        while n != self.root {
            let node = &mut self.nodes[n as usize];
            node.visits -= 1;
            node.value_sum += config.virtual_loss;
            n = node.parent;
        }
        self.nodes[self.root as usize].visits -= 1;
    }

    /// Backs up `value` (from the leaf's player to move) from `leaf` to the root, replacing the
    /// virtual losses by the real value.
    fn backup(&mut self, leaf: u32, value: f32, config: &SearchConfig) {
        let mut n = leaf;
        let mut v = value;
        while n != self.root {
            let (parent, turn) = {
                let node = &self.nodes[n as usize];
                (node.parent, node.position.turn())
            };
            let chooser = self.nodes[parent as usize].position.turn();
            // The same player moves again below a hop that continues a chain: no sign change.
            let v_chooser = if chooser == turn { v } else { -v };
            self.nodes[n as usize].value_sum += config.virtual_loss + v_chooser;
            v = v_chooser;
            n = parent;
        }
        self.nodes[n as usize].value_sum += v;
    }

    /// Expands `leaf` with the evaluator's logits over the action space (`[A]`), their softmax at
    /// `temperature` as priors.
    fn expand(&mut self, leaf: u32, logits: &[f32], temperature: f32) {
        let space = ActionSpace::new(self.nodes[leaf as usize].position.board());
        let start = self.edges.len();
        let pos = self.nodes[leaf as usize].position;
        let mut priors = std::mem::take(&mut self.priors);
        priors.clear();
        pos.for_each_legal_action(|a| {
            let i = space.index(&a);
            priors.push(logits[i]);
            self.edges.push(Edge { child: NONE, prior: 0, action: i as u16 });
        });
        let max = priors.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let edges = &mut self.edges[start..];
        if priors.iter().all(|&p| p == max) {
            let mut e0 = Edge { child: NONE, prior: 0, action: 0 };
            e0.set_prior(1.0 / edges.len().max(1) as f32);
            edges.iter_mut().for_each(|e| e.prior = e0.prior);
        } else {
            let mut sum = 0.0;
            let inverse = 1.0 / temperature;
            for p in priors.iter_mut() {
                *p = ((*p - max) * inverse).exp();
                sum += *p;
            }
            for (e, p) in edges.iter_mut().zip(&priors) {
                e.set_prior(p / sum);
            }
            sort_edges(edges);
        }
        self.priors = priors;
        let node = &mut self.nodes[leaf as usize];
        node.edges_start = start as u32;
        node.edges_len = (self.edges.len() - start) as u32;
        node.state = State::Expanded;
        if leaf == self.root {
            if let Some(noise) = self.pending_noise.take() {
                self.apply_noise(noise);
            }
        }
    }
}

impl Node {
    fn new(position: Position, parent: u32) -> Node {
        let state = if position.is_over() { State::Terminal } else { State::New };
        let proof = match position.outcome() {
            Some(o) => o.score(position.turn()),
            None => UNPROVEN,
        };
        Node {
            position,
            parent,
            edges_start: 0,
            edges_len: 0,
            visited: 0,
            visits: 0,
            value_sum: 0.0,
            state,
            proof,
            raw: 0.0,
        }
    }
}

/// Sorts edges by prior, highest first (ties by action index, for determinism).
fn sort_edges(edges: &mut [Edge]) {
    edges.sort_unstable_by(|a, b| b.prior.cmp(&a.prior).then(a.action.cmp(&b.action)));
}

/// A Gamma(alpha, 1) draw (Marsaglia and Tsang; boosted for alpha < 1). `alpha` must be positive
/// and finite ([`Noise::validate`]).
fn gamma(rng: &mut SplitMix64, alpha: f32) -> f64 {
    let uniform =
        |rng: &mut SplitMix64| ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let (a, boost) = if alpha < 1.0 {
        (alpha as f64 + 1.0, uniform(rng).powf(1.0 / alpha as f64))
    } else {
        (alpha as f64, 1.0)
    };
    let d = a - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        // A standard normal by Box-Muller.
        let z = (-2.0 * uniform(rng).ln()).sqrt() * (std::f64::consts::TAU * uniform(rng)).cos();
        let v = (1.0 + c * z).powi(3);
        if v <= 0.0 {
            continue;
        }
        if uniform(rng).ln() < 0.5 * z * z + d - d * v + d * v.ln() {
            return d * v * boost;
        }
    }
}

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
            scratch.planes.resize(b * shape.planes_len(), 0.0);
            scratch.globals.resize(b * GLOBALS, 0.0);
            scratch.masks.resize(b * space.len(), false);
            for (i, pos) in scratch.positions.iter().enumerate() {
                pos.encode(
                    &mut scratch.planes[i * shape.planes_len()..(i + 1) * shape.planes_len()],
                    &mut scratch.globals[i * GLOBALS..(i + 1) * GLOBALS],
                );
                pos.legal_action_mask(&mut scratch.masks[i * space.len()..(i + 1) * space.len()]);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_index_fits_an_edge() {
        for b in zertz_env::Board::ALL {
            assert!(ActionSpace::new(b).len() <= u16::MAX as usize + 1);
        }
    }

    #[test]
    fn priors_keep_three_digits_and_their_order() {
        let mut e = Edge { child: NONE, prior: 0, action: 0 };
        for p in [1.0, 0.5, 1.0 / 1944.0, 0.123_456, 1e-7, 0.0] {
            e.set_prior(p);
            assert!((e.prior() - p).abs() <= p * 0.004, "{p} became {}", e.prior());
        }
        let bits = |p: f32| {
            let mut e = Edge { child: NONE, prior: 0, action: 0 };
            e.set_prior(p);
            e.prior
        };
        assert!(bits(0.3) > bits(0.2) && bits(0.2) > bits(1e-5) && bits(1e-5) > bits(0.0));
        assert_eq!(std::mem::size_of::<Edge>(), 8);
    }
}
