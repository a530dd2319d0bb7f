//! Perft: the number of whole-turn move sequences of a given length, a check of move generation.
//!
//! Perft counts whole turns (a placement with its removal, or a complete capture chain); a finished
//! game has no moves. Repetition is not considered (it needs a game's history, as in chess perft).
//!
//! ```
//! use zertz_env::{perft, Position, Variant, Player};
//! let pos = Position::new(Variant::default(), Player::P0);
//! assert_eq!(perft(&pos, 1), 1944);
//! ```

use crate::moves::Move;
use crate::position::Position;

/// Number of move sequences of length `depth` from `pos`.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if depth == 1 {
        return pos.count_legal_moves();
    }
    let mut moves = Vec::new();
    pos.legal_moves_into(&mut moves);
    let mut total = 0;
    for m in &moves {
        let mut next = *pos;
        next.play_unchecked(m);
        total += perft(&next, depth - 1);
    }
    total
}

/// Perft per first move, as `(move, count)` pairs in generation order.
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    let depth = depth.max(1);
    pos.legal_moves()
        .into_iter()
        .map(|m| {
            let mut next = *pos;
            next.play_unchecked(&m);
            (m, perft(&next, depth - 1))
        })
        .collect()
}
