//! Moves at two granularities: single [`Action`]s (one hop of a capture chain at a time) and whole-turn
//! [`Move`]s (a placement with its ring removal, or a complete capture chain).

use crate::board::{Direction, Ring};
use crate::types::Marble;

/// Placing a marble, then removing a free ring if there is one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Placement {
    /// Colour of the placed marble.
    pub marble: Marble,
    /// The vacant ring the marble goes on.
    pub at: Ring,
    /// The free ring removed afterwards; `None` only when no ring is free after the placement.
    pub remove: Option<Ring>,
}

/// One jump of a capture: the marble on `from` jumps over its neighbour in direction `dir` and lands on
/// the ring behind it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Hop {
    /// The ring of the jumping marble.
    pub from: Ring,
    /// The direction of the jump.
    pub dir: Direction,
}

/// A single decision: a placement, one hop of a capture, or a pass. During a capture chain the same
/// player keeps choosing hops until the chain ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Place a marble and remove a ring.
    Place(Placement),
    /// Jump one marble.
    Hop(Hop),
    /// No marble to place and no capture: the turn passes.
    Pass,
}

/// The longest chain a [`Chain`] can hold. No game reaches it: a chain of `n` hops needs `n + 1`
/// marbles on the board, and the largest marble set has 24.
pub const MAX_CHAIN: usize = 26;

/// A complete capture turn: the jumping marble's starting ring and the direction of every hop.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Chain {
    from: Ring,
    len: u8,
    /// Two directions per byte, low nibble first.
    dirs: [u8; MAX_CHAIN / 2],
}

impl Chain {
    /// An empty chain starting at `from` (push at least one hop before using it as a move).
    #[inline]
    pub const fn new(from: Ring) -> Chain {
        Chain { from, len: 0, dirs: [0; MAX_CHAIN / 2] }
    }

    /// The ring the jumping marble starts on.
    #[inline]
    pub const fn from(&self) -> Ring {
        self.from
    }

    /// Number of hops.
    #[inline]
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the chain has no hop yet.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Direction of hop `i`.
    #[inline]
    pub fn dir(&self, i: usize) -> Direction {
        debug_assert!(i < self.len());
        Direction((self.dirs[i / 2] >> ((i % 2) * 4)) & 0xf)
    }

    /// The chain with one more hop in direction `d`.
    ///
    /// # Panics
    /// If the chain already holds [`MAX_CHAIN`] hops (impossible in a legal game).
    #[inline]
    pub fn with(mut self, d: Direction) -> Chain {
        let i = self.len as usize;
        assert!(i < MAX_CHAIN, "capture chain longer than {MAX_CHAIN} hops");
        self.dirs[i / 2] |= d.0 << ((i % 2) * 4);
        self.len += 1;
        self
    }

    /// The directions of the hops, in order.
    pub fn dirs(&self) -> impl Iterator<Item = Direction> + '_ {
        (0..self.len()).map(|i| self.dir(i))
    }
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dirs: Vec<u8> = self.dirs().map(|d| d.0).collect();
        f.debug_struct("Chain").field("from", &self.from).field("dirs", &dirs).finish()
    }
}

/// A whole turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Move {
    /// Place a marble and remove a ring.
    Place(Placement),
    /// A complete capture chain.
    Capture(Chain),
    /// No marble to place and no capture.
    Pass,
}

impl From<Placement> for Move {
    fn from(p: Placement) -> Move {
        Move::Place(p)
    }
}

impl From<Placement> for Action {
    fn from(p: Placement) -> Action {
        Action::Place(p)
    }
}

impl From<Hop> for Action {
    fn from(h: Hop) -> Action {
        Action::Hop(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_stores_directions() {
        let mut c = Chain::new(Ring(3));
        let dirs = [5u8, 0, 3, 1, 2, 4, 4, 0, 1];
        for &d in &dirs {
            c = c.with(Direction(d));
        }
        assert_eq!(c.len(), dirs.len());
        assert_eq!(c.dirs().map(|d| d.0).collect::<Vec<_>>(), dirs);
        assert_eq!(c.from(), Ring(3));
    }

    #[test]
    fn moves_are_small() {
        assert!(std::mem::size_of::<Move>() <= 16);
        assert!(std::mem::size_of::<Action>() <= 6);
    }
}
