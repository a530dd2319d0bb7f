//! Scores and the static evaluation: what a won or lost position scores ([`SCORE_WIN`],
//! [`terminal`]), and what a position without captures is worth ([`evaluate`], [`Weights`]).
//!
//! The lowest part of the searcher: it knows positions, not searches.

use zertz_env::{ByMarble, Outcome, Position};

/// The score of a won position at the root; a win `n` plies away scores `SCORE_WIN - n`, so that
/// the search prefers the fastest win and the slowest loss.
pub const SCORE_WIN: i32 = 1_000_000;

/// Scores above this (or below its negation) are wins (losses) found by the search.
pub const SCORE_MATE_BOUND: i32 = SCORE_WIN - 10_000;

/// The weights of [`evaluate`], in hundredths of a marble.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weights {
    /// Score of a win set that still needs `n` marbles (`need[n]`, `n` from 1; `need[0]` is
    /// unused: a set with nothing missing is a won game), summed over the sets still possible.
    pub need: [i32; 13],
    /// Each captured marble of each colour (white, grey, black).
    pub marble: [i32; 3],
    /// The side to move, in a position without captures.
    pub tempo: i32,
}

impl Default for Weights {
    /// The weights tuned by matches (BENCHMARKS.md, "The evaluation's weights").
    fn default() -> Weights {
        Weights {
            need: [0, 2000, 500, 130, 35, 10, 3, 1, 0, 0, 0, 0, 0],
            marble: [0, 0, 0],
            tempo: 20,
        }
    }
}

/// The static evaluation of `pos` for the player to move, with the default [`Weights`]: see
/// [`evaluate_with`].
pub fn evaluate(pos: &Position) -> i32 {
    evaluate_with(pos, &Weights::default())
}

/// The static evaluation of `pos` for the player to move (positive: good for it), without
/// looking at captures to come (the quiescence search does): for each side, the sum over the win
/// sets it can still complete of `need[marbles it still lacks]`, plus the value of the marbles
/// it holds; the difference between the mover and the opponent, plus the tempo. A set is out of
/// reach when the opponent holds so many of a colour that too few are left.
pub fn evaluate_with(pos: &Position, w: &Weights) -> i32 {
    let me = pos.turn();
    let mine = pos.captures(me);
    let theirs = pos.captures(!me);
    let set = pos.marble_set();
    let total = set.counts();
    side_score(&mine, &theirs, &total, set, w) - side_score(&theirs, &mine, &total, set, w)
        + w.tempo
}

/// The score of one side with captures `caps` against an opponent with `opp` (see
/// [`evaluate_with`]).
fn side_score(
    caps: &ByMarble<u8>,
    opp: &ByMarble<u8>,
    total: &ByMarble<u8>,
    set: zertz_env::MarbleSet,
    w: &Weights,
) -> i32 {
    let single = set.single_colour_win();
    let each = set.each_colour_win();
    let need = |n: u8| w.need[usize::from(n).min(w.need.len() - 1)];
    let mut score = 0;
    let mut each_need = 0u8;
    let mut each_possible = true;
    for c in 0..3 {
        let have = caps.0[c];
        let left = total.0[c] - opp.0[c];
        if left >= single.0[c] {
            score += need(single.0[c].saturating_sub(have));
        }
        each_possible &= left >= each;
        each_need += each.saturating_sub(have);
        score += w.marble[c] * i32::from(have);
    }
    if each_possible {
        score += need(each_need);
    }
    score
}

/// The score of a finished game for the player to move, `ply` plies from the root.
pub fn terminal(outcome: Outcome, pos: &Position, ply: usize) -> i32 {
    match outcome {
        Outcome::Win(p) if p == pos.turn() => SCORE_WIN - ply as i32,
        Outcome::Win(_) => -(SCORE_WIN - ply as i32),
        Outcome::Draw => 0,
    }
}
