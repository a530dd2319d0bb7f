//! One search on several cores: [`Split`] cuts every batch it is given into one part per thread
//! and evaluates the parts at once, the calling thread taking the first and helper threads of its
//! own the others.
//!
//! A search round collects several leaves of one tree (virtual loss keeps them apart,
//! [`SearchConfig::leaves_per_round`](crate::SearchConfig::leaves_per_round)), so with a
//! network on the CPU, where each thread runs the network on its own part with one libtorch
//! thread, one game's search uses every core: the tree's walks stay on the calling thread (a few
//! microseconds a leaf), the forward passes (hundreds) run side by side. Helpers wait on a
//! channel, never spinning, so a busy machine loses nothing to them between batches.
//!
//! [`Split`] wants no encoding from the search: each thread encodes its own part (planes,
//! globals, legal masks) before it evaluates it, so that this work is shared too. A batch that
//! comes encoded is cut as it is. The parts are copied to the helpers and their answers back
//! (tens of kilobytes a position, a few microseconds), so that the helpers own what they work on.
//! A batch smaller than two positions, or one that arrives while another caller's batch is being
//! split, is evaluated on the calling thread alone.
//!
//! ```
//! use std::sync::Arc;
//! use zertz_env::{Player, Position, Variant};
//! use zertz_search::mcts::{Scratch, Tree, search};
//! use zertz_search::split::Split;
//! use zertz_search::{RolloutEvaluator, SearchConfig};
//! let eval = Split::new(Arc::new(RolloutEvaluator::default()), 2);
//! let mut trees = vec![Tree::new(Position::new(Variant::default(), Player::P0))];
//! let config = SearchConfig { leaves_per_round: 8, ..SearchConfig::default() };
//! search(&mut trees, &[64], &config, &eval, &mut Scratch::default()).unwrap();
//! assert_eq!(trees[0].root_visits(), 64);
//! ```

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, TryLockError, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use cpu_time::ThreadTime;
use zertz_env::Board;

use crate::config::Preset;
use crate::evaluator::{Batch, EvalError, Evaluator, Output, OwnedBatch, encode_batch};

/// The most threads one [`Split`] evaluates with.
pub const MAX_SEARCH_THREADS: usize = 256;

/// A part of a batch, owned by the helper that evaluates it and sent back with its answers; its
/// buffers go back and forth from one batch to the next.
type Part = OwnedBatch;

/// What a helper answers: its part and how the evaluation went.
type Answer = (Part, Result<(), EvalError>);

/// A helper's job: the board, the part, and whether the helper encodes its positions (planes,
/// globals and masks) itself before it evaluates them.
type Job = (Board, Part, bool);

/// A helper thread and its two channels.
struct Helper {
    jobs: Option<mpsc::Sender<Job>>,
    answers: mpsc::Receiver<Answer>,
    /// The part's buffers while no job is out.
    spare: Part,
    thread: Option<JoinHandle<()>>,
}

/// An [`Evaluator`] that evaluates each batch in parts on several threads at once (see the module
/// docs).
pub struct Split {
    inner: Arc<dyn Evaluator>,
    threads: usize,
    /// `threads - 1` helpers; locked by the caller whose batch they work on.
    helpers: Mutex<Vec<Helper>>,
    /// The encoding buffers of the calling thread's part, reused from one batch to the next
    /// (a caller that finds them taken encodes into new ones).
    own: Mutex<Part>,
    /// CPU time of the helper threads in their evaluations, in nanoseconds.
    helper_cpu: Arc<AtomicU64>,
}

impl std::fmt::Debug for Split {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Split").field("threads", &self.threads).finish_non_exhaustive()
    }
}

