//! `zertz_search::mcts::search_threads`: one tree searched on several threads, in turns fixed in
//! advance. The same search whatever the timing; every thread evaluates; the tree is consistent
//! after it, whatever ended it (done, interrupted, a failure, a panic); a helper's time is
//! counted; the memory budget holds.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::ThreadId;
use std::time::Duration;

use zertz_env::{Player, Position, SplitMix64, Variant};
use zertz_search::mcts::{Finished, RootInfo, Scratch, Tree, TurnOrder, search_threads};
use zertz_search::{Batch, EvalError, Evaluator, Output, SearchConfig};

/// Answers that depend on the position alone; each call sleeps a while that depends on how many
/// calls came before it (so the threads' timing changes from run to run, and the answers must
/// not); records the threads that called it. It fails on a position with `fail_on` legal
/// actions, and from its tenth call on panics when `panic` is set, on a helper thread or on the
/// calling thread (`panic_on_helper`).
#[derive(Default)]
struct Jittery {
    threads: Mutex<HashSet<ThreadId>>,
    calls: AtomicU64,
    jitter_seed: u64,
    fail_on: Option<usize>,
    panic: AtomicBool,
    panic_on_helper: bool,
}

impl Evaluator for Jittery {
    fn wants_encoding(&self) -> bool {
        false
    }

    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        self.threads.lock().unwrap().insert(std::thread::current().id());
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let mut rng = SplitMix64(self.jitter_seed ^ call);
        std::thread::sleep(Duration::from_micros(rng.next_u64() % 300));
        let helper = std::thread::current().name().is_some_and(|n| n.starts_with("zertz-search-"));
        if self.panic.load(Ordering::Relaxed) && call >= 10 && helper == self.panic_on_helper {
            panic!("a test evaluator panics");
        }
        let a = out.logits.len() / batch.len();
        for (i, p) in batch.positions.iter().enumerate() {
            if self.fail_on == Some(p.count_legal_actions()) {
                return Err(EvalError("a position the test refuses".into()));
            }
            let mut rng = SplitMix64(p.hash());
            for l in &mut out.logits[i * a..(i + 1) * a] {
                *l = (rng.next_u64() % 1000) as f32 / 250.0;
            }
            out.values[i] = (p.hash() % 2001) as f32 / 1000.0 - 1.0;
        }
        Ok(())
    }
}

fn start() -> Position {
    Position::new(Variant::default(), Player::P0)
}

fn scratches(n: usize) -> Vec<Scratch> {
    (0..n).map(|_| Scratch::default()).collect()
}

/// The tree holds no waiting leaf and no virtual loss: its root's visits are its own and those
/// of its children, and another search goes on from it.
fn assert_consistent(tree: &mut Tree) {
    let info = tree.root_info();
    let children: u32 = info.visits.iter().map(|&(_, v)| v).sum();
    assert_eq!(children + 1, tree.root_visits(), "the root's visits are its children's");
    let before = tree.root_visits();
    let config = SearchConfig::default();
    let eval = Jittery::default();
    search_threads(tree, 50, &config, &eval, &mut scratches(1), TurnOrder::Fixed, &mut || false)
        .unwrap();
    assert_eq!(tree.root_visits(), before + 50);
}

/// A search of `sims` simulations from the start on `threads` threads, with jitter `seed`.
fn searched(threads: usize, sims: u32, config: &SearchConfig, seed: u64) -> (RootInfo, usize) {
    let mut tree = Tree::new(start());
    let eval = Jittery { jitter_seed: seed, ..Jittery::default() };
    let mut s = scratches(threads);
    let finished =
        search_threads(&mut tree, sims, config, &eval, &mut s, TurnOrder::Fixed, &mut || false);
    assert_eq!(finished, Ok(Finished::Done));
    assert_eq!(tree.root_visits(), sims);
    if threads > 1 {
        assert!(s[1..].iter().all(|s| s.cpu > Duration::ZERO), "a helper's time is counted");
    }
    let rounds: u64 = s.iter().map(|s| s.batches).sum();
    assert!(rounds > 0);
    let info = tree.root_info();
    assert_consistent(&mut tree);
    let called = eval.threads.lock().unwrap().len();
    (info, called)
}

#[test]
fn a_search_on_threads_is_the_same_whatever_the_timing_and_every_thread_evaluates() {
    let config = SearchConfig { leaves_per_round: 4, ..SearchConfig::default() };
    for threads in [2, 3, 4] {
        let (first, called) = searched(threads, 400, &config, 1);
        assert_eq!(called, threads, "every thread evaluated");
        for seed in [2, 3] {
            assert_eq!(searched(threads, 400, &config, seed).0, first, "{threads} threads");
        }
    }
    // One thread is the search of one tree.
    let (one, called) = searched(1, 400, &config, 1);
    assert_eq!(called, 1);
    let mut tree = Tree::new(start());
    zertz_search::mcts::search(
        std::slice::from_mut(&mut tree),
        &[400],
        &config,
        &Jittery::default(),
        &mut Scratch::default(),
    )
    .unwrap();
    assert_eq!(one, tree.root_info());
}

