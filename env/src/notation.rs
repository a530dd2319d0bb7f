//! Move notation.
//!
//! | move | notation | meaning |
//! |---|---|---|
//! | placement | `Wd4,a1` | a white marble on d4, then ring a1 removed |
//! | placement, no free ring | `Wd4` | no ring could be removed afterwards |
//! | capture turn | `b4xd6xf6` | the marble on b4 jumps to d6, then to f6 |
//! | one hop (single action) | `b4xd6` | |
//! | pass | `pass` | |
//!
//! Colour letters are `W`, `G`, `B`; rings are named as in `shared/rules/boards.md`. Input is
//! case-insensitive; output is exactly as shown.
//!
//! ```
//! use zertz_env::{Position, Variant, Player};
//! let pos = Position::new(Variant::default(), Player::P0);
//! let m = pos.parse_move("wD4,A1").unwrap();
//! assert_eq!(pos.move_to_string(&m), "Wd4,a1");
//! assert!(pos.play(&m).is_ok());
//! ```

use std::fmt::Write;

use crate::board::{Direction, Geometry, Ring};
use crate::moves::{Action, Chain, Hop, Move, Placement};
use crate::position::Position;
use crate::types::Marble;

/// Text that is not a move of this board in the notation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseMoveError {
    /// Empty input.
    #[error("empty move")]
    Empty,
    /// The text has the wrong shape.
    #[error(
        "cannot read move {0:?}: expected a placement like Wd4,a1, a capture like b4xd6 or pass"
    )]
    Syntax(String),
    /// A ring name that this board does not have.
    #[error("no ring {ring:?} on the {board}-ring board")]
    UnknownRing {
        /// The name as written.
        ring: String,
        /// Rings of the board.
        board: usize,
    },
    /// Two rings of a capture that are not two steps apart in a straight line.
    #[error("{from} to {to} is not a jump (rings two steps apart in a line)")]
    NotAJump {
        /// Start of the hop.
        from: String,
        /// Landing ring.
        to: String,
    },
    /// More than one hop where a single action was expected.
    #[error("{0:?} has several hops; a single action is one hop")]
    NotSingle(String),
    /// A capture chain longer than any game allows.
    #[error("capture chain {0:?} is too long")]
    TooLong(String),
}

/// A move that cannot be parsed, or is not legal in the position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The text is not a move.
    #[error(transparent)]
    Parse(#[from] ParseMoveError),
    /// The move is not legal here.
    #[error("illegal move {0}")]
    Illegal(String),
}

fn ring(geo: &Geometry, s: &str) -> Result<Ring, ParseMoveError> {
    geo.parse_ring(s)
        .ok_or_else(|| ParseMoveError::UnknownRing { ring: s.to_string(), board: geo.len() })
}

fn jump_direction(geo: &Geometry, from: Ring, to: Ring) -> Option<Direction> {
    Direction::ALL
        .into_iter()
        .find(|&d| geo.neighbour(from, d).and_then(|o| geo.neighbour(o, d)) == Some(to))
}

/// Parses a whole-turn move on a board (syntax and ring names only, not legality).
pub fn parse_move(geo: &Geometry, text: &str) -> Result<Move, ParseMoveError> {
    let s = text.trim();
    if s.is_empty() {
        return Err(ParseMoveError::Empty);
    }
    if s.eq_ignore_ascii_case("pass") {
        return Ok(Move::Pass);
    }
    let first = s.chars().next().unwrap_or(' ');
    let second_is_alpha = s.chars().nth(1).is_some_and(|c| c.is_ascii_alphabetic());
    if let (Some(marble), true) = (Marble::from_letter(first), second_is_alpha) {
        let rest = &s[1..];
        let (at, remove) = match rest.split_once(',') {
            Some((a, r)) => (ring(geo, a.trim())?, Some(ring(geo, r.trim())?)),
            None => (ring(geo, rest)?, None),
        };
        return Ok(Move::Place(Placement { marble, at, remove }));
    }
    let parts: Vec<&str> = s.split(['x', 'X']).collect();
    if parts.len() < 2 {
        return Err(ParseMoveError::Syntax(s.to_string()));
    }
    if parts.len() - 1 > crate::moves::MAX_CHAIN {
        return Err(ParseMoveError::TooLong(s.to_string()));
    }
    let mut at = ring(geo, parts[0])?;
    let mut chain = Chain::new(at);
    for p in &parts[1..] {
        let to = ring(geo, p)?;
        let d = jump_direction(geo, at, to).ok_or_else(|| ParseMoveError::NotAJump {
            from: geo.name(at).to_string(),
            to: geo.name(to).to_string(),
        })?;
        chain = chain.with(d);
        at = to;
    }
    Ok(Move::Capture(chain))
}

/// Parses a single action: a placement, one hop, or `pass`.
pub fn parse_action(geo: &Geometry, text: &str) -> Result<Action, ParseMoveError> {
    match parse_move(geo, text)? {
        Move::Place(p) => Ok(Action::Place(p)),
        Move::Pass => Ok(Action::Pass),
        Move::Capture(c) if c.len() == 1 => Ok(Action::Hop(Hop { from: c.from(), dir: c.dir(0) })),
        Move::Capture(_) => Err(ParseMoveError::NotSingle(text.trim().to_string())),
    }
}

