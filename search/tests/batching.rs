//! The batching queue: concurrent calls are merged, every caller gets its own answers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use zertz_env::{ActionSpace, Player, Position, Variant};
use zertz_search::batching::BatchingEvaluator;
use zertz_search::{Batch, EvalError, Evaluator, Output};

/// Answers every position with a value derived from its hash, and a logit at one index derived
/// from it too; remembers the batch sizes it saw.
#[derive(Default)]
struct Recording {
    sizes: Mutex<Vec<usize>>,
    fail: bool,
}

fn tag(pos: &Position) -> f32 {
    (pos.hash() % 1000) as f32 / 1000.0
}

impl Evaluator for Recording {
    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        if self.fail {
            return Err(EvalError("no model".into()));
        }
        self.sizes.lock().unwrap().push(batch.len());
        let a = ActionSpace::new(batch.board).len();
        out.logits.fill(0.0);
        for (i, pos) in batch.positions.iter().enumerate() {
            out.values[i] = tag(pos);
            out.logits[i * a + (pos.hash() % a as u64) as usize] = 1.0;
        }
        Ok(())
    }
}

fn positions(seed: u64, n: usize) -> Vec<Position> {
    let mut pos = Position::new(Variant::default(), Player::P0);
    let mut rng = zertz_env::SplitMix64(seed);
    (0..n)
        .map(|_| {
            let k = rng.below(pos.count_legal_actions());
            if let Some(a) = pos.nth_legal_action(k) {
                pos.play_action_unchecked(&a);
            }
            if pos.is_over() {
                pos = Position::new(Variant::default(), Player::P1);
            }
            pos
        })
        .collect()
}

fn call(eval: &dyn Evaluator, ps: &[Position]) -> Result<(Vec<f32>, Vec<f32>), EvalError> {
    let a = ActionSpace::new(ps[0].board()).len();
    let mut logits = vec![0.0; ps.len() * a];
    let mut values = vec![0.0; ps.len()];
    let batch =
        Batch { board: ps[0].board(), positions: ps, planes: &[], globals: &[], masks: &[] };
    eval.evaluate(&batch, &mut Output { logits: &mut logits, values: &mut values })?;
    Ok((logits, values))
}

