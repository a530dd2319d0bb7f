//! The jobs, in one place for both fronts: the `zertz` program (`cli/`) and
//! the Python module (`python/`). Each front turns its arguments into these types, calls a job,
//! and shows the typed result its own way (a `--json` line, a Python dict).
//!
//! - [`selfplay`]: self-play guided by a built-in evaluator, an exported network or the caller's
//!   own evaluator ([`Guide`]), with the network's figures filled into the [`Summary`].
//! - [`play_match`]: a match between two player specs (`nn:MODEL` networks loaded once each),
//!   its game records written, a [`MatchSummary`].
//!
//! - [`bench_player`]: a player's speed per second and per CPU-second on fixed positions.
//!
//! Both honour a stop flag (Ctrl-C). None changes the caller's libtorch CPU threads: each
//! forward pass on the CPU sets its own thread's for itself and sets them back
//! ([`zertz_model::Model::set_cpu_threads`]), so a training loop in the same process trains with
//! its own.
//!
//! ```
//! use std::sync::atomic::AtomicBool;
//! use zertz_jobs::{MatchJob, play_match};
//! use zertz_arena::config::MatchSettings;
//! let settings = MatchSettings { games: 2, threads: 1, ..MatchSettings::default() };
//! let job = MatchJob::with("greedy", "random", settings);
//! let summary = play_match(&job, &|_| {}, &AtomicBool::new(false)).unwrap();
//! assert_eq!((summary.games, summary.wins + summary.draws + summary.losses), (2, 2));
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::Serialize;
use zertz_arena::bench::{BenchError, BenchPlayerRow};
use zertz_arena::config::MatchSettings;
use zertz_arena::matches::{Effort, MatchConfig, MatchError, MatchGame, RecordWriter};
use zertz_arena::{Models, PlayerSpec};
use zertz_env::{Board, MarbleSet, Variant};
use zertz_model::{Inference, ModelError, Network};
use zertz_search::{Evaluator, RolloutEvaluator, UniformEvaluator};
use zertz_selfplay::config::SelfPlayConfig;
use zertz_selfplay::driver::{self, Progress, SelfPlayError, Summary};
use zertz_settings::ConfigError;
use zertz_settings::Settings;

