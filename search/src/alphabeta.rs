//! A classic alpha-beta searcher over whole turns: the yardstick of the programs people know
//! (boardspace.net's robots, the desktop programs), and a second opinion beside MCTS.
//!
//! Why one file of this size: one searcher, whose ordering, table, quiescence and evaluation share
//! the search's state and are tuned together.
//!
//! - Iterative deepening of a negamax principal variation search, one ply per whole turn (a
//!   capture chain is one move), with aspiration-free null windows after the first move.
//! - A transposition table on the position's Zobrist hash (and its passes), kept between the
//!   searches of a game: the move of the deepest search stored, bounds with mate distances.
//! - Move ordering: the table's move, captures by length, two killers per ply, a history of
//!   placements; at two turns or more from the horizon, the placements by a one-turn look ahead
//!   (the evaluation of the position they lead to, and whether they hand the opponent a capture).
//! - A quiescence search: captures are compulsory in ZÈRTZ, so a position whose mover has a
//!   capture is never evaluated; the captures are played out (every chain, to the end of the
//!   exchange) first.
//! - [`evaluate`]: how far each side is from each win set of the marble set, counting only the
//!   sets still possible with the marbles the opponent has not captured; what it has captured;
//!   the move.
//!
//! A search stops at its depth, its deadline or its stop flag; an iteration cut short is
//! abandoned, unless a root move of it has already beaten the previous iteration's best (searched
//! first), which is then the better choice.
//!
//! ```
//! use zertz_env::{Player, Position, Variant};
//! use zertz_search::alphabeta::{AlphaBeta, Limits};
//! let pos = Position::new(Variant::default(), Player::P0);
//! let mut ab = AlphaBeta::new(1 << 20);
//! let report = ab.search(&pos, &Limits::depth(1), &|| false).unwrap();
//! assert!(pos.is_legal_move(&report.best));
//! assert_eq!(report.depth, 1);
//! ```

use std::time::{Duration, Instant};

use zertz_env::{ByMarble, Move, Outcome, Position};

/// The score of a won position at the root; a win `n` plies away scores `SCORE_WIN - n`, so that
/// the search prefers the fastest win and the slowest loss.
pub const SCORE_WIN: i32 = 1_000_000;

/// Scores above this (or below its negation) are wins (losses) found by the search.
pub const SCORE_MATE_BOUND: i32 = SCORE_WIN - 10_000;

/// The deepest search in whole turns ([`Limits::max_depth`] is held to it).
pub const MAX_DEPTH: u32 = 64;

/// The deepest line of a search: [`MAX_DEPTH`] turns and as many captures in quiescence.
const MAX_PLY: usize = 2 * MAX_DEPTH as usize + 8;

/// Bytes of the transposition table of [`AlphaBeta::default`]: 16 MiB.
pub const DEFAULT_TABLE_BYTES: usize = 16 << 20;

/// Nodes between two looks at the clock and the stop flag.
const CHECK_EVERY: u64 = 256;

/// The weights of [`evaluate`], in hundredths of a marble.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weights {
    /// Score of a win set that still needs `n` marbles (`need[n]`, `n` from 1; `need[0]` is
    /// unused: a set with nothing missing is a won game), summed over the sets still possible.
    pub need: [i32; 13],
    /// Each captured marble of each colour (white, grey, black).
    pub marble: [i32; 3],
    /// The side to move, in a position without captures.
    pub tempo: i32,
}

impl Default for Weights {
    /// The weights tuned by matches (BENCHMARKS.md, "Alpha-beta").
    fn default() -> Weights {
        Weights {
            need: [0, 2000, 500, 130, 35, 10, 3, 1, 0, 0, 0, 0, 0],
            marble: [0, 0, 0],
            tempo: 20,
        }
    }
}

/// The static evaluation of `pos` for the player to move, with the default [`Weights`]: see
/// [`evaluate_with`].
pub fn evaluate(pos: &Position) -> i32 {
    evaluate_with(pos, &Weights::default())
}

