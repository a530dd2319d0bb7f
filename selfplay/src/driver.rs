//! The self-play driver: many games searched together on a thread pool, training samples written
//! as `.npz` shards, every game kept as a JSON line.
//!
//! Why one file of this size: one loop, the workers', with what it writes as it goes (shards,
//! records), what it answers to (a stop, progress) and its errors. The formats it writes are
//! [`crate::shard`]'s and [`zertz_env::records`]'.
//!
//! Worker `w` of `W` plays games `w, w + W, w + 2W, …`, `games_per_worker` at a time; their leaves
//! are evaluated together. Each game's randomness comes from the run seed and the game index, so a
//! run is reproducible for a fixed thread count.

use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use zertz_env::encode::Shape;
use zertz_env::{Action, ActionSpace, Game, Outcome, Player, Position, SplitMix64};

use crate::config::{ConfigError, SelfPlayConfig};
use crate::shard::{Sample, ShardWriter, final_captures};
use zertz_env::records::{End, GameRecord};
use zertz_search::SearchConfig;
use zertz_search::evaluator::{EvalError, Evaluator};
use zertz_search::mcts::{Finished, Scratch, Tree, search_interruptible};
use zertz_settings::Settings;

/// Self-play stopped.
#[derive(Debug, thiserror::Error)]
pub enum SelfPlayError {
    /// The evaluator failed.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// Writing shards or records failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The thread pool could not start.
    #[error("cannot start the thread pool: {0}")]
    Threads(String),
    /// A setting out of range.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The output folder is an empty path (a slip: `"."` names the current folder).
    #[error("the output folder is an empty path: name a folder (\".\" for the current one)")]
    EmptyOutput,
    /// The output folder already holds self-play output, which would be replaced.
    #[error(
        "{} already holds self-play output ({}): choose an empty or new folder",
        folder.display(),
        file.display()
    )]
    OutputExists {
        /// The output folder.
        folder: PathBuf,
        /// One of the files found there.
        file: PathBuf,
    },
    /// [`Progress::stop`] was set; the games finished before are written (whole shards and
    /// records), the others are dropped.
    #[error("self-play stopped: {games} finished games written")]
    Stopped {
        /// Games finished and written.
        games: u64,
    },
}

impl zertz_env::Classify for SelfPlayError {
    fn class(&self) -> zertz_env::ErrorClass {
        use zertz_env::{Cause, ErrorClass};
        match self {
            // The caller's evaluator may also say what failed (the Python bindings report a
            // wrong answer of the caller's callable as a bad value).
            SelfPlayError::Eval(_) => ErrorClass::during(Cause::Failed),
            SelfPlayError::Io { source, .. } => ErrorClass::during(Cause::Io(source.kind())),
            SelfPlayError::Threads(_) => ErrorClass::refused(Cause::Failed),
            SelfPlayError::Config(e) => e.class(),
            SelfPlayError::EmptyOutput => ErrorClass::refused(Cause::Invalid),
            SelfPlayError::OutputExists { .. } => {
                ErrorClass::refused(Cause::Io(std::io::ErrorKind::AlreadyExists))
            }
            SelfPlayError::Stopped { .. } => ErrorClass::during(Cause::Stopped),
        }
    }
}

impl From<crate::shard::WriteError> for SelfPlayError {
    fn from(e: crate::shard::WriteError) -> SelfPlayError {
        SelfPlayError::Io { path: e.path, source: e.source }
    }
}

/// Whether `name` is a file self-play writes (`shard-*.npz`, `games-*.jsonl`).
pub fn is_output_file(name: &str) -> bool {
    (name.starts_with("shard-") && name.ends_with(".npz"))
        || (name.starts_with("games-") && name.ends_with(".jsonl"))
}

/// Refuses an output folder that holds self-play output already (so that none is replaced).
fn check_output_folder(out: &Path) -> Result<(), SelfPlayError> {
    if out.as_os_str().is_empty() {
        return Err(SelfPlayError::EmptyOutput);
    }
    let entries = match std::fs::read_dir(out) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(SelfPlayError::Io { path: out.to_path_buf(), source }),
    };
    for entry in entries {
        let entry =
            entry.map_err(|source| SelfPlayError::Io { path: out.to_path_buf(), source })?;
        if entry.file_name().to_str().is_some_and(is_output_file) {
            return Err(SelfPlayError::OutputExists {
                folder: out.to_path_buf(),
                file: entry.path(),
            });
        }
    }
    Ok(())
}

