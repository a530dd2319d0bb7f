//! The tree's side of a Gumbel root (`mcts/gumbel.rs`): its seed, the root's selection and the
//! final action of a Gumbel search.

use zertz_env::{Action, ActionSpace, SplitMix64};

use super::Tree;
use crate::config::SearchConfig;
use crate::mcts::gumbel::{GumbelRoot, Sigma, considered_visits, log_prior};

impl Tree {
    /// Seeds the Gumbel draws of the next search at this root that has a Gumbel root
    /// ([`SearchConfig::gumbel_actions`]): self-play's exploration, in place of Dirichlet noise.
    /// Without a seed the draws are 0 and the search is deterministic. A new root forgets it.
    pub fn set_gumbel_seed(&mut self, seed: u64) {
        self.gumbel_seed = Some(seed);
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

    /// The Gumbel root's value transform (mctx's `qtransform_completed_by_mix_value`): the mixed
    /// value `(raw + N * sum(p q) / sum(p)) / (N + 1)` over the visited children completes the
    /// unvisited ones, the completed values are rescaled to 0..1 by their range, and scaled by
    /// `(c_visit + max visits) * c_scale`. In f64: the scale of extreme settings overflows f32.
    pub(in crate::mcts) fn sigma(&self, config: &SearchConfig) -> Sigma {
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
    pub(in crate::mcts) fn begin_gumbel(&mut self, simulations: u32, config: &SearchConfig) {
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
    pub(in crate::mcts) fn gumbel_select(&mut self, config: &SearchConfig) -> usize {
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
}
