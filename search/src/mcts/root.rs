//! What a search found at the root: [`RootInfo`], [`ChildStats`], the candidates a player
//! chooses among, and the policy targets (visit distribution, Gumbel improved policy).

use zertz_env::{Action, ActionSpace};

use super::UNPROVEN;
use super::gumbel::log_prior;
use super::tree::{State, Tree};
use crate::config::SearchConfig;

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
    pub(super) fn candidate_filter(&self) -> impl Fn(Option<i8>) -> bool + use<> {
        let visited = self.nodes[self.root as usize].visited as usize;
        let proofs = || (0..visited).map(|i| self.edge_proof(i));
        let any_win = proofs().any(|p| p == Some(1));
        let all_lost = visited > 0 && proofs().all(|p| p == Some(-1));
        move |p| if any_win { p == Some(1) } else { all_lost || p != Some(-1) }
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

    /// The proof of the root's `i`-th edge's child for the root's player (none when unvisited).
    pub(super) fn edge_proof(&self, i: usize) -> Option<i8> {
        let root = &self.nodes[self.root as usize];
        if i >= root.visited as usize {
            return None;
        }
        self.chooser_proof(self.root, self.edges[root.edges_start as usize + i].child)
    }

    /// The value of the root's `i`-th edge's child for the root's player: exact once proven,
    /// else its mean; none when it has no visit.
    pub(super) fn edge_q(&self, i: usize) -> Option<f64> {
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
}
