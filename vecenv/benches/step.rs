//! VecEnv throughput: `step` (play + reset of finished games + encode + legal mask) with random
//! legal actions, N = 1024 games of 37 rings; and with a random opponent in every game (its
//! turns played inside the step), per game and as a batch.
//!
//! `cargo bench -p zertz-vecenv --bench step`; figures go to BENCHMARKS.md.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zertz_env::{Action, Player, Position, SplitMix64};
use zertz_vecenv::{Answer, BatchOpponent, Config, Opponent, VecEnv};

/// A uniform random legal action.
fn random_action(rng: &mut SplitMix64, pos: &Position) -> Answer {
    let k = rng.below(pos.count_legal_actions());
    pos.nth_legal_action(k).ok_or_else(|| "no legal action".to_string())
}

/// One game's random opponent.
struct Random(SplitMix64);

impl Opponent for Random {
    fn act(&mut self, pos: &Position) -> Result<Action, String> {
        random_action(&mut self.0, pos)
    }
}

/// Every game's random opponent, asked as a batch.
struct RandomBatch(Vec<SplitMix64>);

impl BatchOpponent for RandomBatch {
    fn act(&mut self, games: &[usize], positions: &[Position], answers: &mut [Answer]) {
        for ((&i, pos), answer) in games.iter().zip(positions).zip(answers) {
            *answer = random_action(&mut self.0[i], pos);
        }
    }
}

fn bench(c: &mut Criterion) {
    let n = 1024;
    let mut g = c.benchmark_group("vecenv_37");
    g.throughput(Throughput::Elements(n as u64));
    for threads in [1, 2] {
        let mut env = VecEnv::new(Config { num_envs: n, threads, seed: 1, ..Config::default() })
            .expect("valid config");
        let mut buf = env.buffers();
        env.reset(Some(1), &mut buf.view()).expect("buffers fit");
        let mut actions = vec![0u32; n];
        g.bench_function(format!("sample+step N=1024 threads={threads}"), |b| {
            b.iter(|| {
                env.sample_actions(&mut actions);
                env.step(&actions, &mut buf.view()).expect("legal actions");
                assert!(buf.mask.iter().any(|&m| m));
            })
        });
        g.bench_function(format!("step N=1024 threads={threads}"), |b| {
            b.iter_custom(|iters| {
                let mut spent = std::time::Duration::ZERO;
                for _ in 0..iters {
                    env.sample_actions(&mut actions);
                    let t = std::time::Instant::now();
                    env.step(&actions, &mut buf.view()).expect("legal actions");
                    spent += t.elapsed();
                }
                spent
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("vecenv_37_opponent");
    for n in [256, 1024] {
        g.throughput(Throughput::Elements(n as u64));
        for batched in [false, true] {
            let config = Config { num_envs: n, threads: 2, seed: 1, ..Config::default() };
            let mut env = VecEnv::new(config).expect("valid config");
            let rngs = (0..n).map(|i| SplitMix64(i as u64));
            if batched {
                env.set_batch_opponent(Box::new(RandomBatch(rngs.collect())), Player::P0);
            } else {
                let opponents = rngs.map(|r| Box::new(Random(r)) as Box<dyn Opponent>).collect();
                env.set_opponents(opponents, Player::P0).expect("one per game");
            }
            let mut buf = env.buffers();
            env.reset(Some(1), &mut buf.view()).expect("buffers fit");
            let mut actions = vec![0u32; n];
            let kind = if batched { "batch" } else { "per game" };
            g.bench_function(format!("sample+step N={n} threads=2 opponent {kind}"), |b| {
                b.iter(|| {
                    env.sample_actions(&mut actions);
                    env.step(&actions, &mut buf.view()).expect("legal actions");
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
