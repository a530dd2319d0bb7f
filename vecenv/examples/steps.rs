//! Steps per second of a VecEnv driven by random legal actions (step + encode + mask).
//!
//! ```text
//! cargo run --release -p zertz-vecenv --example steps -- [N] [THREADS] [BOARD] [SECONDS]
//! ```

use std::time::Instant;

use zertz_env::Board;
use zertz_vecenv::{Config, VecEnv};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg =
        |i: usize, default: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    let n = arg(1, 1024);
    let threads = arg(2, 0);
    let board = Board::from_rings(arg(3, 37)).unwrap_or(Board::R37);
    let seconds = arg(4, 5) as f64;
    let config = Config { num_envs: n, threads, board, seed: 1, ..Config::default() };
    let mut env = VecEnv::new(config).expect("valid config");
    let mut buf = env.buffers();
    env.reset(Some(1), &mut buf.view()).expect("buffers fit");
    let mut actions = vec![0u32; n];
    let (mut steps, mut sample_time, mut games) = (0u64, 0.0, 0u64);
    let t = Instant::now();
    while t.elapsed().as_secs_f64() < seconds {
        let s = Instant::now();
        env.sample_actions(&mut actions);
        sample_time += s.elapsed().as_secs_f64();
        env.step(&actions, &mut buf.view()).expect("legal actions");
        steps += n as u64;
        games += buf.terminated.iter().chain(&buf.truncated).filter(|&&d| d).count() as u64;
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{} rings, N={n}, {} threads: {:.0} steps/s with sampling, {:.0} steps/s in step alone, \
         {games} games finished",
        board.rings(),
        env.threads(),
        steps as f64 / secs,
        steps as f64 / (secs - sample_time),
    );
}
