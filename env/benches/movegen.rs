//! Move generation and random-game benchmarks. Every benchmark checks what it counts.
//!
//! `cargo bench -p zertz-env --bench movegen`; figures go to BENCHMARKS.md.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zertz_env::{Board, MarbleSet, Move, Player, Position, Variant, perft};

use zertz_env::SplitMix64 as Rng;

/// Plays one game to the end: every turn enumerates all legal whole-turn moves and picks one
/// uniformly. Returns the number of turns.
fn random_game(start: &Position, rng: &mut Rng, moves: &mut Vec<Move>) -> u32 {
    let mut pos = *start;
    let mut turns = 0;
    loop {
        moves.clear();
        pos.legal_moves_into(moves);
        if moves.is_empty() {
            return turns;
        }
        let m = moves[rng.below(moves.len())];
        pos.play_unchecked(&m);
        turns += 1;
    }
}

fn start(board: Board) -> Position {
    Position::new(Variant::new(board, MarbleSet::Standard), Player::P0)
}

fn bench_movegen(c: &mut Criterion) {
    let mut g = c.benchmark_group("legal_moves");
    for board in [Board::R37, Board::R48, Board::R61] {
        let pos = start(board);
        let expected = pos.count_legal_moves() as usize;
        let mut moves = Vec::with_capacity(16_384);
        g.throughput(Throughput::Elements(expected as u64));
        g.bench_function(format!("start {}", board.rings()), |b| {
            b.iter(|| {
                moves.clear();
                black_box(&pos).legal_moves_into(&mut moves);
                assert_eq!(moves.len(), expected);
            })
        });
    }
    g.finish();
}

fn bench_random_games(c: &mut Criterion) {
    let mut g = c.benchmark_group("random_games");
    for board in [Board::R37, Board::R48, Board::R61] {
        let pos = start(board);
        let mut rng = Rng(7);
        let mut moves = Vec::with_capacity(16_384);
        g.throughput(Throughput::Elements(1));
        g.bench_function(format!("{} rings", board.rings()), |b| {
            b.iter(|| {
                let turns = random_game(&pos, &mut rng, &mut moves);
                assert!(turns >= 5);
                turns
            })
        });
    }
    g.finish();
}

fn bench_perft(c: &mut Criterion) {
    let pos = start(Board::R37);
    let mut g = c.benchmark_group("perft");
    g.sample_size(10);
    g.bench_function("37 start depth 2", |b| b.iter(|| assert_eq!(perft(&pos, 2), 3_277_260)));
    g.finish();
}

criterion_group!(benches, bench_movegen, bench_random_games, bench_perft);
criterion_main!(benches);
