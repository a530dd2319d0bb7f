//! [`GreedyBot`], the one-ply heuristic player, and [`ChainPlan`], a capture chain chosen whole
//! and played hop by hop.

use zertz_env::{Action, ByMarble, Hop, MarbleSet, Move, Outcome, Position, SplitMix64};

use super::{Bot, BotError};

/// The value of a finished game for the greedy scores: far above any capture gain.
const WIN: f64 = 1000.0;

/// Above this many legal moves, the greedy player looks only at the captures its moves hand to the
/// opponent (compulsory, so cheap to list), not at every opponent placement.
const FULL_REPLY_LIMIT: usize = 300;

/// Progress of captures towards the closest win set, in `0..=1` (1: a win), plus a little for
/// every marble so that a capture off the closest set still counts.
fn progress(set: MarbleSet, caps: &ByMarble<u8>) -> f64 {
    if set.is_win(caps) {
        return WIN;
    }
    let single = set.single_colour_win();
    let each = set.each_colour_win();
    let mut best = 0.0f64;
    let mut mixed = 0.0;
    for c in 0..3 {
        let n = caps.0[c];
        best = best.max(f64::from(n.min(single.0[c])) / f64::from(single.0[c]));
        mixed += f64::from(n.min(each)) / f64::from(3 * each);
    }
    best.max(mixed) + 0.02 * f64::from(caps.total())
}

/// The rest of a capture chain that a player chose whole and plays hop by hop over its next
/// decisions, and the hash of the position where its next hop is due.
#[derive(Clone, Debug, Default)]
pub(crate) struct ChainPlan {
    hops: Vec<Hop>,
    at: u64,
}

impl ChainPlan {
    /// The next hop of the plan when `pos` is where it is due and it is legal there; else the
    /// plan is dropped and `None`.
    pub(crate) fn next(&mut self, pos: &Position) -> Option<Action> {
        if self.hops.is_empty() || pos.hash() != self.at {
            self.hops.clear();
            return None;
        }
        let a = Action::Hop(self.hops.remove(0));
        if !pos.is_legal_action(&a) {
            self.hops.clear();
            return None;
        }
        self.at = pos.play_action(&a).map_or(0, |p| p.hash());
        Some(a)
    }

    /// The first action of `m`, chosen in `pos`; the rest of its chain is planned.
    pub(crate) fn start(&mut self, pos: &Position, m: &Move) -> Action {
        let (first, rest) = split_chain(pos, m);
        self.hops = rest;
        if !self.hops.is_empty() {
            self.at = pos.play_action(&first).map_or(0, |p| p.hash());
        }
        first
    }
}

/// Plays whole-turn moves by a one-ply heuristic: the gain of the mover towards its closest win
/// set minus the best gain of the opponent's reply, ties broken at random. A capture chain is
/// planned whole and played hop by hop over the next decisions.
#[derive(Clone, Debug)]
pub struct GreedyBot {
    rng: SplitMix64,
    plan: ChainPlan,
    moves: Vec<Move>,
    replies: Vec<Move>,
    best: Vec<usize>,
}

impl GreedyBot {
    /// A greedy player; the seed breaks ties.
    pub fn new(seed: u64) -> GreedyBot {
        GreedyBot {
            rng: SplitMix64(seed),
            plan: ChainPlan::default(),
            moves: Vec::new(),
            replies: Vec::new(),
            best: Vec::new(),
        }
    }

    /// The score of playing `m` in `pos` (see the type's description).
    fn score(&mut self, pos: &Position, m: &Move, full_reply: bool) -> f64 {
        let me = pos.turn();
        let set = pos.marble_set();
        let mut after = *pos;
        after.play_unchecked(m);
        match after.outcome() {
            Some(Outcome::Win(p)) => return if p == me { WIN } else { -WIN },
            Some(Outcome::Draw) => return 0.0,
            None => {}
        }
        let gain = progress(set, &after.captures(me)) - progress(set, &pos.captures(me));
        if !full_reply && !after.has_capture() {
            return gain;
        }
        // The opponent's best reply (compulsory captures, or every move when it is cheap).
        let opp = after.turn();
        let base = progress(set, &after.captures(opp));
        self.replies.clear();
        after.legal_moves_into(&mut self.replies);
        let mut threat = 0.0f64;
        for r in &self.replies {
            let mut next = after;
            next.play_unchecked(r);
            let g = match next.outcome() {
                Some(Outcome::Win(p)) if p == opp => WIN,
                Some(Outcome::Win(_)) => -WIN,
                Some(Outcome::Draw) => 0.0,
                None => progress(set, &next.captures(opp)) - base,
            };
            threat = threat.max(g);
            if threat >= WIN {
                break;
            }
        }
        gain - threat
    }
}

impl Bot for GreedyBot {
    fn name(&self) -> &str {
        "greedy"
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, BotError> {
        if let Some(a) = self.plan.next(pos) {
            return Ok(a);
        }
        let mut moves = std::mem::take(&mut self.moves);
        moves.clear();
        pos.legal_moves_into(&mut moves);
        if moves.is_empty() {
            self.moves = moves;
            return Err(BotError::no_legal_action(self.name(), pos));
        }
        let full = moves.len() <= FULL_REPLY_LIMIT;
        let mut best_score = f64::NEG_INFINITY;
        self.best.clear();
        for (i, m) in moves.iter().enumerate() {
            let s = self.score(pos, m, full);
            if s > best_score + 1e-9 {
                best_score = s;
                self.best.clear();
                self.best.push(i);
            } else if s >= best_score - 1e-9 {
                self.best.push(i);
            }
        }
        let pick = self.best[self.rng.below(self.best.len())];
        let chosen = moves[pick];
        self.moves = moves;
        Ok(self.plan.start(pos, &chosen))
    }
}

/// The first action of a whole-turn move and the hops that follow it, each from the ring where
/// the jumping marble has landed.
fn split_chain(pos: &Position, m: &Move) -> (Action, Vec<Hop>) {
    let mut actions = pos.move_actions(m).into_iter();
    let first = actions.next().unwrap_or(Action::Pass);
    let hops =
        actions.filter_map(|a| if let Action::Hop(h) = a { Some(h) } else { None }).collect();
    (first, hops)
}