/// The static evaluation of `pos` for the player to move (positive: good for it), without
/// looking at captures to come (the quiescence search does): for each side, the sum over the win
/// sets it can still complete of `need[marbles it still lacks]`, plus the value of the marbles
/// it holds; the difference between the mover and the opponent, plus the tempo. A set is out of
/// reach when the opponent holds so many of a colour that too few are left.
pub fn evaluate_with(pos: &Position, w: &Weights) -> i32 {
    let me = pos.turn();
    let mine = pos.captures(me);
    let theirs = pos.captures(!me);
    let set = pos.marble_set();
    let total = set.counts();
    side_score(&mine, &theirs, &total, set, w) - side_score(&theirs, &mine, &total, set, w)
        + w.tempo
}

/// The score of one side with captures `caps` against an opponent with `opp` (see
/// [`evaluate_with`]).
fn side_score(
    caps: &ByMarble<u8>,
    opp: &ByMarble<u8>,
    total: &ByMarble<u8>,
    set: zertz_env::MarbleSet,
    w: &Weights,
) -> i32 {
    let single = set.single_colour_win();
    let each = set.each_colour_win();
    let need = |n: u8| w.need[usize::from(n).min(w.need.len() - 1)];
    let mut score = 0;
    let mut each_need = 0u8;
    let mut each_possible = true;
    for c in 0..3 {
        let have = caps.0[c];
        let left = total.0[c] - opp.0[c];
        if left >= single.0[c] {
            score += need(single.0[c].saturating_sub(have));
        }
        each_possible &= left >= each;
        each_need += each.saturating_sub(have);
        score += w.marble[c] * i32::from(have);
    }
    if each_possible {
        score += need(each_need);
    }
    score
}

/// When a search stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The deepest iteration, in whole turns (1 to [`MAX_DEPTH`]).
    pub max_depth: u32,
    /// The time the search may take; `None`: until `max_depth`. An iteration is not started past
    /// half of it (it would not finish), and one under way is abandoned at its end.
    pub time: Option<Duration>,
}

impl Limits {
    /// A fixed depth, whatever the time.
    pub fn depth(depth: u32) -> Limits {
        Limits { max_depth: depth, time: None }
    }

    /// Deepening until `time` is spent.
    pub fn time(time: Duration) -> Limits {
        Limits { max_depth: MAX_DEPTH, time: Some(time) }
    }
}

/// What a search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The move to play.
    pub best: Move,
    /// Its score for the player to move, in hundredths of a marble ([`SCORE_WIN`] and near it
    /// for a forced win: [`Report::mate_in`]).
    pub score: i32,
    /// The depth of the deepest iteration that chose the move, in whole turns.
    pub depth: u32,
    /// The principal variation: `best` and the replies expected, in whole turns.
    pub pv: Vec<Move>,
    /// Positions searched by the main search.
    pub nodes: u64,
    /// Positions searched by the quiescence search (captures), counted apart.
    pub qnodes: u64,
    /// Time taken.
    pub elapsed: Duration,
}

impl Report {
    /// Turns to a forced win (positive) or loss (negative), counting both sides' turns, when the
    /// score is one.
    pub fn mate_in(&self) -> Option<i32> {
        if self.score > SCORE_MATE_BOUND {
            Some(SCORE_WIN - self.score)
        } else if self.score < -SCORE_MATE_BOUND {
            Some(-(SCORE_WIN + self.score))
        } else {
            None
        }
    }
}

/// What the stored score of a table entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    Exact,
    /// The score is at least this (a cut).
    Lower,
    /// The score is at most this (no move reached alpha).
    Upper,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    mv: Option<Move>,
    score: i32,
    depth: u8,
    bound: Bound,
    generation: u8,
}

