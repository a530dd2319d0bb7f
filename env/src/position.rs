//! The position: rings, marbles, pool, captures, player to move and a capture chain in progress.
//!
//! Why one file of this size: the position and the rules that change it (placements, removals,
//! isolation, captures) keep one set of invariants together.
//!
//! [`Position`] always satisfies the rules' invariants (marbles conserved, no fully occupied group left
//! on the board, a chain in progress can continue). It is `Copy` and 64 bytes, so search copies it
//! instead of undoing moves. Repetition needs the history of a game and lives in [`crate::Game`].

use std::fmt;

use crate::board::{Bits, Board, Direction, Geometry, NO_RING, Ring};
use crate::moves::{Action, Chain, Hop, Move, Placement};
use crate::types::{ByMarble, ByPlayer, Marble, MarbleSet, Outcome, Player, Variant};
use crate::zobrist::KEYS;

/// A legal position of a ZÈRTZ game.
#[derive(Clone, Copy)]
pub struct Position {
    geo: &'static Geometry,
    marble_set: MarbleSet,
    rings: u64,
    marbles: ByMarble<u64>,
    pool: ByMarble<u8>,
    captures: ByPlayer<ByMarble<u8>>,
    turn: Player,
    chain: u8,
    passes: u8,
    hash: u64,
}

/// A move or action that is not legal in the position; the position is handed back unchanged.
#[derive(Clone, Debug, thiserror::Error)]
#[error("illegal move {notation}")]
pub struct PlayError {
    /// The position the move was tried in.
    pub position: Box<Position>,
    /// The move in notation.
    pub notation: String,
}

impl Position {
    /// The start of a game: every ring on the board, every marble in the pool, `first` to move.
    pub fn new(variant: Variant, first: Player) -> Position {
        let geo = variant.board.geometry();
        let mut pos = Position {
            geo,
            marble_set: variant.marbles,
            rings: geo.all(),
            marbles: ByMarble([0; 3]),
            pool: variant.marbles.counts(),
            captures: ByPlayer([ByMarble([0; 3]); 2]),
            turn: first,
            chain: NO_RING,
            passes: 0,
            hash: 0,
        };
        pos.hash = pos.compute_hash();
        pos
    }

