//! Board shapes, ring names and neighbourhoods.
//!
//! Why one file of this size: the six shapes, their ring names and neighbourhoods are one table
//! built and read together; a sixth of the lines are its unit tests.
//!
//! Every board is drawn with its columns of rings upright (see `shared/rules/boards.md`). Columns are
//! lettered from the left, rings numbered upward from 1 inside a column. Internally a ring is an index
//! `0..board.len()` in column-major order (A1, A2, …, B1, …), so a set of rings fits in a `u64`
//! bitboard (61 rings at most).
//!
//! Coordinates: `x` is the column index and `p` the height in half-steps; the six directions are
//! `(0,+2)`, `(+1,+1)`, `(+1,-1)`, `(0,-2)`, `(-1,-1)`, `(-1,+1)`, in this order around a ring.

use std::fmt;

/// The board shapes of the game, named by their number of rings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Board {
    /// The basic 37-ring hexagon.
    R37,
    /// 37 rings plus A5, B6, C7.
    R40,
    /// 40 rings plus H1, H2, H3.
    R43,
    /// 40 rings plus D8, E7, F6, G5.
    R44,
    /// The 48-ring tournament board.
    R48,
    /// The 61-ring hexagon (37 plus 24 rings of the Potentials).
    R61,
}

impl Board {
    /// Every board shape, smallest first.
    pub const ALL: [Board; 6] =
        [Board::R37, Board::R40, Board::R43, Board::R44, Board::R48, Board::R61];

    /// Number of rings of the shape at the start of a game.
    pub const fn rings(self) -> usize {
        match self {
            Board::R37 => 37,
            Board::R40 => 40,
            Board::R43 => 43,
            Board::R44 => 44,
            Board::R48 => 48,
            Board::R61 => 61,
        }
    }

    /// The shape with `n` rings, if there is one.
    pub const fn from_rings(n: usize) -> Option<Board> {
        Some(match n {
            37 => Board::R37,
            40 => Board::R40,
            43 => Board::R43,
            44 => Board::R44,
            48 => Board::R48,
            61 => Board::R61,
            _ => return None,
        })
    }

    /// The shapes there are, by their rings, for messages and help: `A, B, … or F` (of
    /// [`Board::ALL`]).
    pub fn choices() -> String {
        let mut text = String::new();
        for (i, b) in Board::ALL.iter().enumerate() {
            let sep = match i {
                0 => "",
                _ if i + 1 == Board::ALL.len() => " or ",
                _ => ", ",
            };
            text += &format!("{sep}{}", b.rings());
        }
        text
    }

    /// The shape with `n` rings, or an error naming the shapes there are.
    pub fn parse_rings(n: u64) -> Result<Board, UnknownBoard> {
        usize::try_from(n).ok().and_then(Board::from_rings).ok_or(UnknownBoard(n.to_string()))
    }

    /// The precomputed geometry (names, neighbours) of the shape.
    #[inline]
    pub fn geometry(self) -> &'static Geometry {
        &GEOMETRIES[self as usize]
    }
}

/// A board size that is not one of [`Board::ALL`]; it says which there are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownBoard(pub String);

impl fmt::Display for UnknownBoard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no {}-ring board: choose {}", self.0, Board::choices())
    }
}

impl std::error::Error for UnknownBoard {}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.rings())
    }
}

/// `"37"`, `"61"`: a board by its number of rings.
impl std::str::FromStr for Board {
    type Err = UnknownBoard;

    fn from_str(s: &str) -> Result<Board, UnknownBoard> {
        let s = s.trim();
        s.parse::<u64>().map_err(|_| UnknownBoard(s.to_string())).and_then(Board::parse_rings)
    }
}

/// A board is written as its number of rings (`board = 48` in configs), and read back checked.
#[cfg(feature = "serde")]
impl serde::Serialize for Board {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.rings() as u64)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Board {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Board, D::Error> {
        let n = <u64 as serde::Deserialize>::deserialize(d)?;
        Board::parse_rings(n).map_err(serde::de::Error::custom)
    }
}

/// A ring of a board, by index (`0..board.rings()`, column-major from A1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ring(pub(crate) u8);

