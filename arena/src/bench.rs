//! A player's speed (`zertz bench player`): the work of its searches (simulations, or
//! alpha-beta's positions) per second and per CPU-second, on a fixed set of positions, with
//! each number of search threads. What a search costs depends on the machine and on what else
//! runs on it: the figures per CPU-second say what it costs whatever else runs, those per second
//! what a player gets on this machine now.
//!
//! The positions ([`bench_positions`]) are the same on every run: for each board, the start
//! (an opening), and the first positions with a choice after 12 and 24 single actions of a
//! game of random legal actions from a fixed seed (a middle game and an endgame, fewer marbles
//! and rings each).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cpu_time::ProcessTime;
use serde::Serialize;
use zertz_env::{Board, MarbleSet, Player, Position, SplitMix64, Variant};

use crate::players::{BotError, Models, PlayerSpec, SpecError, WorkUnit};
use zertz_search::mcts::MAX_SEARCH_THREADS;

/// The positions of a board that a player is measured on, each with its name: `opening` (the
/// start), `middle` and `endgame`: the first positions with more than one legal action after
/// 12 and after 24 single actions of a game of random legal actions, the first such game of a
/// fixed sequence of seeds that gets that far.
pub fn bench_positions(board: Board) -> Vec<(&'static str, Position)> {
    let start = Position::new(Variant::new(board, MarbleSet::Standard), Player::P0);
    let chosen = (0..).find_map(|seed| {
        let mut rng = SplitMix64(0x5eed ^ ((board.rings() as u64) << 8) ^ seed);
        let mut pos = start;
        let mut found = Vec::new();
        for ply in 0.. {
            let n = pos.count_legal_actions();
            if pos.outcome().is_some() || n == 0 {
                return None;
            }
            let wanted = [12, 24].get(found.len()).copied()?;
            if ply >= wanted && n > 1 {
                found.push(pos);
                if found.len() == 2 {
                    return Some(found);
                }
            }
            let a = pos.nth_legal_action(rng.below(n))?;
            pos.play_action_unchecked(&a);
        }
        None
    });
    let [middle, endgame] = chosen.expect("random games reach 24 actions").try_into().expect("two");
    vec![("opening", start), ("middle", middle), ("endgame", endgame)]
}

/// What one player did on one position with one number of search threads.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BenchPlayerRow {
    /// The board, in rings.
    pub board: usize,
    /// `opening`, `middle` or `endgame` ([`bench_positions`]).
    pub position: String,
    /// Threads of each search.
    pub search_threads: usize,
    /// Searches timed (one decision each, a fresh player each time).
    pub searches: u32,
    /// Wall seconds of those searches.
    pub seconds: f64,
    /// CPU seconds of the process over those searches (user and system, every thread).
    pub cpu_seconds: f64,
    /// Simulations or positions searched.
    pub work: u64,
    /// What `work` counts.
    pub unit: WorkUnit,
    /// `work` per second.
    pub per_second: f64,
    /// `work` per CPU-second.
    pub per_cpu_second: f64,
}

/// Searches timed per position unless told (`zertz bench player --searches`, `searches=` of
/// Python's `bench_player`).
pub const DEFAULT_SEARCHES: u32 = 2;
/// The most searches timed per position.
pub const MAX_SEARCHES: u32 = 1000;
/// Seconds of each search unless told (a spec's own `:time=` wins).
pub const DEFAULT_MOVE_TIME: f64 = 1.0;

/// `searches` (of any integer type: the CLI's, Python's) as a count of searches, 1 to
/// [`MAX_SEARCHES`].
pub fn check_searches<T: TryInto<u32> + Copy + std::fmt::Display>(
    searches: T,
) -> Result<u32, BenchError> {
    match searches.try_into() {
        Ok(n) if (1..=MAX_SEARCHES).contains(&n) => Ok(n),
        _ => Err(BenchError::Searches(searches.to_string())),
    }
}

/// Refuses a player that does not search here ([`BenchError::NoSearch`]): it has nothing to
/// measure.
pub fn check_player(spec: &PlayerSpec) -> Result<(), BenchError> {
    if spec.searches() { Ok(()) } else { Err(BenchError::NoSearch(spec.to_string())) }
}

