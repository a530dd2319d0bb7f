//! [`MctsBot`], Monte Carlo tree search with any evaluator, and [`gumbel_plan`], the simulations
//! a Gumbel root plans for under a time per move.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use zertz_env::{Action, Position, SplitMix64};

use zertz_search::evaluator::{Evaluator, RolloutEvaluator, UniformEvaluator};
use zertz_search::mcts::{
    DEFAULT_MAX_TREE_BYTES, MAX_SEARCH_THREADS, Scratch, Tree, TurnOrder, search_threads,
};
use zertz_search::{Preset, SearchConfig};

use super::{
    Bot, BotError, MAX_SIMULATIONS, WorkUnit, forced_action, hands_a_win, winning_move,
    without_handed_wins,
};

/// Searches every decision with [`search`](zertz_search::mcts::search): a fixed number of new simulations per decision, no
/// root noise, the most visited root action (ties at random) among [`Tree::root_candidates`] (a
/// proven win when the search found one, never an avoidable proven loss); with a Gumbel root
/// ([`SearchConfig::gumbel_actions`]), [`Tree::gumbel_action`]. The tree follows the game through
/// [`Bot::observe`] (or from its own actions) and keeps the subtree of the position reached;
/// a forced action is played without searching. The tree has a memory budget
/// ([`DEFAULT_MAX_TREE_BYTES`] unless [`Bot::set_max_tree_bytes`] says otherwise): a decision
/// whose simulations would pass it gets fewer.
pub struct MctsBot {
    name: String,
    evaluator: Arc<dyn Evaluator>,
    /// CPU time of search threads whose scratch buffers it no longer keeps.
    cpu_before: Duration,
    simulations: u32,
    config: SearchConfig,
    tree: Option<Tree>,
    /// One scratch a search thread ([`Bot::set_search_threads`]), the calling thread's first.
    scratches: Vec<Scratch>,
    rng: SplitMix64,
    /// The arena size past which a tree starts afresh instead of keeping a subtree.
    max_arena: usize,
    /// The memory budget of the tree.
    max_tree_bytes: usize,
    /// Search until this time is spent instead of counting simulations.
    move_time: Option<Duration>,
    /// Simulations run by every search so far.
    simulations_run: u64,
    /// Look one turn ahead at the root ([`MctsBot::with_tactics`]).
    tactics: bool,
    /// Simulations per second of the searches under a time per move so far (a running mean),
    /// which sizes a Gumbel root's schedule.
    rate: Option<f64>,
    /// Ends a search under way when set ([`Bot::set_stop`]).
    stop: Option<Arc<AtomicBool>>,
}

/// The fewest leaves each thread's rounds collect when a search runs on several threads (when
/// the search settings ask for fewer): each round is then a batch of this many positions, which
/// a network on the CPU evaluates for little more than one (BENCHMARKS.md, "The network player on a CPU").
pub const LEAVES_PER_SEARCH_THREAD: u32 = 8;

/// `config` for a search on `threads` threads: at least [`LEAVES_PER_SEARCH_THREAD`] leaves a
/// round on each (with one thread, `config` as it is).
pub(crate) fn for_search_threads(config: &SearchConfig, threads: usize) -> SearchConfig {
    let least = if threads > 1 { LEAVES_PER_SEARCH_THREAD } else { 0 };
    SearchConfig { leaves_per_round: config.leaves_per_round.max(least), ..config.clone() }
}

impl fmt::Debug for MctsBot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MctsBot")
            .field("name", &self.name)
            .field("simulations", &self.simulations)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The nodes a tree of a search of `simulations` keeps at most between moves, without a time
/// per move: expanded nodes carry every legal action as an edge (up to ~2000 in the opening),
/// so a few searches' worth.
fn arena_nodes(simulations: u32) -> usize {
    4 * simulations as usize + 1024
}

impl MctsBot {
    /// A search player with any evaluator and `simulations` new simulations per decision.
    pub fn new(
        name: impl Into<String>,
        evaluator: Arc<dyn Evaluator>,
        simulations: u32,
        seed: u64,
    ) -> MctsBot {
        let simulations = simulations.max(1);
        MctsBot {
            name: name.into(),
            evaluator,
            cpu_before: Duration::ZERO,
            simulations,
            config: SearchConfig::default(),
            tree: None,
            scratches: vec![Scratch::default()],
            rng: SplitMix64(seed),
            max_arena: arena_nodes(simulations),
            max_tree_bytes: DEFAULT_MAX_TREE_BYTES,
            move_time: None,
            simulations_run: 0,
            tactics: false,
            rate: None,
            stop: None,
        }
    }