impl Ring {
    /// The ring with index `i`, if `i` is below [`MAX_RINGS`]. Whether the ring exists on a given
    /// board is checked where it is used (`i < board.rings()`); a ring a board does not have is
    /// simply never vacant, occupied or free there.
    #[inline]
    pub const fn new(i: u8) -> Option<Ring> {
        if (i as usize) < MAX_RINGS { Some(Ring(i)) } else { None }
    }

    /// Index of the ring (`0..board.rings()`).
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The ring as a one-bit bitboard.
    #[inline]
    pub const fn bit(self) -> u64 {
        1 << self.0
    }
}

/// One of the six directions around a ring, numbered clockwise from "up" (0 = `(0,+2)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Direction(pub(crate) u8);

impl Direction {
    /// The six directions in order around a ring.
    pub const ALL: [Direction; 6] =
        [Direction(0), Direction(1), Direction(2), Direction(3), Direction(4), Direction(5)];

    /// The direction with index `i` (`i < 6`), or `None`.
    pub const fn new(i: u8) -> Option<Direction> {
        if i < 6 { Some(Direction(i)) } else { None }
    }

    /// Index `0..6`.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The step `(dx, dp)` of the direction in board coordinates.
    pub const fn delta(self) -> (i8, i8) {
        DELTAS[self.0 as usize]
    }

    /// The opposite direction.
    pub const fn opposite(self) -> Direction {
        Direction((self.0 + 3) % 6)
    }
}

const DELTAS: [(i8, i8); 6] = [(0, 2), (1, 1), (1, -1), (0, -2), (-1, -1), (-1, 1)];

/// Sentinel for "no ring there" in the neighbour tables.
pub(crate) const NO_RING: u8 = u8::MAX;

/// Ring indices are below this bound (a bitboard is a `u64`).
pub const MAX_RINGS: usize = 64;

/// Largest number of columns of any board.
pub const MAX_COLUMNS: usize = 9;

/// Static description of one board shape: ring names, coordinates and neighbour tables.
#[derive(Debug)]
pub struct Geometry {
    board: Board,
    len: u8,
    columns: u8,
    /// First ring index of each column.
    col_start: [u8; MAX_COLUMNS + 1],
    /// Lowest height `p` of each column.
    col_low: [u8; MAX_COLUMNS],
    x: [u8; 64],
    p: [u8; 64],
    neighbours: [[u8; 6]; 64],
    neighbour_mask: [u64; 64],
    /// `pair_mask[r][d]`: rings at directions `d` and `d+1` from `r` (those on the board).
    pair_mask: [[u64; 6]; 64],
    all: u64,
    /// Rows and columns of the square grid of the encoding (axial coordinates).
    grid_h: u8,
    grid_w: u8,
    /// Index `row * grid_w + col` of every ring in that grid.
    grid: [u8; 64],
}

/// Columns of each shape as `(lowest p, ring count)`, from `shared/rules/boards.json`.
const COLUMNS: [&[(u8, u8)]; 6] = [
    &[(3, 4), (2, 5), (1, 6), (0, 7), (1, 6), (2, 5), (3, 4)],
    &[(3, 5), (2, 6), (1, 7), (0, 7), (1, 6), (2, 5), (3, 4)],
    &[(3, 5), (2, 6), (1, 7), (0, 7), (1, 6), (2, 5), (3, 4), (4, 3)],
    &[(3, 5), (2, 6), (1, 7), (0, 8), (1, 7), (2, 6), (3, 5)],
    &[(3, 5), (2, 6), (1, 7), (0, 8), (1, 7), (2, 6), (3, 5), (4, 4)],
    &[(4, 5), (3, 6), (2, 7), (1, 8), (0, 9), (1, 8), (2, 7), (3, 6), (4, 5)],
];

const GRID_P: usize = 20;

