//! The game's small nouns: marbles, marble sets, players, variants and containers keyed by them.

use std::fmt;
use std::ops::{Index, IndexMut, Not};

use crate::board::Board;

/// A marble colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Marble {
    /// White (6 in the standard set).
    White,
    /// Grey (8 in the standard set).
    Grey,
    /// Black (10 in the standard set).
    Black,
}

impl Marble {
    /// The three colours, white first.
    pub const ALL: [Marble; 3] = [Marble::White, Marble::Grey, Marble::Black];

    /// Index `0..3` (white, grey, black), as in boardspace records.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The colour with index `i` (0 white, 1 grey, 2 black).
    pub const fn from_index(i: usize) -> Option<Marble> {
        match i {
            0 => Some(Marble::White),
            1 => Some(Marble::Grey),
            2 => Some(Marble::Black),
            _ => None,
        }
    }

    /// Upper-case letter used in move notation: `W`, `G` or `B`.
    pub const fn letter(self) -> char {
        match self {
            Marble::White => 'W',
            Marble::Grey => 'G',
            Marble::Black => 'B',
        }
    }

    /// Parses `W`, `G` or `B` (case-insensitive).
    pub const fn from_letter(c: char) -> Option<Marble> {
        match c {
            'W' | 'w' => Some(Marble::White),
            'G' | 'g' => Some(Marble::Grey),
            'B' | 'b' => Some(Marble::Black),
            _ => None,
        }
    }
}

/// A value per marble colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ByMarble<T>(pub [T; 3]);

impl<T> Index<Marble> for ByMarble<T> {
    type Output = T;
    #[inline]
    fn index(&self, m: Marble) -> &T {
        &self.0[m as usize]
    }
}

impl<T> IndexMut<Marble> for ByMarble<T> {
    #[inline]
    fn index_mut(&mut self, m: Marble) -> &mut T {
        &mut self.0[m as usize]
    }
}

impl fmt::Display for ByMarble<u8> {
    /// `w/g/b`, for example `6/8/10`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.0[0], self.0[1], self.0[2])
    }
}

impl ByMarble<u8> {
    /// Total number of marbles.
    #[inline]
    pub fn total(&self) -> u32 {
        self.0.iter().map(|&c| c as u32).sum()
    }
}

/// One of the two players. Boardspace records call them P0 and P1; either may move first. With
/// the `serde` feature it is written `"P0"` or `"P1"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Player {
    /// The player labelled P0.
    P0,
    /// The player labelled P1.
    P1,
}

impl Player {
    /// Both players.
    pub const ALL: [Player; 2] = [Player::P0, Player::P1];

    /// 0 for P0, 1 for P1.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The player with index `i` (0 or 1).
    pub const fn from_index(i: usize) -> Option<Player> {
        match i {
            0 => Some(Player::P0),
            1 => Some(Player::P1),
            _ => None,
        }
    }
}

impl Not for Player {
    type Output = Player;
    #[inline]
    fn not(self) -> Player {
        match self {
            Player::P0 => Player::P1,
            Player::P1 => Player::P0,
        }
    }
}

impl fmt::Display for Player {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Player::P0 => "P0",
            Player::P1 => "P1",
        })
    }
}

/// A value per player.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ByPlayer<T>(pub [T; 2]);

impl<T> Index<Player> for ByPlayer<T> {
    type Output = T;
    #[inline]
    fn index(&self, p: Player) -> &T {
        &self.0[p as usize]
    }
}

impl<T> IndexMut<Player> for ByPlayer<T> {
    #[inline]
    fn index_mut(&mut self, p: Player) -> &mut T {
        &mut self.0[p as usize]
    }
}

/// The marble set: how many marbles of each colour there are, and what wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MarbleSet {
    /// 6 white, 8 grey, 10 black; win with 4 white, 5 grey, 6 black or 3 of each.
    Standard,
    /// 5 white, 7 grey, 9 black; win with 3 white, 4 grey, 5 black or 2 of each.
    Blitz,
}

impl MarbleSet {
    /// Both sets.
    pub const ALL: [MarbleSet; 2] = [MarbleSet::Standard, MarbleSet::Blitz];

    /// The set of a `blitz` flag (`--blitz`, `blitz = true`): [`MarbleSet::Blitz`] when set,
    /// else [`MarbleSet::Standard`].
    pub const fn of_blitz(blitz: bool) -> MarbleSet {
        if blitz { MarbleSet::Blitz } else { MarbleSet::Standard }
    }

    /// Marbles of each colour in the set (the pool at the start).
    pub const fn counts(self) -> ByMarble<u8> {
        match self {
            MarbleSet::Standard => ByMarble([6, 8, 10]),
            MarbleSet::Blitz => ByMarble([5, 7, 9]),
        }
    }

