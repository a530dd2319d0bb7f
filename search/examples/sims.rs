//! Simulations per second of the search with the uniform evaluator (search cost alone) or random
//! rollouts, from the 37-ring start, on one thread.
//!
//! ```text
//! cargo run --release -p zertz-search --example sims -- [TREES] [SIMS] [uniform|rollout] [LEAVES_PER_ROUND]
//! ```

use std::time::Instant;

use zertz_env::{Player, Position, Variant};
use zertz_search::SearchConfig;
use zertz_search::mcts::{Scratch, Tree, search};
use zertz_search::{Evaluator, RolloutEvaluator, UniformEvaluator};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let trees: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let sims: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(800);
    let rollout = args.get(3).is_some_and(|s| s == "rollout");
    let leaves: u32 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(8);
    let config = SearchConfig { leaves_per_round: leaves, ..SearchConfig::default() };
    let eval: Box<dyn Evaluator> =
        if rollout { Box::new(RolloutEvaluator::default()) } else { Box::new(UniformEvaluator) };
    let start = Position::new(Variant::default(), Player::P0);
    let mut forest: Vec<Tree> = (0..trees).map(|_| Tree::new(start)).collect();
    let mut scratch = Scratch::default();
    let (mut done, mut rounds) = (0u64, 0u32);
    let t = Instant::now();
    while t.elapsed().as_secs_f64() < 3.0 {
        forest.iter_mut().for_each(|tree| tree.reset(start));
        search(&mut forest, &vec![sims; trees], &config, eval.as_ref(), &mut scratch)
            .expect("evaluator never fails");
        done += trees as u64 * sims as u64;
        rounds += 1;
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{trees} trees x {sims} sims ({}), {leaves} leaves per round: {:.0} simulations/s, \
         mean batch {:.1}, {rounds} searches",
        if rollout { "rollouts" } else { "uniform" },
        done as f64 / secs,
        scratch.evaluated as f64 / scratch.batches.max(1) as f64
    );
}
