//! The tree: its arena of nodes and edges, and the core of the search on it (selection by PUCT,
//! expansion, backup, the MCTS-solver's proofs, tree reuse and the memory budget).

use zertz_env::{Action, ActionSpace, Position};

use super::gumbel::GumbelRoot;
use super::noise::Noise;
use super::{DEFAULT_MAX_TREE_BYTES, EDGE_BYTES, NODE_BYTES, UNPROVEN};
use crate::config::SearchConfig;
use crate::priors::{Edge, NONE, SORT_AHEAD, sort_edges, sort_front};

mod gumbel;
mod noise;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
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
pub(super) struct Node {
    pub(super) position: Position,
    parent: u32,
    pub(super) edges_start: u32,
    pub(super) edges_len: u32,
    /// Edges `edges_start .. edges_start + visited` have children.
    pub(super) visited: u32,
    /// Edges `edges_start .. edges_start + sorted` are in order ([`sort_edges`]) and no later
    /// edge comes before them: a node is sorted [`SORT_AHEAD`] edges at a time past its visited
    /// ones (the root in full), since most nodes have a few visited children of a thousand.
    /// (Two bytes: a node has fewer legal actions than 65,536, the action space of 61 rings
    /// [`ActionSpace::len`] being 11,713; the node stays 96 bytes.)
    sorted: u16,
    pub(super) visits: u32,
    /// Sum of values from the perspective of the player who chose this node (the parent's player
    /// to move); for the root, of its own player to move.
    pub(super) value_sum: f32,
    pub(super) state: State,
    /// The exact value for its own player to move once proven (1 a win, 0 a draw, -1 a loss),
    /// else [`UNPROVEN`].
    pub(super) proof: i8,
    /// The evaluator's value of the position for its own player to move (0 until evaluated):
    /// the Gumbel root's mixed value starts from it.
    pub(super) raw: f32,
}

/// One search tree over single actions.
#[derive(Clone, Debug)]
pub struct Tree {
    pub(super) nodes: Vec<Node>,
    pub(super) edges: Vec<Edge>,
    pub(super) root: u32,
    /// Dirichlet noise to mix into the root priors once the root is expanded.
    pub(super) pending_noise: Option<Noise>,
    /// The memory budget of `nodes` and `edges`, in bytes.
    max_bytes: usize,
    /// Seed of the Gumbel draws of the next Gumbel search at this root ([`Tree::set_gumbel_seed`]).
    pub(super) gumbel_seed: Option<u64>,
    /// The Gumbel root of the last search with [`SearchConfig::gumbel_actions`], while the root
    /// stays.
    pub(super) gumbel: Option<GumbelRoot>,
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
    pub(super) fn leaf_bytes(&self) -> usize {
        NODE_BYTES + ActionSpace::new(self.position().board()).len() * EDGE_BYTES
    }