const fn build(board: Board) -> Geometry {
    let cols = COLUMNS[board as usize];
    let mut g = Geometry {
        board,
        len: 0,
        columns: cols.len() as u8,
        col_start: [0; MAX_COLUMNS + 1],
        col_low: [0; MAX_COLUMNS],
        x: [0; 64],
        p: [0; 64],
        neighbours: [[NO_RING; 6]; 64],
        neighbour_mask: [0; 64],
        pair_mask: [[0; 6]; 64],
        all: 0,
        grid_h: 0,
        grid_w: 0,
        grid: [0; 64],
    };
    let mut grid = [[NO_RING; GRID_P]; MAX_COLUMNS];
    let mut n = 0u8;
    let mut c = 0;
    while c < cols.len() {
        g.col_start[c] = n;
        g.col_low[c] = cols[c].0;
        let mut k = 0;
        while k < cols[c].1 {
            let p = cols[c].0 + 2 * k;
            g.x[n as usize] = c as u8;
            g.p[n as usize] = p;
            grid[c][p as usize] = n;
            n += 1;
            k += 1;
        }
        c += 1;
    }
    g.col_start[cols.len()] = n;
    g.len = n;
    g.all = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    // Axial coordinates: column q = x, row r = (p - x - min(p - x)) / 2. A step (0,+2) is r + 1,
    // (+1,+1) is q + 1, so the six directions are the usual axial ones.
    let mut min_d = i32::MAX;
    let mut i = 0;
    while i < n as usize {
        let d = g.p[i] as i32 - g.x[i] as i32;
        if d < min_d {
            min_d = d;
        }
        i += 1;
    }
    let mut max_r = 0;
    let mut i = 0;
    while i < n as usize {
        let r = (g.p[i] as i32 - g.x[i] as i32 - min_d) / 2;
        if r > max_r {
            max_r = r;
        }
        i += 1;
    }
    g.grid_h = (max_r + 1) as u8;
    g.grid_w = cols.len() as u8;
    let mut i = 0;
    while i < n as usize {
        let r = (g.p[i] as i32 - g.x[i] as i32 - min_d) / 2;
        g.grid[i] = (r as u8) * g.grid_w + g.x[i];
        i += 1;
    }
    let mut r = 0;
    while r < n as usize {
        let mut d = 0;
        while d < 6 {
            let x = g.x[r] as i32 + DELTAS[d].0 as i32;
            let p = g.p[r] as i32 + DELTAS[d].1 as i32;
            if x >= 0 && (x as usize) < MAX_COLUMNS && p >= 0 && (p as usize) < GRID_P {
                let nb = grid[x as usize][p as usize];
                g.neighbours[r][d] = nb;
                if nb != NO_RING {
                    g.neighbour_mask[r] |= 1 << nb;
                }
            }
            d += 1;
        }
        let mut d = 0;
        while d < 6 {
            let mut mask = 0u64;
            let a = g.neighbours[r][d];
            let b = g.neighbours[r][(d + 1) % 6];
            if a != NO_RING {
                mask |= 1 << a;
            }
            if b != NO_RING {
                mask |= 1 << b;
            }
            g.pair_mask[r][d] = mask;
            d += 1;
        }
        r += 1;
    }
    g
}

static GEOMETRIES: [Geometry; 6] = [
    build(Board::R37),
    build(Board::R40),
    build(Board::R43),
    build(Board::R44),
    build(Board::R48),
    build(Board::R61),
];

impl Geometry {
    /// The shape this geometry describes.
    #[inline]
    pub fn board(&self) -> Board {
        self.board
    }

    /// Number of rings at the start.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Always false: every board has rings.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bitboard of every ring of the shape.
    #[inline]
    pub fn all(&self) -> u64 {
        self.all
    }

    /// Number of columns (7, 8 or 9).
    #[inline]
    pub fn columns(&self) -> usize {
        self.columns as usize
    }

    /// Number of rings in column `col` (0-based).
    pub fn column_len(&self, col: usize) -> usize {
        (self.col_start[col + 1] - self.col_start[col]) as usize
    }