/// Counters shared by the workers, for progress reports.
#[derive(Debug, Default)]
pub struct Progress {
    /// Games finished.
    pub games: AtomicU64,
    /// Actions played.
    pub actions: AtomicU64,
    /// Positions evaluated.
    pub evaluations: AtomicU64,
    /// Evaluator calls.
    pub batches: AtomicU64,
    /// Training samples written.
    pub samples: AtomicU64,
    /// Set it to stop the run (from another thread: a Ctrl-C handler, a deadline): the workers
    /// stop after their current round of evaluations, write the games they finished and return
    /// [`SelfPlayError::Stopped`].
    pub stop: AtomicBool,
}

/// What a run produced: the `--json` line of `zertz selfplay` and the dict of `zertz.selfplay`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Games played.
    pub games: u64,
    /// Wins of the first player.
    pub first_wins: u64,
    /// Wins of the second player.
    pub second_wins: u64,
    /// Draws and games stopped at the action limit.
    pub draws: u64,
    /// Training samples written.
    pub samples: u64,
    /// Shard files written, sorted.
    pub shards: Vec<PathBuf>,
    /// Single actions played.
    pub actions: u64,
    /// Positions evaluated by the evaluator.
    pub evaluations: u64,
    /// Games that would have resigned but were played out, and how many of those the would-be
    /// resigner did not lose (false resignations).
    pub playouts_checked: u64,
    /// False resignations among them.
    pub false_resignations: u64,
    /// Mean evaluator batch size.
    pub mean_batch: f64,
    /// Worker threads that played.
    pub workers: usize,
    /// Wall time of the run, in seconds.
    pub seconds: f64,
    /// Seconds the network ran, summed over the threads that ran it; None without a network
    /// (filled by the caller, who knows the network: see `zertz_model::ModelStats`).
    pub network_seconds: Option<f64>,
    /// Share of the run's wall time with the network running (per worker on the CPU, per device
    /// behind the inference threads); None without a network (filled by the caller).
    pub network_share: Option<f64>,
    /// Forward passes of the network (behind inference threads, each of merged requests:
    /// `evaluations / network_batches` positions on average); None without a network (filled
    /// by the caller).
    pub network_batches: Option<u64>,
    /// The search settings the games were played with (the preset and the overrides).
    pub search: SearchConfig,
}

struct Slot {
    id: u64,
    game: Game,
    rng: SplitMix64,
    actions: u32,
    samples: Vec<Sample>,
    may_resign: bool,
    would_resign: Option<Player>,
}

/// Picks an action from visit counts: proportional to `visits^(1/t)`, or the most visited when
/// `t` is 0; `None` when no child was visited.
fn pick(visits: &[(Action, u32)], t: f32, rng: &mut SplitMix64) -> Option<Action> {
    let visited = visits.iter().filter(|&&(_, v)| v > 0);
    if t <= 0.0 {
        return visited.max_by_key(|&&(_, v)| v).map(|&(a, _)| a);
    }
    let weights: Vec<(Action, f64)> =
        visited.map(|&(a, v)| (a, (f64::from(v)).powf(1.0 / f64::from(t)))).collect();
    let total: f64 = weights.iter().map(|&(_, w)| w).sum();
    if !(total.is_finite() && total > 0.0) {
        // Visits^(1/t) overflow with a tiny temperature: the most visited.
        return pick(visits, 0.0, rng);
    }
    let mut x = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
    for &(a, w) in &weights {
        if x < w {
            return Some(a);
        }
        x -= w;
    }
    weights.last().map(|&(a, _)| a)
}