/// `threads` (of any integer type) as counts of search threads, each 1 to
/// [`MAX_SEARCH_THREADS`].
pub fn check_search_threads<T: TryInto<usize> + Copy + std::fmt::Display>(
    threads: &[T],
) -> Result<Vec<usize>, BenchError> {
    threads
        .iter()
        .map(|&t| match t.try_into() {
            Ok(n) if (1..=MAX_SEARCH_THREADS).contains(&n) => Ok(n),
            _ => Err(BenchError::SearchThreads(t.to_string())),
        })
        .collect()
}

/// What went wrong measuring a player.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The spec cannot be built.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The player failed in a search.
    #[error(transparent)]
    Bot(#[from] BotError),
    /// The stop flag was set (Ctrl-C).
    #[error("the measurement was stopped")]
    Stopped,
    /// The player does not search here, so it has nothing to measure.
    #[error("{0} does not search here: give a player that does (mcts, uniform, alphabeta, nn)")]
    NoSearch(String),
    /// A count of searches per position out of range ([`check_searches`]).
    #[error("searches must be from 1 to {MAX_SEARCHES}, not {0}")]
    Searches(String),
    /// A count of search threads out of range ([`check_search_threads`]).
    #[error("search threads must be from 1 to {MAX_SEARCH_THREADS}, not {0}")]
    SearchThreads(String),
}

impl zertz_env::Classify for BenchError {
    fn class(&self) -> zertz_env::ErrorClass {
        use zertz_env::{Cause, ErrorClass};
        match self {
            BenchError::Spec(_)
            | BenchError::NoSearch(_)
            | BenchError::Searches(_)
            | BenchError::SearchThreads(_) => ErrorClass::refused(Cause::Invalid),
            BenchError::Bot(_) => ErrorClass::during(Cause::Failed),
            BenchError::Stopped => ErrorClass::during(Cause::Stopped),
        }
    }
}

/// Measures `spec` on the [`bench_positions`] of `board`, with each count of `threads` search
/// threads: `searches` decisions of `move_time` each per position (a fresh player every time,
/// so that no tree is kept), after one decision to warm up. `models` holds its network, if any.
/// Setting `stop` ends a search under way and the measurement ([`BenchError::Stopped`]).
pub fn bench_player(
    spec: &PlayerSpec,
    models: &Models,
    board: Board,
    threads: &[usize],
    move_time: Duration,
    searches: u32,
    stop: &Arc<AtomicBool>,
) -> Result<Vec<BenchPlayerRow>, BenchError> {
    check_player(spec)?;
    let mut rows = Vec::new();
    for &t in threads {
        let models = models.clone().with_search_threads(t);
        for (name, pos) in bench_positions(board) {
            let build = || -> Result<_, BenchError> {
                if stop.load(Ordering::Relaxed) {
                    return Err(BenchError::Stopped);
                }
                let mut bot = spec.build(0, &models)?;
                if spec.own_time().is_none() {
                    bot.set_move_time(Some(move_time));
                }
                bot.set_stop(stop.clone());
                Ok(bot)
            };
            build()?.choose(&pos)?;
            let (mut work, mut unit, mut seconds, mut cpu) = (0, None, 0.0, 0.0);
            for _ in 0..searches.max(1) {
                let mut bot = build()?;
                let (started, clock) = (Instant::now(), ProcessTime::now());
                bot.choose(&pos)?;
                if stop.load(Ordering::Relaxed) {
                    return Err(BenchError::Stopped);
                }
                seconds += started.elapsed().as_secs_f64();
                cpu += clock.elapsed().as_secs_f64();
                let Some((u, w)) = bot.work() else {
                    return Err(BenchError::NoSearch(spec.to_string()));
                };
                (work, unit) = (work + w, Some(u));
            }
            rows.push(BenchPlayerRow {
                board: board.rings(),
                position: name.to_string(),
                search_threads: models.search_threads(),
                searches: searches.max(1),
                seconds,
                cpu_seconds: cpu,
                work,
                unit: unit.expect("one search at least"),
                per_second: work as f64 / seconds.max(1e-12),
                per_cpu_second: work as f64 / cpu.max(1e-12),
            });
        }
    }
    Ok(rows)
}
