//! The searcher, [`AlphaBeta`]: iterative deepening of a principal variation search over whole
//! turns, its move ordering (the table's move, captures, killers, history, the one-turn look
//! ahead) and its quiescence search of captures.
//!
//! The top of the module: it uses the scores ([`super::eval`]), the table ([`super::table`]) and
//! the limits ([`super::limits`]); none of them uses it.

use std::time::{Duration, Instant};

use zertz_env::{Move, Outcome, Position};

use super::eval::{SCORE_MATE_BOUND, SCORE_WIN, Weights, evaluate_with, terminal};
use super::limits::{Limits, MAX_DEPTH, Report};
use super::table::{Bound, Table};

/// The deepest line of a search: [`MAX_DEPTH`] turns and as many captures in quiescence.
const MAX_PLY: usize = 2 * MAX_DEPTH as usize + 8;

/// Bytes of the transposition table of [`AlphaBeta::default`]: 16 MiB.
pub const DEFAULT_TABLE_BYTES: usize = 16 << 20;

/// Nodes between two looks at the clock and the stop flag.
const CHECK_EVERY: u64 = 256;

/// The searcher: its transposition table, killers and history survive between searches (the
/// positions of one game), [`AlphaBeta::clear`] forgets them.
#[derive(Clone, Debug)]
pub struct AlphaBeta {
    /// Allocated by the first search ([`AlphaBeta::release`] frees it).
    table: Table,
    weights: Weights,
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
        AlphaBeta {
            table: Table::new(table_bytes),
            weights: Weights::default(),
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
        self.table.disable();
        self
    }

    /// Frees the table, killers and history (the next search starts afresh and allocates
    /// them again).
    pub fn release(&mut self) {
        self.table.release();
        self.history.fill(0);
        self.killers.fill([None; 2]);
        for m in &mut self.moves {
            *m = Vec::new();
        }
    }

    /// Bytes held (the table mostly; none before the first search).
    pub fn bytes(&self) -> usize {
        self.table.bytes()
            + self
                .moves
                .iter()
                .map(|m| m.capacity() * std::mem::size_of::<(i32, Move)>())
                .sum::<usize>()
    }

    /// Forgets the table, killers and history.
    pub fn clear(&mut self) {
        self.table.clear();
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
        self.table.new_search();
        self.nodes = 0;
        self.qnodes = 0;
        self.aborted = false;
        self.deadline = limits.time.map(|t| start + t);
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
            self.table.store(pos, depth, best_score, Bound::Exact, Some(m), 0);
        }
        (best_score, best, true)
    }

    /// The line of the table from `pos` after `first`, at most `depth` turns.
    fn principal_variation(&self, pos: &Position, first: Move, depth: u32) -> Vec<Move> {
        let mut pv = vec![first];
        let mut p = *pos;
        p.play_unchecked(&first);
        while pv.len() < depth as usize {
            let Some(e) = self.table.probe(&p) else { break };
            let Some(m) = e.mv else { break };
            if !p.is_legal_move(&m) {
                break;
            }
            p.play_unchecked(&m);
            pv.push(m);
        }
        pv
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
        let entry = self.table.probe(pos);
        if let Some(e) = entry {
            if u32::from(e.depth) >= depth {
                let s = e.score(ply);
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
        self.table.store(pos, depth, best, bound, best_move, ply);
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
