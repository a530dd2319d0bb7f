//! The symmetries of each board shape, applied to positions, actions, action indices and planes.
//!
//! A symmetry is a rotation or reflection of the hexagonal lattice followed by a translation that
//! maps the board's rings onto themselves. The regular hexagons (37 and 61 rings) keep all 12; the
//! other shapes keep a subgroup: 40 and 43 rings 2, 44 rings 4, 48 rings 6. Index 0 is always the
//! identity.
//!
//! ```
//! use zertz_env::{Board, Position, Variant, Player, symmetry::symmetries};
//! assert_eq!(symmetries(Board::R37).len(), 12);
//! let pos = Position::new(Variant::default(), Player::P0);
//! let m = pos.parse_legal_move("Wd4,a1").unwrap();
//! let after = pos.play(&m).unwrap();
//! for s in symmetries(Board::R37) {
//!     let image = s.apply_position(&after);
//!     assert_eq!(s.inverse().apply_position(&image), after);
//! }
//! ```

use std::sync::OnceLock;

use crate::action_space::ActionSpace;
use crate::board::{Bits, Board, Direction, Ring};
use crate::moves::{Action, Hop, Placement};
use crate::position::Position;
use crate::types::{ByMarble, Marble, Player};

/// One symmetry of a board shape.
#[derive(Debug)]
pub struct Symmetry {
    board: Board,
    index: usize,
    inverse: usize,
    /// Image of each ring index.
    ring: [u8; 64],
    /// Image of each direction.
    dir: [u8; 6],
    /// Image of each action index (built on first use).
    actions: OnceLock<Vec<u32>>,
}

/// Axial direction vectors `(dq, dr)` of the six directions.
const AXIAL: [(i32, i32); 6] = [(0, 1), (1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1)];

/// The `k`-th linear map of the hexagonal lattice (0..6 rotations by 60°, 6..12 the same after a
/// reflection), on axial coordinates.
fn linear(k: usize, (q, r): (i32, i32)) -> (i32, i32) {
    let (mut x, mut y, mut z) = (q, r, -q - r);
    for _ in 0..k % 6 {
        (x, y, z) = (-z, -x, -y);
    }
    if k >= 6 {
        (y, z) = (z, y);
    }
    let _ = z;
    (x, y)
}

fn build(board: Board) -> Vec<Symmetry> {
    let geo = board.geometry();
    let w = geo.grid_shape().1 as i32;
    let axial = |r: Ring| {
        let i = geo.grid_index(r) as i32;
        (i % w, i / w)
    };
    let cells: Vec<(i32, i32)> = geo.rings().map(axial).collect();
    let mut out: Vec<Symmetry> = Vec::new();
    for k in 0..12 {
        let image: Vec<(i32, i32)> = cells.iter().map(|&c| linear(k, c)).collect();
        let (a, b) = (image.iter().min().copied(), cells.iter().min().copied());
        let (Some(a), Some(b)) = (a, b) else { continue };
        let t = (b.0 - a.0, b.1 - a.1);
        let mut ring = [0u8; 64];
        let mut ok = true;
        for (i, &(q, r)) in image.iter().enumerate() {
            match cells.iter().position(|&c| c == (q + t.0, r + t.1)) {
                Some(j) => ring[i] = j as u8,
                None => {
                    ok = false;
                    break;
                }
            }
        }
        if !ok {
            continue;
        }
        let mut dir = [0u8; 6];
        for (d, &v) in AXIAL.iter().enumerate() {
            let img = linear(k, v);
            dir[d] = AXIAL.iter().position(|&u| u == img).expect("lattice direction") as u8;
        }
        let index = out.len();
        out.push(Symmetry { board, index, inverse: 0, ring, dir, actions: OnceLock::new() });
    }
    let n = geo.len();
    for i in 0..out.len() {
        let inv = (0..out.len())
            .find(|&j| (0..n).all(|r| out[j].ring[out[i].ring[r] as usize] as usize == r))
            .expect("a group has inverses");
        out[i].inverse = inv;
    }
    out
}

static TABLES: [OnceLock<Vec<Symmetry>>; 6] = [
    OnceLock::new(),
    OnceLock::new(),
    OnceLock::new(),
    OnceLock::new(),
    OnceLock::new(),
    OnceLock::new(),
];

/// The symmetries of a board shape; index 0 is the identity.
pub fn symmetries(board: Board) -> &'static [Symmetry] {
    TABLES[board as usize].get_or_init(|| build(board))
}

impl Symmetry {
    /// The board shape.
    pub fn board(&self) -> Board {
        self.board
    }

    /// Index in [`symmetries`].
    pub fn index(&self) -> usize {
        self.index
    }

