//! Search speed: simulations per second with the uniform evaluator (search cost alone) and with
//! random rollouts, from the 37-ring start. `cargo bench -p zertz-search --bench search`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zertz_env::{Player, Position, Variant};
use zertz_search::SearchConfig;
use zertz_search::mcts::{Scratch, Tree, search};
use zertz_search::{RolloutEvaluator, UniformEvaluator};

fn bench(c: &mut Criterion) {
    let start = Position::new(Variant::default(), Player::P0);
    let config = SearchConfig::default();
    let mut g = c.benchmark_group("search_37_start");
    for (trees, sims) in [(1usize, 800u32), (64, 200)] {
        g.throughput(Throughput::Elements(trees as u64 * sims as u64));
        g.bench_function(format!("uniform {trees} trees x {sims} sims"), |b| {
            // Trees are reset, not rebuilt, between searches: as in self-play, their arenas keep
            // their capacity.
            let mut scratch = Scratch::default();
            let mut forest: Vec<Tree> = (0..trees).map(|_| Tree::new(start)).collect();
            b.iter(|| {
                forest.iter_mut().for_each(|t| t.reset(start));
                search(&mut forest, &vec![sims; trees], &config, &UniformEvaluator, &mut scratch)
                    .expect("uniform never fails");
                assert!(forest.iter().all(|t| t.root_visits() == sims));
            })
        });
    }
    g.throughput(Throughput::Elements(200));
    g.bench_function("rollouts 1 tree x 200 sims", |b| {
        let mut scratch = Scratch::default();
        let eval = RolloutEvaluator::default();
        b.iter(|| {
            let mut forest = vec![Tree::new(start)];
            search(&mut forest, &[200], &config, &eval, &mut scratch).expect("rollouts never fail");
            assert_eq!(forest[0].root_visits(), 200);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
