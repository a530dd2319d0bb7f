//! A batching queue in front of an evaluator: search threads call [`Evaluator::evaluate`] as
//! usual, and an inference thread merges the batches that arrive together into one call of the
//! inner evaluator (a network on a GPU wants large batches).
//!
//! An inference thread runs the inner evaluator when the waiting requests hold at least
//! `max_batch` positions, or when the oldest has waited `max_wait`. A request is never split, so
//! a merged batch may exceed `max_batch` by less than one request. With several inference threads
//! ([`BatchingEvaluator::with_threads`]) one merges and evaluates a batch while another is busy
//! with the last one (copies, the network's host-side work), so the device waits less.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use zertz_search::batching::BatchingEvaluator;
//! use zertz_search::UniformEvaluator;
//! let eval = BatchingEvaluator::new(Arc::new(UniformEvaluator), 256, Duration::from_millis(2));
//! // Use `eval` wherever an Evaluator goes, from as many threads as you like.
//! # drop(eval);
//! ```

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use zertz_env::{Board, Position};

use crate::config::Preset;
use crate::evaluator::{Batch, EvalError, Evaluated, Evaluator, LegalAnswers, Output, OwnedBatch};

/// The answer to one request: its logits and values `[b]`. The logits are `[b, A]` for a request
/// without masks, and the legal actions' alone, in order, for one with masks (search reads no
/// others, and the caller's other entries are left as they were).
type Answer = Result<(Vec<f32>, Vec<f32>), EvalError>;

/// One caller's batch, owned, with where to send the answer.
struct Request {
    board: Board,
    positions: Vec<Position>,
    planes: Vec<f32>,
    globals: Vec<f32>,
    masks: Vec<bool>,
    arrived: Instant,
    reply: mpsc::Sender<Answer>,
}

#[derive(Default)]
struct Queue {
    requests: Vec<Request>,
    closing: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    wake: Condvar,
}

/// Counters of a [`BatchingEvaluator`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchingStats {
    /// Calls of the inner evaluator.
    pub batches: u64,
    /// Positions evaluated.
    pub positions: u64,
    /// Requests served.
    pub requests: u64,
}

/// An [`Evaluator`] that merges concurrent calls into large batches for an inner evaluator,
/// evaluated on inference threads of its own (see the module docs).
pub struct BatchingEvaluator {
    shared: Arc<Shared>,
    wants_encoding: bool,
    preset: Preset,
    stats: Arc<Mutex<BatchingStats>>,
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for BatchingEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchingEvaluator").field("stats", &self.stats()).finish_non_exhaustive()
    }
}

impl BatchingEvaluator {
    /// Starts one inference thread in front of `inner`.
    pub fn new(
        inner: Arc<dyn Evaluator>,
        max_batch: usize,
        max_wait: Duration,
    ) -> BatchingEvaluator {
        BatchingEvaluator::with_threads(inner, max_batch, max_wait, 1)
    }

    /// Starts `threads` inference threads (at least one) in front of `inner`, which they call
    /// concurrently.
    pub fn with_threads(
        inner: Arc<dyn Evaluator>,
        max_batch: usize,
        max_wait: Duration,
        threads: usize,
    ) -> BatchingEvaluator {
        let shared = Arc::new(Shared { queue: Mutex::new(Queue::default()), wake: Condvar::new() });
        let stats = Arc::new(Mutex::new(BatchingStats::default()));
        let wants_encoding = inner.wants_encoding();
        let preset = inner.preset();
        let threads = (0..threads.max(1))
            .filter_map(|i| {
                let (shared, stats, inner) = (shared.clone(), stats.clone(), inner.clone());
                std::thread::Builder::new()
                    .name(format!("zertz-inference-{i}"))
                    .spawn(move || {
                        serve(&shared, inner.as_ref(), max_batch.max(1), max_wait, &stats)
                    })
                    .ok()
            })
            .collect();
        BatchingEvaluator { shared, wants_encoding, preset, stats, threads }
    }