    /// Every ring of the shape, in index order.
    pub fn rings(&self) -> impl Iterator<Item = Ring> + '_ {
        (0..self.len).map(Ring)
    }

    /// The neighbour of `r` in direction `d`, if the shape has one there.
    #[inline]
    pub fn neighbour(&self, r: Ring, d: Direction) -> Option<Ring> {
        let n = self.neighbours[r.index()][d.index()];
        (n != NO_RING).then_some(Ring(n))
    }

    /// The ring two steps from `r` in direction `d` (where a capture from `r` lands), if the
    /// shape has one there.
    #[inline]
    pub fn jump(&self, r: Ring, d: Direction) -> Option<Ring> {
        self.neighbour(r, d).and_then(|over| self.neighbour(over, d))
    }

    #[inline]
    pub(crate) fn neighbour_raw(&self, r: usize, d: usize) -> u8 {
        self.neighbours[r][d]
    }

    /// Bitboard of the neighbours of `r`.
    #[inline]
    pub fn neighbour_mask(&self, r: Ring) -> u64 {
        self.neighbour_mask[r.index()]
    }

    #[inline]
    pub(crate) fn neighbour_mask_raw(&self, r: usize) -> u64 {
        self.neighbour_mask[r]
    }

    #[inline]
    pub(crate) fn pair_masks(&self, r: usize) -> &[u64; 6] {
        &self.pair_mask[r]
    }

    /// Rows and columns `(H, W)` of the square grid that holds the board in the encoding: ring
    /// `(x, p)` sits at row `r = (p - x - min(p - x)) / 2` (axial coordinates) and column `x`.
    /// 37: 7×7, 40: 8×7, 43: 8×8, 44: 8×7, 48: 8×8, 61: 9×9.
    #[inline]
    pub fn grid_shape(&self) -> (usize, usize) {
        (self.grid_h as usize, self.grid_w as usize)
    }

    /// Index `row * W + column` of a ring in the grid of [`Geometry::grid_shape`].
    #[inline]
    pub fn grid_index(&self, r: Ring) -> usize {
        self.grid[r.index()] as usize
    }

    /// Column index (0 = A) and half-step height `p` of a ring (boards.json coordinates).
    #[inline]
    pub fn coords(&self, r: Ring) -> (u8, u8) {
        (self.x[r.index()], self.p[r.index()])
    }

    /// The ring at coordinates `(x, p)`, if any.
    pub fn at_coords(&self, x: i32, p: i32) -> Option<Ring> {
        if x < 0 || x >= self.columns as i32 {
            return None;
        }
        let low = self.col_low[x as usize] as i32;
        if p < low || (p - low) % 2 != 0 {
            return None;
        }
        self.ring(x as usize, ((p - low) / 2 + 1) as usize)
    }

    /// The ring named by column index (0 = A) and row (from 1), if the shape has it.
    pub fn ring(&self, col: usize, row: usize) -> Option<Ring> {
        if col >= self.columns as usize || row == 0 || row > self.column_len(col) {
            return None;
        }
        Some(Ring(self.col_start[col] + row as u8 - 1))
    }

    /// Column index (0 = A) and row (from 1) of a ring.
    #[inline]
    pub fn column_row(&self, r: Ring) -> (usize, usize) {
        let col = self.x[r.index()] as usize;
        (col, (r.0 - self.col_start[col]) as usize + 1)
    }

    /// Lower-case name of a ring, such as `d4` (`?40` for an index the board does not have).
    pub fn name(&self, r: Ring) -> RingName {
        if r.index() >= self.len() {
            return RingName { col: b'?', row: r.0 };
        }
        let (col, row) = self.column_row(r);
        RingName { col: b'a' + col as u8, row: row as u8 }
    }

    /// Parses a ring name such as `d4` or `D4` (case-insensitive).
    pub fn parse_ring(&self, s: &str) -> Option<Ring> {
        let b = s.as_bytes();
        if b.len() < 2 || b.len() > 3 || !b[0].is_ascii_alphabetic() {
            return None;
        }
        let col = (b[0].to_ascii_lowercase() - b'a') as usize;
        let digits = &s[1..];
        if !digits.bytes().all(|c| c.is_ascii_digit()) || digits.starts_with('0') {
            return None;
        }
        let row: usize = digits.parse().ok()?;
        self.ring(col, row)
    }
}

/// The printable name of a ring (`d4`), without allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingName {
    col: u8,
    row: u8,
}

