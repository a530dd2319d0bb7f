//! Tensor encoding of a position, seen from the player to move (its version: [`ENCODING_VERSION`]).
//!
//! An observation is two arrays that the caller owns:
//!
//! - `planes`, shape `[C, H, W]` with `C` = [`PLANES`], `f32`, where `H × W` is the board's grid
//!   ([`crate::Geometry::grid_shape`]: 7×7 for 37 rings, 8×7 for 40 and 44, 8×8 for 43 and 48,
//!   9×9 for 61). Ring `(x, p)` sits at column `x`, row `(p - x - min(p - x)) / 2` (axial
//!   coordinates, so the six neighbours of a cell are the usual hexagonal six). A plane is 1.0 where
//!   its property holds, else 0.0:
//!
//!   | plane | meaning |
//!   |---|---|
//!   | 0 | the cell belongs to the board shape (constant per board) |
//!   | 1 | a ring is there |
//!   | 2 | a vacant ring |
//!   | 3 | a white marble |
//!   | 4 | a grey marble |
//!   | 5 | a black marble |
//!   | 6 | a free ring (may be removed after a placement now) |
//!   | 7 | the marble that must continue a capture chain |
//!
//! - `globals`, shape `[G]` with `G` = [`GLOBALS`], `f32`, each scaled to `0..=1`; "own" is the
//!   player to move:
//!
//!   | index | meaning |
//!   |---|---|
//!   | 0..3 | pool per colour (white, grey, black) / marbles of that colour in the set |
//!   | 3..6 | own captures per colour / captures of that colour alone that win |
//!   | 6..9 | opponent captures per colour, scaled the same way |
//!   | 9..13 | own distance to each win set (white, grey, black, each colour): marbles missing / size of the set |
//!   | 13..17 | opponent distance to each win set |
//!   | 17 | 1 when the pool is empty (the mover places from own captures) |
//!   | 18 | 1 during a capture chain |
//!   | 19 | 1 when the opponent passed last turn |
//!
//! Marbles belong to nobody, so the planes are the same for both players; only the globals are
//! relative to the mover. A change of any of this bumps [`ENCODING_VERSION`] and the golden file
//! `tests/data/encoding-v{ENCODING_VERSION}.txt`.
//!
//! ```
//! use zertz_env::{Position, Variant, Player, encode};
//! let pos = Position::new(Variant::default(), Player::P0);
//! let shape = encode::Shape::of(pos.board());
//! assert_eq!((shape.planes, shape.height, shape.width, shape.globals), (8, 7, 7, 20));
//! let mut planes = vec![0.0; shape.planes_len()];
//! let mut globals = vec![0.0; shape.globals];
//! pos.encode(&mut planes, &mut globals);
//! assert_eq!(planes[..49].iter().sum::<f32>(), 37.0); // plane 0: the 37 cells of the board
//! ```

use crate::board::{Bits, Board, Ring};
use crate::position::Position;
use crate::types::{ByMarble, Marble, Player};

/// Version of the encoding; bumped whenever planes or globals change meaning.
pub const ENCODING_VERSION: u32 = 1;

/// Number of planes.
pub const PLANES: usize = 8;

/// Number of global features.
pub const GLOBALS: usize = 20;

/// Shape of the encoding of one board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    /// Planes `C`.
    pub planes: usize,
    /// Grid rows `H`.
    pub height: usize,
    /// Grid columns `W`.
    pub width: usize,
    /// Global features `G`.
    pub globals: usize,
}

impl Shape {
    /// The encoding shape of a board.
    pub fn of(board: Board) -> Shape {
        let (height, width) = board.geometry().grid_shape();
        Shape { planes: PLANES, height, width, globals: GLOBALS }
    }

    /// `C × H × W`: the length of a planes buffer.
    pub const fn planes_len(&self) -> usize {
        self.planes * self.height * self.width
    }

    /// `H × W`: the length of one plane.
    pub const fn cells(&self) -> usize {
        self.height * self.width
    }
}

/// Marbles still missing to each win set: white, grey, black alone, then each colour.
fn distances(set: crate::types::MarbleSet, caps: &ByMarble<u8>) -> [f32; 4] {
    let single = set.single_colour_win();
    let each = set.each_colour_win();
    let mut d = [0.0; 4];
    for m in Marble::ALL {
        d[m.index()] = single[m].saturating_sub(caps[m]) as f32 / single[m] as f32;
    }
    let missing: u32 = Marble::ALL.iter().map(|&m| each.saturating_sub(caps[m]) as u32).sum();
    d[3] = missing as f32 / (3 * each as u32) as f32;
    d
}

impl Position {
    /// Writes the observation into caller-owned buffers (see the module docs for the layout).
    /// Every element of both buffers is written; nothing is allocated.
    ///
    /// # Panics
    /// If a buffer does not have the length of [`Shape::of`] this board.
    pub fn encode(&self, planes: &mut [f32], globals: &mut [f32]) {
        self.encode_as(self.turn(), planes, globals);
    }

    /// [`Position::encode`] seen by `viewer` rather than by the player to move: the planes are the
    /// same, the globals' "own" and "opponent" are `viewer`'s, and "the opponent passed last turn"
    /// holds only for the player to move (for the other, the last turn was their own). The two
    /// players of a multi-agent environment each observe from their own side.
    ///
    /// # Panics
    /// If a buffer does not have the length of [`Shape::of`] this board.
    pub fn encode_as(&self, viewer: Player, planes: &mut [f32], globals: &mut [f32]) {
        let shape = Shape::of(self.board());
        assert_eq!(planes.len(), shape.planes_len(), "planes buffer must be C*H*W long");
        assert_eq!(globals.len(), GLOBALS, "globals buffer must be {GLOBALS} long");
        self.encode_planes(planes, shape.cells());
        self.encode_globals(viewer, globals);
    }

    fn encode_planes(&self, planes: &mut [f32], cells: usize) {
        planes.fill(0.0);
        let geo = self.geometry();
        let mut set = |plane: usize, bits: u64| {
            let out = &mut planes[plane * cells..(plane + 1) * cells];
            for r in Bits(bits) {
                out[geo.grid_index(Ring(r as u8))] = 1.0;
            }
        };
        set(0, geo.all());
        set(1, self.rings());
        set(2, self.vacant());
        for m in Marble::ALL {
            set(3 + m.index(), self.marbles(m));
        }
        set(6, self.free_rings());
        set(7, self.chain().map_or(0, |r| r.bit()));
    }

    fn encode_globals(&self, viewer: Player, g: &mut [f32]) {
        let set = self.marble_set();
        let counts = set.counts();
        let single = set.single_colour_win();
        let own = self.captures(viewer);
        let opp = self.captures(!viewer);
        for m in Marble::ALL {
            let i = m.index();
            g[i] = self.pool()[m] as f32 / counts[m] as f32;
            g[3 + i] = (own[m] as f32 / single[m] as f32).min(1.0);
            g[6 + i] = (opp[m] as f32 / single[m] as f32).min(1.0);
        }
        g[9..13].copy_from_slice(&distances(set, &own));
        g[13..17].copy_from_slice(&distances(set, &opp));
        g[17] = (self.pool().0 == [0, 0, 0]) as u8 as f32;
        g[18] = self.chain().is_some() as u8 as f32;
        g[19] = (self.passes() == 1 && viewer == self.turn()) as u8 as f32;
    }
}