    /// Builds a position from raw parts, checking nothing but the hash. Used by [`crate::Setup`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        variant: Variant,
        rings: u64,
        marbles: ByMarble<u64>,
        pool: ByMarble<u8>,
        captures: ByPlayer<ByMarble<u8>>,
        turn: Player,
        chain: Option<Ring>,
        passes: u8,
    ) -> Position {
        let mut pos = Position {
            geo: variant.board.geometry(),
            marble_set: variant.marbles,
            rings,
            marbles,
            pool,
            captures,
            turn,
            chain: chain.map_or(NO_RING, |r| r.0),
            passes,
            hash: 0,
        };
        pos.hash = pos.compute_hash();
        pos
    }

    // ---------------------------------------------------------------- accessors

    /// Board shape and marble set.
    #[inline]
    pub fn variant(&self) -> Variant {
        Variant::new(self.geo.board(), self.marble_set)
    }

    /// The board shape.
    #[inline]
    pub fn board(&self) -> Board {
        self.geo.board()
    }

    /// Geometry of the board shape (names, neighbours).
    #[inline]
    pub fn geometry(&self) -> &'static Geometry {
        self.geo
    }

    /// The marble set.
    #[inline]
    pub fn marble_set(&self) -> MarbleSet {
        self.marble_set
    }

    /// Bitboard of the rings still on the board.
    #[inline]
    pub fn rings(&self) -> u64 {
        self.rings
    }

    /// Bitboard of the marbles of one colour.
    #[inline]
    pub fn marbles(&self, m: Marble) -> u64 {
        self.marbles[m]
    }

    /// Bitboard of the rings that carry a marble.
    #[inline]
    pub fn occupied(&self) -> u64 {
        self.marbles.0[0] | self.marbles.0[1] | self.marbles.0[2]
    }

    /// Bitboard of the rings without a marble.
    #[inline]
    pub fn vacant(&self) -> u64 {
        self.rings & !self.occupied()
    }

    /// Whether ring `r` is still on the board.
    #[inline]
    pub fn has_ring(&self, r: Ring) -> bool {
        self.rings & r.bit() != 0
    }

    /// The marble on ring `r`, if any.
    #[inline]
    pub fn marble_at(&self, r: Ring) -> Option<Marble> {
        let b = r.bit();
        Marble::ALL.into_iter().find(|&m| self.marbles[m] & b != 0)
    }

    /// Marbles left in the common pool.
    #[inline]
    pub fn pool(&self) -> ByMarble<u8> {
        self.pool
    }

    /// Marbles captured by a player.
    #[inline]
    pub fn captures(&self, p: Player) -> ByMarble<u8> {
        self.captures[p]
    }

    /// The player to move.
    #[inline]
    pub fn turn(&self) -> Player {
        self.turn
    }

    /// The marble that must continue a capture chain, when a chain is in progress.
    #[inline]
    pub fn chain(&self) -> Option<Ring> {
        (self.chain != NO_RING).then_some(Ring(self.chain))
    }

    /// Passes in a row just before this position (0 or 1; 2 means the game was drawn).
    #[inline]
    pub fn passes(&self) -> u8 {
        self.passes
    }

    /// Zobrist hash of rings, marbles, pool, captures, player to move and chain (not of passes).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The marbles the player to move can place: the pool, or, once the pool is empty, their own
    /// captures.
    #[inline]
    pub fn supply(&self) -> ByMarble<u8> {
        if self.pool_is_empty() { self.captures[self.turn] } else { self.pool }
    }

    #[inline]
    fn pool_is_empty(&self) -> bool {
        self.pool.0 == [0, 0, 0]
    }

    /// How the game ended, or `None` while it goes on (also during a capture chain).
    pub fn outcome(&self) -> Option<Outcome> {
        if self.chain != NO_RING {
            return None;
        }
        for p in Player::ALL {
            if self.marble_set.is_win(&self.captures[p]) {
                return Some(Outcome::Win(p));
            }
        }
        if self.rings == 0 {
            return Some(Outcome::Win(!self.turn));
        }
        if self.passes >= 2 {
            return Some(Outcome::Draw);
        }
        None
    }

    /// Whether the game is over.
    #[inline]
    pub fn is_over(&self) -> bool {
        self.outcome().is_some()
    }

    // ---------------------------------------------------------------- rule helpers

    /// Vacant rings that can be removed: at least two neighbouring positions, next to each other
    /// around the ring, hold no ring (decisions.md, 1).
    pub fn free_rings(&self) -> u64 {
        let rings = self.rings;
        let mut free = 0;
        for r in Bits(self.vacant()) {
            let pm = self.geo.pair_masks(r);
            if pm.iter().any(|&m| m & rings == 0) {
                free |= 1 << r;
            }
        }
        free
    }

    /// Directions (bit `d`) in which the marble on `r` can jump, given the occupied set `occ`.
    #[inline]
    fn hop_dirs_with(&self, r: usize, occ: u64) -> u8 {
        let mut dirs = 0u8;
        for d in 0..6 {
            let over = self.geo.neighbour_raw(r, d);
            if over == NO_RING || occ & (1 << over) == 0 {
                continue;
            }
            let to = self.geo.neighbour_raw(over as usize, d);
            if to != NO_RING && (self.rings & !occ) & (1 << to) != 0 {
                dirs |= 1 << d;
            }
        }
        dirs
    }

    /// Directions in which the marble on `r` can jump now (bit `d` for direction `d`).
    #[inline]
    pub fn hop_directions(&self, r: Ring) -> u8 {
        let occ = self.occupied();
        if occ & r.bit() == 0 {
            return 0;
        }
        self.hop_dirs_with(r.index(), occ)
    }

    /// Whether any marble on the board can jump.
    pub fn has_capture(&self) -> bool {
        let occ = self.occupied();
        Bits(occ).any(|r| self.hop_dirs_with(r, occ) != 0)
    }

    /// Rings from which a hop may start now: the chain marble during a chain, else every marble that
    /// can jump.
    fn hop_sources(&self, occ: u64) -> u64 {
        if self.chain != NO_RING { 1 << self.chain } else { occ }
    }

    // ---------------------------------------------------------------- move generation

    /// Appends every legal single action to `out` (which is not cleared).
    pub fn legal_actions_into(&self, out: &mut Vec<Action>) {
        self.for_each_legal_action(|a| out.push(a));
    }

    /// Every legal single action.
    pub fn legal_actions(&self) -> Vec<Action> {
        let mut v = Vec::new();
        self.legal_actions_into(&mut v);
        v
    }

    /// Appends every legal whole-turn move to `out` (which is not cleared).
    pub fn legal_moves_into(&self, out: &mut Vec<Move>) {
        if self.is_over() {
            return;
        }
        let occ = self.occupied();
        let before = out.len();
        for r in Bits(self.hop_sources(occ)) {
            self.chains_from(r, occ, Chain::new(Ring(r as u8)), &mut |c| {
                out.push(Move::Capture(c))
            });
        }
        if out.len() > before {
            return;
        }
        self.placement_moves_into(out);
    }

    /// Appends every placement (or the pass when there is none), assuming no capture is possible.
    /// The hot loop of random play: the moves of the first colour are written once into a block
    /// sized in advance, and every other colour copies that block and changes the marble.
    fn placement_moves_into(&self, out: &mut Vec<Move>) {
        let supply = self.supply();
        let mut colours = Marble::ALL.into_iter().filter(|&m| supply[m] > 0);
        let Some(first) = colours.next() else {
            out.push(Move::Pass);
            return;
        };
        let vacant = self.vacant();
        let free = self.free_rings();
        let block = Self::placement_count(&ByMarble([1, 0, 0]), vacant, free) as usize;
        let start = out.len();
        out.resize(start + block, Move::Pass);
        let slots = &mut out[start..];
        let mut i = 0;
        for at in Bits(vacant) {
            let at = Ring(at as u8);
            let rest = free & !at.bit();
            if rest == 0 {
                slots[i] = Move::Place(Placement { marble: first, at, remove: None });
                i += 1;
            } else {
                for rm in Bits(rest) {
                    let remove = Some(Ring(rm as u8));
                    slots[i] = Move::Place(Placement { marble: first, at, remove });
                    i += 1;
                }
            }
        }
        debug_assert_eq!(i, block);
        for marble in colours {
            let from = out.len();
            out.extend_from_within(start..start + block);
            for m in &mut out[from..] {
                if let Move::Place(p) = m {
                    p.marble = marble;
                }
            }
        }
    }

    /// Every legal whole-turn move.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut v = Vec::new();
        self.legal_moves_into(&mut v);
        v
    }

    /// Number of legal whole-turn moves (without building them for placements).
    pub fn count_legal_moves(&self) -> u64 {
        if self.is_over() {
            return 0;
        }
        let occ = self.occupied();
        let mut chains = 0u64;
        for r in Bits(self.hop_sources(occ)) {
            self.chains_from(r, occ, Chain::new(Ring(r as u8)), &mut |_| chains += 1);
        }
        if chains > 0 {
            return chains;
        }
        match self.count_placements() {
            0 => 1, // pass
            n => n,
        }
    }

    /// Calls `f` for every complete chain that continues `chain` from the marble on `r`.
    fn chains_from(&self, r: usize, occ: u64, chain: Chain, f: &mut impl FnMut(Chain)) {
        let dirs = self.hop_dirs_with(r, occ);
        if dirs == 0 {
            if !chain.is_empty() {
                f(chain);
            }
            return;
        }
        for d in Bits(dirs as u64) {
            let over = self.geo.neighbour_raw(r, d) as usize;
            let to = self.geo.neighbour_raw(over, d) as usize;
            let occ2 = (occ & !(1 << r) & !(1 << over)) | (1 << to);
            self.chains_from(to, occ2, chain.with(Direction(d as u8)), f);
        }
    }

    /// Number of legal placements, assuming no capture is possible.
    pub(crate) fn count_placements(&self) -> u64 {
        let supply = self.supply();
        if supply.0 == [0, 0, 0] {
            return 0;
        }
        Self::placement_count(&supply, self.vacant(), self.free_rings())
    }

    /// Number of placements with this supply, vacant rings and free rings.
    #[inline]
    fn placement_count(supply: &ByMarble<u8>, vacant: u64, free: u64) -> u64 {
        let colours = supply.0.iter().filter(|&&c| c > 0).count() as u64;
        let nv = vacant.count_ones() as u64;
        let nf = free.count_ones() as u64;
        // Placing on a free ring leaves nf - 1 choices (or the single "no removal" when that is 0);
        // placing elsewhere leaves nf (or "no removal").
        let on_free = nf * (nf.saturating_sub(1)).max(1);
        let elsewhere = (nv - nf) * nf.max(1);
        colours * (on_free + elsewhere)
    }

    // ---------------------------------------------------------------- legality

    /// Whether a placement is legal here.
    fn is_legal_placement(&self, p: &Placement) -> bool {
        if self.is_over() || self.chain != NO_RING || self.has_capture() {
            return false;
        }
        if p.at.index() >= self.geo.len() || self.supply()[p.marble] == 0 {
            return false;
        }
        if self.vacant() & p.at.bit() == 0 {
            return false;
        }
        let rest = self.free_rings() & !p.at.bit();
        match p.remove {
            None => rest == 0,
            Some(r) => r.index() < self.geo.len() && rest & r.bit() != 0,
        }
    }

    /// Whether a single hop is legal here.
    fn is_legal_hop(&self, h: &Hop) -> bool {
        if self.is_over() || h.from.index() >= self.geo.len() || h.dir.0 >= 6 {
            return false;
        }
        if self.chain != NO_RING && self.chain != h.from.0 {
            return false;
        }
        self.hop_directions(h.from) & (1 << h.dir.0) != 0
    }

    /// Whether passing is legal here: no capture and nothing to place.
    fn is_legal_pass(&self) -> bool {
        !self.is_over()
            && self.chain == NO_RING
            && !self.has_capture()
            && self.supply().0 == [0, 0, 0]
    }

    /// Whether a single action is legal.
    pub fn is_legal_action(&self, a: &Action) -> bool {
        match a {
            Action::Place(p) => self.is_legal_placement(p),
            Action::Hop(h) => self.is_legal_hop(h),
            Action::Pass => self.is_legal_pass(),
        }
    }

    /// Whether a whole-turn move is legal (for a chain: every hop is legal and the chain is
    /// complete).
    pub fn is_legal_move(&self, m: &Move) -> bool {
        match m {
            Move::Place(p) => self.is_legal_placement(p),
            Move::Pass => self.is_legal_pass(),
            Move::Capture(c) => {
                if c.is_empty() {
                    return false;
                }
                let mut pos = *self;
                let mut at = c.from();
                for d in c.dirs() {
                    let hop = Hop { from: at, dir: d };
                    // An earlier hop that ended the turn makes the chain too long.
                    if pos.turn != self.turn || !pos.is_legal_hop(&hop) {
                        return false;
                    }
                    at = pos.apply_hop(hop);
                }
                pos.chain == NO_RING
            }
        }
    }

    // ---------------------------------------------------------------- playing

    /// Plays a whole-turn move after checking it; an illegal move hands the position back.
    pub fn play(mut self, m: &Move) -> Result<Position, PlayError> {
        if self.is_legal_move(m) {
            self.play_unchecked(m);
            Ok(self)
        } else {
            let notation = self.move_to_string(m);
            Err(PlayError { position: Box::new(self), notation })
        }
    }

    /// Plays a single action after checking it; an illegal action hands the position back.
    pub fn play_action(mut self, a: &Action) -> Result<Position, PlayError> {
        if self.is_legal_action(a) {
            self.play_action_unchecked(a);
            Ok(self)
        } else {
            let notation = self.action_to_string(a);
            Err(PlayError { position: Box::new(self), notation })
        }
    }

    /// Plays a whole-turn move that the caller knows to be legal (for example one generated by
    /// [`Position::legal_moves_into`]). An illegal move leaves the position in an unspecified state.
    #[inline]
    pub fn play_unchecked(&mut self, m: &Move) {
        match m {
            Move::Place(p) => self.apply_placement(p),
            Move::Capture(c) => {
                let mut at = c.from();
                for d in c.dirs() {
                    at = self.apply_hop(Hop { from: at, dir: d });
                }
            }
            Move::Pass => self.apply_pass(),
        }
    }

    /// The single actions that make up a whole-turn move, in order: a placement or a pass is one
    /// action, a capture chain one hop per jump, each from the ring where the marble has landed.
    pub fn move_actions(&self, m: &Move) -> Vec<Action> {
        match m {
            Move::Place(p) => vec![Action::Place(*p)],
            Move::Pass => vec![Action::Pass],
            Move::Capture(c) => {
                let mut at = c.from();
                c.dirs()
                    .map(|d| {
                        let hop = Hop { from: at, dir: d };
                        at = self.hop_landing(hop).unwrap_or(at);
                        Action::Hop(hop)
                    })
                    .collect()
            }
        }
    }

    /// Plays a single action that the caller knows to be legal.
    #[inline]
    pub fn play_action_unchecked(&mut self, a: &Action) {
        match a {
            Action::Place(p) => self.apply_placement(p),
            Action::Hop(h) => {
                self.apply_hop(*h);
            }
            Action::Pass => self.apply_pass(),
        }
    }

    fn end_turn(&mut self) {
        self.turn = !self.turn;
        self.hash ^= KEYS.turn;
    }

    fn apply_pass(&mut self) {
        self.passes += 1;
        self.end_turn();
    }

    fn set_pool(&mut self, m: Marble, n: u8) {
        let c = m.index();
        self.hash ^= KEYS.pool[c][self.pool.0[c] as usize] ^ KEYS.pool[c][n as usize];
        self.pool.0[c] = n;
    }

    fn set_captures(&mut self, p: Player, m: Marble, n: u8) {
        let c = m.index();
        let keys = &KEYS.captures[p.index()][c];
        self.hash ^= keys[self.captures[p].0[c] as usize] ^ keys[n as usize];
        self.captures[p].0[c] = n;
    }

    fn apply_placement(&mut self, p: &Placement) {
        let m = p.marble;
        if self.pool_is_empty() {
            let n = self.captures[self.turn][m] - 1;
            self.set_captures(self.turn, m, n);
        } else {
            let n = self.pool[m] - 1;
            self.set_pool(m, n);
        }
        self.marbles[m] |= p.at.bit();
        self.hash ^= KEYS.marble[m.index()][p.at.index()];
        if let Some(r) = p.remove {
            self.rings &= !r.bit();
            self.hash ^= KEYS.removed[r.index()];
        }
        self.claim_if_full(p.at.index());
        if let Some(r) = p.remove {
            for n in Bits(self.geo.neighbour_mask_raw(r.index()) & self.rings) {
                self.claim_if_full(n);
            }
        }
        self.passes = 0;
        self.end_turn();
    }

    /// Claims the group of rings around `start` for the player to move if every ring of it carries a
    /// marble (decisions.md, 2 and 3).
    fn claim_if_full(&mut self, start: usize) {
        if self.rings & (1 << start) == 0 {
            return;
        }
        let vacant = self.vacant();
        let mut group = 1u64 << start;
        let mut frontier = group;
        loop {
            if frontier & vacant != 0 {
                return;
            }
            let mut next = 0;
            for r in Bits(frontier) {
                next |= self.geo.neighbour_mask_raw(r);
            }
            next &= self.rings & !group;
            if next == 0 {
                break;
            }
            group |= next;
            frontier = next;
        }
        let mover = self.turn;
        for m in Marble::ALL {
            let taken = self.marbles[m] & group;
            if taken != 0 {
                let n = self.captures[mover][m] + taken.count_ones() as u8;
                self.set_captures(mover, m, n);
                for r in Bits(taken) {
                    self.hash ^= KEYS.marble[m.index()][r];
                }
                self.marbles[m] &= !group;
            }
        }
        for r in Bits(group) {
            self.hash ^= KEYS.removed[r];
        }
        self.rings &= !group;
    }

    /// Plays one hop; returns the landing ring. Ends the turn when the marble cannot jump again.
    fn apply_hop(&mut self, h: Hop) -> Ring {
        let from = h.from.index();
        let d = h.dir.index();
        let over = self.geo.neighbour_raw(from, d) as usize;
        let to = self.geo.neighbour_raw(over, d) as usize;
        let jumper = self.colour_at(from);
        let taken = self.colour_at(over);
        self.marbles[jumper] = (self.marbles[jumper] & !(1 << from)) | (1 << to);
        self.marbles[taken] &= !(1 << over);
        self.hash ^= KEYS.marble[jumper.index()][from]
            ^ KEYS.marble[jumper.index()][to]
            ^ KEYS.marble[taken.index()][over];
        let n = self.captures[self.turn][taken] + 1;
        self.set_captures(self.turn, taken, n);
        if self.chain != NO_RING {
            self.hash ^= KEYS.chain[self.chain as usize];
        }
        self.passes = 0;
        if self.hop_dirs_with(to, self.occupied()) != 0 {
            self.chain = to as u8;
            self.hash ^= KEYS.chain[to];
        } else {
            self.chain = NO_RING;
            self.end_turn();
        }
        Ring(to as u8)
    }

    #[inline]
    fn colour_at(&self, r: usize) -> Marble {
        let b = 1u64 << r;
        if self.marbles.0[0] & b != 0 {
            Marble::White
        } else if self.marbles.0[1] & b != 0 {
            Marble::Grey
        } else {
            Marble::Black
        }
    }

    /// The hash recomputed from scratch (equal to [`Position::hash`] at all times).
    pub fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for r in Bits(self.geo.all() & !self.rings) {
            h ^= KEYS.removed[r];
        }
        for m in Marble::ALL {
            for r in Bits(self.marbles[m]) {
                h ^= KEYS.marble[m.index()][r];
            }
            h ^= KEYS.pool[m.index()][self.pool[m] as usize];
            for p in Player::ALL {
                h ^= KEYS.captures[p.index()][m.index()][self.captures[p][m] as usize];
            }
        }
        if self.turn == Player::P1 {
            h ^= KEYS.turn;
        }
        if self.chain != NO_RING {
            h ^= KEYS.chain[self.chain as usize];
        }
        h
    }

    /// The landing ring of a hop (the hop need not be legal; `None` off the board).
    pub fn hop_landing(&self, h: Hop) -> Option<Ring> {
        let over = self.geo.neighbour(h.from, h.dir)?;
        self.geo.neighbour(over, h.dir)
    }
}

impl PartialEq for Position {
    fn eq(&self, other: &Position) -> bool {
        self.variant() == other.variant()
            && self.rings == other.rings
            && self.marbles == other.marbles
            && self.pool == other.pool
            && self.captures == other.captures
            && self.turn == other.turn
            && self.chain == other.chain
            && self.passes == other.passes
    }
}

impl Eq for Position {}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", self.to_text())
    }
}