/// Plays `config.games` games, writing shards and `games-WW.jsonl` records into `out`, a new or
/// empty folder: one that holds self-play output already is refused
/// ([`SelfPlayError::OutputExists`]), so that no output is ever replaced.
pub fn run(
    config: &SelfPlayConfig,
    evaluator: &dyn Evaluator,
    out: &Path,
    progress: &Progress,
) -> Result<Summary, SelfPlayError> {
    let started = std::time::Instant::now();
    config.validate()?;
    // The evaluator chooses the preset when the config names none (rollouts: "rollout").
    let search = config.search_config(evaluator.preset())?;
    let counted_before =
        (progress.actions.load(Ordering::Relaxed), progress.evaluations.load(Ordering::Relaxed));
    check_output_folder(out)?;
    std::fs::create_dir_all(out)
        .map_err(|source| SelfPlayError::Io { path: out.to_path_buf(), source })?;
    let threads = if config.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        config.threads
    };
    let workers = threads.min(config.games.max(1) as usize).max(1);
    let results: Mutex<Vec<Result<Summary, SelfPlayError>>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for w in 0..workers {
            let (results, search) = (&results, &search);
            scope.spawn(move || {
                let r = worker(config, search, evaluator, out, progress, w, workers);
                results.lock().unwrap_or_else(|e| e.into_inner()).push(r);
            });
        }
    });
    let mut total = Summary::default();
    let mut batch_sum = 0.0;
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    if progress.stop.load(Ordering::Relaxed) && results.iter().all(Result::is_ok) {
        let games = results.iter().flatten().map(|s| s.games).sum();
        return Err(SelfPlayError::Stopped { games });
    }
    for r in results {
        let s = r?;
        total.games += s.games;
        total.first_wins += s.first_wins;
        total.second_wins += s.second_wins;
        total.draws += s.draws;
        total.samples += s.samples;
        total.shards.extend(s.shards);
        total.playouts_checked += s.playouts_checked;
        total.false_resignations += s.false_resignations;
        batch_sum += s.mean_batch;
    }
    total.shards.sort();
    total.mean_batch = batch_sum / workers as f64;
    total.workers = workers;
    total.actions = progress.actions.load(Ordering::Relaxed) - counted_before.0;
    total.evaluations = progress.evaluations.load(Ordering::Relaxed) - counted_before.1;
    total.seconds = started.elapsed().as_secs_f64();
    total.search = search;
    Ok(total)
}

