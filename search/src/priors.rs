//! A position's priors as the tree keeps them: an edge per legal action, the best of them
//! first ([`Priors`]). They are made from the evaluator's logits on the thread that evaluated
//! them, so that a search on several threads ([`search_threads`](crate::mcts::search_threads))
//! makes them out of its turns and only copies them into its tree at its turn.

use zertz_env::{ActionSpace, Position};

/// No node: an edge not visited yet, the root's parent.
pub(crate) const NONE: u32 = u32::MAX;

/// An edge of the tree: 8 bytes, since a node stores one per legal action (often 1000+).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub(crate) child: u32,
    /// The prior as a bfloat16 (the top 16 bits of an `f32`, rounded): 3 significant digits are
    /// plenty for PUCT, and the bits of non-negative values sort like the values.
    prior: u16,
    pub(crate) action: u16,
}

impl Edge {
    /// An edge of `action` (its index in the action space) not visited yet, of prior `p`.
    pub(crate) fn new(action: u16, p: f32) -> Edge {
        let mut e = Edge { child: NONE, prior: 0, action };
        e.set_prior(p);
        e
    }

    #[inline]
    pub(crate) fn prior(&self) -> f32 {
        f32::from_bits((self.prior as u32) << 16)
    }

    #[inline]
    pub(crate) fn set_prior(&mut self, p: f32) {
        let bits = p.max(0.0).to_bits();
        // Round to nearest, ties to even.
        self.prior = (bits.saturating_add(0x7FFF + ((bits >> 16) & 1)) >> 16) as u16;
    }
}

/// Sorts edges by prior, highest first (ties by action index, for determinism).
pub(crate) fn sort_edges(edges: &mut [Edge]) {
    edges.sort_unstable_by(edge_order);
}

/// The order of [`sort_edges`]: a total one (no two edges of a node have one action).
pub(crate) fn edge_order(a: &Edge, b: &Edge) -> std::cmp::Ordering {
    b.prior.cmp(&a.prior).then(a.action.cmp(&b.action))
}

/// The edges a node has sorted beyond its visited ones (twice as many each time they are all
/// visited): most nodes have a few visited children of a thousand.
pub(crate) const SORT_AHEAD: usize = 16;

/// Puts the first `k` edges of [`sort_edges`]'s order at the front of `edges`, in that order,
/// the others after them in any order; how many are sorted (`k`, or all when there are fewer).
/// A partial selection and `k` sorted instead of all: the same first `k` as a full sort.
pub(crate) fn sort_front(edges: &mut [Edge], k: usize) -> usize {
    if k >= edges.len() {
        sort_edges(edges);
        return edges.len();
    }
    if k > 0 {
        edges.select_nth_unstable_by(k - 1, edge_order);
        edges[..k - 1].sort_unstable_by(edge_order);
    }
    k
}

/// A legal action's logit that is not a number (NaN or infinite).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BadLogit {
    /// The position's row in the batch.
    pub(crate) position: usize,
    /// The action's index in the action space.
    pub(crate) action: usize,
    pub(crate) logit: f32,
}

/// The priors of a batch's positions, in the batch's order: for each, an edge per legal action
/// (in the order of its legal actions, their softmax at a temperature as priors), the first
/// 16 of them in the tree's order (all when the priors are equal: they are then
/// taken in the order of the legal actions). Kept from one batch to the next.
#[derive(Debug, Default)]
pub struct Priors {
    edges: Vec<Edge>,
    /// Per position: where its edges end in `edges`, and how many of them are sorted.
    ends: Vec<(usize, usize)>,
    /// Room for the softmax.
    scratch: Vec<f32>,
    /// Room for one position's logits over the action space, from its legal ones.
    row: Vec<f32>,
}

impl Priors {
    /// Positions held.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Forgets every position (the memory stays).
    pub(crate) fn clear(&mut self) {
        self.edges.clear();
        self.ends.clear();
    }

    /// The edges of position `i` and how many of them are sorted.
    pub(crate) fn get(&self, i: usize) -> (&[Edge], usize) {
        let start = if i == 0 { 0 } else { self.ends[i - 1].0 };
        let (end, sorted) = self.ends[i];
        (&self.edges[start..end], sorted)
    }

