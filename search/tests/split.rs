//! `zertz_search::split::Split`: one batch evaluated in parts on several threads gives exactly
//! the answers of the whole batch on one, so a search with it builds the same tree; the parts
//! run on distinct threads; a failure or a panic in any part is the batch's error.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use zertz_env::{Player, Position, SplitMix64, Variant};
use zertz_search::evaluator::batch_lengths;
use zertz_search::mcts::{Scratch, Tree, search};
use zertz_search::split::Split;
use zertz_search::{Batch, EvalError, Evaluator, Output, SearchConfig};

/// Answers that depend on every input of a position (its planes, globals and mask) and on
/// nothing else, so that a part given another position's rows, or answers written to another
/// position's rows, show; records the threads that called it and how many positions each call
/// held.
#[derive(Default)]
struct Fingerprint {
    threads: Mutex<HashSet<ThreadId>>,
    calls: Mutex<Vec<usize>>,
    fail_on: Option<usize>,
    panic: AtomicBool,
}

impl Evaluator for Fingerprint {
    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        self.threads.lock().unwrap().insert(std::thread::current().id());
        self.calls.lock().unwrap().push(batch.len());
        if self.panic.load(Ordering::Relaxed) {
            panic!("a test evaluator panics");
        }
        let b = batch.len();
        let (p, g, a) = (batch.planes.len() / b, batch.globals.len() / b, batch.masks.len() / b);
        for i in 0..b {
            if self.fail_on == Some(batch.positions[i].count_legal_actions()) {
                return Err(EvalError("a position the test refuses".into()));
            }
            let planes: f32 = batch.planes[i * p..(i + 1) * p].iter().sum();
            let globals: f32 = batch.globals[i * g..(i + 1) * g].iter().sum();
            let legal = batch.masks[i * a..(i + 1) * a].iter().filter(|&&m| m).count() as f32;
            for (k, l) in out.logits[i * a..(i + 1) * a].iter_mut().enumerate() {
                *l = ((k * 7 + planes as usize) % 13) as f32 * 0.1 + legal * 1e-3;
            }
            out.values[i] = ((planes + 3.0 * globals + legal).sin()).clamp(-1.0, 1.0);
        }
        Ok(())
    }
}

/// `n` positions of random games on 37 rings, encoded, with their masks.
fn batch(n: usize) -> (Vec<Position>, Vec<f32>, Vec<f32>, Vec<bool>) {
    let mut rng = SplitMix64(7);
    let mut out = Vec::new();
    let mut p = Position::new(Variant::default(), Player::P0);
    while out.len() < n {
        if p.outcome().is_some() {
            p = Position::new(Variant::default(), Player::P0);
        }
        out.push(p);
        let a = p.nth_legal_action(rng.below(p.count_legal_actions())).unwrap();
        p.play_action_unchecked(&a);
    }
    let board = out[0].board();
    let (lp, lg, lm) = batch_lengths(board, n);
    let (mut planes, mut globals, mut masks) = (vec![0.0; lp], vec![0.0; lg], vec![false; lm]);
    let (p1, g1, m1) = (lp / n, lg / n, lm / n);
    for (i, pos) in out.iter().enumerate() {
        pos.encode(&mut planes[i * p1..(i + 1) * p1], &mut globals[i * g1..(i + 1) * g1]);
        pos.legal_action_mask(&mut masks[i * m1..(i + 1) * m1]);
    }
    (out, planes, globals, masks)
}

fn evaluate(eval: &dyn Evaluator, n: usize) -> Result<(Vec<f32>, Vec<f32>), EvalError> {
    evaluate_as(eval, n, true)
}

