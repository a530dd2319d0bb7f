//! The bare network's speed, without search (`zertz bench inference`): evaluations per second at
//! a batch size, and where the time of a forward pass goes (the copy in, the network, the copy
//! out), so that the limit of the network and the cost of the pipeline around it can be told
//! apart.
//!
//! The positions are real: taken from random games on the board, encoded once, with their legal
//! masks; the answers are the legal actions' logits and checked, as search gets them: on a GPU
//! the legal ones alone, one after the other, as the inference threads hand them over
//! ([`Answers::Compact`](crate::Answers::Compact)); on the CPU in their places in a buffer of
//! the whole action space, as a search thread's own pass writes them.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use cpu_time::ProcessTime;
use serde::Serialize;
use zertz_env::{ActionSpace, Board, MarbleSet, Player, Position, SplitMix64, Variant};
use zertz_search::evaluator::encode_batch;

use crate::{Model, ModelError, Phases};

/// Batches run before the clock starts (allocations, kernel selection, the host buffers' growth).
const WARM_UP_BATCHES: usize = 3;

/// What one batch size gave.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BenchRow {
    /// Positions per forward pass.
    pub batch: usize,
    /// Threads that ran forward passes at once, each with its own batch.
    pub threads: usize,
    /// Forward passes timed (after the warm-up).
    pub batches: u64,
    /// Wall time of the timed passes, in seconds.
    pub seconds: f64,
    /// Positions evaluated per second, all threads together.
    pub evaluations_per_second: f64,
    /// CPU time of the process over the timed passes (user and system, every thread), in
    /// seconds.
    pub cpu_seconds: f64,
    /// Positions evaluated per CPU-second: what a pass costs whatever else runs on the machine.
    pub evaluations_per_cpu_second: f64,
    /// Mean wall time of one pass, in milliseconds.
    pub ms_per_batch: f64,
    /// Shares of the passes' time in the copy in, the network and the copy out (see
    /// [`Phases`]; the device is synchronised between the parts, so they add up to 1).
    pub copy_in: f64,
    /// See `copy_in`.
    pub forward: f64,
    /// See `copy_in`.
    pub copy_out: f64,
}

/// `n` positions of `board` (standard marbles) from random games seeded by `seed`: every position
/// of each game until it ends, then a new game.
pub fn sample_positions(board: Board, n: usize, seed: u64) -> Vec<Position> {
    let mut rng = SplitMix64(seed);
    let variant = Variant::new(board, MarbleSet::Standard);
    let mut out = Vec::with_capacity(n);
    let mut p = Position::new(variant, Player::P0);
    while out.len() < n {
        if p.outcome().is_some() {
            p = Position::new(variant, Player::P0);
        }
        out.push(p);
        let Some(a) = p.nth_legal_action(rng.below(p.count_legal_actions())) else {
            p = Position::new(variant, Player::P0);
            continue;
        };
        p.play_action_unchecked(&a);
    }
    out
}

/// One thread's encoded batch and answer buffers.
struct Buffers {
    planes: Vec<f32>,
    globals: Vec<f32>,
    masks: Vec<bool>,
    /// What a pass answers ([`Buffers::new`]).
    answers: crate::Answers,
    logits: Vec<f32>,
    values: Vec<f32>,
}

impl Buffers {
    /// The encoded batch of `positions`, and room for what a pass of `model` answers: the legal
    /// logits alone on a GPU, in their places on the CPU (see the module docs).
    fn new(positions: &[Position], model: &Model) -> Buffers {
        let board = positions[0].board();
        let (n, a) = (positions.len(), ActionSpace::new(board).len());
        let (mut planes, mut globals, mut masks) = (Vec::new(), Vec::new(), Vec::new());
        encode_batch(board, positions, &mut planes, &mut globals, &mut masks);
        let (answers, logits) = match model.device().is_cuda() {
            true => (crate::Answers::Compact, masks.iter().filter(|&&m| m).count()),
            false => (crate::Answers::Legal, n * a),
        };
        Buffers { planes, globals, masks, answers, logits: vec![0.0; logits], values: vec![0.0; n] }
    }

    fn run(&mut self, model: &Model, board: Board) -> Result<Phases, ModelError> {
        model.forward_timed(
            board,
            &self.planes,
            &self.globals,
            &self.masks,
            self.answers,
            &mut self.logits,
            &mut self.values,
            true,
        )
    }
}

/// Runs `model` on batches of `batch` real positions of `board` from `threads` threads at once
/// for about `seconds`, after a warm-up.
pub fn inference(
    model: &Model,
    board: Board,
    batch: usize,
    threads: usize,
    seconds: f64,
) -> Result<BenchRow, ModelError> {
    model.check_board(board)?;
    let (batch, threads) = (batch.max(1), threads.max(1));
    let budget = Duration::from_secs_f64(seconds.max(0.0));
    // Every thread warms up, then the process's CPU clock starts.
    let warm = Barrier::new(threads + 1);
    let mut cpu = None;
    let runs: Vec<Result<(u64, Phases, Duration), ModelError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let warm = &warm;
                scope.spawn(move || {
                    let positions = sample_positions(board, batch, 1 + t as u64);
                    let mut buffers = Buffers::new(&positions, model);
                    let warmed =
                        (0..WARM_UP_BATCHES).try_for_each(|_| buffers.run(model, board).map(drop));
                    warm.wait();
                    warmed?;
                    let (mut count, mut sum) = (0u64, Phases::default());
                    let started = Instant::now();
                    while count == 0 || started.elapsed() < budget {
                        let p = buffers.run(model, board)?;
                        sum.copy_in += p.copy_in;
                        sum.forward += p.forward;
                        sum.copy_out += p.copy_out;
                        count += 1;
                    }
                    Ok((count, sum, started.elapsed()))
                })
            })
            .collect();
        warm.wait();
        cpu = Some(ProcessTime::now());
        handles.into_iter().map(|h| h.join().expect("a benchmark thread panicked")).collect()
    });
    let (mut batches, mut sum, mut wall) = (0u64, Phases::default(), Duration::ZERO);
    for run in runs {
        let (count, phases, elapsed) = run?;
        batches += count;
        wall = wall.max(elapsed);
        sum.copy_in += phases.copy_in;
        sum.forward += phases.forward;
        sum.copy_out += phases.copy_out;
    }
    let cpu = cpu.map_or(0.0, |c| c.elapsed().as_secs_f64());
    let busy = (sum.copy_in + sum.forward + sum.copy_out).as_secs_f64().max(1e-12);
    let wall = wall.as_secs_f64().max(1e-12);
    Ok(BenchRow {
        batch,
        threads,
        batches,
        seconds: wall,
        evaluations_per_second: (batches as f64 * batch as f64) / wall,
        cpu_seconds: cpu,
        evaluations_per_cpu_second: (batches as f64 * batch as f64) / cpu.max(1e-12),
        ms_per_batch: 1000.0 * busy / batches as f64,
        copy_in: sum.copy_in.as_secs_f64() / busy,
        forward: sum.forward.as_secs_f64() / busy,
        copy_out: sum.copy_out.as_secs_f64() / busy,
    })
}