/// The searcher: its transposition table, killers and history survive between searches (the
/// positions of one game), [`AlphaBeta::clear`] forgets them.
#[derive(Clone, Debug)]
pub struct AlphaBeta {
    /// Allocated by the first search ([`AlphaBeta::release`] frees it).
    table: Vec<Option<Entry>>,
    table_entries: usize,
    generation: u8,
    weights: Weights,
    use_table: bool,
    killers: Vec<[Option<Move>; 2]>,
    history: Vec<i32>,
    /// Move lists, one per ply (reused).
    moves: Vec<Vec<(i32, Move)>>,
    scratch: Vec<Move>,
    nodes: u64,
    qnodes: u64,
    deadline: Option<Instant>,
    aborted: bool,
}

impl Default for AlphaBeta {
    fn default() -> AlphaBeta {
        AlphaBeta::new(DEFAULT_TABLE_BYTES)
    }
}

/// Placement histories: marble × ring × removed ring (64 for none).
const HISTORY_LEN: usize = 3 * 64 * 65;

fn history_index(m: &Move) -> Option<usize> {
    match m {
        Move::Place(p) => {
            let rm = p.remove.map_or(64, |r| r.index());
            Some((p.marble as usize * 64 + p.at.index()) * 65 + rm)
        }
        _ => None,
    }
}

impl AlphaBeta {
    /// A searcher with a transposition table of about `table_bytes` (at least one entry),
    /// allocated by the first search.
    pub fn new(table_bytes: usize) -> AlphaBeta {
        let entries = (table_bytes / std::mem::size_of::<Option<Entry>>()).max(1);
        // A power of two, to index by the hash's low bits.
        let entries = 1usize << (usize::BITS - 1 - entries.leading_zeros());
        AlphaBeta {
            table: Vec::new(),
            table_entries: entries,
            generation: 0,
            weights: Weights::default(),
            use_table: true,
            killers: vec![[None; 2]; MAX_PLY + 1],
            history: vec![0; HISTORY_LEN],
            moves: (0..=MAX_PLY).map(|_| Vec::new()).collect(),
            scratch: Vec::new(),
            nodes: 0,
            qnodes: 0,
            deadline: None,
            aborted: false,
        }
    }

    /// The same searcher with other evaluation weights.
    pub fn with_weights(mut self, weights: Weights) -> AlphaBeta {
        self.weights = weights;
        self
    }

    /// The same searcher without its transposition table (for tests: a fixed-depth search then
    /// sees every position afresh).
    pub fn without_table(mut self) -> AlphaBeta {
        self.use_table = false;
        self
    }

    /// Frees the table, killers and history (the next search starts afresh and allocates
    /// them again).
    pub fn release(&mut self) {
        self.table = Vec::new();
        self.history.fill(0);
        self.killers.fill([None; 2]);
        for m in &mut self.moves {
            *m = Vec::new();
        }
    }

    /// Bytes held (the table mostly; none before the first search).
    pub fn bytes(&self) -> usize {
        self.table.len() * std::mem::size_of::<Option<Entry>>()
            + self
                .moves
                .iter()
                .map(|m| m.capacity() * std::mem::size_of::<(i32, Move)>())
                .sum::<usize>()
    }

    /// Forgets the table, killers and history.
    pub fn clear(&mut self) {
        self.table.fill(None);
        self.history.fill(0);
        self.killers.fill([None; 2]);
    }