impl Split {
    /// `inner` on `threads` threads (1 to [`MAX_SEARCH_THREADS`]; the calling thread is one of
    /// them, so `threads - 1` helpers start). A helper that cannot start is done without: its
    /// parts go to the others.
    pub fn new(inner: Arc<dyn Evaluator>, threads: usize) -> Split {
        let threads = threads.clamp(1, MAX_SEARCH_THREADS);
        let helper_cpu = Arc::new(AtomicU64::new(0));
        let helpers = (1..threads)
            .filter_map(|i| {
                let (jobs, job_rx) = mpsc::channel::<Job>();
                let (answer_tx, answers) = mpsc::channel::<Answer>();
                let (inner, cpu) = (inner.clone(), helper_cpu.clone());
                let thread = std::thread::Builder::new()
                    .name(format!("zertz-search-{i}"))
                    .spawn(move || help(inner.as_ref(), &job_rx, &answer_tx, &cpu))
                    .ok()?;
                Some(Helper {
                    jobs: Some(jobs),
                    answers,
                    spare: Part::default(),
                    thread: Some(thread),
                })
            })
            .collect::<Vec<_>>();
        let threads = helpers.len() + 1;
        Split {
            inner,
            threads,
            helpers: Mutex::new(helpers),
            own: Mutex::new(Part::default()),
            helper_cpu,
        }
    }

    /// The threads it evaluates with, the calling thread included.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The CPU time its helper threads spent evaluating so far (the calling threads' own is
    /// theirs to measure).
    pub fn helper_cpu(&self) -> Duration {
        Duration::from_nanos(self.helper_cpu.load(Ordering::Relaxed))
    }
}

