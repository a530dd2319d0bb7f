//! Plays complete random games and prints games per second (one core).
//!
//! Every turn enumerates all legal whole-turn moves and picks one uniformly.
//!
//! ```text
//! cargo run --release -p zertz-env --example random_games -- [GAMES] [BOARD] [blitz]
//! ```

use std::time::Instant;

use zertz_env::{Board, MarbleSet, Move, Player, Position, Variant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let games: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let board =
        args.get(2).and_then(|s| s.parse().ok()).and_then(Board::from_rings).unwrap_or(Board::R37);
    let set = if args.get(3).is_some_and(|s| s == "blitz") {
        MarbleSet::Blitz
    } else {
        MarbleSet::Standard
    };
    let start = Position::new(Variant::new(board, set), Player::P0);
    let mut state = 0x1234_5678_u64;
    let mut moves: Vec<Move> = Vec::with_capacity(16_384);
    let (mut turns, mut generated, mut wins) = (0u64, 0u64, [0u64; 3]);
    let t = Instant::now();
    for _ in 0..games {
        let mut pos = start;
        loop {
            moves.clear();
            pos.legal_moves_into(&mut moves);
            if moves.is_empty() {
                break;
            }
            generated += moves.len() as u64;
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let m = moves[(((z >> 32) * moves.len() as u64) >> 32) as usize];
            pos.play_unchecked(&m);
            turns += 1;
        }
        match pos.outcome().and_then(|o| o.winner()) {
            Some(Player::P0) => wins[0] += 1,
            Some(Player::P1) => wins[1] += 1,
            None => wins[2] += 1,
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{} rings {}: {games} games in {secs:.2} s = {:.0} games/s, {:.1} turns/game, \
         {:.0} M moves generated/s; P0 {} P1 {} draws {}",
        board.rings(),
        set.name(),
        games as f64 / secs,
        turns as f64 / games as f64,
        generated as f64 / secs / 1e6,
        wins[0],
        wins[1],
        wins[2]
    );
}