    /// Counters so far.
    pub fn stats(&self) -> BatchingStats {
        *self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for BatchingEvaluator {
    fn drop(&mut self) {
        self.shared.queue.lock().unwrap_or_else(|e| e.into_inner()).closing = true;
        self.shared.wake.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Evaluator for BatchingEvaluator {
    fn wants_encoding(&self) -> bool {
        self.wants_encoding
    }

    fn preset(&self) -> Preset {
        self.preset
    }

    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        let (logits, values) = self.request(batch)?;
        if batch.masks.is_empty() {
            out.logits.copy_from_slice(&logits);
        } else {
            let mut legal = logits.iter();
            for (slot, _) in out.logits.iter_mut().zip(batch.masks).filter(|(_, m)| **m) {
                *slot = *legal.next().ok_or_else(|| EvalError("too few legal logits".into()))?;
            }
        }
        out.values.copy_from_slice(&values);
        Ok(())
    }

    /// With masks, the priors are made from the legal logits as they come back: no buffer of
    /// the whole action space is written for them.
    fn evaluate_priors(
        &self,
        batch: &Batch<'_>,
        temperature: f32,
        out: &mut Evaluated,
    ) -> Result<(), EvalError> {
        if batch.masks.is_empty() {
            return out.evaluate_all(self, batch, temperature);
        }
        let (legal, values) = self.request(batch)?;
        out.take_legal(batch, &legal, &values, temperature)
    }

    fn evaluate_legal(&self, batch: &Batch<'_>, out: &mut LegalAnswers) -> Result<(), EvalError> {
        out.check_masks(batch)?;
        (out.legal, out.values) = self.request(batch)?;
        Ok(())
    }
}

impl BatchingEvaluator {
    /// Queues `batch` for an inference thread and waits for its answer: its logits (the legal
    /// actions' alone when it carries masks) and values.
    fn request(&self, batch: &Batch<'_>) -> Result<(Vec<f32>, Vec<f32>), EvalError> {
        if self.threads.is_empty() {
            return Err(EvalError("the inference threads could not start".into()));
        }
        let (tx, rx) = mpsc::channel();
        {
            let mut q = self.shared.queue.lock().unwrap_or_else(|e| e.into_inner());
            if q.closing {
                return Err(EvalError("the batching evaluator is shutting down".into()));
            }
            q.requests.push(Request {
                board: batch.board,
                positions: batch.positions.to_vec(),
                planes: batch.planes.to_vec(),
                globals: batch.globals.to_vec(),
                masks: batch.masks.to_vec(),
                arrived: Instant::now(),
                reply: tx,
            });
        }
        self.shared.wake.notify_all();
        rx.recv().map_err(|_| EvalError("the inference thread stopped".into()))?
    }
}

/// An inference thread: waits for enough positions (or for the oldest request to age), merges
/// the requests of one board, evaluates them at once and answers each.
fn serve(
    shared: &Shared,
    inner: &dyn Evaluator,
    max_batch: usize,
    max_wait: Duration,
    stats: &Mutex<BatchingStats>,
) {
    // The buffers of its merged batches, kept from one to the next: a merged batch of thousands
    // of positions holds tens of megabytes of logits, which fresh allocations would fault in
    // page by page every time.
    let mut merged = (OwnedBatch::default(), LegalAnswers::default());
    loop {
        let requests = {
            let mut q = shared.queue.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if q.closing && q.requests.is_empty() {
                    return;
                }
                let pending: usize = q.requests.iter().map(|r| r.positions.len()).sum();
                let oldest = q.requests.iter().map(|r| r.arrived).min();
                match oldest {
                    Some(t) if pending >= max_batch || t.elapsed() >= max_wait || q.closing => {
                        break;
                    }
                    Some(t) => {
                        let left = max_wait.saturating_sub(t.elapsed());
                        q = shared.wake.wait_timeout(q, left).unwrap_or_else(|e| e.into_inner()).0;
                    }
                    None => q = shared.wake.wait(q).unwrap_or_else(|e| e.into_inner()),
                }
            }
            // Take the requests of the oldest request's board, up to about max_batch positions.
            let board = q.requests[0].board;
            let mut taken = Vec::new();
            let mut kept = Vec::new();
            let mut size = 0;
            for r in std::mem::take(&mut q.requests) {
                if r.board == board && (size < max_batch || taken.is_empty()) {
                    size += r.positions.len();
                    taken.push(r);
                } else {
                    kept.push(r);
                }
            }
            q.requests = kept;
            taken
        };
        evaluate_merged(inner, requests, stats, &mut merged);
    }
}

/// Evaluates the requests in one call of `inner` and answers each: with masks, the legal
/// logits alone, which the inner evaluator hands over as they are
/// ([`Evaluator::evaluate_legal`]: from a GPU, no others come back); without, every logit.
fn evaluate_merged(
    inner: &dyn Evaluator,
    requests: Vec<Request>,
    stats: &Mutex<BatchingStats>,
    (m, legal): &mut (OwnedBatch, LegalAnswers),
) {
    let board = requests[0].board;
    let actions = zertz_env::ActionSpace::new(board).len();
    m.positions.clear();
    m.planes.clear();
    m.globals.clear();
    m.masks.clear();
    for r in &requests {
        m.positions.extend_from_slice(&r.positions);
        m.planes.extend_from_slice(&r.planes);
        m.globals.extend_from_slice(&r.globals);
        m.masks.extend_from_slice(&r.masks);
    }
    let b = m.positions.len();
    // Every request with masks (a search that encodes its leaves), or none.
    let masked = requests.iter().all(|r| !r.masks.is_empty());
    if !masked {
        m.masks.clear();
        m.logits.resize(b * actions, 0.0);
    }
    m.values.resize(b, 0.0);
    let (batch, mut out) = m.parts(board);
    // Each request's legal actions (its share of the legal logits).
    let counts: Vec<usize> = match masked {
        true => requests.iter().map(|r| r.masks.iter().filter(|&&m| m).count()).collect(),
        false => Vec::new(),
    };
    let result = match masked {
        true => inner.evaluate_legal(&batch, legal).and_then(|()| {
            let set: usize = counts.iter().sum();
            match legal.values.len() == b && legal.legal.len() == set {
                true => Ok(()),
                false => Err(EvalError(format!(
                    "the evaluator answered {} values and {} legal logits for {b} positions \
                     with {set} legal actions",
                    legal.values.len(),
                    legal.legal.len()
                ))),
            }
        }),
        false => inner.evaluate(&batch, &mut out),
    };
    {
        let mut s = stats.lock().unwrap_or_else(|e| e.into_inner());
        s.batches += 1;
        s.positions += b as u64;
        s.requests += requests.len() as u64;
    }
    let (mut start, mut first_legal) = (0, 0);
    for (i, r) in requests.into_iter().enumerate() {
        let n = r.positions.len();
        let answer = match (&result, masked) {
            (Ok(()), true) => {
                let k = counts[i];
                let logits = legal.legal[first_legal..first_legal + k].to_vec();
                first_legal += k;
                Ok((logits, legal.values[start..start + n].to_vec()))
            }
            (Ok(()), false) => {
                let rows = &m.logits[start * actions..(start + n) * actions];
                Ok((rows.to_vec(), m.values[start..start + n].to_vec()))
            }
            (Err(e), _) => Err(e.clone()),
        };
        let _ = r.reply.send(answer); // a caller that went away needs no answer
        start += n;
    }
}

/// Several evaluators of the same network (one per GPU, each behind its own
/// [`BatchingEvaluator`]) seen as one: each call goes to the next, in turn.
pub struct Spread {
    parts: Vec<Arc<dyn Evaluator>>,
    next: std::sync::atomic::AtomicUsize,
}

impl Spread {
    /// `parts` in turn; at least one.
    pub fn new(parts: Vec<Arc<dyn Evaluator>>) -> Spread {
        assert!(!parts.is_empty(), "Spread needs at least one evaluator");
        Spread { parts, next: std::sync::atomic::AtomicUsize::new(0) }
    }

    /// How many evaluators it spreads over.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Never: it holds at least one.
    pub fn is_empty(&self) -> bool {
        false
    }
}

impl std::fmt::Debug for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spread").field("parts", &self.parts.len()).finish_non_exhaustive()
    }
}

impl Evaluator for Spread {
    fn wants_encoding(&self) -> bool {
        self.parts[0].wants_encoding()
    }

    fn preset(&self) -> Preset {
        self.parts[0].preset()
    }

    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        self.next_part().evaluate(batch, out)
    }

    fn evaluate_priors(
        &self,
        batch: &Batch<'_>,
        temperature: f32,
        out: &mut Evaluated,
    ) -> Result<(), EvalError> {
        self.next_part().evaluate_priors(batch, temperature, out)
    }

    fn evaluate_legal(&self, batch: &Batch<'_>, out: &mut LegalAnswers) -> Result<(), EvalError> {
        self.next_part().evaluate_legal(batch, out)
    }
}

impl Spread {
    /// The evaluator whose turn it is.
    fn next_part(&self) -> &dyn Evaluator {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % self.parts.len();
        self.parts[i].as_ref()
    }
}