impl Slot {
    /// Game `id` of the run: its first player, whether it may resign, its random generator.
    fn new(config: &SelfPlayConfig, id: u64) -> Slot {
        let mut rng = SplitMix64(config.seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let first = if rng.next_u64() & 1 == 0 { Player::P0 } else { Player::P1 };
        let may_resign = config.resign_threshold > -1.0
            && (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
                >= config.resign_playout_fraction as f64;
        Slot {
            id,
            game: Game::new(config.variant(), first),
            rng,
            actions: 0,
            samples: Vec::new(),
            may_resign,
            would_resign: None,
        }
    }

    /// The simulations of this game's next search (0: a forced action, no search) and whether
    /// it is a full search (playout-cap randomization); a full search gets root noise.
    fn plan_search(
        &mut self,
        config: &SelfPlayConfig,
        search: &SearchConfig,
        tree: &mut Tree,
    ) -> (u32, bool) {
        if self.game.position().count_legal_actions() <= 1 {
            return (0, false); // a forced action needs no search
        }
        let full = (self.rng.next_u64() >> 11) as f64 / ((1u64 << 53) as f64)
            < config.full_search_probability as f64;
        if search.gumbel_actions > 0 {
            // Every Gumbel search samples its move: the draws are its exploration.
            tree.set_gumbel_seed(self.rng.next_u64());
        } else if full && search.dirichlet_fraction > 0.0 {
            tree.add_noise(search.noise(self.rng.next_u64()));
        }
        (if full { config.full_simulations } else { config.fast_simulations }, full)
    }

    /// The action after a search of `tree`: keeps the position as a training sample, notes a
    /// would-be resignation, and picks the move at the temperature of this point of the game
    /// (with a Gumbel root, the search's own choice: its draws make it a sample, and the
    /// temperatures are not used).
    fn choose(
        &mut self,
        config: &SelfPlayConfig,
        search: &SearchConfig,
        tree: &Tree,
        full: bool,
        scratch: &mut SampleScratch,
    ) -> Action {
        let pos: Position = *self.game.position();
        let info = tree.root_info();
        self.samples.push(scratch.sample(&pos, search, tree, full, info.value, self.actions));
        if info.value < config.resign_threshold && self.would_resign.is_none() {
            self.would_resign = Some(pos.turn());
        }
        if let Some(a) = tree.gumbel_action(search) {
            return a;
        }
        let t = if self.actions < config.temperature_actions {
            config.temperature
        } else {
            config.final_temperature
        };
        // A search always visits a move (at least MIN_SIMULATIONS); should it not, a random
        // legal action rather than a panic.
        // Among the root's candidates: a proven win when the search found one, never a proven
        // loss that can be avoided.
        pick(&tree.root_candidates(), t, &mut self.rng).unwrap_or_else(|| {
            let n = pos.count_legal_actions();
            pos.nth_legal_action(self.rng.below(n)).expect("a game in progress has an action")
        })
    }
}

/// Buffers for encoding training samples, reused from sample to sample.
struct SampleScratch {
    policy: Vec<f32>,
    planes: Vec<f32>,
    mask: Vec<bool>,
}

impl SampleScratch {
    fn new(variant: zertz_env::Variant) -> SampleScratch {
        let actions = ActionSpace::new(variant.board).len();
        SampleScratch {
            policy: vec![0.0; actions],
            planes: vec![0.0; Shape::of(variant.board).planes_len()],
            mask: vec![false; actions],
        }
    }

    /// The training sample of `pos` searched by `tree` (the policy target of a full search is
    /// its [`Tree::policy`]).
    fn sample(
        &mut self,
        pos: &Position,
        search: &SearchConfig,
        tree: &Tree,
        full: bool,
        root_value: f32,
        move_number: u32,
    ) -> Sample {
        // A fast search's policy is no target: its visits, kept small, rather than a Gumbel
        // root's improved policy over every legal action.
        if full {
            tree.policy(search, &mut self.policy);
        } else {
            tree.visit_policy(&mut self.policy);
        }
        let policy = self
            .policy
            .iter()
            .enumerate()
            .filter(|&(_, &p)| p > 0.0)
            .map(|(k, &p)| (k as i32, p))
            .collect();
        Sample::new(pos, &mut self.planes, &mut self.mask, policy, full, root_value, move_number)
    }
}

/// Where a worker writes: its shards and its game records.
struct WorkerOutput {
    shards: ShardWriter,
    records: std::fs::File,
    records_path: PathBuf,
}

impl WorkerOutput {
    fn io(&self, source: std::io::Error) -> SelfPlayError {
        SelfPlayError::Io { path: self.records_path.clone(), source }
    }

    /// A finished game: counts its result, writes its record and its samples (labelled with the
    /// result from each mover's view).
    fn finish(
        &mut self,
        s: Slot,
        outcome: Option<Outcome>,
        resigned: bool,
        summary: &mut Summary,
        progress: &Progress,
    ) -> Result<(), SelfPlayError> {
        summary.games += 1;
        let winner = outcome.and_then(|o| o.winner());
        match winner {
            Some(p) if p == s.game.start().turn() => summary.first_wins += 1,
            Some(_) => summary.second_wins += 1,
            None => summary.draws += 1,
        }
        if let (false, Some(p)) = (s.may_resign, s.would_resign) {
            summary.playouts_checked += 1;
            if winner != Some(!p) {
                summary.false_resignations += 1;
            }
        }
        let end = match outcome {
            None => End::Limit,
            Some(_) if resigned => End::Resign,
            Some(Outcome::Draw) if s.game.is_repetition() => End::Repetition,
            Some(Outcome::Draw) => End::Draw,
            Some(Outcome::Win(_)) => End::Win,
        };
        let mut text = GameRecord::of_game(s.id, &s.game, end, winner, None).to_json();
        text.push('\n');
        self.records.write_all(text.as_bytes()).map_err(|e| self.io(e))?;
        let finals = final_captures(s.game.position());
        for sample in s.samples {
            let value = outcome.map_or(0.0, |o| o.score(sample.to_play()) as f32);
            summary.samples += 1;
            progress.samples.fetch_add(1, Ordering::Relaxed);
            self.shards.push(s.id, value, finals, sample)?;
        }
        progress.games.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// Worker `w` of `workers`: plays games `w, w + workers, ...`, `games_per_worker` at a time, their
/// searches batched together, and writes what they give.
fn worker(
    config: &SelfPlayConfig,
    search_config: &SearchConfig,
    evaluator: &dyn Evaluator,
    out: &Path,
    progress: &Progress,
    w: usize,
    workers: usize,
) -> Result<Summary, SelfPlayError> {
    let variant = config.variant();
    let mut summary = Summary::default();
    let records_path = out.join(format!("games-{w:02}.jsonl"));
    // `create_new`: a file that appeared since the folder was checked is never replaced.
    let records = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&records_path)
        .map_err(|source| SelfPlayError::Io { path: records_path.clone(), source })?;
    let mut output = WorkerOutput {
        shards: ShardWriter::new(out, w, variant.board, config.shard_size),
        records,
        records_path,
    };
    let mut next_game = w as u64;
    let mut slots: Vec<Option<Slot>> = Vec::new();
    let mut trees: Vec<Tree> = Vec::new();
    for _ in 0..config.games_per_worker {
        if next_game >= config.games as u64 {
            break;
        }
        let slot = Slot::new(config, next_game);
        trees.push(Tree::new(*slot.game.position()));
        slots.push(Some(slot));
        next_game += workers as u64;
    }
    let mut scratch = Scratch::default();
    let mut samples = SampleScratch::new(variant);
    let mut sims = vec![0u32; slots.len()];
    let mut full = vec![false; slots.len()];
    let mut stop = || progress.stop.load(Ordering::Relaxed);
    while slots.iter().any(Option::is_some) && !stop() {
        // Decide the search of every game.
        for (i, slot) in slots.iter_mut().enumerate() {
            (sims[i], full[i]) = match slot {
                Some(s) => s.plan_search(config, search_config, &mut trees[i]),
                None => (0, false),
            };
        }
        let before = (scratch.batches, scratch.evaluated);
        let finished = search_interruptible(
            &mut trees,
            &sims,
            search_config,
            evaluator,
            &mut scratch,
            &mut stop,
        )?;
        progress.batches.fetch_add(scratch.batches - before.0, Ordering::Relaxed);
        progress.evaluations.fetch_add(scratch.evaluated - before.1, Ordering::Relaxed);
        if finished == Finished::Interrupted {
            break;
        }
        // Play one action in every game.
        for i in 0..slots.len() {
            let Some(s) = slots[i].as_mut() else { continue };
            let pos: Position = *s.game.position();
            let action = if sims[i] == 0 {
                pos.nth_legal_action(0).expect("a game in progress has an action")
            } else {
                s.choose(config, search_config, &trees[i], full[i], &mut samples)
            };
            let resign = s.may_resign && s.would_resign == Some(pos.turn());
            let outcome = if resign {
                Some(Outcome::Win(!pos.turn()))
            } else {
                s.game.play_action(&action).expect("search plays legal actions");
                s.actions += 1;
                progress.actions.fetch_add(1, Ordering::Relaxed);
                if search_config.tree_reuse {
                    trees[i].advance(&action, 1 << 20);
                } else {
                    trees[i].reset(*s.game.position());
                }
                s.game.outcome()
            };
            if outcome.is_none() && s.actions < config.max_actions {
                continue;
            }
            // The game is over: its record and samples, then the next game in its slot.
            let s = slots[i].take().expect("slot in use");
            output.finish(s, outcome, resign, &mut summary, progress)?;
            if next_game < config.games as u64 {
                let slot = Slot::new(config, next_game);
                trees[i].reset(*slot.game.position());
                slots[i] = Some(slot);
                next_game += workers as u64;
            }
        }
    }
    output.shards.flush()?;
    output.records.flush().map_err(|e| output.io(e))?;
    summary.shards = output.shards.into_written();
    summary.mean_batch = scratch.evaluated as f64 / scratch.batches.max(1) as f64;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actions(n: usize) -> Vec<Action> {
        let pos = Position::new(zertz_env::Variant::default(), zertz_env::Player::P0);
        (0..n).map(|i| pos.nth_legal_action(i).unwrap()).collect()
    }

    #[test]
    fn pick_chooses_among_visited_children_only() {
        let a = actions(3);
        let mut rng = SplitMix64(5);
        // Nothing visited (a search of one simulation): no choice, never a panic.
        assert_eq!(pick(&[], 1.0, &mut rng), None);
        assert_eq!(pick(&[], 0.0, &mut rng), None);
        assert_eq!(pick(&[(a[0], 0), (a[1], 0)], 1.0, &mut rng), None);
        assert_eq!(pick(&[(a[0], 0), (a[1], 0)], 0.0, &mut rng), None);
        // Temperature 0: the most visited.
        let visits = [(a[0], 0), (a[1], 7), (a[2], 3)];
        assert_eq!(pick(&visits, 0.0, &mut rng), Some(a[1]));
        // A temperature so small that visits^(1/t) overflows: the most visited too.
        assert_eq!(pick(&visits, 1e-30, &mut rng), Some(a[1]));
        // Temperature 1: in proportion to visits, never an unvisited child.
        let picks: Vec<Action> = (0..2000).map(|_| pick(&visits, 1.0, &mut rng).unwrap()).collect();
        assert!(!picks.contains(&a[0]));
        let ones = picks.iter().filter(|&&x| x == a[1]).count();
        assert!((1250..1550).contains(&ones), "{ones} of 2000, expected about 1400");
    }
}