impl Drop for Split {
    fn drop(&mut self) {
        let helpers = self.helpers.get_mut().unwrap_or_else(|e| e.into_inner());
        for h in helpers.iter_mut() {
            h.jobs = None; // the helper's receive fails, and it ends
        }
        for h in helpers.iter_mut() {
            if let Some(t) = h.thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// A helper thread: evaluates the parts it is sent until its caller goes.
fn help(
    inner: &dyn Evaluator,
    jobs: &mpsc::Receiver<Job>,
    answers: &mpsc::Sender<Answer>,
    cpu: &AtomicU64,
) {
    while let Ok((board, mut part, encodes)) = jobs.recv() {
        let started = ThreadTime::now();
        if encodes {
            let OwnedBatch { positions, planes, globals, masks, .. } = &mut part;
            encode_batch(board, positions, planes, globals, masks);
        }
        let result = {
            let (batch, mut out) = part.parts(board);
            catch_unwind(AssertUnwindSafe(|| inner.evaluate(&batch, &mut out))).unwrap_or_else(
                |_| Err(EvalError("the evaluator panicked on a search thread".into())),
            )
        };
        cpu.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        if answers.send((part, result)).is_err() {
            return;
        }
    }
}

/// Rows `range` of a `[B, per_row]` array (an empty array stays empty: the evaluator did not
/// want it).
fn rows<T>(all: &[T], b: usize, range: std::ops::Range<usize>) -> &[T] {
    if all.is_empty() {
        return all;
    }
    let per = all.len() / b;
    &all[range.start * per..range.end * per]
}

impl Split {
    /// Evaluates rows `range` of `batch` on the calling thread.
    fn evaluate_rows(
        &self,
        batch: &Batch<'_>,
        out: &mut Output<'_>,
        range: std::ops::Range<usize>,
        per_logit: usize,
    ) -> Result<(), EvalError> {
        let b = batch.len();
        let positions = &batch.positions[range.clone()];
        let mut own = self.own.try_lock().ok();
        let mut fresh = Part::default();
        let buffers = own.as_deref_mut().unwrap_or(&mut fresh);
        let part = if self.encodes(batch) {
            let OwnedBatch { planes, globals, masks, .. } = buffers;
            encode_batch(batch.board, positions, planes, globals, masks);
            Batch { board: batch.board, positions, planes, globals, masks }
        } else {
            Batch {
                board: batch.board,
                positions,
                planes: rows(batch.planes, b, range.clone()),
                globals: rows(batch.globals, b, range.clone()),
                masks: rows(batch.masks, b, range.clone()),
            }
        };
        let logits = &mut out.logits[range.start * per_logit..range.end * per_logit];
        let values = &mut out.values[range];
        self.inner.evaluate(&part, &mut Output { logits, values })
    }

    /// Whether the parts of `batch` are encoded by the threads that evaluate them: the inner
    /// evaluator wants an encoding that the batch does not carry (the search gives none, since
    /// [`Split`] says it wants none: the encoding is done in parallel too).
    fn encodes(&self, batch: &Batch<'_>) -> bool {
        self.inner.wants_encoding() && batch.planes.is_empty()
    }
}

impl Evaluator for Split {
    /// Never: each thread encodes its own part (when the inner evaluator wants it), so that the
    /// encoding of a round's leaves is done side by side too.
    fn wants_encoding(&self) -> bool {
        false
    }

    fn preset(&self) -> Preset {
        self.inner.preset()
    }

    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        let b = batch.len();
        let per_logit = out.logits.len() / b.max(1);
        // (A lock poisoned by a panic of the caller's part below holds helpers that answered:
        // they are as good as ever.)
        let mut helpers = match self.helpers.try_lock() {
            Ok(h) => h,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => {
                return self.evaluate_rows(batch, out, 0..b, per_logit);
            }
        };
        if b < 2 || helpers.is_empty() {
            drop(helpers);
            return self.evaluate_rows(batch, out, 0..b, per_logit);
        }
        let encodes = self.encodes(batch);
        let parts = (helpers.len() + 1).min(b);
        // Part k holds rows k*b/parts.. (k+1)*b/parts: sizes differ by one at most.
        let range = |k: usize| k * b / parts..(k + 1) * b / parts;
        // Parts 1.. go to the helpers; part 0 is this thread's.
        let mut sent = Vec::with_capacity(parts - 1);
        for (k, h) in (1..parts).zip(helpers.iter_mut()) {
            let rows_k = range(k);
            let mut part = std::mem::take(&mut h.spare);
            part.positions.clear();
            part.positions.extend_from_slice(&batch.positions[rows_k.clone()]);
            // (Left empty where the helper encodes the positions itself.)
            for (to, from) in [
                (&mut part.planes, rows(batch.planes, b, rows_k.clone())),
                (&mut part.globals, rows(batch.globals, b, rows_k.clone())),
            ] {
                to.clear();
                to.extend_from_slice(from);
            }
            part.masks.clear();
            part.masks.extend_from_slice(rows(batch.masks, b, rows_k.clone()));
            part.logits.resize(rows_k.len() * per_logit, 0.0);
            part.values.resize(rows_k.len(), 0.0);
            let delivered =
                h.jobs.as_ref().is_some_and(|j| j.send((batch.board, part, encodes)).is_ok());
            sent.push((rows_k, delivered));
        }
        let own =
            catch_unwind(AssertUnwindSafe(|| self.evaluate_rows(batch, out, range(0), per_logit)));
        // Every helper's answer is taken, whatever happened here: none is left for the next
        // batch to read.
        let mut result = Ok(());
        for (h, (rows_k, delivered)) in helpers.iter_mut().zip(sent) {
            let answer = if delivered { h.answers.recv().ok() } else { None };
            let Some((part, answered)) = answer else {
                // A helper that has gone (it cannot start again): its part is done here.
                if own.is_ok() {
                    result = result.and(self.evaluate_rows(batch, out, rows_k, per_logit));
                }
                continue;
            };
            if answered.is_ok() {
                out.logits[rows_k.start * per_logit..rows_k.end * per_logit]
                    .copy_from_slice(&part.logits);
                out.values[rows_k.clone()].copy_from_slice(&part.values);
            }
            result = result.and(answered);
            h.spare = part;
        }
        drop(helpers);
        match own {
            Ok(own) => own.and(result),
            // The caller's own part panicked: the panic goes on, as it would without helpers.
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}