#[test]
fn concurrent_calls_are_merged_and_answered_separately() {
    let inner = Arc::new(Recording::default());
    // The batch goes when all four calls are in (32 positions), however late a busy machine
    // brings the last: the wait limit is a minute.
    let eval = Arc::new(BatchingEvaluator::new(inner.clone(), 32, Duration::from_secs(60)));
    let threads = 4;
    let barrier = Arc::new(Barrier::new(threads));
    let checked = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (eval, barrier, checked) = (eval.clone(), barrier.clone(), checked.clone());
            std::thread::spawn(move || {
                let ps = positions(t as u64, 8);
                barrier.wait();
                let (logits, values) = call(eval.as_ref(), &ps).unwrap();
                let a = ActionSpace::new(ps[0].board()).len();
                for (i, pos) in ps.iter().enumerate() {
                    assert_eq!(values[i], tag(pos), "thread {t} got another thread's value");
                    assert_eq!(logits[i * a + (pos.hash() % a as u64) as usize], 1.0);
                }
                checked.fetch_add(ps.len(), Ordering::Relaxed);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(checked.load(Ordering::Relaxed), 32);
    let sizes = inner.sizes.lock().unwrap().clone();
    assert_eq!(sizes.iter().sum::<usize>(), 32);
    assert!(sizes.len() < threads, "4 concurrent calls of 8 were merged: {sizes:?}");
    assert_eq!(eval.stats().requests, 4);
}

#[test]
fn a_lone_call_is_answered_after_the_wait_limit() {
    let eval =
        BatchingEvaluator::new(Arc::new(Recording::default()), 1 << 20, Duration::from_millis(5));
    let ps = positions(9, 3);
    let (_, values) = call(&eval, &ps).unwrap();
    assert_eq!(values, ps.iter().map(tag).collect::<Vec<_>>());
}

#[test]
fn inner_errors_reach_every_caller() {
    let inner = Arc::new(Recording { fail: true, ..Recording::default() });
    let eval = BatchingEvaluator::new(inner, 4, Duration::from_millis(1));
    let err = call(&eval, &positions(1, 2)).unwrap_err();
    assert_eq!(err.0, "no model");
}

/// Runs like [`Recording`], counting how many calls run at the same time; each call waits until
/// two have run at once (a minute at most: what one inference thread alone would take), so that
/// calls overlap however the machine schedules them.
#[derive(Default)]
struct Slow {
    running: AtomicUsize,
    most: AtomicUsize,
}

impl Evaluator for Slow {
    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while self.most.load(Ordering::SeqCst) < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let result = Recording::default().evaluate(batch, out);
        self.running.fetch_sub(1, Ordering::SeqCst);
        result
    }
}

#[test]
fn several_inference_threads_run_batches_side_by_side() {
    let inner = Arc::new(Slow::default());
    // Batches of at most one request: six callers, three inference threads.
    let eval = Arc::new(BatchingEvaluator::with_threads(inner.clone(), 8, Duration::ZERO, 3));
    let barrier = Arc::new(Barrier::new(6));
    let handles: Vec<_> = (0..6u64)
        .map(|t| {
            let (eval, barrier) = (eval.clone(), barrier.clone());
            std::thread::spawn(move || {
                let ps = positions(100 + t, 8);
                barrier.wait();
                let (_, values) = call(eval.as_ref(), &ps).unwrap();
                assert_eq!(values, ps.iter().map(tag).collect::<Vec<_>>(), "caller {t}");
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let most = inner.most.load(Ordering::SeqCst);
    assert!((2..=3).contains(&most), "{most} batches ran at once with 3 inference threads");
    assert_eq!(eval.stats().requests, 6);
}

/// `Spread` hands calls to its parts in turn (one per GPU), each answering as itself.
#[test]
fn spread_takes_turns_and_answers_each_caller() {
    use zertz_search::batching::Spread;
    let parts: Vec<Arc<Recording>> = (0..3).map(|_| Arc::new(Recording::default())).collect();
    let spread =
        Spread::new(parts.iter().map(|p| p.clone() as Arc<dyn Evaluator>).collect::<Vec<_>>());
    assert_eq!(spread.len(), 3);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let spread = &spread;
            s.spawn(move || {
                for k in 0..6 {
                    let ps = positions(t * 100 + k, 1 + (k as usize % 3));
                    let (_, values) = call(spread, &ps).unwrap();
                    assert_eq!(values, ps.iter().map(tag).collect::<Vec<_>>());
                }
            });
        }
    });
    // 24 calls in turn: 8 each.
    for p in &parts {
        assert_eq!(p.sizes.lock().unwrap().len(), 8);
    }
}

/// Answers every logit with a number of its own (`position * A + action`).
struct Numbering;

impl Evaluator for Numbering {
    fn evaluate(&self, _batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        for (i, l) in out.logits.iter_mut().enumerate() {
            *l = i as f32;
        }
        out.values.fill(0.5);
        Ok(())
    }
}

/// With legal masks, callers merged into one batch get their own legal actions' logits, and
/// their other entries are left as they were (only the legal logits cross back).
#[test]
fn masked_calls_get_their_legal_logits_and_nothing_else() {
    // One batch of the three calls (15 positions), however late a busy machine brings the last.
    let eval = Arc::new(BatchingEvaluator::new(Arc::new(Numbering), 15, Duration::from_secs(60)));
    let threads = 3;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (eval, barrier) = (eval.clone(), barrier.clone());
            std::thread::spawn(move || {
                let ps = positions(10 + t as u64, 5);
                let board = ps[0].board();
                let a = ActionSpace::new(board).len();
                let mut masks = vec![false; ps.len() * a];
                for (i, p) in ps.iter().enumerate() {
                    p.legal_action_mask(&mut masks[i * a..(i + 1) * a]);
                }
                let mut logits = vec![f32::NAN; ps.len() * a];
                let mut values = vec![0.0; ps.len()];
                let batch =
                    Batch { board, positions: &ps, planes: &[], globals: &[], masks: &masks };
                barrier.wait();
                eval.evaluate(&batch, &mut Output { logits: &mut logits, values: &mut values })
                    .unwrap();
                assert_eq!(values, vec![0.5; ps.len()]);
                // Each caller's rows sit somewhere in the merged batch: the same offset for all.
                let first = masks.iter().position(|&m| m).unwrap();
                let offset = logits[first] - first as f32;
                assert!(offset >= 0.0 && offset % a as f32 == 0.0, "thread {t}: offset {offset}");
                for (i, (&legal, &l)) in masks.iter().zip(&logits).enumerate() {
                    if legal {
                        assert_eq!(l, offset + i as f32, "thread {t}: legal action {i}");
                    } else {
                        assert!(l.is_nan(), "thread {t}: illegal action {i} was written");
                    }
                }
                offset as usize / a
            })
        })
        .collect();
    // One batch: the callers' rows one after the other.
    let mut rows: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    rows.sort_unstable();
    assert_eq!(rows, [0, 5, 10]);
    assert_eq!(eval.stats().requests, 3);
}

/// Logits that differ from one legal action and one position to the next (only the legal ones
/// finite: the others are NaN, which nothing may read), values by the position.
struct Varied;

impl Evaluator for Varied {
    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        let a = ActionSpace::new(batch.board).len();
        for (i, p) in batch.positions.iter().enumerate() {
            let mut rng = zertz_env::SplitMix64(p.hash());
            for (l, &m) in out.logits[i * a..(i + 1) * a].iter_mut().zip(&batch.masks[i * a..]) {
                *l = if m { (rng.next_u64() % 1000) as f32 / 250.0 } else { f32::NAN };
            }
            out.values[i] = tag(p) * 2.0 - 1.0;
        }
        Ok(())
    }
}

/// Searches that go through the queue (their priors made from the legal logits alone, merged
/// with other searches' leaves) build the trees that the evaluator builds when called directly.
#[test]
fn searches_through_the_queue_build_the_trees_of_their_evaluator() {
    use zertz_search::SearchConfig;
    use zertz_search::mcts::{Scratch, Tree, search};
    let config = SearchConfig { leaves_per_round: 8, ..SearchConfig::default() };
    let roots = positions(5, 3);
    let alone: Vec<_> = roots
        .iter()
        .map(|&root| {
            let mut tree = vec![Tree::new(root)];
            search(&mut tree, &[300], &config, &Varied, &mut Scratch::default()).unwrap();
            tree[0].root_info()
        })
        .collect();
    let eval = Arc::new(BatchingEvaluator::new(Arc::new(Varied), 64, Duration::from_millis(1)));
    let handles: Vec<_> = roots
        .iter()
        .map(|&root| {
            let (eval, config) = (eval.clone(), config.clone());
            std::thread::spawn(move || {
                let mut tree = vec![Tree::new(root)];
                search(&mut tree, &[300], &config, eval.as_ref(), &mut Scratch::default()).unwrap();
                tree[0].root_info()
            })
        })
        .collect();
    for (h, want) in handles.into_iter().zip(alone) {
        assert_eq!(h.join().unwrap(), want);
    }
    assert!(eval.stats().requests > 0);
}
