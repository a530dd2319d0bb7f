//! The position text format and [`Setup`], an unchecked position.
//!
//! A position is one line of nine fields separated by spaces:
//!
//! ```text
//! 37 standard ..../...../....../......./....../...../.... 6/8/10 0/0/0 0/0/0 P0 - 0
//! ```
//!
//! 1. board: its rings (one of [`Board::ALL`](crate::Board::ALL));
//! 2. marble set: `standard` or `blitz`;
//! 3. the rings, column by column from A, separated by `/`; inside a column from row 1 upward one
//!    character per ring: `.` vacant ring, `w` `g` `b` a ring with a white, grey or black marble,
//!    `-` a ring that has been removed;
//! 4. the pool as `white/grey/black`;
//! 5. the captures of P0 as `white/grey/black`;
//! 6. the captures of P1;
//! 7. the player to move, `P0` or `P1`;
//! 8. the ring of the marble that must continue a capture chain, or `-`;
//! 9. passes in a row just before this position (`0`, `1`, or `2` for a game drawn by passing).
//!
//! Input is case-insensitive; output is exactly as above. [`Position::to_text`] and
//! [`Position::from_text`] round-trip exactly.
//!
//! ```
//! use zertz_env::{Position, Variant, Player};
//! let pos = Position::new(Variant::default(), Player::P0);
//! let text = pos.to_text();
//! assert_eq!(text, "37 standard ..../...../....../......./....../...../.... 6/8/10 0/0/0 0/0/0 P0 - 0");
//! assert_eq!(Position::from_text(&text).unwrap(), pos);
//! ```

use std::fmt::Write;

use crate::board::{Bits, Board, Ring};
use crate::position::Position;
use crate::types::{ByMarble, ByPlayer, Marble, MarbleSet, Player, Variant};

/// What one ring position of the board holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cell {
    /// The ring has been removed.
    Removed,
    /// A ring without a marble.
    Vacant,
    /// A ring with a marble.
    Marble(Marble),
}

/// An unchecked position with public fields. [`Position::from_setup`] validates it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Setup {
    /// Board shape and marble set.
    pub variant: Variant,
    /// One cell per ring of the shape, in ring index order (column-major from A1).
    pub cells: Vec<Cell>,
    /// Marbles in the common pool.
    pub pool: ByMarble<u8>,
    /// Marbles captured by each player.
    pub captures: ByPlayer<ByMarble<u8>>,
    /// Player to move.
    pub turn: Player,
    /// Marble that must continue a capture chain.
    pub chain: Option<Ring>,
    /// Passes in a row before this position.
    pub passes: u8,
}

/// Why a position text or a [`Setup`] is not a legal position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// Wrong number of fields.
    #[error("expected 9 fields separated by spaces, found {0}")]
    FieldCount(usize),
    /// The board field is not a known shape.
    #[error("unknown board {0:?} (expected {boards})", boards = crate::Board::choices())]
    Board(String),
    /// The marble-set field is not known.
    #[error("unknown marble set {0:?} (expected standard or blitz)")]
    MarbleSet(String),
    /// The ring field has the wrong number of columns.
    #[error("the {board}-ring board has {expected} columns, found {found}")]
    Columns {
        /// Board size.
        board: usize,
        /// Columns of the board.
        expected: usize,
        /// Columns in the text.
        found: usize,
    },
    /// A column has the wrong length.
    #[error("column {column} has {expected} rings, found {found}")]
    ColumnLength {
        /// Column letter.
        column: char,
        /// Rings in the column.
        expected: usize,
        /// Characters in the text.
        found: usize,
    },
    /// A character that is not a cell.
    #[error("unknown cell {0:?} (expected . - w g b)")]
    Cell(char),
    /// The cells list has the wrong length.
    #[error("expected {expected} cells, found {found}")]
    CellCount {
        /// Rings of the board.
        expected: usize,
        /// Cells given.
        found: usize,
    },
    /// A count field is not `w/g/b`.
    #[error("cannot read {field} {text:?}: expected white/grey/black counts like 6/8/10")]
    Counts {
        /// Which field.
        field: &'static str,
        /// The text.
        text: String,
    },
    /// The player field is not `P0` or `P1`.
    #[error("unknown player {0:?} (expected P0 or P1)")]
    Player(String),
    /// The chain field is not `-` or a ring of the board.
    #[error("chain ring {0:?} is not a ring of this board")]
    ChainRing(String),
    /// The passes field is not 0, 1 or 2.
    #[error("passes {0:?} is not 0, 1 or 2")]
    Passes(String),
    /// Marbles of one colour do not add up to the marble set.
    #[error("{marble:?}: pool, board and captures hold {found} marbles, the set has {expected}")]
    MarbleCount {
        /// The colour.
        marble: Marble,
        /// Marbles of the set.
        expected: u32,
        /// Marbles counted.
        found: u32,
    },
    /// A group of rings that are all occupied; it would have been claimed.
    #[error(
        "ring {0} belongs to a group whose rings all carry marbles (it would have been claimed)"
    )]
    FullGroup(String),
    /// The chain marble is missing or cannot jump.
    #[error("the chain marble on {0} cannot jump")]
    Chain(String),
    /// A chain with passes.
    #[error("passes must be 0 during a capture chain")]
    ChainWithPasses,
    /// Both players hold a win set.
    #[error("both players hold a winning set of captures")]
    BothWin,
}

