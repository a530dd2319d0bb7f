//! What a search is asked ([`Limits`]) and what it answers ([`Report`]).

use std::time::Duration;

use zertz_env::Move;

use super::eval::{SCORE_MATE_BOUND, SCORE_WIN};

/// The deepest search in whole turns ([`Limits::max_depth`] is held to it).
pub const MAX_DEPTH: u32 = 64;

/// When a search stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The deepest iteration, in whole turns (1 to [`MAX_DEPTH`]).
    pub max_depth: u32,
    /// The time the search may take; `None`: until `max_depth`. An iteration is not started past
    /// half of it (it would not finish), and one under way is abandoned at its end.
    pub time: Option<Duration>,
}

impl Limits {
    /// A fixed depth, whatever the time.
    pub fn depth(depth: u32) -> Limits {
        Limits { max_depth: depth, time: None }
    }

    /// Deepening until `time` is spent.
    pub fn time(time: Duration) -> Limits {
        Limits { max_depth: MAX_DEPTH, time: Some(time) }
    }
}

/// What a search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The move to play.
    pub best: Move,
    /// Its score for the player to move, in hundredths of a marble ([`SCORE_WIN`] and near it
    /// for a forced win: [`Report::mate_in`]).
    pub score: i32,
    /// The depth of the deepest iteration that chose the move, in whole turns.
    pub depth: u32,
    /// The principal variation: `best` and the replies expected, in whole turns.
    pub pv: Vec<Move>,
    /// Positions searched by the main search.
    pub nodes: u64,
    /// Positions searched by the quiescence search (captures), counted apart.
    pub qnodes: u64,
    /// Time taken.
    pub elapsed: Duration,
}

impl Report {
    /// Turns to a forced win (positive) or loss (negative), counting both sides' turns, when the
    /// score is one.
    pub fn mate_in(&self) -> Option<i32> {
        if self.score > SCORE_MATE_BOUND {
            Some(SCORE_WIN - self.score)
        } else if self.score < -SCORE_MATE_BOUND {
            Some(-(SCORE_WIN + self.score))
        } else {
            None
        }
    }
}