    /// The symmetry that undoes this one.
    pub fn inverse(&self) -> &'static Symmetry {
        &symmetries(self.board)[self.inverse]
    }

    /// Image of a ring.
    #[inline]
    pub fn ring(&self, r: Ring) -> Ring {
        Ring(self.ring[r.index()])
    }

    /// Image of a direction.
    #[inline]
    pub fn direction(&self, d: Direction) -> Direction {
        Direction(self.dir[d.index()])
    }

    fn bits(&self, b: u64) -> u64 {
        Bits(b).fold(0, |acc, r| acc | 1 << self.ring[r])
    }

    /// Image of a position (of this board shape).
    pub fn apply_position(&self, pos: &Position) -> Position {
        debug_assert_eq!(pos.board(), self.board);
        let marbles = ByMarble(Marble::ALL.map(|m| self.bits(pos.marbles(m))));
        Position::from_parts(
            pos.variant(),
            self.bits(pos.rings()),
            marbles,
            pos.pool(),
            crate::types::ByPlayer([pos.captures(Player::P0), pos.captures(Player::P1)]),
            pos.turn(),
            pos.chain().map(|r| self.ring(r)),
            pos.passes(),
        )
    }

    /// Image of an action.
    pub fn apply_action(&self, a: &Action) -> Action {
        match *a {
            Action::Place(p) => Action::Place(Placement {
                marble: p.marble,
                at: self.ring(p.at),
                remove: p.remove.map(|r| self.ring(r)),
            }),
            Action::Hop(h) => {
                Action::Hop(Hop { from: self.ring(h.from), dir: self.direction(h.dir) })
            }
            Action::Pass => Action::Pass,
        }
    }

    /// Image of every action index: `map[i]` is the index of the image of action `i`.
    pub fn action_map(&self) -> &[u32] {
        self.actions.get_or_init(|| {
            let space = ActionSpace::new(self.board);
            (0..space.len())
                .map(|i| {
                    let a = space.decode(i).expect("index in range");
                    space.index(&self.apply_action(&a)) as u32
                })
                .collect()
        })
    }

    /// Moves a per-action array (a policy or a legal mask) to the transformed position:
    /// `dst[map[i]] = src[i]`. Both have the action-space length.
    pub fn apply_to_actions<T: Copy>(&self, src: &[T], dst: &mut [T]) {
        let map = self.action_map();
        assert_eq!(src.len(), map.len(), "source must have the action-space length");
        assert_eq!(dst.len(), map.len(), "destination must have the action-space length");
        for (i, &v) in src.iter().enumerate() {
            dst[map[i] as usize] = v;
        }
    }

    /// Moves encoded planes `[C, H, W]` (any `C`) to the transformed position: the value at a
    /// ring's cell goes to the cell of the ring's image; cells outside the board stay as they are
    /// in `src` (they are the same in every plane of the encoding: zero, or constant per board).
    pub fn apply_to_planes<T: Copy>(&self, src: &[T], dst: &mut [T]) {
        let geo = self.board.geometry();
        let cells = geo.grid_shape().0 * geo.grid_shape().1;
        assert_eq!(src.len(), dst.len(), "source and destination must have the same length");
        assert_eq!(src.len() % cells, 0, "planes must be [C, H, W]");
        dst.copy_from_slice(src);
        for (s, d) in src.chunks_exact(cells).zip(dst.chunks_exact_mut(cells)) {
            for r in geo.rings() {
                d[geo.grid_index(self.ring(r))] = s[geo.grid_index(r)];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_sizes() {
        let sizes: Vec<usize> = Board::ALL.iter().map(|&b| symmetries(b).len()).collect();
        assert_eq!(sizes, [12, 2, 2, 4, 6, 12]);
    }

    #[test]
    fn identity_first_and_inverses_compose_to_identity() {
        for b in Board::ALL {
            let syms = symmetries(b);
            for r in b.geometry().rings() {
                assert_eq!(syms[0].ring(r), r);
                for s in syms {
                    assert_eq!(s.inverse().ring(s.ring(r)), r);
                }
            }
            for s in syms {
                for d in Direction::ALL {
                    assert_eq!(s.inverse().direction(s.direction(d)), d);
                }
            }
        }
    }

    #[test]
    fn neighbours_map_to_neighbours() {
        for b in Board::ALL {
            let g = b.geometry();
            for s in symmetries(b) {
                for r in g.rings() {
                    for d in Direction::ALL {
                        let n = g.neighbour(r, d).map(|n| s.ring(n));
                        assert_eq!(n, g.neighbour(s.ring(r), s.direction(d)));
                    }
                }
            }
        }
    }
}