fn parse_counts(field: &'static str, text: &str) -> Result<ByMarble<u8>, SetupError> {
    let err = || SetupError::Counts { field, text: text.to_string() };
    let parts: Vec<&str> = text.split('/').collect();
    if parts.len() != 3 {
        return Err(err());
    }
    let mut out = [0u8; 3];
    for (o, p) in out.iter_mut().zip(&parts) {
        if p.is_empty() || p.len() > 2 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        *o = p.parse().map_err(|_| err())?;
    }
    Ok(ByMarble(out))
}

impl Setup {
    /// Parses the position text format (see the module docs). Checks the syntax only.
    pub fn from_text(text: &str) -> Result<Setup, SetupError> {
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() != 9 {
            return Err(SetupError::FieldCount(fields.len()));
        }
        let board = fields[0]
            .parse::<usize>()
            .ok()
            .and_then(Board::from_rings)
            .ok_or_else(|| SetupError::Board(fields[0].to_string()))?;
        let marbles = MarbleSet::from_name(fields[1])
            .ok_or_else(|| SetupError::MarbleSet(fields[1].into()))?;
        let geo = board.geometry();
        let columns: Vec<&str> = fields[2].split('/').collect();
        if columns.len() != geo.columns() {
            return Err(SetupError::Columns {
                board: geo.len(),
                expected: geo.columns(),
                found: columns.len(),
            });
        }
        let mut cells = Vec::with_capacity(geo.len());
        for (c, col) in columns.iter().enumerate() {
            let n = col.chars().count();
            if n != geo.column_len(c) {
                return Err(SetupError::ColumnLength {
                    column: (b'A' + c as u8) as char,
                    expected: geo.column_len(c),
                    found: n,
                });
            }
            for ch in col.chars() {
                cells.push(match ch {
                    '.' => Cell::Vacant,
                    '-' => Cell::Removed,
                    c => Cell::Marble(Marble::from_letter(c).ok_or(SetupError::Cell(c))?),
                });
            }
        }
        let pool = parse_counts("pool", fields[3])?;
        let cap0 = parse_counts("captures of P0", fields[4])?;
        let cap1 = parse_counts("captures of P1", fields[5])?;
        let turn = if fields[6].eq_ignore_ascii_case("p0") {
            Player::P0
        } else if fields[6].eq_ignore_ascii_case("p1") {
            Player::P1
        } else {
            return Err(SetupError::Player(fields[6].to_string()));
        };
        let chain = if fields[7] == "-" {
            None
        } else {
            Some(geo.parse_ring(fields[7]).ok_or_else(|| SetupError::ChainRing(fields[7].into()))?)
        };
        let passes = match fields[8] {
            "0" => 0,
            "1" => 1,
            "2" => 2,
            p => return Err(SetupError::Passes(p.to_string())),
        };
        Ok(Setup {
            variant: Variant::new(board, marbles),
            cells,
            pool,
            captures: ByPlayer([cap0, cap1]),
            turn,
            chain,
            passes,
        })
    }
}

impl Position {
    /// Validates an unchecked setup: the cells fit the board, marbles add up to the set, no group of
    /// occupied rings is left unclaimed, a chain marble can jump, at most one player has won.
    pub fn from_setup(setup: &Setup) -> Result<Position, SetupError> {
        let geo = setup.variant.board.geometry();
        if setup.cells.len() != geo.len() {
            return Err(SetupError::CellCount { expected: geo.len(), found: setup.cells.len() });
        }
        if setup.passes > 2 {
            return Err(SetupError::Passes(setup.passes.to_string()));
        }
        let mut rings = 0u64;
        let mut marbles = ByMarble([0u64; 3]);
        for (i, cell) in setup.cells.iter().enumerate() {
            match cell {
                Cell::Removed => {}
                Cell::Vacant => rings |= 1 << i,
                Cell::Marble(m) => {
                    rings |= 1 << i;
                    marbles[*m] |= 1 << i;
                }
            }
        }
        if let Some(c) = setup.chain {
            if c.index() >= geo.len() {
                return Err(SetupError::ChainRing(geo.name(c).to_string()));
            }
        }
        let set = setup.variant.marbles.counts();
        for m in Marble::ALL {
            let found = marbles[m].count_ones()
                + setup.pool[m] as u32
                + setup.captures.0[0][m] as u32
                + setup.captures.0[1][m] as u32;
            if found != set[m] as u32 {
                return Err(SetupError::MarbleCount { marble: m, expected: set[m] as u32, found });
            }
        }
        let win = |p: Player| setup.variant.marbles.is_win(&setup.captures[p]);
        if win(Player::P0) && win(Player::P1) {
            return Err(SetupError::BothWin);
        }
        let pos = Position::from_parts(
            setup.variant,
            rings,
            marbles,
            setup.pool,
            setup.captures,
            setup.turn,
            setup.chain,
            setup.passes,
        );
        // Every group of rings must keep a vacant ring.
        let vacant = pos.vacant();
        let mut seen = 0u64;
        for r in Bits(rings) {
            if seen & (1 << r) != 0 {
                continue;
            }
            let mut group = 1u64 << r;
            let mut frontier = group;
            while frontier != 0 {
                let mut next = 0;
                for q in Bits(frontier) {
                    next |= geo.neighbour_mask(Ring(q as u8));
                }
                frontier = next & rings & !group;
                group |= frontier;
            }
            seen |= group;
            if group & vacant == 0 {
                return Err(SetupError::FullGroup(geo.name(Ring(r as u8)).to_string()));
            }
        }
        if let Some(c) = setup.chain {
            if setup.passes != 0 {
                return Err(SetupError::ChainWithPasses);
            }
            if pos.hop_directions(c) == 0 {
                return Err(SetupError::Chain(geo.name(c).to_string()));
            }
        }
        Ok(pos)
    }