    /// Whether one more simulation could pass the budget, when the leaves already waiting in this
    /// round will add `reserved` bytes once evaluated. A tree whose root is not evaluated yet is
    /// never over: the first simulation always runs.
    #[inline]
    pub(super) fn over_budget(&self, reserved: usize) -> bool {
        self.nodes[self.root as usize].state != State::New
            && self.bytes().saturating_add(reserved).saturating_add(self.leaf_bytes())
                > self.max_bytes
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
                self.sort_all(c);
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
                let mut e = *e;
                if e.child != NONE {
                    e.child = new_index[e.child as usize];
                }
                e
            }));
            nodes.push(node);
        }
        self.nodes = nodes;
        self.edges = edges;
        self.root = 0;
    }

    /// The proof of `child` for the player to move at `parent`, if it is proven.
    #[inline]
    pub(super) fn chooser_proof(&self, parent: u32, child: u32) -> Option<i8> {
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
    pub(super) fn backup_proven(&mut self, leaf: u32, config: &SearchConfig) {
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
    pub(super) fn select(&mut self, config: &SearchConfig) -> Option<u32> {
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
        let edge = Edge::new(ActionSpace::new(pos.board()).index(&action) as u16, 1.0);
        let node = &mut self.nodes[n as usize];
        node.edges_start = self.edges.len() as u32;
        node.edges_len = 1;
        node.sorted = 1;
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
        let node = &mut self.nodes[parent as usize];
        node.visited += 1;
        let sorted = node.sorted as usize;
        if node.visited as usize == sorted && sorted < node.edges_len as usize {
            // The next unvisited edge must be the best of the rest: sort on, twice as many.
            let start = node.edges_start as usize;
            let rest = &mut self.edges[start + sorted..start + node.edges_len as usize];
            node.sorted += sort_front(rest, sorted.max(SORT_AHEAD)) as u16;
        }
        child
    }

    /// Sorts the edges of `n` in full (a new root: its children are listed and chosen among in
    /// prior order).
    pub(super) fn sort_all(&mut self, n: u32) {
        let node = &mut self.nodes[n as usize];
        let (start, len, sorted) =
            (node.edges_start as usize, node.edges_len as usize, node.sorted as usize);
        if sorted < len {
            sort_edges(&mut self.edges[start + sorted..start + len]);
            node.sorted = len as u16;
        }
    }

    /// Takes back the virtual visits and losses on the path from `leaf` to the root.
    pub(super) fn undo_virtual(&mut self, leaf: u32, config: &SearchConfig) {
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
    pub(super) fn backup(&mut self, leaf: u32, value: f32, config: &SearchConfig) {
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

    /// Expands `leaf` with its edges from [`Priors`](crate::priors::Priors) (`sorted` of them in
    /// order); the root sorts them all.
    pub(super) fn expand(&mut self, leaf: u32, edges: &[Edge], sorted: usize) {
        let start = self.edges.len();
        self.edges.extend_from_slice(edges);
        let node = &mut self.nodes[leaf as usize];
        node.sorted = sorted as u16;
        node.edges_start = start as u32;
        node.edges_len = edges.len() as u32;
        node.state = State::Expanded;
        if leaf == self.root {
            self.sort_all(leaf);
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
            sorted: 0,
            visits: 0,
            value_sum: 0.0,
            state,
            proof,
            raw: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priors::edge_order;

    #[test]
    fn every_action_index_fits_an_edge() {
        for b in zertz_env::Board::ALL {
            // (And a node's sorted edges, fewer than the action space, fit a u16.)
            assert!(ActionSpace::new(b).len() <= u16::MAX as usize + 1);
        }
        assert_eq!(NODE_BYTES, 96);
    }

    /// Logits that differ from one action and one position to the next.
    struct Varied;

    impl crate::Evaluator for Varied {
        fn wants_encoding(&self) -> bool {
            false
        }

        fn evaluate(
            &self,
            batch: &crate::Batch<'_>,
            out: &mut crate::Output<'_>,
        ) -> Result<(), crate::EvalError> {
            let a = out.logits.len() / batch.positions.len().max(1);
            for (i, p) in batch.positions.iter().enumerate() {
                let mut rng = zertz_env::SplitMix64(p.hash());
                for l in &mut out.logits[i * a..(i + 1) * a] {
                    *l = (rng.next_u64() % 1000) as f32 / 250.0;
                }
                out.values[i] = (p.hash() % 2001) as f32 / 1000.0 - 1.0;
            }
            Ok(())
        }
    }

    #[test]
    fn the_visited_children_are_the_best_by_prior_as_if_sorted_in_full() {
        // Sorting a node's edges a few at a time changes nothing: every node's visited edges are
        // the first of a full sort, its sorted ones too, the root's all (the tree of a full
        // sort at every expansion, which the search was before).
        let start = Position::new(zertz_env::Variant::default(), zertz_env::Player::P0);
        let mut tree = Tree::new(start);
        let config = SearchConfig { leaves_per_round: 8, ..SearchConfig::default() };
        let mut scratch = crate::mcts::Scratch::default();
        crate::mcts::search(
            std::slice::from_mut(&mut tree),
            &[3000],
            &config,
            &Varied,
            &mut scratch,
        )
        .unwrap();
        let mut checked = 0;
        for (n, node) in tree.nodes.iter().enumerate() {
            if node.state != State::Expanded {
                continue;
            }
            let (start, len) = (node.edges_start as usize, node.edges_len as usize);
            let mut full = tree.edges[start..start + len].to_vec();
            sort_edges(&mut full);
            let ordered = if n == tree.root as usize { len } else { node.sorted as usize };
            assert!(ordered >= (node.visited as usize).min(len), "node {n}");
            assert!(ordered == len || ordered > node.visited as usize, "node {n}");
            let actions = |e: &[Edge]| e.iter().map(|e| e.action).collect::<Vec<_>>();
            assert_eq!(actions(&tree.edges[start..start + ordered]), actions(&full[..ordered]));
            checked += usize::from(node.visited as usize > SORT_AHEAD);
        }
        assert!(checked > 0, "no node was sorted on past its first edges");
        // A child that becomes the root is sorted in full.
        let (action, _) = tree.root_candidates().into_iter().max_by_key(|&(_, v)| v).unwrap();
        tree.advance(&action, usize::MAX);
        let root = &tree.nodes[tree.root as usize];
        assert_eq!(root.state, State::Expanded);
        let edges = &tree.edges[root.edges_start as usize..][..root.edges_len as usize];
        assert!(root.edges_len as usize > SORT_AHEAD);
        assert!(edges.windows(2).all(|w| edge_order(&w[0], &w[1]).is_lt()));
    }
}
