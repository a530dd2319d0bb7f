//! [`AlphaBetaBot`]: the classic alpha-beta searcher of [`zertz_search::alphabeta`] as a
//! player (`alphabeta`, `alphabeta:DEPTH`, `alphabeta:time=SECONDS`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use zertz_env::{Action, Position};
use zertz_search::alphabeta::{AlphaBeta, DEFAULT_TABLE_BYTES, Limits, MAX_DEPTH, Report, Weights};

use super::{Bot, BotError, ChainPlan, DEFAULT_ALPHABETA_TIME, WorkUnit};

/// Searches every turn with iterative-deepening alpha-beta ([`AlphaBeta`]): to a fixed depth in
/// whole turns, or deepening until its time per move is spent (a fixed depth under a time per
/// move: the depth is the deepest iteration, the time stops it sooner). A capture chain is chosen
/// whole and played hop by hop; asked in the middle of a chain it did not plan (its own, after an
/// opening), it searches the rest of the chain. The transposition table (16 MiB) lives as long as
/// the player.
#[derive(Debug)]
pub struct AlphaBetaBot {
    name: String,
    depth: Option<u32>,
    time: Option<Duration>,
    searcher: AlphaBeta,
    plan: ChainPlan,
    nodes: u64,
    last: Option<Report>,
    /// Ends a search under way when set ([`Bot::set_stop`]).
    stop: Option<Arc<AtomicBool>>,
}

impl AlphaBetaBot {
    /// A player searching to `depth` whole turns (held to 1..=[`MAX_DEPTH`]), or with `None`
    /// for [`DEFAULT_ALPHABETA_TIME`] per move until [`Bot::set_move_time`] says otherwise.
    pub fn new(depth: Option<u32>) -> AlphaBetaBot {
        let depth = depth.map(|d| d.clamp(1, MAX_DEPTH));
        let name = match depth {
            Some(d) => format!("alphabeta:{d}"),
            None => "alphabeta".to_string(),
        };
        AlphaBetaBot {
            name,
            depth,
            time: None,
            searcher: AlphaBeta::new(DEFAULT_TABLE_BYTES),
            plan: ChainPlan::default(),
            nodes: 0,
            last: None,
            stop: None,
        }
    }

    /// The same player with other evaluation weights (for tuning; the name stays).
    pub fn with_weights(mut self, weights: Weights) -> AlphaBetaBot {
        self.searcher = self.searcher.with_weights(weights);
        self
    }

    /// The limits of one search.
    pub fn limits(&self) -> Limits {
        match (self.depth, self.time) {
            (Some(d), None) => Limits::depth(d),
            (d, t) => Limits {
                max_depth: d.unwrap_or(MAX_DEPTH),
                time: Some(t.unwrap_or(DEFAULT_ALPHABETA_TIME)),
            },
        }
    }

    /// What the last search found (its move, score, principal variation and node counts).
    pub fn last_search(&self) -> Option<&Report> {
        self.last.as_ref()
    }

    /// Searches `pos` within this player's limits (or `limits`), without playing: the report of
    /// the search, `None` in a finished game. A stop ([`Bot::set_stop`]) ends it within a few
    /// hundred nodes with its last whole iteration.
    pub fn analyze(&mut self, pos: &Position, limits: Option<Limits>) -> Option<Report> {
        let limits = limits.unwrap_or_else(|| self.limits());
        let stop = self.stop.clone();
        let stopped = || stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
        let report = self.searcher.search(pos, &limits, &stopped)?;
        self.nodes += report.nodes + report.qnodes;
        Some(report)
    }
}

impl Bot for AlphaBetaBot {
    fn name(&self) -> &str {
        &self.name
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, BotError> {
        if let Some(a) = self.plan.next(pos) {
            return Ok(a);
        }
        let Some(report) = self.analyze(pos, None) else {
            return Err(BotError::NoLegalAction {
                player: self.name.clone(),
                position: pos.to_text(),
            });
        };
        let action = self.plan.start(pos, &report.best);
        self.last = Some(report);
        Ok(action)
    }

    fn release_memory(&mut self) {
        self.searcher.release();
    }

    fn kept_bytes(&self) -> usize {
        self.searcher.bytes()
    }

    fn set_move_time(&mut self, time: Option<Duration>) {
        self.time = time;
    }

    fn work(&self) -> Option<(WorkUnit, u64)> {
        Some((WorkUnit::Nodes, self.nodes))
    }

    fn set_stop(&mut self, stop: Arc<AtomicBool>) {
        self.stop = Some(stop);
    }
}
