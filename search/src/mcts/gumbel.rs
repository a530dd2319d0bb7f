//! The Gumbel root (Danihelka et al., ICLR 2022): Gumbel draws, sequential halving
//! ([`considered_visits`]), the value transform `sigma`, and the root selection and final action
//! of a Gumbel search (the tree's side of it: `tree/gumbel.rs`).

/// A Gumbel search's state at the root.
#[derive(Clone, Debug, Default)]
pub(super) struct GumbelRoot {
    /// Sequential halving: the visits (in this search) that the child chosen by the root's `k`-th
    /// simulation of this search must have had ([`considered_visits`]).
    pub(super) schedule: Vec<u32>,
    /// Per root edge, in the edges' order (kept in step when edges are swapped): the Gumbel draw
    /// plus the log prior.
    pub(super) scores: Vec<f64>,
    /// Per root edge: the child's visits when the search began (a reused subtree's).
    pub(super) base: Vec<u32>,
}

/// Floor of a log prior: a prior that rounds to 0 still has a finite score (mctx's `low_logit`).
const LOW_LOGIT: f64 = -1e9;

/// The log of a prior, at least [`LOW_LOGIT`].
pub(super) fn log_prior(p: f32) -> f64 {
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
pub(super) struct Sigma {
    pub(super) scale: f64,
    pub(super) low: f64,
    pub(super) span: f64,
    /// The completed value of an unvisited child: the root's mixed value.
    pub(super) mixed: f64,
}

impl Sigma {
    #[inline]
    pub(super) fn of(&self, q: Option<f64>) -> f64 {
        self.scale * (q.unwrap_or(self.mixed) - self.low) / self.span
    }
}
