//! The transposition table of the searcher, on the position's Zobrist hash (and its passes and
//! variant: [`Table::probe`]), kept between the searches of a game: the move of the deepest
//! search stored, bounds, and mate distances stored relative to the position.
//!
//! Below the searcher: it knows scores ([`super::eval`]), not the search.

use zertz_env::{Move, Position};

use super::eval::SCORE_MATE_BOUND;

/// What the stored score of a table entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Bound {
    Exact,
    /// The score is at least this (a cut).
    Lower,
    /// The score is at most this (no move reached alpha).
    Upper,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    key: u64,
    pub(super) mv: Option<Move>,
    score: i32,
    pub(super) depth: u8,
    pub(super) bound: Bound,
    generation: u8,
}

impl Entry {
    /// The stored score, seen from a position `ply` plies from the root.
    pub(super) fn score(&self, ply: usize) -> i32 {
        from_table(self.score, ply)
    }
}

/// The table: a power of two of entries, one per slot, allocated by the first search.
#[derive(Clone, Debug)]
pub(super) struct Table {
    /// Allocated by the first search ([`Table::release`] frees it).
    slots: Vec<Option<Entry>>,
    entries: usize,
    generation: u8,
    enabled: bool,
}

impl Table {
    /// A table of about `bytes` (at least one entry), not yet allocated.
    pub(super) fn new(bytes: usize) -> Table {
        let entries = (bytes / std::mem::size_of::<Option<Entry>>()).max(1);
        // A power of two, to index by the hash's low bits.
        let entries = 1usize << (usize::BITS - 1 - entries.leading_zeros());
        Table { slots: Vec::new(), entries, generation: 0, enabled: true }
    }

    /// Probes nothing and stores nothing from now on.
    pub(super) fn disable(&mut self) {
        self.enabled = false;
    }

    /// Before a search: allocates the table if it is not, and starts a new generation (an entry
    /// of an earlier search gives way to any newer one).
    pub(super) fn new_search(&mut self) {
        if self.slots.len() != self.entries {
            self.slots = vec![None; self.entries];
        }
        self.generation = self.generation.wrapping_add(1);
    }

    /// Frees the table (the next search allocates it again).
    pub(super) fn release(&mut self) {
        self.slots = Vec::new();
    }

    /// Forgets every entry.
    pub(super) fn clear(&mut self) {
        self.slots.fill(None);
    }

    /// Bytes held (none before the first search).
    pub(super) fn bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Option<Entry>>()
    }

    /// The position's hash with its passes and its variant: the Zobrist hash holds neither, and
    /// positions of two boards with marbles and removed rings on rings of the same indices have
    /// the same hash, while one searcher may serve games of several variants (an engine
    /// session's player after `newgame 61`). Distinct salts give distinct masks (an odd
    /// multiplier is a bijection).
    fn key(pos: &Position) -> u64 {
        let salt =
            u64::from(pos.passes()) << 8 | (pos.board() as u64) << 1 | pos.marble_set() as u64;
        pos.hash() ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    pub(super) fn probe(&self, pos: &Position) -> Option<Entry> {
        if !self.enabled {
            return None;
        }
        let key = Self::key(pos);
        let e = self.slots[key as usize & (self.slots.len() - 1)]?;
        (e.key == key).then_some(e)
    }

    pub(super) fn store(
        &mut self,
        pos: &Position,
        depth: u32,
        score: i32,
        bound: Bound,
        mv: Option<Move>,
        ply: usize,
    ) {
        if !self.enabled {
            return;
        }
        let key = Self::key(pos);
        let mask = self.slots.len() - 1;
        let slot = &mut self.slots[key as usize & mask];
        if let Some(old) = slot {
            if old.key != key && old.generation == self.generation && u32::from(old.depth) > depth {
                return;
            }
        }
        *slot = Some(Entry {
            key,
            mv,
            score: to_table(score, ply),
            depth: depth as u8,
            bound,
            generation: self.generation,
        });
    }
}

/// Mate scores are stored relative to the position, not the root.
fn to_table(score: i32, ply: usize) -> i32 {
    if score > SCORE_MATE_BOUND {
        score + ply as i32
    } else if score < -SCORE_MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn from_table(score: i32, ply: usize) -> i32 {
    if score > SCORE_MATE_BOUND {
        score - ply as i32
    } else if score < -SCORE_MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}