    /// The setup of this position (public fields, unchecked).
    pub fn to_setup(&self) -> Setup {
        let geo = self.geometry();
        let cells = geo
            .rings()
            .map(|r| {
                if !self.has_ring(r) {
                    Cell::Removed
                } else {
                    self.marble_at(r).map_or(Cell::Vacant, Cell::Marble)
                }
            })
            .collect();
        Setup {
            variant: self.variant(),
            cells,
            pool: self.pool(),
            captures: ByPlayer([self.captures(Player::P0), self.captures(Player::P1)]),
            turn: self.turn(),
            chain: self.chain(),
            passes: self.passes(),
        }
    }

    /// Parses and validates a position in the text format.
    pub fn from_text(text: &str) -> Result<Position, SetupError> {
        Position::from_setup(&Setup::from_text(text)?)
    }

    /// The position in the text format (see the module docs).
    pub fn to_text(&self) -> String {
        let geo = self.geometry();
        let mut s = String::with_capacity(128);
        let _ = write!(s, "{} {} ", self.board(), self.marble_set().name());
        for col in 0..geo.columns() {
            if col > 0 {
                s.push('/');
            }
            for row in 1..=geo.column_len(col) {
                let r = geo.ring(col, row).expect("row within column");
                s.push(if !self.has_ring(r) {
                    '-'
                } else {
                    match self.marble_at(r) {
                        None => '.',
                        Some(m) => m.letter().to_ascii_lowercase(),
                    }
                });
            }
        }
        let _ = write!(
            s,
            " {} {} {} {} ",
            self.pool(),
            self.captures(Player::P0),
            self.captures(Player::P1),
            self.turn()
        );
        match self.chain() {
            Some(r) => {
                let _ = write!(s, "{}", geo.name(r));
            }
            None => s.push('-'),
        }
        let _ = write!(s, " {}", self.passes());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_positions_round_trip() {
        for v in Variant::all() {
            for p in Player::ALL {
                let pos = Position::new(v, p);
                let text = pos.to_text();
                let back = Position::from_text(&text).unwrap();
                assert_eq!(back, pos);
                assert_eq!(back.hash(), pos.hash());
                assert_eq!(Position::from_setup(&pos.to_setup()).unwrap(), pos);
            }
        }
    }

    #[test]
    fn bad_texts_are_rejected_with_reasons() {
        let good =
            "37 standard ..../...../....../......./....../...../.... 6/8/10 0/0/0 0/0/0 P0 - 0";
        assert!(Position::from_text(good).is_ok());
        let cases = [
            ("38 standard", SetupError::FieldCount(2)),
            (
                "38 standard ..../...../....../......./....../...../.... 6/8/10 0/0/0 0/0/0 P0 - 0",
                SetupError::Board("38".into()),
            ),
            (
                "37 standard ..../...../....../......./....../...../.... 6/8/9 0/0/0 0/0/0 P0 - 0",
                SetupError::MarbleCount { marble: Marble::Black, expected: 10, found: 9 },
            ),
            (
                "37 standard ..../...../....../......./....../...../... 6/8/10 0/0/0 0/0/0 P0 - 0",
                SetupError::ColumnLength { column: 'G', expected: 4, found: 3 },
            ),
            (
                "37 standard w---/-----/------/-------/------/-----/---- 5/8/10 0/0/0 0/0/0 P0 - 0",
                SetupError::FullGroup("a1".into()),
            ),
            (
                "37 standard ..../...../....../......./....../...../.... 6/8/10 0/0/0 0/0/0 P0 d4 0",
                SetupError::Chain("d4".into()),
            ),
        ];
        for (text, err) in cases {
            assert_eq!(Position::from_text(text).unwrap_err(), err, "{text}");
        }
    }
}