/// The answers of `eval` for [`batch`]`(n)`, given its encoding or (`encoded` false) its
/// positions alone.
fn evaluate_as(
    eval: &dyn Evaluator,
    n: usize,
    encoded: bool,
) -> Result<(Vec<f32>, Vec<f32>), EvalError> {
    let (positions, mut planes, mut globals, mut masks) = batch(n);
    let board = positions[0].board();
    let mut logits = vec![f32::NAN; masks.len()];
    let mut values = vec![f32::NAN; n];
    if !encoded {
        (planes, globals, masks) = (vec![], vec![], vec![]);
    }
    let batch =
        Batch { board, positions: &positions, planes: &planes, globals: &globals, masks: &masks };
    eval.evaluate(&batch, &mut Output { logits: &mut logits, values: &mut values })?;
    Ok((logits, values))
}

#[test]
fn parts_give_the_whole_batchs_answers_on_distinct_threads() {
    let alone = Fingerprint::default();
    for n in [1, 2, 3, 7, 8, 13] {
        for threads in [1, 2, 3, 4] {
            let inner = Arc::new(Fingerprint::default());
            let split = Split::new(inner.clone(), threads);
            assert_eq!(split.threads(), threads);
            let (logits, values) = evaluate(&split, n).unwrap();
            let (want_logits, want_values) = evaluate(&alone, n).unwrap();
            assert_eq!(values, want_values, "{n} positions on {threads} threads");
            assert!(logits == want_logits, "{n} positions on {threads} threads: logits differ");
            // The search gives positions alone (Split wants no encoding): each part is encoded
            // by the thread that evaluates it, to the same answers.
            assert!(!split.wants_encoding());
            let unencoded = evaluate_as(&split, n, false).unwrap();
            assert!(unencoded == (want_logits, want_values), "{n} on {threads}, unencoded");
            // Every part on a thread of its own, the batch cut as evenly as the parts allow.
            let parts = threads.min(n);
            assert_eq!(inner.threads.lock().unwrap().len(), parts, "{n} on {threads}");
            let calls = inner.calls.lock().unwrap().clone();
            assert_eq!(calls.iter().sum::<usize>(), 2 * n);
            assert_eq!(calls.len(), 2 * parts, "{n} on {threads}: {calls:?}");
        }
    }
}

#[test]
fn a_search_with_parts_builds_the_tree_of_one_thread() {
    let config = SearchConfig { leaves_per_round: 8, ..SearchConfig::default() };
    let root = Position::new(Variant::default(), Player::P0);
    let mut one = vec![Tree::new(root)];
    search(&mut one, &[300], &config, &Fingerprint::default(), &mut Scratch::default()).unwrap();
    let split = Split::new(Arc::new(Fingerprint::default()), 3);
    let mut three = vec![Tree::new(root)];
    search(&mut three, &[300], &config, &split, &mut Scratch::default()).unwrap();
    assert_eq!(one[0].root_visits(), 300);
    assert_eq!(one[0].root_info(), three[0].root_info());
    assert!(split.helper_cpu() > std::time::Duration::ZERO, "the helpers' time is counted");
}

#[test]
fn a_failing_part_or_a_panic_is_the_batchs_error_and_the_helpers_go_on() {
    // The position of the batch with this many legal actions falls in a helper's part.
    let (positions, ..) = batch(8);
    let fail_on = positions[6].count_legal_actions();
    let failing = Fingerprint { fail_on: Some(fail_on), ..Fingerprint::default() };
    let split = Split::new(Arc::new(failing), 2);
    let e = evaluate(&split, 8).unwrap_err();
    assert!(e.0.contains("refuses"), "{e}");

    let panicking = Arc::new(Fingerprint::default());
    let split = Split::new(panicking.clone(), 2);
    evaluate(&split, 8).unwrap();
    panicking.panic.store(true, Ordering::Relaxed);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| evaluate(&split, 8)));
    // The calling thread's own part panics through to the caller; the helper's is an error.
    assert!(caught.is_err(), "the caller's part panics on the caller");
    panicking.panic.store(false, Ordering::Relaxed);
    let (logits, values) = evaluate(&split, 8).expect("the helpers answer after a panic");
    assert_eq!((logits, values), evaluate(&Fingerprint::default(), 8).unwrap());
}