    /// Classic Monte Carlo tree search: uniform priors, one random playout per leaf, one leaf per
    /// round (no virtual loss in the way): [`Preset::Rollout`]. Named `mcts:SIMS`.
    pub fn rollout(simulations: u32, seed: u64) -> MctsBot {
        let eval = Arc::new(RolloutEvaluator { rollouts: 1, seed });
        MctsBot::new(format!("mcts:{simulations}"), eval, simulations, seed)
            .with_config(Preset::Rollout.config())
    }

    /// Search with uniform priors and value 0 everywhere: only terminal positions count,
    /// [`Preset::Rollout`]. Named `uniform:SIMS`.
    pub fn uniform(simulations: u32, seed: u64) -> MctsBot {
        let eval = Arc::new(UniformEvaluator);
        MctsBot::new(format!("uniform:{simulations}"), eval, simulations, seed)
            .with_config(Preset::Rollout.config())
    }

    /// Search guided by a network: PUCT with [`Preset::Network`] (the defaults with flattened
    /// priors), eight leaves per round, no root noise. Named `name` (the spec,
    /// `nn:MODEL:SIMS`).
    pub fn neural(
        name: impl Into<String>,
        evaluator: Arc<dyn Evaluator>,
        simulations: u32,
        seed: u64,
    ) -> MctsBot {
        MctsBot::new(name, evaluator, simulations, seed)
            .with_config(Preset::Network.config())
            .with_tactics(true)
    }

    /// The same player with (or without) a look one turn ahead at the root: a move that wins at
    /// once is played without a search, and of the searched moves the most visited one that does
    /// not hand the opponent a win on its next turn is chosen (when there is one, among every
    /// legal action). A network's player ([`MctsBot::neural`]) has it; the rollout and uniform
    /// players, yardsticks of earlier figures, do not.
    pub fn with_tactics(mut self, tactics: bool) -> MctsBot {
        self.tactics = tactics;
        self
    }

    /// The same player with other search settings.
    pub fn with_config(mut self, config: SearchConfig) -> MctsBot {
        self.config = config;
        self
    }

    /// Simulations per decision.
    pub fn simulations(&self) -> u32 {
        self.simulations
    }

    /// The search tree, rooted at the position after the last action it followed.
    pub fn tree(&self) -> Option<&Tree> {
        self.tree.as_ref()
    }
}

/// How far a Gumbel root under a time per move plans past the simulations its measured rate
/// fits in the time. The rate varies by a tenth or two from one position to the next: planning
/// for exactly the expected count leaves the time unused whenever a search runs faster than the
/// mean, while a plan the time cuts short only leaves the last halving (between the two or four
/// best candidates) unfinished, where the better-scored candidate is chosen anyway.
pub const GUMBEL_PLAN_HEADROOM: f64 = 1.25;

/// The simulations a Gumbel root plans for under `move_time`: the spec's count until a rate
/// (simulations per second) has been measured, then [`GUMBEL_PLAN_HEADROOM`] times what that
/// rate fits in the time, from 1 to [`MAX_SIMULATIONS`].
pub fn gumbel_plan(rate: Option<f64>, simulations: u32, move_time: Duration) -> u32 {
    rate.map_or(simulations, |r| {
        (r * move_time.as_secs_f64() * GUMBEL_PLAN_HEADROOM).clamp(1.0, f64::from(MAX_SIMULATIONS))
            as u32
    })
}

impl Bot for MctsBot {
    fn name(&self) -> &str {
        &self.name
    }