    /// Adds the priors of `positions` from their logits `[B, A]` (only the legal actions' are
    /// read) at `temperature`; a logit that is not a number is named by its row and action.
    pub(crate) fn extend(
        &mut self,
        positions: &[Position],
        logits: &[f32],
        temperature: f32,
    ) -> Result<(), BadLogit> {
        let Some(board) = positions.first().map(Position::board) else { return Ok(()) };
        let a = ActionSpace::new(board).len();
        for (i, pos) in positions.iter().enumerate() {
            self.push(pos, &logits[i * a..(i + 1) * a], temperature)
                .map_err(|(action, logit)| BadLogit { position: i, action, logit })?;
        }
        Ok(())
    }

    /// Adds the priors of `positions` from their legal actions' logits alone (`legal`: as many
    /// as `masks` `[B, A]` has set, position after position, each position's in the order of the
    /// action space, which the caller has checked) at `temperature`: each position's are put in
    /// their places in a row of the action space, read as [`Priors::extend`] reads its logits.
    pub(crate) fn extend_legal(
        &mut self,
        positions: &[Position],
        masks: &[bool],
        legal: &[f32],
        temperature: f32,
    ) -> Result<(), BadLogit> {
        let a = masks.len() / positions.len().max(1);
        let mut row = std::mem::take(&mut self.row);
        row.resize(a, 0.0);
        let mut next = legal.iter();
        let mut result = Ok(());
        for (i, pos) in positions.iter().enumerate() {
            for (slot, _) in row.iter_mut().zip(&masks[i * a..(i + 1) * a]).filter(|(_, m)| **m) {
                *slot = next.next().copied().unwrap_or(f32::NAN);
            }
            result = self.push(pos, &row, temperature).map_err(|(action, logit)| BadLogit {
                position: i,
                action,
                logit,
            });
            if result.is_err() {
                break;
            }
        }
        self.row = row;
        result
    }