/// Why a job could not run or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A network could not be loaded or failed to start.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Self-play settings that cannot be used.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Self-play failed or was stopped.
    #[error(transparent)]
    SelfPlay(#[from] SelfPlayError),
    /// A match could not be played, failed or was stopped.
    #[error(transparent)]
    Match(#[from] MatchError),
    /// The file for the game records of a match exists (nothing is ever replaced; a FIFO or a
    /// device too, which is never opened) or cannot be created; nothing was played.
    #[error("cannot write records to {}: {source}", path.display())]
    Output {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A player could not be measured.
    #[error(transparent)]
    Bench(#[from] BenchError),
    /// The game records of a match could not be written.
    #[error("cannot write records to {}: {source}", path.display())]
    Records {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl zertz_env::Classify for JobError {
    fn class(&self) -> zertz_env::ErrorClass {
        use zertz_env::{Cause, ErrorClass};
        match self {
            JobError::Model(e) => e.class(),
            JobError::Config(e) => e.class(),
            JobError::SelfPlay(e) => e.class(),
            JobError::Match(e) => e.class(),
            JobError::Bench(e) => e.class(),
            JobError::Output { source, .. } => ErrorClass::refused(Cause::Io(source.kind())),
            JobError::Records { source, .. } => ErrorClass::during(Cause::Io(source.kind())),
        }
    }
}

// ------------------------------------------------------------------------------------ self-play

/// What guides self-play.
#[derive(Clone)]
pub enum Guide {
    /// Uniform priors and value 0 ([`UniformEvaluator`]: the search's cost alone).
    Uniform,
    /// Random playouts ([`RolloutEvaluator`]: classic MCTS; the search preset "rollout").
    Rollout,
    /// An exported network, loaded for the job.
    Network {
        /// The model file.
        path: PathBuf,
        /// Where and how it runs.
        inference: Inference,
    },
    /// The caller's own evaluator (a Python callable).
    Custom(Arc<dyn Evaluator>),
}

impl std::fmt::Debug for Guide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Guide::Uniform => f.write_str("Uniform"),
            Guide::Rollout => f.write_str("Rollout"),
            Guide::Network { path, inference } => {
                f.debug_struct("Network").field("path", path).field("inference", inference).finish()
            }
            Guide::Custom(_) => f.write_str("Custom"),
        }
    }
}

impl Guide {
    /// A built-in evaluator by name: `uniform` or `rollout`.
    pub fn builtin(name: &str) -> Result<Guide, String> {
        match name.trim() {
            "uniform" => Ok(Guide::Uniform),
            "rollout" => Ok(Guide::Rollout),
            other => Err(format!("unknown evaluator {other:?}: use uniform or rollout")),
        }
    }
}

/// Plays self-play as `config` says into `out`, guided by `guide` (see [`driver::run`]: `out`
/// must hold no self-play output yet). With a network, the summary carries its figures
/// (`network_seconds`, `network_share`).
pub fn selfplay(
    config: &SelfPlayConfig,
    guide: &Guide,
    out: &Path,
    progress: &Progress,
) -> Result<Summary, JobError> {
    config.validate()?;
    let network = match guide {
        Guide::Network { path, inference } => {
            Some(Network::load(path, config.variant(), inference)?)
        }
        _ => None,
    };
    let evaluator: Arc<dyn Evaluator> = match guide {
        Guide::Uniform => Arc::new(UniformEvaluator),
        Guide::Rollout => Arc::new(RolloutEvaluator::default()),
        Guide::Network { .. } => network.as_ref().expect("loaded above").evaluator.clone(),
        Guide::Custom(e) => e.clone(),
    };
    let mut summary = driver::run(config, evaluator.as_ref(), out, progress)?;
    // Inference threads end with the evaluator: the figures then count every batch.
    drop(evaluator);
    if let Some(n) = &network {
        let (seconds, share) = n.figures(summary.seconds, summary.workers);
        summary.network_seconds = Some(seconds);
        summary.network_share = Some(share);
        summary.network_batches = Some(n.stats().batches);
    }
    Ok(summary)
}

// -------------------------------------------------------------------------------------- matches

/// A match to play: two player specs, the settings of `zertz match` and where networks run.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchJob {
    /// Player A, by its spec ([`zertz_arena::players::SPEC_GRAMMAR`]; a `cmd:` player runs one
    /// process of its program per game).
    pub a: String,
    /// Player B.
    pub b: String,
    /// Games, board, seed, threads, opening, limits, the records file and the time per move.
    pub settings: MatchSettings,
    /// Where and how the networks of `nn:` players run.
    pub inference: Inference,
}

impl MatchJob {
    /// `a` against `b` with the default settings of `zertz match` ([`MatchSettings::default`]).
    pub fn new(a: impl Into<String>, b: impl Into<String>) -> MatchJob {
        MatchJob::with(a, b, MatchSettings::default())
    }

    /// `a` against `b` with `settings`, networks on the default device.
    pub fn with(a: impl Into<String>, b: impl Into<String>, settings: MatchSettings) -> MatchJob {
        MatchJob { a: a.into(), b: b.into(), settings, inference: Inference::default() }
    }
}

/// What a match gave: the `--json` line of `zertz match` and the dict of `zertz.match`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatchSummary {
    /// Player A's name.
    pub a: String,
    /// Player B's name.
    pub b: String,
    /// Games played.
    pub games: u32,
    /// The board (rings).
    pub board: usize,
    /// Whether the blitz marble set was used.
    pub blitz: bool,
    /// The match's seed.
    pub seed: u64,
    /// A's wins.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// A's losses.
    pub losses: u32,
    /// A's mean score (wins 1, draws ½).
    pub score: f64,
    /// Elo of A over B.
    pub elo: f64,
    /// Low end of its 95% interval.
    pub elo_low: f64,
    /// High end of its 95% interval.
    pub elo_high: f64,
    /// Wall time, in seconds.
    pub seconds: f64,
    /// The file of the game records, if written.
    pub out: Option<PathBuf>,
    /// The time per move of the match, in seconds, if it had one.
    pub move_time: Option<f64>,
    /// Threads of each network player's search ([`MatchSettings::search_threads`]).
    pub search_threads: usize,
    /// What A did: moves, seconds and CPU seconds choosing them, nodes or simulations searched.
    pub a_effort: Effort,
    /// What B did.
    pub b_effort: Effort,
}

