//! One tree searched on several threads ([`search_threads`]): each thread evaluates rounds of
//! leaves of its own while the others work on the tree, and the tree is worked on in turns, in
//! an order fixed in advance, so that the search is the same whatever the timing.
//!
//! Thread `t` of `N` takes turns `t`, `t + N`, `t + 2N`, ... At its turn it expands the leaves
//! it evaluated since its last turn (backing up their values), then selects the leaves of its
//! next round (virtual loss keeps them apart from the rounds of the other threads, still out);
//! out of turn it encodes and evaluates that round, and makes its priors, while the other
//! threads take their turns. A thread waits for its turn on a condition variable, never
//! spinning, so a busy machine loses nothing to it. A turn is a few microseconds a leaf, an
//! evaluation hundreds: with a network on the CPU, one thread each a core, every core evaluates
//! nearly all the time (BENCHMARKS.md, "The network player on a CPU").
//!
//! In [`TurnOrder::Fixed`] the turns are in order, and each round's leaves depend only on the
//! tree before its turn: the same tree, settings and evaluator give the same search on any
//! machine, at any load. In [`TurnOrder::AsReady`] the threads take turns as they come, so that
//! a thread slowed down (a core busy with something else) holds none up: a player under a time
//! per move, whose search depends on the timing anyway, searches so.
//!
//! ```
//! use zertz_env::{Player, Position, Variant};
//! use zertz_search::mcts::{Scratch, Tree, TurnOrder, search_threads};
//! use zertz_search::{RolloutEvaluator, SearchConfig};
//! let config = SearchConfig { leaves_per_round: 4, ..SearchConfig::default() };
//! let search = |threads: usize| {
//!     let mut tree = Tree::new(Position::new(Variant::default(), Player::P0));
//!     let mut scratches: Vec<Scratch> = (0..threads).map(|_| Scratch::default()).collect();
//!     let eval = RolloutEvaluator::default();
//!     let order = TurnOrder::Fixed;
//!     search_threads(&mut tree, 200, &config, &eval, &mut scratches, order, &mut || false)
//!         .unwrap();
//!     assert_eq!(tree.root_visits(), 200);
//!     tree.root_info().visits
//! };
//! assert_eq!(search(3), search(3)); // whatever the timing
//! ```

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Condvar, Mutex, MutexGuard};

use cpu_time::ThreadTime;

use super::{
    Finished, Scratch, Tree, abandon_round, copy_positions, evaluate_positions, expand_round,
    search_interruptible,
};
use crate::config::SearchConfig;
use crate::evaluator::{EvalError, Evaluator};

/// The most threads one search takes.
pub const MAX_SEARCH_THREADS: usize = 256;

/// The order in which the threads of [`search_threads`] take their turns on the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnOrder {
    /// Fixed in advance (thread `t` of `N` takes turns `t`, `t + N`, ...): the same search
    /// whatever the timing, but a thread whose turn has come waits for the one before it, so a
    /// thread slowed down (its core busy with something else) slows every thread.
    Fixed,
    /// As the threads come: none waits for a slower one, and the search depends on the timing,
    /// as one under a time per move does anyway.
    AsReady,
}

/// What the threads of a search share, behind one lock.
struct Turns<'t> {
    tree: &'t mut Tree,
    /// The turn to be taken next.
    turn: usize,
    /// The threads that take turns (known once they have all started).
    threads: usize,
    /// Set once no more leaves are to be selected: each thread takes one more turn, to expand
    /// the leaves it has out, and leaves.
    finished: Option<Finished>,
    /// The first evaluation that failed.
    error: Option<EvalError>,
    /// Leaves selected and not yet expanded.
    out: usize,
    /// A thread panicked outside its evaluation: every thread leaves at once.
    abandoned: bool,
}

/// The lock and the condition variable of the turns.
struct Shared<'t> {
    turns: Mutex<Turns<'t>>,
    turn_taken: Condvar,
}

