//! The rules of ZÈRTZ.
//!
//! Every board of `shared/rules/boards.md` ([`Board::ALL`]) with the standard or
//! the blitz marble set, following the rulebook and `shared/rules/decisions.md`.
//!
//! - [`Position`]: a legal position; legal moves at two granularities ([`Move`]: whole turns,
//!   [`Action`]: single hops of a chain), checked [`Position::play`] and
//!   [`Position::play_unchecked`], an incremental Zobrist hash. It is `Copy`: search copies it.
//! - [`Game`]: a position with its history (third repetition).
//! - [`notation`]: `Wd4,a1`, `b4xd6xf6`, `pass`. [`setup`]: the position text format.
//! - [`sgf`]: boardspace.net game records. [`perft()`]: move-generation counts.
//! - [`encode`]: observation planes and globals (versioned), [`ActionSpace`]: a fixed index for
//!   every single action with legal masks, [`symmetry`]: the symmetries of each board shape.
//! - [`files`]: files named by users must be regular files (a FIFO would block); partial
//!   outputs are written as `.NAME.partial-PID` and renamed into place.
//!
//! ```
//! use zertz_env::{Position, Variant, Player};
//! let mut pos = Position::new(Variant::default(), Player::P0);
//! let moves = pos.legal_moves();
//! assert_eq!(moves.len(), 1944);
//! pos.play_unchecked(&moves[0]);
//! assert_eq!(pos.turn(), Player::P1);
//! ```

#![deny(missing_docs)]

mod action_space;
mod board;
mod diagram;
pub mod encode;
mod error_class;
pub mod files;
mod game;
mod moves;
pub mod notation;
mod perft;
mod position;
#[cfg(feature = "serde")]
pub mod records;
mod rng;
pub mod setup;
pub mod sgf;
pub mod symmetry;
mod types;
mod zobrist;

pub use action_space::ActionSpace;
pub use board::{Board, Direction, Geometry, MAX_COLUMNS, MAX_RINGS, Ring, RingName, UnknownBoard};
pub use error_class::{Cause, Classify, ErrorClass};
pub use game::{Game, GameError, Repetitions};
pub use moves::{Action, Chain, Hop, MAX_CHAIN, Move, Placement};
pub use notation::{MoveError, ParseMoveError};
pub use perft::{divide, perft};
pub use position::{PlayError, Position};
pub use rng::SplitMix64;
pub use setup::{Cell, Setup, SetupError};
pub use types::{ByMarble, ByPlayer, Marble, MarbleSet, Outcome, Player, Variant};