    /// An error names this player when its evaluator fails (or `pos` has no legal action).
    fn choose(&mut self, pos: &Position) -> Result<Action, BotError> {
        if pos.count_legal_actions() == 0 {
            return Err(BotError::no_legal_action(&self.name, pos));
        }
        let forced = forced_action(pos);
        // (Looked for only where there is a choice.)
        let won = if self.tactics && forced.is_none() { winning_move(pos) } else { None };
        let action = match (forced, won) {
            (Some(a), _) => a,
            (None, Some(m)) => pos.move_actions(&m)[0],
            (None, None) => {
                let tree = match &mut self.tree {
                    Some(t) if t.position() == pos => t,
                    Some(t) => {
                        t.reset(*pos);
                        t
                    }
                    None => self.tree.insert(Tree::with_max_bytes(*pos, self.max_tree_bytes)),
                };
                let before = tree.root_visits();
                let started = Instant::now();
                // Under a time per move, as many simulations as the time (and the tree's memory
                // budget) allow. A Gumbel root halves its candidates on a schedule of the
                // search's simulations, so it plans for somewhat more than the time gave before
                // (the spec's count at first), and the time stops it.
                let stop = self.stop.clone();
                let (simulations, deadline) = match self.move_time {
                    Some(t) if self.config.gumbel_actions > 0 => {
                        (gumbel_plan(self.rate, self.simulations, t), Some(started + t))
                    }
                    Some(t) => (MAX_SIMULATIONS, Some(started + t)),
                    None => (self.simulations, None),
                };
                let config = for_search_threads(&self.config, self.scratches.len());
                // A timed search depends on the timing anyway: its threads take turns as they
                // come; a search of a fixed count is the same on any machine.
                let order = match deadline {
                    Some(_) => TurnOrder::AsReady,
                    None => TurnOrder::Fixed,
                };
                let searched = search_threads(
                    tree,
                    simulations,
                    &config,
                    self.evaluator.as_ref(),
                    &mut self.scratches,
                    order,
                    &mut || {
                        deadline.is_some_and(|d| Instant::now() >= d)
                            || stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
                    },
                );
                let ran = tree.root_visits().saturating_sub(before);
                self.simulations_run += u64::from(ran);
                let seconds = started.elapsed().as_secs_f64();
                if self.move_time.is_some() && ran > 0 && seconds > 0.0 {
                    let rate = f64::from(ran) / seconds;
                    self.rate = Some(self.rate.map_or(rate, |r| 0.5 * (r + rate)));
                }
                if let Err(error) = searched {
                    // The tree may hold half-finished statistics: start afresh next time.
                    self.tree = None;
                    return Err(BotError::Evaluator { player: self.name.clone(), error });
                }
                // A Gumbel root's own choice, unless it hands the opponent a win.
                let gumbel = tree.gumbel_action(&self.config);
                if let Some(a) = gumbel.filter(|a| !self.tactics || !hands_a_win(pos, a)) {
                    self.observe(pos, &a);
                    return Ok(a);
                }
                // A proven win if there is one; never a proven loss that can be avoided.
                let mut candidates = tree.root_candidates();
                if self.tactics {
                    candidates = without_handed_wins(pos, tree, candidates);
                }
                let most = candidates.iter().map(|&(_, v)| v).max().unwrap_or(0);
                let best: Vec<Action> =
                    candidates.iter().filter(|&&(_, v)| v == most).map(|&(a, _)| a).collect();
                match best.len() {
                    0 => pos
                        .nth_legal_action(self.rng.below(pos.count_legal_actions()))
                        .ok_or_else(|| BotError::no_legal_action(&self.name, pos))?,
                    n => best[self.rng.below(n)],
                }
            }
        };
        self.observe(pos, &action);
        Ok(action)
    }

    fn observe(&mut self, before: &Position, action: &Action) {
        if !self.config.tree_reuse {
            self.tree = None;
        } else if let Some(t) = &mut self.tree {
            if t.position() == before {
                t.advance(action, self.max_arena);
            }
        }
    }

    fn release_memory(&mut self) {
        self.tree = None;
        self.cpu_before = self.cpu_elsewhere();
        self.scratches.iter_mut().for_each(|s| *s = Scratch::default());
    }

    fn kept_bytes(&self) -> usize {
        self.tree.as_ref().map_or(0, Tree::bytes)
    }

    fn set_max_tree_bytes(&mut self, bytes: usize) {
        self.max_tree_bytes = bytes;
        if let Some(t) = &mut self.tree {
            t.set_max_bytes(bytes);
        }
    }

    /// Under a time per move the simulation count is not used: each search runs until the time
    /// is spent (or its tree reaches its memory budget), and the tree keeps the subtree of the
    /// position reached whatever its size. A Gumbel root plans its schedule for a quarter more
    /// simulations than the time allowed its earlier searches ([`gumbel_plan`]; the count at
    /// first), and stops there or when the time is spent, whichever is first.
    fn set_move_time(&mut self, time: Option<Duration>) {
        self.move_time = time;
        self.max_arena = match time {
            Some(_) => usize::MAX,
            None => arena_nodes(self.simulations),
        };
    }

    fn work(&self) -> Option<(WorkUnit, u64)> {
        Some((WorkUnit::Simulations, self.simulations_run))
    }

    fn set_stop(&mut self, stop: Arc<AtomicBool>) {
        self.stop = Some(stop);
    }

    /// With more than one thread, each search runs on `threads` threads
    /// ([`search_threads`]: each evaluates rounds of its own while the others work on the
    /// tree), and each thread's rounds collect at least [`LEAVES_PER_SEARCH_THREAD`] leaves.
    /// The threads take turns in an order fixed in advance for a fixed count of simulations (the
    /// same game on any machine), and as they come under a time per move.
    fn set_search_threads(&mut self, threads: usize) {
        let threads = threads.clamp(1, MAX_SEARCH_THREADS);
        let gone = self.scratches.get(threads.max(1)..).unwrap_or_default();
        self.cpu_before += gone.iter().map(|s| s.cpu).sum::<Duration>();
        self.scratches.resize_with(threads, Scratch::default);
    }

    fn cpu_elsewhere(&self) -> Duration {
        self.cpu_before + self.scratches.iter().map(|s| s.cpu).sum::<Duration>()
    }
}