impl<'t> Shared<'t> {
    fn lock(&self) -> MutexGuard<'_, Turns<'t>> {
        // (A panic under the lock abandons the search: what it left is not read again.)
        self.turns.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for turn `turn` (once the threads are all started); in [`TurnOrder::AsReady`] for
    /// any turn, but after turn `idle` when the thread's last turn selected nothing (so that it
    /// waits for another thread's turn to change the tree instead of spinning on the lock);
    /// `None` when the search was abandoned.
    fn wait(
        &self,
        turn: usize,
        order: TurnOrder,
        idle: Option<usize>,
    ) -> Option<MutexGuard<'_, Turns<'t>>> {
        let mut s = self.lock();
        let mine = |s: &Turns<'_>| match order {
            TurnOrder::Fixed => s.turn == turn,
            TurnOrder::AsReady => idle.is_none_or(|t| s.turn > t),
        };
        while !s.abandoned && (s.threads == 0 || !mine(&s)) {
            s = self.turn_taken.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        (!s.abandoned).then_some(s)
    }

    /// Abandons the search after a panic: every thread leaves.
    fn abandon(&self) {
        self.lock().abandoned = true;
        self.turn_taken.notify_all();
    }
}

/// Runs `simulations` more simulations in `tree` on `scratches.len()` threads (the calling
/// thread and `scratches.len() - 1` more, started for this search; at most
/// [`MAX_SEARCH_THREADS`]), each with its own scratch buffers and rounds of
/// [`SearchConfig::leaves_per_round`] leaves (see the module docs). `interrupted` is asked on
/// the calling thread at each of its turns. With one scratch it is [`search_interruptible`] on
/// one tree.
///
/// The search stops as [`search_interruptible`] does: done (the simulations, a proven root, a
/// full tree), interrupted, or at the first evaluation that fails. Every round out is expanded
/// before it returns, so the tree is consistent whatever ended it (a failed round is taken
/// back). Each helper thread's scratch adds its CPU time ([`Scratch::cpu`]). A panic of the
/// evaluator on the calling thread goes on after the other threads have stopped; on another
/// thread it is an error.
pub fn search_threads(
    tree: &mut Tree,
    simulations: u32,
    config: &SearchConfig,
    evaluator: &dyn Evaluator,
    scratches: &mut [Scratch],
    order: TurnOrder,
    interrupted: &mut dyn FnMut() -> bool,
) -> Result<Finished, EvalError> {
    let threads = scratches.len().min(MAX_SEARCH_THREADS);
    let (own, helpers) = match scratches[..threads].split_first_mut() {
        Some((own, helpers)) if !helpers.is_empty() => (own, helpers),
        _ => {
            let mut fresh = Scratch::default();
            let scratch = scratches.first_mut().unwrap_or(&mut fresh);
            let sims = [simulations];
            return search_interruptible(
                std::slice::from_mut(tree),
                &sims,
                config,
                evaluator,
                scratch,
                interrupted,
            );
        }
    };
    let target = tree.root_visits().saturating_add(simulations);
    // A Gumbel root starts again with each search (once its root is expanded).
    tree.gumbel = None;
    let round = Round { order, target, config, evaluator };
    let shared = Shared {
        turns: Mutex::new(Turns {
            tree,
            turn: 0,
            threads: 0,
            finished: None,
            error: None,
            out: 0,
            abandoned: false,
        }),
        turn_taken: Condvar::new(),
    };
    let (shared, round) = (&shared, &round);
    let own_panic = std::thread::scope(|scope| {
        let mut started = 1;
        for (i, scratch) in helpers.iter_mut().enumerate() {
            let thread = std::thread::Builder::new()
                .name(format!("zertz-search-{}", i + 1))
                .spawn_scoped(scope, move || {
                    let clock = ThreadTime::now();
                    round.take_turns(shared, i + 1, scratch, None);
                    scratch.cpu += clock.elapsed();
                });
            if thread.is_err() {
                break; // the threads started take the turns
            }
            started += 1;
        }
        shared.lock().threads = started;
        shared.turn_taken.notify_all();
        round.take_turns(shared, 0, own, Some(interrupted))
    });
    let mut s = shared.lock();
    if let Some(panic) = own_panic {
        resume_unwind(panic);
    }
    if s.abandoned {
        panic!("a search thread panicked");
    }
    match s.error.take() {
        Some(e) => Err(e),
        None => Ok(s.finished.unwrap_or(Finished::Done)),
    }
}

/// What every thread of one search works with.
struct Round<'a> {
    order: TurnOrder,
    target: u32,
    config: &'a SearchConfig,
    evaluator: &'a dyn Evaluator,
}