/// Writes a move in notation.
pub fn write_move(geo: &Geometry, m: &Move, out: &mut String) {
    match m {
        Move::Place(p) => write_placement(geo, p, out),
        Move::Pass => out.push_str("pass"),
        Move::Capture(c) => {
            let mut at = c.from();
            let _ = write!(out, "{}", geo.name(at));
            for d in c.dirs() {
                at = geo.jump(at, d).unwrap_or(at);
                let _ = write!(out, "x{}", geo.name(at));
            }
        }
    }
}

fn write_placement(geo: &Geometry, p: &Placement, out: &mut String) {
    let _ = write!(out, "{}{}", p.marble.letter(), geo.name(p.at));
    if let Some(r) = p.remove {
        let _ = write!(out, ",{}", geo.name(r));
    }
}

/// Writes a single action in notation.
pub fn write_action(geo: &Geometry, a: &Action, out: &mut String) {
    match a {
        Action::Place(p) => write_placement(geo, p, out),
        Action::Pass => out.push_str("pass"),
        Action::Hop(h) => write_move(geo, &Move::Capture(Chain::new(h.from).with(h.dir)), out),
    }
}

impl Position {
    /// The move in notation, such as `Wd4,a1` or `b4xd6xf6`.
    pub fn move_to_string(&self, m: &Move) -> String {
        let mut s = String::new();
        write_move(self.geometry(), m, &mut s);
        s
    }

    /// The action in notation, such as `Wd4,a1` or `b4xd6`.
    pub fn action_to_string(&self, a: &Action) -> String {
        let mut s = String::new();
        write_action(self.geometry(), a, &mut s);
        s
    }

    /// Parses a whole-turn move on this position's board (legality is not checked).
    pub fn parse_move(&self, text: &str) -> Result<Move, ParseMoveError> {
        parse_move(self.geometry(), text)
    }

    /// Parses a single action on this position's board (legality is not checked).
    pub fn parse_action(&self, text: &str) -> Result<Action, ParseMoveError> {
        parse_action(self.geometry(), text)
    }

    /// Parses a whole-turn move and checks that it is legal here.
    pub fn parse_legal_move(&self, text: &str) -> Result<Move, MoveError> {
        let m = self.parse_move(text)?;
        if self.is_legal_move(&m) {
            Ok(m)
        } else {
            Err(MoveError::Illegal(text.trim().to_string()))
        }
    }

    /// Parses a single action and checks that it is legal here.
    pub fn parse_legal_action(&self, text: &str) -> Result<Action, MoveError> {
        let a = self.parse_action(text)?;
        if self.is_legal_action(&a) {
            Ok(a)
        } else {
            Err(MoveError::Illegal(text.trim().to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Board, MarbleSet, Player, Variant};

    fn start() -> Position {
        Position::new(Variant::new(Board::R37, MarbleSet::Standard), Player::P0)
    }

    #[test]
    fn placements_round_trip() {
        let pos = start();
        for s in ["Wd4,a1", "Gg4", "Ba1,d7"] {
            let m = pos.parse_move(s).unwrap();
            assert_eq!(pos.move_to_string(&m), s);
        }
        let m = pos.parse_move(" bD4,A1 ").unwrap();
        assert_eq!(pos.move_to_string(&m), "Bd4,a1");
    }

    #[test]
    fn captures_round_trip() {
        let pos = start();
        let m = pos.parse_move("B4XD6xD4").unwrap();
        assert_eq!(pos.move_to_string(&m), "b4xd6xd4");
        assert!(matches!(pos.parse_action("b4xd6"), Ok(Action::Hop(_))));
        assert!(matches!(pos.parse_action("b4xd6xd4"), Err(ParseMoveError::NotSingle(_))));
        assert_eq!(pos.parse_move("PASS"), Ok(Move::Pass));
    }

    #[test]
    fn a_chain_is_its_hops() {
        let pos = start();
        let m = pos.parse_move("b4xd6xd4").unwrap();
        let hops: Vec<String> =
            pos.move_actions(&m).iter().map(|a| pos.action_to_string(a)).collect();
        assert_eq!(hops, ["b4xd6", "d6xd4"]);
        let m = pos.parse_move("Wd4,a1").unwrap();
        assert_eq!(pos.move_actions(&m), [pos.parse_action("Wd4,a1").unwrap()]);
        assert_eq!(pos.move_actions(&Move::Pass), [Action::Pass]);
    }

    #[test]
    fn errors_name_the_problem() {
        let pos = start();
        assert!(matches!(pos.parse_move(""), Err(ParseMoveError::Empty)));
        assert!(matches!(pos.parse_move("Wz9,a1"), Err(ParseMoveError::UnknownRing { .. })));
        assert!(matches!(pos.parse_move("a1xa2"), Err(ParseMoveError::NotAJump { .. })));
        assert!(matches!(pos.parse_move("hello"), Err(ParseMoveError::Syntax(_))));
        assert!(matches!(pos.parse_move("Wd4,"), Err(ParseMoveError::UnknownRing { .. })));
        let e = pos.parse_legal_move("a1xa3").unwrap_err();
        assert_eq!(e.to_string(), "illegal move a1xa3");
    }
}