    /// Searches `pos` within `limits`, asking `stop` every few hundred nodes (a stop abandons the
    /// search like a deadline). `None` when `pos` has no legal move (the game is over). Whatever
    /// the limits, the answer is a legal move: the first iteration's first move is searched
    /// before the clock is looked at.
    pub fn search(
        &mut self,
        pos: &Position,
        limits: &Limits,
        stop: &dyn Fn() -> bool,
    ) -> Option<Report> {
        let start = Instant::now();
        if self.table.len() != self.table_entries {
            self.table = vec![None; self.table_entries];
        }
        self.nodes = 0;
        self.qnodes = 0;
        self.aborted = false;
        self.deadline = limits.time.map(|t| start + t);
        self.generation = self.generation.wrapping_add(1);
        self.killers.fill([None; 2]);
        for h in &mut self.history {
            *h /= 8;
        }
        let mut root: Vec<(i32, Move)> = Vec::new();
        {
            let mut moves = Vec::new();
            pos.legal_moves_into(&mut moves);
            root.extend(moves.into_iter().map(|m| (0, m)));
        }
        if root.is_empty() {
            return None;
        }
        let max_depth = limits.max_depth.clamp(1, MAX_DEPTH);
        let mut best = Report {
            best: root[0].1,
            score: 0,
            depth: 0,
            pv: vec![root[0].1],
            nodes: 0,
            qnodes: 0,
            elapsed: Duration::ZERO,
        };
        if root.len() == 1 && limits.time.is_some() {
            // Nothing to choose: answer at once.
            best.score = evaluate_with(pos, &self.weights);
            best.elapsed = start.elapsed();
            return Some(best);
        }
        self.order_root(pos, &mut root);
        for depth in 1..=max_depth {
            let (score, chosen, complete) = self.search_root(pos, &mut root, depth, stop);
            if let Some(mv) = chosen {
                // A cut-short iteration counts only when a move of it beat the previous best.
                if complete || mv != best.best || depth == 1 {
                    best.best = mv;
                    best.score = score;
                    best.depth = depth;
                    best.pv = self.principal_variation(pos, mv, depth);
                }
            }
            if !complete || self.aborted {
                break;
            }
            if score.abs() > SCORE_MATE_BOUND && SCORE_WIN - score.abs() <= depth as i32 {
                // A forced result within the turns searched in full: deeper iterations only find
                // the same. (One further away was found by the quiescence search, and a deeper
                // iteration may find a faster win.)
                break;
            }
            if let Some(t) = limits.time {
                if start.elapsed() * 2 > t {
                    break;
                }
            }
        }
        best.nodes = self.nodes;
        best.qnodes = self.qnodes;
        best.elapsed = start.elapsed();
        Some(best)
    }

    /// Orders the root moves once by the one-turn look ahead.
    fn order_root(&mut self, pos: &Position, root: &mut [(i32, Move)]) {
        for (s, m) in root.iter_mut() {
            *s = self.lookahead_score(pos, m);
        }
        root.sort_by_key(|&(s, _)| std::cmp::Reverse(s));
    }

    /// One iteration at the root: its score, the best move found (None when cut short before
    /// any move was searched) and whether every move was searched. The root moves are sorted by
    /// their scores for the next iteration (the best first).
    fn search_root(
        &mut self,
        pos: &Position,
        root: &mut [(i32, Move)],
        depth: u32,
        stop: &dyn Fn() -> bool,
    ) -> (i32, Option<Move>, bool) {
        let mut alpha = -SCORE_WIN - 1;
        let beta = SCORE_WIN + 1;
        let mut best: Option<Move> = None;
        let mut best_score = -SCORE_WIN - 1;
        let mut scores = vec![i32::MIN; root.len()];
        for (i, &(_, m)) in root.iter().enumerate() {
            let mut child = *pos;
            child.play_unchecked(&m);
            let score = if i == 0 {
                -self.negamax(&child, depth - 1, -beta, -alpha, 1, stop)
            } else {
                let s = -self.negamax(&child, depth - 1, -alpha - 1, -alpha, 1, stop);
                if s > alpha && !self.aborted {
                    -self.negamax(&child, depth - 1, -beta, -alpha, 1, stop)
                } else {
                    s
                }
            };
            if self.aborted {
                return (best_score, best, false);
            }
            scores[i] = score;
            if score > best_score {
                best_score = score;
                best = Some(m);
            }
            alpha = alpha.max(score);
        }
        for (entry, s) in root.iter_mut().zip(&scores) {
            entry.0 = *s;
        }
        // Stable: among equal scores the earlier order stays.
        root.sort_by_key(|&(s, _)| std::cmp::Reverse(s));
        if let Some(m) = best {
            self.store(pos, depth, best_score, Bound::Exact, Some(m), 0);
        }
        (best_score, best, true)
    }