impl Round<'_> {
    /// Thread `t`'s turns until the search is over; the panic of its evaluator on the calling
    /// thread (`interrupted` is given there), to go on with once every thread has stopped.
    fn take_turns(
        &self,
        shared: &Shared<'_>,
        t: usize,
        scratch: &mut Scratch,
        mut interrupted: Option<&mut dyn FnMut() -> bool>,
    ) -> Option<Box<dyn Any + Send>> {
        let run = catch_unwind(AssertUnwindSafe(|| {
            let mut own_panic = None;
            // The evaluation of the thread's leaves out.
            let mut evaluated: Result<(), EvalError> = Ok(());
            let mut turn = t;
            // The turn after which this thread's last one selected nothing.
            let mut idle = None;
            loop {
                let Some(mut s) = shared.wait(turn, self.order, idle) else { return own_panic };
                let threads = s.threads;
                let board = s.tree.position().board();
                if !scratch.requests.is_empty() {
                    let trees = std::slice::from_mut(&mut *s.tree);
                    let failed = match std::mem::replace(&mut evaluated, Ok(())) {
                        Ok(()) => {
                            expand_round(trees, self.config, scratch);
                            None
                        }
                        Err(e) => {
                            abandon_round(trees, &scratch.requests, self.config);
                            Some(e)
                        }
                    };
                    if let Some(e) = failed {
                        s.error.get_or_insert(e);
                        s.finished.get_or_insert(Finished::Done);
                    }
                    s.out -= scratch.requests.len();
                    scratch.requests.clear();
                }
                if s.finished.is_none() && interrupted.as_mut().is_some_and(|stop| stop()) {
                    s.finished = Some(Finished::Interrupted);
                }
                if s.finished.is_none() {
                    self.select(&mut s, scratch);
                }
                let last = s.finished.is_some();
                s.turn += 1;
                idle = scratch.requests.is_empty().then_some(s.turn);
                drop(s);
                shared.turn_taken.notify_all();
                if last {
                    return own_panic;
                }
                if !scratch.requests.is_empty() {
                    let config = self.config;
                    let evaluation = catch_unwind(AssertUnwindSafe(|| {
                        evaluate_positions(board, config, self.evaluator, scratch)
                    }));
                    evaluated = evaluation.unwrap_or_else(|panic| {
                        let error = EvalError("the evaluator panicked on a search thread".into());
                        if interrupted.is_some() {
                            own_panic = Some(panic);
                        }
                        Err(error)
                    });
                }
                turn += threads;
            }
        }));
        run.unwrap_or_else(|panic| {
            shared.abandon();
            // (The calling thread's panic goes on after the others have stopped; another
            // thread's is reported there as an abandoned search.)
            if interrupted.is_some() { Some(panic) } else { None }
        })
    }

    /// Selects the thread's next round at its turn, its positions copied to be evaluated out of
    /// turn; or says the search is finished.
    fn select(&self, s: &mut Turns<'_>, scratch: &mut Scratch) {
        let tree = &mut *s.tree;
        let leaves = self.config.leaves_per_round.max(1) as usize;
        if tree.root_visits() >= self.target || tree.root_proven() || tree.is_full() {
            s.finished = Some(Finished::Done);
            return;
        }
        let reserved = s.out.saturating_mul(tree.leaf_bytes());
        let busy = tree.select_round(0, self.target, leaves, reserved, self.config, scratch);
        if !busy && s.out == 0 {
            // Nothing to select and nothing out: nothing more will come.
            s.finished = Some(Finished::Done);
            return;
        }
        s.out += scratch.requests.len();
        copy_positions(std::slice::from_ref(tree), scratch);
    }
}
