//! A classic alpha-beta searcher over whole turns: the yardstick of the programs people know
//! (boardspace.net's robots, the desktop programs), and a second opinion beside MCTS.
//!
//! - Iterative deepening of a negamax principal variation search, one ply per whole turn (a
//!   capture chain is one move), with aspiration-free null windows after the first move.
//! - A transposition table on the position's Zobrist hash (and its passes), kept between the
//!   searches of a game: the move of the deepest search stored, bounds with mate distances.
//! - Move ordering: the table's move, captures by length, two killers per ply, a history of
//!   placements; at two turns or more from the horizon, the placements by a one-turn look ahead
//!   (the evaluation of the position they lead to, and whether they hand the opponent a capture).
//! - A quiescence search: captures are compulsory in ZÈRTZ, so a position whose mover has a
//!   capture is never evaluated; the captures are played out (every chain, to the end of the
//!   exchange) first.
//! - [`evaluate`]: how far each side is from each win set of the marble set, counting only the
//!   sets still possible with the marbles the opponent has not captured; what it has captured;
//!   the move.
//!
//! A search stops at its depth, its deadline or its stop flag; an iteration cut short is
//! abandoned, unless a root move of it has already beaten the previous iteration's best (searched
//! first), which is then the better choice.
//!
//! The parts, each using only those listed before it:
//!
//! - `eval`: the scores of won and lost positions ([`SCORE_WIN`], [`terminal`]) and the static
//!   evaluation ([`evaluate`], [`Weights`]);
//! - `table`: the transposition table;
//! - `limits`: what a search is asked ([`Limits`], [`MAX_DEPTH`]) and answers ([`Report`]);
//! - `searcher`: the searcher ([`AlphaBeta`]): deepening, ordering, quiescence.
//!
//! Every public item is here, at `zertz_search::alphabeta::`.
//!
//! ```
//! use zertz_env::{Player, Position, Variant};
//! use zertz_search::alphabeta::{AlphaBeta, Limits};
//! let pos = Position::new(Variant::default(), Player::P0);
//! let mut ab = AlphaBeta::new(1 << 20);
//! let report = ab.search(&pos, &Limits::depth(1), &|| false).unwrap();
//! assert!(pos.is_legal_move(&report.best));
//! assert_eq!(report.depth, 1);
//! ```

mod eval;
mod limits;
mod searcher;
mod table;

pub use eval::{SCORE_MATE_BOUND, SCORE_WIN, Weights, evaluate, evaluate_with, terminal};
pub use limits::{Limits, MAX_DEPTH, Report};
pub use searcher::{AlphaBeta, DEFAULT_TABLE_BYTES};
