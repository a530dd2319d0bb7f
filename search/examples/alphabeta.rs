//! Nodes per second of the alpha-beta searcher on one core: self-play from the start of a
//! variant, each move searched for a fixed time, the figures summed over the game.
//!
//!     cargo run --release -p zertz-search --example alphabeta -- [SECONDS_PER_MOVE] [BOARD] [SET] [GAMES]

use std::time::Duration;

use zertz_env::{Board, MarbleSet, Player, Position, SplitMix64, Variant};
use zertz_search::alphabeta::{AlphaBeta, Limits};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let secs: f64 = args.first().map_or(0.5, |s| s.parse().expect("seconds per move"));
    let board: Board = args.get(1).map_or(Board::R37, |s| s.parse().expect("board"));
    let set = args
        .get(2)
        .map_or(MarbleSet::Standard, |s| MarbleSet::from_name(s).expect("standard or blitz"));
    let games: u64 = args.get(3).map_or(2, |s| s.parse().expect("games"));
    let variant = Variant::new(board, set);
    let (mut nodes, mut qnodes, mut time, mut moves, mut depth) = (0u64, 0u64, 0f64, 0u64, 0u64);
    for g in 0..games {
        let mut ab = AlphaBeta::default();
        let mut pos = Position::new(variant, Player::P0);
        let mut rng = SplitMix64(g);
        // Two random turns so that the games differ.
        for _ in 0..2 {
            let legal = pos.legal_moves();
            pos.play_unchecked(&legal[rng.below(legal.len())]);
        }
        while !pos.is_over() {
            let r = ab
                .search(&pos, &Limits::time(Duration::from_secs_f64(secs)), &|| false)
                .expect("a move");
            nodes += r.nodes;
            qnodes += r.qnodes;
            time += r.elapsed.as_secs_f64();
            moves += 1;
            depth += u64::from(r.depth);
            pos.play_unchecked(&r.best);
        }
    }
    println!(
        "{variant}: {moves} moves, mean depth {:.2}, {:.0} nodes/s + {:.0} quiescence nodes/s \
         ({:.0} positions/s in all), {:.3} s per move",
        depth as f64 / moves as f64,
        nodes as f64 / time,
        qnodes as f64 / time,
        (nodes + qnodes) as f64 / time,
        time / moves as f64
    );
}