    /// The line of the table from `pos` after `first`, at most `depth` turns.
    fn principal_variation(&self, pos: &Position, first: Move, depth: u32) -> Vec<Move> {
        let mut pv = vec![first];
        let mut p = *pos;
        p.play_unchecked(&first);
        while pv.len() < depth as usize {
            let Some(e) = self.probe(&p) else { break };
            let Some(m) = e.mv else { break };
            if !p.is_legal_move(&m) {
                break;
            }
            p.play_unchecked(&m);
            pv.push(m);
        }
        pv
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

    fn probe(&self, pos: &Position) -> Option<Entry> {
        if !self.use_table {
            return None;
        }
        let key = Self::key(pos);
        let e = self.table[key as usize & (self.table.len() - 1)]?;
        (e.key == key).then_some(e)
    }

    fn store(
        &mut self,
        pos: &Position,
        depth: u32,
        score: i32,
        bound: Bound,
        mv: Option<Move>,
        ply: usize,
    ) {
        if !self.use_table {
            return;
        }
        let key = Self::key(pos);
        let mask = self.table.len() - 1;
        let slot = &mut self.table[key as usize & mask];
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

    fn check_clock(&mut self, stop: &dyn Fn() -> bool) {
        if (self.nodes + self.qnodes) % CHECK_EVERY == 0
            && (self.deadline.is_some_and(|d| Instant::now() >= d) || stop())
        {
            self.aborted = true;
        }
    }

    /// The score of the position `pos` reached by `m`, for ordering: the evaluation after it
    /// for the mover, less when it hands the opponent a capture, a won game first.
    fn lookahead_score(&self, pos: &Position, m: &Move) -> i32 {
        let mut child = *pos;
        child.play_unchecked(m);
        if let Some(o) = child.outcome() {
            return match o {
                Outcome::Win(p) if p == pos.turn() => SCORE_WIN,
                Outcome::Win(_) => -SCORE_WIN,
                Outcome::Draw => 0,
            };
        }
        let s = -evaluate_with(&child, &self.weights);
        if child.has_capture() { s - 50 } else { s }
    }

    /// Fills the move list of `ply` with the moves of `pos`, ordered.
    fn ordered_moves(&mut self, pos: &Position, depth: u32, ply: usize, tt_move: Option<Move>) {
        let mut list = std::mem::take(&mut self.moves[ply]);
        list.clear();
        self.scratch.clear();
        pos.legal_moves_into(&mut self.scratch);
        let killers = self.killers[ply];
        let lookahead = depth >= 2 && self.scratch.len() > 1;
        for &m in &self.scratch {
            let s = if Some(m) == tt_move {
                i32::MAX
            } else {
                match m {
                    Move::Capture(c) => 1 << 24 | (c.len() as i32) << 8,
                    _ if lookahead => self.lookahead_score(pos, &m),
                    _ if killers[0] == Some(m) => 1 << 22,
                    _ if killers[1] == Some(m) => (1 << 22) - 1,
                    _ => history_index(&m).map_or(0, |i| self.history[i]),
                }
            };
            list.push((s, m));
        }
        list.sort_unstable_by_key(|&(s, m)| (std::cmp::Reverse(s), m));
        self.moves[ply] = list;
    }

    fn negamax(
        &mut self,
        pos: &Position,
        depth: u32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        stop: &dyn Fn() -> bool,
    ) -> i32 {
        self.nodes += 1;
        self.check_clock(stop);
        if self.aborted {
            return 0;
        }
        if let Some(o) = pos.outcome() {
            return terminal(o, pos, ply);
        }
        if depth == 0 || ply >= MAX_PLY {
            return self.quiesce(pos, alpha, beta, ply, stop);
        }
        let entry = self.probe(pos);
        if let Some(e) = entry {
            if u32::from(e.depth) >= depth {
                let s = from_table(e.score, ply);
                let usable = match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => s >= beta,
                    Bound::Upper => s <= alpha,
                };
                if usable {
                    return s;
                }
            }
        }
        let alpha0 = alpha;
        self.ordered_moves(pos, depth, ply, entry.and_then(|e| e.mv));
        let list = std::mem::take(&mut self.moves[ply]);
        let mut best = -SCORE_WIN - 1;
        let mut best_move = None;
        for (i, &(_, m)) in list.iter().enumerate() {
            let mut child = *pos;
            child.play_unchecked(&m);
            let score = if i == 0 {
                -self.negamax(&child, depth - 1, -beta, -alpha, ply + 1, stop)
            } else {
                let s = -self.negamax(&child, depth - 1, -alpha - 1, -alpha, ply + 1, stop);
                if s > alpha && s < beta && !self.aborted {
                    -self.negamax(&child, depth - 1, -beta, -alpha, ply + 1, stop)
                } else {
                    s
                }
            };
            if self.aborted {
                self.moves[ply] = list;
                return 0;
            }
            if score > best {
                best = score;
                best_move = Some(m);
            }
            if score > alpha {
                alpha = score;
            }
            if alpha >= beta {
                if let Move::Place(_) = m {
                    let k = &mut self.killers[ply];
                    if k[0] != Some(m) {
                        k[1] = k[0];
                        k[0] = Some(m);
                    }
                    if let Some(h) = history_index(&m) {
                        self.history[h] += (depth * depth) as i32;
                    }
                }
                break;
            }
        }
        self.moves[ply] = list;
        let bound = if best >= beta {
            Bound::Lower
        } else if best > alpha0 {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.store(pos, depth, best, bound, best_move, ply);
        best
    }

    /// Plays out compulsory captures; a position whose mover has none is evaluated.
    fn quiesce(
        &mut self,
        pos: &Position,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        stop: &dyn Fn() -> bool,
    ) -> i32 {
        self.qnodes += 1;
        self.check_clock(stop);
        if self.aborted {
            return 0;
        }
        if let Some(o) = pos.outcome() {
            return terminal(o, pos, ply);
        }
        if ply >= MAX_PLY || !pos.has_capture() {
            return evaluate_with(pos, &self.weights);
        }
        let mut list = std::mem::take(&mut self.moves[ply]);
        list.clear();
        self.scratch.clear();
        pos.legal_moves_into(&mut self.scratch);
        list.extend(self.scratch.iter().map(|&m| {
            let len = if let Move::Capture(c) = m { c.len() as i32 } else { 0 };
            (len, m)
        }));
        list.sort_unstable_by_key(|&(s, m)| (std::cmp::Reverse(s), m));
        let mut best = -SCORE_WIN - 1;
        for &(_, m) in &list {
            let mut child = *pos;
            child.play_unchecked(&m);
            let score = -self.quiesce(&child, -beta, -alpha, ply + 1, stop);
            if self.aborted {
                break;
            }
            best = best.max(score);
            alpha = alpha.max(score);
            if alpha >= beta {
                break;
            }
        }
        self.moves[ply] = list;
        best
    }
}

/// The score of a finished game for the player to move, `ply` plies from the root.
pub fn terminal(outcome: Outcome, pos: &Position, ply: usize) -> i32 {
    match outcome {
        Outcome::Win(p) if p == pos.turn() => SCORE_WIN - ply as i32,
        Outcome::Win(_) => -(SCORE_WIN - ply as i32),
        Outcome::Draw => 0,
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