    /// Captures of one colour alone that win: `[white, grey, black]`.
    pub const fn single_colour_win(self) -> ByMarble<u8> {
        match self {
            MarbleSet::Standard => ByMarble([4, 5, 6]),
            MarbleSet::Blitz => ByMarble([3, 4, 5]),
        }
    }

    /// Captures of every colour that win together (3 standard, 2 blitz).
    pub const fn each_colour_win(self) -> u8 {
        match self {
            MarbleSet::Standard => 3,
            MarbleSet::Blitz => 2,
        }
    }

    /// Whether these captures satisfy one of the four win sets.
    #[inline]
    pub fn is_win(self, caps: &ByMarble<u8>) -> bool {
        let single = self.single_colour_win();
        let each = self.each_colour_win();
        caps.0[0] >= single.0[0]
            || caps.0[1] >= single.0[1]
            || caps.0[2] >= single.0[2]
            || (caps.0[0] >= each && caps.0[1] >= each && caps.0[2] >= each)
    }

    /// Name used in the position text format: `standard` or `blitz`.
    pub const fn name(self) -> &'static str {
        match self {
            MarbleSet::Standard => "standard",
            MarbleSet::Blitz => "blitz",
        }
    }

    /// Parses `standard` or `blitz` (case-insensitive).
    pub fn from_name(s: &str) -> Option<MarbleSet> {
        if s.eq_ignore_ascii_case("standard") {
            Some(MarbleSet::Standard)
        } else if s.eq_ignore_ascii_case("blitz") {
            Some(MarbleSet::Blitz)
        } else {
            None
        }
    }
}

/// A board shape with a marble set: everything that defines the rules of one game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Variant {
    /// The board shape.
    pub board: Board,
    /// The marble set.
    pub marbles: MarbleSet,
}

impl Variant {
    /// A variant from a shape and a set.
    pub const fn new(board: Board, marbles: MarbleSet) -> Variant {
        Variant { board, marbles }
    }

    /// The variant of a board and a `blitz` flag (`--board 48 --blitz`, `board = 48` and
    /// `blitz = true` in a config, the `board` and `blitz` keywords in Python): the one place
    /// where the flag becomes a marble set ([`MarbleSet::of_blitz`]).
    pub const fn of_blitz(board: Board, blitz: bool) -> Variant {
        Variant::new(board, MarbleSet::of_blitz(blitz))
    }

    /// Every combination of shape and marble set.
    pub fn all() -> impl Iterator<Item = Variant> {
        Board::ALL
            .into_iter()
            .flat_map(|b| MarbleSet::ALL.into_iter().map(move |m| Variant::new(b, m)))
    }
}

impl Default for Variant {
    /// The basic game: 37 rings, standard marbles.
    fn default() -> Variant {
        Variant::new(Board::R37, MarbleSet::Standard)
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.board, self.marbles.name())
    }
}

/// How a finished game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The player won (a win set captured, or the last move on a board with no rings left).
    Win(Player),
    /// Both players passed in a row, or a position occurred for the third time.
    Draw,
}

impl Outcome {
    /// The winner, if any.
    pub const fn winner(self) -> Option<Player> {
        match self {
            Outcome::Win(p) => Some(p),
            Outcome::Draw => None,
        }
    }

    /// +1 for a win of `p`, -1 for a loss, 0 for a draw.
    pub fn score(self, p: Player) -> i8 {
        match self {
            Outcome::Win(w) if w == p => 1,
            Outcome::Win(_) => -1,
            Outcome::Draw => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn win_sets_standard() {
        let s = MarbleSet::Standard;
        assert!(s.is_win(&ByMarble([4, 0, 0])));
        assert!(s.is_win(&ByMarble([0, 5, 0])));
        assert!(s.is_win(&ByMarble([0, 0, 6])));
        assert!(s.is_win(&ByMarble([3, 3, 3])));
        assert!(!s.is_win(&ByMarble([3, 4, 2])));
        assert!(!s.is_win(&ByMarble([2, 3, 3])));
    }

    #[test]
    fn win_sets_blitz() {
        let s = MarbleSet::Blitz;
        assert!(s.is_win(&ByMarble([3, 0, 0])));
        assert!(s.is_win(&ByMarble([0, 4, 0])));
        assert!(s.is_win(&ByMarble([0, 0, 5])));
        assert!(s.is_win(&ByMarble([2, 2, 2])));
        assert!(!s.is_win(&ByMarble([2, 3, 1])));
        assert!(!s.is_win(&ByMarble([1, 2, 2])));
    }

    #[test]
    fn twelve_variants() {
        assert_eq!(Variant::all().count(), 12);
    }
}