    /// Adds the priors of `pos` from its logits over the action space.
    fn push(
        &mut self,
        pos: &Position,
        logits: &[f32],
        temperature: f32,
    ) -> Result<(), (usize, f32)> {
        let space = ActionSpace::new(pos.board());
        let start = self.edges.len();
        let mut priors = std::mem::take(&mut self.scratch);
        priors.clear();
        let mut bad = None;
        pos.for_each_legal_action(|a| {
            let i = space.index(&a);
            let l = logits[i];
            // (The lowest action of those that are not numbers, as a check of the mask would.)
            if !l.is_finite() && bad.is_none_or(|(j, _)| i < j) {
                bad = Some((i, l));
            }
            priors.push(l);
            self.edges.push(Edge { child: NONE, prior: 0, action: i as u16 });
        });
        if let Some(bad) = bad {
            self.edges.truncate(start);
            self.scratch = priors;
            return Err(bad);
        }
        let max = priors.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let edges = &mut self.edges[start..];
        let sorted = if priors.iter().all(|&p| p == max) {
            // Equal priors: taken in the order of the legal actions.
            let equal = Edge::new(0, 1.0 / edges.len().max(1) as f32).prior;
            edges.iter_mut().for_each(|e| e.prior = equal);
            edges.len()
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
            sort_front(edges, SORT_AHEAD)
        };
        self.scratch = priors;
        self.ends.push((self.edges.len(), sorted));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priors_keep_three_digits_and_their_order() {
        for p in [1.0, 0.5, 1.0 / 1944.0, 0.123_456, 1e-7, 0.0] {
            let e = Edge::new(0, p);
            assert!((e.prior() - p).abs() <= p * 0.004, "{p} became {}", e.prior());
        }
        let bits = |p: f32| Edge::new(0, p).prior;
        assert!(bits(0.3) > bits(0.2) && bits(0.2) > bits(1e-5) && bits(1e-5) > bits(0.0));
        assert_eq!(std::mem::size_of::<Edge>(), 8);
    }

    /// Edges of pseudo-random priors (some equal) and distinct actions.
    fn edges(n: usize, seed: u64) -> Vec<Edge> {
        let mut rng = zertz_env::SplitMix64(seed);
        (0..n).map(|i| Edge::new(i as u16, (rng.next_u64() % 50) as f32 / 64.0)).collect()
    }

    #[test]
    fn sorting_the_front_gives_the_first_edges_of_a_full_sort() {
        for (n, seed) in [(0, 1), (1, 2), (15, 3), (16, 4), (17, 5), (1944, 6), (300, 7)] {
            let mut full = edges(n, seed);
            sort_edges(&mut full);
            for k in [0, 1, 2, 16, 17, 300, 5000] {
                let mut front = edges(n, seed);
                let sorted = sort_front(&mut front, k);
                assert_eq!(sorted, k.min(n));
                let actions = |e: &[Edge]| e.iter().map(|e| e.action).collect::<Vec<_>>();
                assert_eq!(actions(&front[..sorted]), actions(&full[..sorted]), "{n} {k}");
            }
        }
    }

    #[test]
    fn priors_are_the_softmax_of_the_legal_logits_best_first() {
        use zertz_env::{Player, Variant};
        let pos = Position::new(Variant::default(), Player::P0);
        let space = ActionSpace::new(pos.board());
        let mut rng = zertz_env::SplitMix64(7);
        let logits: Vec<f32> =
            (0..2 * space.len()).map(|_| (rng.next_u64() % 1000) as f32 / 100.0 - 5.0).collect();
        let mut priors = Priors::default();
        // Two positions: the second row's logits are read for the second.
        priors.extend(&[pos, pos], &logits, 0.5).unwrap();
        priors.extend(&[pos], &vec![1.5; space.len()], 1.0).unwrap();
        assert_eq!(priors.len(), 3);
        let legal = pos.count_legal_actions();
        for row in 0..2 {
            let (edges, sorted) = priors.get(row);
            assert_eq!((edges.len(), sorted), (legal, SORT_AHEAD));
            let row_logits = &logits[row * space.len()..(row + 1) * space.len()];
            let max = edges.iter().map(|e| row_logits[e.action as usize]).fold(f32::MIN, f32::max);
            let sum: f32 =
                edges.iter().map(|e| ((row_logits[e.action as usize] - max) / 0.5).exp()).sum();
            for e in edges {
                let p = ((row_logits[e.action as usize] - max) / 0.5).exp() / sum;
                assert!((e.prior() - p).abs() <= p * 0.004 + 1e-9);
            }
            assert!(edges[..sorted].windows(2).all(|w| edge_order(&w[0], &w[1]).is_lt()));
            assert!(edges[sorted..].iter().all(|e| edge_order(&edges[sorted - 1], e).is_lt()));
        }
        // Equal logits: equal priors in the order of the legal actions, all of them "sorted".
        let (edges, sorted) = priors.get(2);
        assert_eq!(sorted, legal);
        let mut order = Vec::new();
        pos.for_each_legal_action(|a| order.push(space.index(&a) as u16));
        assert_eq!(edges.iter().map(|e| e.action).collect::<Vec<_>>(), order);
    }

    #[test]
    fn a_legal_logit_that_is_not_a_number_is_named_and_an_illegal_one_ignored() {
        use zertz_env::{Player, Variant};
        let pos = Position::new(Variant::default(), Player::P0);
        let space = ActionSpace::new(pos.board());
        let mut mask = vec![false; space.len()];
        pos.legal_action_mask(&mut mask);
        let illegal = mask.iter().position(|&m| !m).unwrap();
        let legal = mask.iter().rposition(|&m| m).unwrap();
        let mut logits = vec![0.25; space.len()];
        logits[illegal] = f32::NAN;
        let mut priors = Priors::default();
        priors.extend(&[pos], &logits, 1.0).unwrap();
        logits[legal] = f32::INFINITY;
        let err = priors.extend(&[pos, pos], &[logits.clone(), logits].concat(), 1.0);
        assert_eq!(err, Err(BadLogit { position: 0, action: legal, logit: f32::INFINITY }));
        assert_eq!(priors.len(), 1, "the position in error is not kept");
        assert_eq!(priors.get(0).0.len(), pos.count_legal_actions());
    }
}
