//! VecEnv throughput: `step` (play + reset of finished games + encode + legal mask) with random
//! legal actions, N = 1024 games of 37 rings.
//!
//! `cargo bench -p zertz-vecenv --bench step`; figures go to BENCHMARKS.md.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zertz_vecenv::{Config, VecEnv};

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
}

criterion_group!(benches, bench);
criterion_main!(benches);