#[test]
fn a_gumbel_root_searches_on_threads_the_same_each_time() {
    let config = SearchConfig { leaves_per_round: 4, gumbel_actions: 8, ..SearchConfig::default() };
    let search = |seed| {
        let mut tree = Tree::new(start());
        tree.set_gumbel_seed(7);
        let eval = Jittery { jitter_seed: seed, ..Jittery::default() };
        search_threads(
            &mut tree,
            200,
            &config,
            &eval,
            &mut scratches(2),
            TurnOrder::Fixed,
            &mut || false,
        )
        .unwrap();
        assert_eq!(tree.root_visits(), 200);
        let mut policy = vec![0.0; zertz_env::ActionSpace::new(start().board()).len()];
        tree.policy(&config, &mut policy);
        (tree.gumbel_action(&config), policy)
    };
    let first = search(1);
    assert!(first.0.is_some());
    assert_eq!(search(2), first);
}

#[test]
fn an_interrupted_search_on_threads_leaves_a_consistent_tree() {
    let config = SearchConfig { leaves_per_round: 4, ..SearchConfig::default() };
    let mut tree = Tree::new(start());
    let mut asked = 0;
    let finished = search_threads(
        &mut tree,
        100_000,
        &config,
        &Jittery::default(),
        &mut scratches(3),
        TurnOrder::Fixed,
        &mut || {
            asked += 1;
            asked > 5
        },
    );
    assert_eq!(finished, Ok(Finished::Interrupted));
    assert!(tree.root_visits() > 1 && tree.root_visits() < 1000, "{}", tree.root_visits());
    assert_consistent(&mut tree);
}

#[test]
fn a_failure_on_any_thread_is_the_searchs_error_and_the_tree_stays_consistent() {
    let config = SearchConfig { leaves_per_round: 4, ..SearchConfig::default() };
    // A position one action into the game: some round of some thread meets it.
    let after = start().play_action(&start().nth_legal_action(0).unwrap()).unwrap();
    assert_ne!(after.count_legal_actions(), start().count_legal_actions());
    let failing = Jittery { fail_on: Some(after.count_legal_actions()), ..Jittery::default() };
    let mut tree = Tree::new(start());
    let e = search_threads(
        &mut tree,
        400,
        &config,
        &failing,
        &mut scratches(2),
        TurnOrder::Fixed,
        &mut || false,
    );
    assert!(e.unwrap_err().0.contains("refuses"));
    assert_consistent(&mut tree);
}

#[test]
fn a_panic_on_the_calling_thread_goes_on_and_a_helpers_is_an_error() {
    let config = SearchConfig { leaves_per_round: 4, ..SearchConfig::default() };
    for on_helper in [true, false] {
        let eval = Jittery { panic_on_helper: on_helper, ..Jittery::default() };
        eval.panic.store(true, Ordering::Relaxed);
        let mut tree = Tree::new(start());
        let mut s = scratches(2);
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            search_threads(&mut tree, 400, &config, &eval, &mut s, TurnOrder::Fixed, &mut || false)
        }));
        match run {
            Ok(result) => {
                assert!(on_helper, "the calling thread's panic goes on");
                assert!(result.unwrap_err().0.contains("panicked on a search thread"));
            }
            Err(_) => assert!(!on_helper, "a helper's panic is an error"),
        }
        assert_consistent(&mut tree);
    }
}

#[test]
fn a_search_on_threads_keeps_the_trees_memory_budget() {
    let config = SearchConfig { leaves_per_round: 8, ..SearchConfig::default() };
    let budget = 2 << 20;
    let mut tree = Tree::with_max_bytes(start(), budget);
    let eval = Jittery::default();
    let finished = search_threads(
        &mut tree,
        100_000,
        &config,
        &eval,
        &mut scratches(4),
        TurnOrder::Fixed,
        &mut || false,
    );
    assert_eq!(finished, Ok(Finished::Done));
    assert!(tree.is_full());
    assert!(tree.bytes() <= budget, "{} bytes of {budget}", tree.bytes());
    assert!(tree.root_visits() > 10 && tree.root_visits() < 100_000);
}

#[test]
fn threads_that_take_turns_as_they_come_search_every_simulation_on_a_consistent_tree() {
    let config = SearchConfig { leaves_per_round: 4, ..SearchConfig::default() };
    for threads in [2, 3] {
        let mut tree = Tree::new(start());
        let eval = Jittery::default();
        let mut s = scratches(threads);
        let order = TurnOrder::AsReady;
        let finished = search_threads(&mut tree, 400, &config, &eval, &mut s, order, &mut || false);
        assert_eq!(finished, Ok(Finished::Done));
        assert_eq!(tree.root_visits(), 400);
        assert_eq!(eval.threads.lock().unwrap().len(), threads, "every thread evaluated");
        assert_consistent(&mut tree);
    }
}
