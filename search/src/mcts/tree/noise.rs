//! The tree's side of Dirichlet noise (`mcts/noise.rs`): mixing it into the root priors.

use zertz_env::SplitMix64;

use super::{State, Tree};
use crate::mcts::noise::{Noise, gamma};
use crate::priors::sort_edges;

impl Tree {
    /// Mixes Dirichlet noise into the root priors (now, or once the root is expanded).
    pub fn add_noise(&mut self, noise: Noise) {
        if self.nodes[self.root as usize].state == State::Expanded {
            self.apply_noise(noise);
        } else {
            self.pending_noise = Some(noise);
        }
    }

    pub(in crate::mcts) fn apply_noise(&mut self, noise: Noise) {
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
        // Keep the visited prefix, re-sort the rest by prior (the root's are sorted in full).
        sort_edges(&mut self.edges[start + visited..start + len]);
    }
}
