//! The fixed action space of a board: every single action has an index, legal or not.
//!
//! With `R` = the board's ring count, the `3 R (R + 1) + 6 R + 1` indices are laid out as
//!
//! | range | action | index |
//! |---|---|---|
//! | placements | marble `c` (0 white, 1 grey, 2 black) on ring `at`, removing ring `rm` (or none) | `(c R + at)(R + 1) + rm`, with `rm = R` for "no removal" |
//! | hops | the marble on `from` jumps in direction `d` (0..6, see [`crate::Direction`]) | `3 R (R + 1) + 6 from + d` |
//! | pass | | `3 R (R + 1) + 6 R` |
//!
//! Rings are numbered column by column from A1 ([`crate::Ring::index`]). The size depends only on
//! the board shape: 4441 for 37 rings, 5161 (40), 5935 (43), 6205 (44), 7345 (48), 11713 (61).
//!
//! ```
//! use zertz_env::{ActionSpace, Board, Position, Variant, Player};
//! let pos = Position::new(Variant::default(), Player::P0);
//! let space = ActionSpace::new(Board::R37);
//! assert_eq!(space.len(), 4441);
//! let mut mask = vec![false; space.len()];
//! pos.legal_action_mask(&mut mask);
//! assert_eq!(mask.iter().filter(|&&m| m).count(), 1944);
//! let a = pos.parse_action("Wd4,a1").unwrap();
//! assert_eq!(space.decode(space.index(&a)), Some(a));
//! ```

use crate::board::{Bits, Board, Direction, Ring};
use crate::moves::{Action, Hop, Placement};
use crate::position::Position;
use crate::types::Marble;

/// The action space of one board shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ActionSpace {
    board: Board,
    rings: usize,
}

impl ActionSpace {
    /// The action space of a board shape.
    pub const fn new(board: Board) -> ActionSpace {
        ActionSpace { board, rings: board.rings() }
    }

    /// The board shape.
    pub const fn board(&self) -> Board {
        self.board
    }

    /// Number of indices: `3 R (R + 1) + 6 R + 1`.
    pub const fn len(&self) -> usize {
        self.hops_start() + 6 * self.rings + 1
    }

    /// Always false.
    pub const fn is_empty(&self) -> bool {
        false
    }

    /// First hop index (`3 R (R + 1)`); placements come before.
    pub const fn hops_start(&self) -> usize {
        3 * self.rings * (self.rings + 1)
    }

    /// Index of the pass action (the last one).
    pub const fn pass_index(&self) -> usize {
        self.len() - 1
    }

    /// Index of a placement.
    #[inline]
    pub fn placement_index(&self, marble: Marble, at: Ring, remove: Option<Ring>) -> usize {
        let r = self.rings;
        (marble.index() * r + at.index()) * (r + 1) + remove.map_or(r, |x| x.index())
    }

    /// Index of a hop.
    #[inline]
    pub fn hop_index(&self, from: Ring, dir: Direction) -> usize {
        self.hops_start() + 6 * from.index() + dir.index()
    }

    /// Index of an action. Rings must be rings of this board.
    #[inline]
    pub fn index(&self, a: &Action) -> usize {
        match a {
            Action::Place(p) => self.placement_index(p.marble, p.at, p.remove),
            Action::Hop(h) => self.hop_index(h.from, h.dir),
            Action::Pass => self.pass_index(),
        }
    }

    /// The action with this index, or `None` past the end. Every index decodes to an action of
    /// the board; whether it is legal depends on the position. The hops whose landing ring is off
    /// the board ([`crate::Geometry::jump`] is `None`) are never legal and have no notation.
    pub fn decode(&self, index: usize) -> Option<Action> {
        let r = self.rings;
        if index < self.hops_start() {
            let remove = index % (r + 1);
            let rest = index / (r + 1);
            let (marble, at) = (rest / r, rest % r);
            return Some(Action::Place(Placement {
                marble: Marble::from_index(marble)?,
                at: Ring(at as u8),
                remove: (remove < r).then_some(Ring(remove as u8)),
            }));
        }
        let h = index - self.hops_start();
        if h < 6 * r {
            return Some(Action::Hop(Hop {
                from: Ring((h / 6) as u8),
                dir: Direction((h % 6) as u8),
            }));
        }
        (index == self.pass_index()).then_some(Action::Pass)
    }
}

impl Position {
    /// The action space of this position's board.
    pub fn action_space(&self) -> ActionSpace {
        ActionSpace::new(self.board())
    }

    /// Writes the legal-action mask into `mask` (length [`ActionSpace::len`]): `true` exactly at the
    /// indices of [`Position::legal_actions`]. Allocates nothing.
    ///
    /// # Panics
    /// If `mask` has the wrong length.
    pub fn legal_action_mask(&self, mask: &mut [bool]) {
        let space = self.action_space();
        assert_eq!(mask.len(), space.len(), "mask length must be the action-space size");
        mask.fill(false);
        if self.is_over() {
            return;
        }
        if self.for_each_hop(|h| mask[space.hop_index(h.from, h.dir)] = true) {
            return;
        }
        let supply = self.supply();
        if supply.0 == [0, 0, 0] {
            mask[space.pass_index()] = true;
            return;
        }
        // Every placement row (marble, ring) is the free-ring pattern, less the ring itself; the
        // last entry of a row is "no removal".
        let n = space.rings;
        let free = self.free_rings();
        let mut pattern = [false; crate::MAX_RINGS + 1];
        for f in Bits(free) {
            pattern[f] = true;
        }
        let pattern = &pattern[..n + 1];
        for marble in Marble::ALL {
            if supply[marble] == 0 {
                continue;
            }
            for at in Bits(self.vacant()) {
                let base = (marble.index() * n + at) * (n + 1);
                let row = &mut mask[base..base + n + 1];
                row.copy_from_slice(pattern);
                row[at] = false;
                if free & !(1u64 << at) == 0 {
                    row[n] = true;
                }
            }
        }
    }