impl fmt::Display for RingName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.col as char, self.row)
    }
}

/// Iterates over the set bits of a bitboard as ring indices.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bits(pub u64);

impl Iterator for Bits {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            None
        } else {
            let i = self.0.trailing_zeros() as usize;
            self.0 &= self.0 - 1;
            Some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boards_parse_by_rings_and_unknown_ones_name_the_shapes() {
        for b in Board::ALL {
            assert_eq!(b.to_string().parse::<Board>(), Ok(b));
            assert_eq!(Board::parse_rings(b.rings() as u64), Ok(b));
        }
        assert_eq!(" 48 ".parse::<Board>(), Ok(Board::R48));
        for bad in ["38", "0", "-1", "sixty", "99999999999999999999999"] {
            let e = bad.parse::<Board>().unwrap_err().to_string();
            assert_eq!(e, format!("no {bad}-ring board: choose 37, 40, 43, 44, 48 or 61"));
        }
    }

    #[test]
    fn ring_counts_match_the_shapes() {
        for b in Board::ALL {
            let g = b.geometry();
            assert_eq!(g.len(), b.rings());
            assert_eq!(g.all().count_ones() as usize, b.rings());
            assert_eq!(Board::from_rings(b.rings()), Some(b));
        }
        assert_eq!(Board::from_rings(38), None);
    }

    #[test]
    fn neighbours_are_symmetric() {
        for b in Board::ALL {
            let g = b.geometry();
            for r in g.rings() {
                for d in Direction::ALL {
                    if let Some(n) = g.neighbour(r, d) {
                        assert_eq!(g.neighbour(n, d.opposite()), Some(r));
                    }
                }
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for b in Board::ALL {
            let g = b.geometry();
            for r in g.rings() {
                let name = g.name(r).to_string();
                assert_eq!(g.parse_ring(&name), Some(r));
                assert_eq!(g.parse_ring(&name.to_uppercase()), Some(r));
            }
        }
        let g = Board::R37.geometry();
        assert_eq!(g.parse_ring("d7").map(|r| g.coords(r)), Some((3, 12)));
        assert_eq!(g.parse_ring("a5"), None);
        assert_eq!(g.parse_ring("h1"), None);
        assert_eq!(g.parse_ring("d0"), None);
        assert_eq!(g.parse_ring("d07"), None);
        assert_eq!(Board::R48.geometry().parse_ring("h4").map(|r| r.index()), Some(47));
    }

    #[test]
    fn grids_hold_every_board_once() {
        let shapes = [(7, 7), (8, 7), (8, 8), (8, 7), (8, 8), (9, 9)];
        for (b, shape) in Board::ALL.into_iter().zip(shapes) {
            let g = b.geometry();
            assert_eq!(g.grid_shape(), shape, "{b}");
            let mut seen = std::collections::HashSet::new();
            for r in g.rings() {
                assert!(g.grid_index(r) < shape.0 * shape.1);
                assert!(seen.insert(g.grid_index(r)));
                // Neighbours are the six axial neighbours in the grid.
                let (w, i) = (shape.1 as i32, g.grid_index(r) as i32);
                let steps = [w, 1, 1 - w, -w, -1, w - 1];
                for d in Direction::ALL {
                    if let Some(n) = g.neighbour(r, d) {
                        assert_eq!(g.grid_index(n) as i32, i + steps[d.index()]);
                    }
                }
            }
        }
    }

    #[test]
    fn the_centre_of_37_has_six_neighbours_and_corners_three() {
        let g = Board::R37.geometry();
        let d4 = g.parse_ring("d4").unwrap();
        assert_eq!(g.neighbour_mask(d4).count_ones(), 6);
        let a1 = g.parse_ring("a1").unwrap();
        assert_eq!(g.neighbour_mask(a1).count_ones(), 3);
        let names: Vec<String> = Direction::ALL
            .iter()
            .map(|&d| g.neighbour(d4, d).map(|r| g.name(r).to_string()).unwrap_or_default())
            .collect();
        assert_eq!(names, ["d5", "e4", "e3", "d3", "c3", "c4"]);
    }
}
