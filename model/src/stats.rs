//! A model's counters ([`ModelStats`]), what a forward pass answers ([`Answers`]) and where its
//! time went ([`Phases`]), and the bookkeeping behind them: reused host buffers ([`Staging`])
//! and the passes running now ([`Running`]).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use tch::Tensor;

// Only the docs below name it.
#[cfg(doc)]
use crate::Model;

/// Counters of a model's work.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ModelStats {
    /// Forward passes.
    pub batches: u64,
    /// Positions evaluated.
    pub positions: u64,
    /// Of the forward passes, those the native pass ran (`Model::native_forward`).
    pub native_batches: u64,
    /// Time spent in forward passes (including the copies to and from the device), summed over
    /// the threads that ran them.
    pub busy: Duration,
    /// Wall time during which at least one forward pass was running (`busy` without counting
    /// overlapping passes twice).
    pub covered: Duration,
}

/// Which logits a forward pass writes into the caller's buffer ([`Model::forward_timed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answers {
    /// Every action's.
    All,
    /// Only the legal actions' (by the masks); the others are left as they were. Search reads
    /// nothing else, and on a GPU only those cross back to the host (a tenth of the action space
    /// in a typical position), selected on the device by the masks, sent packed into bits.
    Legal,
    /// Only the legal actions' (by the masks), one after the other: position after position,
    /// each position's in the order of the action space, so that the caller's buffer holds as
    /// many logits as the masks have legal actions. On a GPU they come back so from the device,
    /// and no buffer of the whole action space is written (on the CPU the pass writes every
    /// logit into one of its own first).
    Compact,
}

/// Where the time of one forward pass went ([`Model::forward_timed`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    /// Copying the caller's inputs into the host buffer and on to the device (converted to the
    /// model's precision).
    pub copy_in: Duration,
    /// The network itself.
    pub forward: Duration,
    /// Copying the answers back, converting them to fp32 and checking them.
    pub copy_out: Duration,
}

/// A reused host buffer of one forward pass: the planes then the globals of a batch, one `f32`
/// tensor, pinned on a GPU's host so that its copy is one asynchronous transfer. Kept in
/// [`Model::staging`] between passes; each pass takes one, so concurrent passes never share.
pub(crate) struct Staging {
    pub(crate) host: Tensor,
    pub(crate) capacity: usize,
}

/// Forward passes running now, for [`ModelStats::covered`].
#[derive(Debug)]
pub(crate) struct Running {
    pub(crate) count: usize,
    pub(crate) since: Instant,
    pub(crate) covered: Duration,
}

/// Counts a forward pass as running while it lives.
pub(crate) struct RunningGuard<'a>(&'a Mutex<Running>);

impl<'a> RunningGuard<'a> {
    pub(crate) fn start(running: &'a Mutex<Running>) -> RunningGuard<'a> {
        let mut r = running.lock().unwrap_or_else(|e| e.into_inner());
        if r.count == 0 {
            r.since = Instant::now();
        }
        r.count += 1;
        RunningGuard(running)
    }
}

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        let mut r = self.0.lock().unwrap_or_else(|e| e.into_inner());
        r.count -= 1;
        if r.count == 0 {
            let ran = r.since.elapsed();
            r.covered += ran;
        }
    }
}
