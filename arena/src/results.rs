//! What a match counts: each player's effort (moves, time, search work), the result from player
//! A's side, and the Elo difference with its 95% interval ([`elo`]). [`crate::matches`] plays
//! the games and re-exports these.

use serde::Serialize;
use zertz_env::Variant;

use crate::players::WorkUnit;

/// What one player did in its games: moves (whole turns: a capture chain is one), the time it
/// took to choose them, and the work of its searches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Effort {
    /// Turns played (a capture chain is one, whatever its hops).
    pub moves: u64,
    /// Seconds spent choosing, all decisions of those turns together.
    pub seconds: f64,
    /// CPU seconds spent choosing (user and system, every thread that worked for the player:
    /// the one that asked, its search threads, a `cmd:` player's program).
    pub cpu_seconds: f64,
    /// Positions (alpha-beta) or simulations (MCTS) searched; 0 for players that do not search
    /// here.
    pub work: u64,
    /// What `work` counts (`None` for players that do not search here).
    pub unit: Option<WorkUnit>,
}

impl Effort {
    /// The sum of two efforts (of the same player in two games).
    pub fn add(&self, other: &Effort) -> Effort {
        Effort {
            moves: self.moves + other.moves,
            seconds: self.seconds + other.seconds,
            cpu_seconds: self.cpu_seconds + other.cpu_seconds,
            work: self.work + other.work,
            unit: self.unit.or(other.unit),
        }
    }

    /// Mean seconds per move.
    pub fn seconds_per_move(&self) -> f64 {
        self.seconds / self.moves.max(1) as f64
    }

    /// Mean CPU seconds per move.
    pub fn cpu_seconds_per_move(&self) -> f64 {
        self.cpu_seconds / self.moves.max(1) as f64
    }

    /// Mean work per move.
    pub fn work_per_move(&self) -> f64 {
        self.work as f64 / self.moves.max(1) as f64
    }

    /// `0.980 s (1.950 s of CPU) and 31200 nodes per move` (without the work for players that
    /// do not search).
    pub fn describe(&self) -> String {
        let time = format!(
            "{:.3} s ({:.3} s of CPU)",
            self.seconds_per_move(),
            self.cpu_seconds_per_move()
        );
        match self.unit {
            Some(unit) => {
                format!("{time} and {:.0} {} per move", self.work_per_move(), unit.name())
            }
            None => format!("{time} per move"),
        }
    }
}

/// An Elo difference with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Elo {
    /// The estimate.
    pub diff: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
}

/// The logistic Elo difference that gives an expected score `score` (in `0..1`, exclusive):
/// `-400 log10(1 / score - 1)`; 0.5 gives 0, 0.75 about +191.
pub fn elo_from_score(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// Elo of a player with these results and a 95% interval from the normal approximation of the
/// score's standard error (per-game variance, draws counted as ½). A score of 0 or 1 (or a
/// variance of 0) is moved half a game away from the edge (`0.5 / (n + 0.5)`), so that the
/// estimate and interval stay finite: with 100 wins of 100, +920 with the interval [+687, +920];
/// with 1 win of 1, +120 with [-120, +120]. The ends are asymmetric there: [`Elo`]'s `Display`
/// then gives the interval, not a `±`.
pub fn elo(wins: u32, draws: u32, losses: u32) -> Elo {
    let n = f64::from(wins + draws + losses);
    if n == 0.0 {
        return Elo { diff: 0.0, low: 0.0, high: 0.0 };
    }
    let edge = 0.5 / (n + 0.5);
    let clamp = |s: f64| s.clamp(edge, 1.0 - edge);
    let score = (f64::from(wins) + 0.5 * f64::from(draws)) / n;
    let s = clamp(score);
    let var = (f64::from(wins) * (1.0 - score).powi(2)
        + f64::from(draws) * (0.5 - score).powi(2)
        + f64::from(losses) * score.powi(2))
        / n;
    // With no spread in the results, use the binomial variance of the clamped score.
    let var = if var > 0.0 { var } else { s * (1.0 - s) };
    let se = (var / n).sqrt();
    // `+ 0.0`: an even score is 0, never -0.
    Elo {
        diff: elo_from_score(s) + 0.0,
        low: elo_from_score(clamp(s - 1.96 * se)) + 0.0,
        high: elo_from_score(clamp(s + 1.96 * se)) + 0.0,
    }
}

/// `+354 ± 79 (95%: +289 to +448)` (the `±` is half the interval's width) where the estimate
/// lies well inside its interval (the nearer end at least half as far as the other), else the
/// ends alone: `+120 (95%: -120 to +120)` for one win in one game.
impl std::fmt::Display for Elo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (below, above) = (self.diff - self.low, self.high - self.diff);
        write!(f, "{:+.0}", self.diff + 0.0)?;
        if below.min(above) >= 0.5 * below.max(above) && below.max(above) > 0.0 {
            write!(f, " ± {:.0}", (self.high - self.low) / 2.0)?;
        }
        write!(f, " (95%: {:+.0} to {:+.0})", self.low + 0.0, self.high + 0.0)
    }
}

/// The result of a match, from player A's side.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchResult {
    /// Name of player A.
    pub a: String,
    /// Name of player B.
    pub b: String,
    /// The variant played.
    pub variant: Variant,
    /// Games A won.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games A lost.
    pub losses: u32,
    /// What A did, over every game.
    pub a_effort: Effort,
    /// What B did.
    pub b_effort: Effort,
}

impl MatchResult {
    /// Games played.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// A's mean score (wins 1, draws ½).
    pub fn score(&self) -> f64 {
        (f64::from(self.wins) + 0.5 * f64::from(self.draws)) / f64::from(self.games().max(1))
    }

    /// Elo of A over B with a 95% interval; see [`elo`].
    pub fn elo(&self) -> Elo {
        elo(self.wins, self.draws, self.losses)
    }
}