    /// Calls `f` with the index of every legal single action, in increasing order within each
    /// kind (placements, hops, pass). Allocates nothing.
    pub fn for_each_legal_index(&self, mut f: impl FnMut(usize)) {
        let space = self.action_space();
        self.for_each_legal_action(|a| f(space.index(&a)));
    }

    /// Number of legal single actions (placements are counted, not listed).
    pub fn count_legal_actions(&self) -> usize {
        if self.is_over() {
            return 0;
        }
        let mut hops = 0;
        if self.for_each_hop(|_| hops += 1) {
            return hops;
        }
        (self.count_placements() as usize).max(1)
    }

    /// The `k`-th legal single action in the order of [`Position::legal_actions`], or `None` when
    /// `k` is past the end. Costs about as much as counting, not as listing: with `k` drawn
    /// uniformly below [`Position::count_legal_actions`] it samples a uniform legal action.
    pub fn nth_legal_action(&self, mut k: usize) -> Option<Action> {
        if self.is_over() {
            return None;
        }
        let (mut seen, mut found) = (0, None);
        if self.for_each_hop(|h| {
            if seen == k {
                found = Some(Action::Hop(h));
            }
            seen += 1;
        }) {
            return found;
        }
        let supply = self.supply();
        let colours = Marble::ALL.into_iter().filter(|&m| supply[m] > 0);
        let vacant = self.vacant();
        let free = self.free_rings();
        let removals = |at: u64| ((free & !at).count_ones() as usize).max(1);
        let block: usize = Bits(vacant).map(|at| removals(1 << at)).sum();
        if block == 0 || supply.0 == [0, 0, 0] {
            return (k == 0).then_some(Action::Pass);
        }
        let marble = colours.clone().nth(k / block)?;
        k %= block;
        for at in Bits(vacant) {
            let n = removals(1 << at);
            if k < n {
                let mut rest = free & !(1u64 << at);
                let remove = if rest == 0 {
                    None
                } else {
                    for _ in 0..k {
                        rest &= rest - 1;
                    }
                    Some(Ring(rest.trailing_zeros() as u8))
                };
                return Some(Action::Place(Placement { marble, at: Ring(at as u8), remove }));
            }
            k -= n;
        }
        None
    }

    /// Calls `f` with every hop that may start now (the chain marble's during a chain), in ring
    /// then direction order; returns whether there was any (then captures are compulsory).
    fn for_each_hop(&self, mut f: impl FnMut(Hop)) -> bool {
        let sources = match self.chain() {
            Some(r) => r.bit(),
            None => self.occupied(),
        };
        let mut any = false;
        for r in Bits(sources) {
            for d in Bits(self.hop_directions(Ring(r as u8)) as u64) {
                f(Hop { from: Ring(r as u8), dir: Direction(d as u8) });
                any = true;
            }
        }
        any
    }

    /// Calls `f` with every legal single action (the order of [`Position::legal_actions`]).
    pub fn for_each_legal_action(&self, mut f: impl FnMut(Action)) {
        if self.is_over() {
            return;
        }
        if self.for_each_hop(|h| f(Action::Hop(h))) {
            return;
        }
        let supply = self.supply();
        let vacant = self.vacant();
        let free = self.free_rings();
        let mut any = false;
        for marble in Marble::ALL {
            if supply[marble] == 0 {
                continue;
            }
            for at in Bits(vacant) {
                any = true;
                let at = Ring(at as u8);
                let rest = free & !at.bit();
                if rest == 0 {
                    f(Action::Place(Placement { marble, at, remove: None }));
                }
                for rm in Bits(rest) {
                    f(Action::Place(Placement { marble, at, remove: Some(Ring(rm as u8)) }));
                }
            }
        }
        if !any {
            f(Action::Pass);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let sizes: Vec<usize> = Board::ALL.iter().map(|&b| ActionSpace::new(b).len()).collect();
        assert_eq!(sizes, [4441, 5161, 5935, 6205, 7345, 11713]);
    }

    #[test]
    fn nth_legal_action_walks_the_legal_actions() {
        use crate::{MarbleSet, Player, Variant};
        let mut pos = Position::new(Variant::new(Board::R37, MarbleSet::Standard), Player::P0);
        for step in 0..40 {
            let actions = pos.legal_actions();
            assert_eq!(actions.len(), pos.count_legal_actions());
            for (k, a) in actions.iter().enumerate() {
                assert_eq!(pos.nth_legal_action(k), Some(*a), "step {step} k {k}");
            }
            assert_eq!(pos.nth_legal_action(actions.len()), None);
            let Some(a) = actions.get(step * 7919 % actions.len().max(1)) else { break };
            pos.play_action_unchecked(a);
        }
    }

    #[test]
    fn every_index_decodes_and_encodes_back() {
        for b in Board::ALL {
            let space = ActionSpace::new(b);
            for i in 0..space.len() {
                let a = space.decode(i).unwrap();
                assert_eq!(space.index(&a), i);
            }
            assert_eq!(space.decode(space.len()), None);
        }
    }
}