/// Plays `job`: checks the settings, creates the records file (refused when it exists), loads
/// each network once (on `job.inference`), plays the games on a thread pool (`on_game` hears of
/// each as it ends) and writes each record as its turn comes. Setting `stop` ends it with
/// [`MatchError::Stopped`]; the games finished by then are in the file.
pub fn play_match(
    job: &MatchJob,
    on_game: &(dyn Fn(&MatchGame) + Sync),
    stop: &AtomicBool,
) -> Result<MatchSummary, JobError> {
    let spec = |e: zertz_arena::players::SpecError| JobError::Match(MatchError::Spec(e));
    let a: PlayerSpec = job.a.parse().map_err(spec)?;
    let b: PlayerSpec = job.b.parse().map_err(spec)?;
    let mut config = MatchConfig::with(a, b, job.settings.clone());
    let (variant, out) = (job.settings.variant(), &job.settings.out);
    // Sizes first: nothing loads or starts for a match that cannot be played.
    zertz_arena::matches::check_sizes(&config)?;
    if let Some(path) = out {
        check_new_file(path).map_err(|source| JobError::Output { path: path.clone(), source })?;
    }
    let networks = [&config.a, &config.b].into_iter().filter_map(PlayerSpec::network);
    for (key, network) in
        zertz_model::inference::load_networks(networks, Some(variant), &job.inference)?
    {
        config.models.insert_key(key, network.evaluator);
    }
    let search_threads = job.settings.search_threads();
    config.models = std::mem::take(&mut config.models).with_search_threads(search_threads);
    let writer = match out {
        // Unbuffered: each record reaches the file with one write as its game ends.
        Some(path) => Some(RecordWriter::new(
            create_new_file(path)
                .map_err(|source| JobError::Output { path: path.clone(), source })?,
        )),
        None => None,
    };
    // The first write that failed: it stops the match.
    let write_failure: Mutex<Option<std::io::Error>> = Mutex::new(None);
    let started = Instant::now();
    let result = zertz_arena::matches::run_match_until(
        &config,
        &|game| {
            on_game(game);
            let Some(w) = &writer else { return Ok(()) };
            w.add(game).map_err(|e| {
                let message = e.to_string();
                write_failure.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(e);
                MatchError::Refused(message)
            })
        },
        stop,
    );
    let seconds = started.elapsed().as_secs_f64();
    // The games finished are written whatever happened, stop and failures included.
    let finished = writer.map(RecordWriter::finish).transpose();
    let out_path = || out.clone().unwrap_or_default();
    if let Some(source) = write_failure.into_inner().unwrap_or_else(PoisonError::into_inner) {
        return Err(JobError::Records { path: out_path(), source });
    }
    let result = result?;
    finished.map_err(|source| JobError::Records { path: out_path(), source })?;
    let elo = result.elo();
    Ok(MatchSummary {
        a: result.a.clone(),
        b: result.b.clone(),
        games: result.games(),
        board: variant.board.rings(),
        blitz: job.settings.blitz,
        seed: job.settings.seed,
        wins: result.wins,
        draws: result.draws,
        losses: result.losses,
        score: result.score(),
        elo: elo.diff,
        elo_low: elo.low,
        elo_high: elo.high,
        seconds,
        out: out.clone(),
        move_time: job.settings.move_time().map(|t| t.as_secs_f64()),
        search_threads,
        a_effort: result.a_effort,
        b_effort: result.b_effort,
    })
}

/// Measures the player of `spec` as [`zertz_arena::bench::bench_player`] does on each of
/// `boards` (None: [`DEFAULT_BENCH_BOARDS`], those of them its networks play), with each count
/// of `threads` search threads, its network (if any) loaded once per board as `inference` says.
/// Setting `stop` ends it ([`BenchError::Stopped`]).
pub fn bench_player(
    spec: &str,
    boards: Option<&[Board]>,
    threads: &[usize],
    move_time: Duration,
    searches: u32,
    inference: &Inference,
    stop: &Arc<AtomicBool>,
) -> Result<Vec<BenchPlayerRow>, JobError> {
    let parsed: PlayerSpec = spec.parse().map_err(|e| JobError::Bench(BenchError::Spec(e)))?;
    // Before a network is loaded for nothing.
    zertz_arena::bench::check_player(&parsed)?;
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for &board in boards.unwrap_or(&DEFAULT_BENCH_BOARDS) {
        let variant = Variant::new(board, MarbleSet::Standard);
        let mut models = Models::new();
        let networks =
            match zertz_model::inference::load_networks(parsed.network(), Some(variant), inference)
            {
                // Boards not asked for that a network does not play are left out.
                Err(e @ ModelError::WrongBoard { .. }) if boards.is_none() => {
                    skipped.push(e);
                    continue;
                }
                loaded => loaded?,
            };
        for (key, network) in networks {
            models.insert_key(key, network.evaluator);
        }
        rows.extend(zertz_arena::bench::bench_player(
            &parsed, &models, board, threads, move_time, searches, stop,
        )?);
    }
    match skipped.pop() {
        // No default board at all: say why for the last.
        Some(e) if rows.is_empty() => Err(e.into()),
        _ => Ok(rows),
    }
}

/// The boards [`bench_player`] measures unless told: the smallest and the largest.
pub const DEFAULT_BENCH_BOARDS: [Board; 2] = [Board::R37, Board::R61];

/// Refuses a path for a new output file that exists (a FIFO or a device included: nothing is
/// ever replaced, and a FIFO is never opened), saying what it is.
pub fn check_new_file(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(meta) => {
            let what = if meta.is_file() {
                "a file"
            } else {
                zertz_env::files::file_kind(&meta.file_type())
            };
            Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("{what} of that name exists (nothing is ever replaced): give a new file"),
            ))
        }
    }
}

/// Creates a new file for output: [`check_new_file`], then created with `create_new`, so that a
/// file that appears meanwhile is not replaced either (nor a FIFO opened).
pub fn create_new_file(path: &Path) -> std::io::Result<std::fs::File> {
    check_new_file(path)?;
    std::fs::OpenOptions::new().write(true).create_new(true).open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            std::io::Error::new(
                e.kind(),
                "it appeared meanwhile (nothing is ever replaced): give a new file",
            )
        } else {
            e
        }
    })
}
