//! `zertz`: the command-line program of the zertz workspace.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use serde::Serialize;
use zertz_env::sgf::Record;
use zertz_env::{Board, Marble, MarbleSet, Player, Position, Variant, perft};

/// Exit status of a failure met while working: a record that breaks the rules, a network that
/// fails or answers NaN during a match, a file that cannot be written.
const EXIT_FAILED: u8 = 1;
/// Exit status of bad arguments or settings (clap's own status for them).
const EXIT_USAGE: u8 = 2;
/// Exit status of an internal error (a bug: a panic), as sysexits' `EX_SOFTWARE`.
const EXIT_INTERNAL: u8 = 70;

/// ZÈRTZ rules engine tools.
#[derive(Parser, Debug)]
#[command(
    name = "zertz",
    version,
    about,
    max_term_width = 100,
    after_help = "Exit status: 0 success; 1 a failure while working (a record that breaks the \
                  rules, a network that fails); 2 bad arguments or settings; 70 an internal error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Count whole-turn move sequences from a position, one line per depth: `1 1944`.
    Perft {
        #[command(flatten)]
        position: PositionArgs,
        /// Deepest level to count.
        #[arg(long, short)]
        depth: u32,
        /// Also print the count below each first move at the deepest level.
        #[arg(long)]
        divide: bool,
    },
    /// Replay boardspace.net records (.sgf files, or folders of them) through the rules engine.
    Replay {
        /// Print one JSON object per game instead of a readable summary.
        #[arg(long)]
        json: bool,
        /// Record files or folders (every *.sgf directly inside a folder, in name order).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Self-play, writing training shards and game records: with an exported network (--model)
    /// or a built-in evaluator (uniform: the search's own cost; rollout).
    Selfplay {
        /// Settings (see configs/selfplay.toml); the defaults without it.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Folder for shards (shard-*.npz) and records (games-*.jsonl).
        #[arg(long, default_value = "selfplay-out")]
        out: PathBuf,
        /// Evaluator without a model: uniform or rollout.
        #[arg(long, default_value = "rollout", conflicts_with = "model")]
        evaluator: String,
        /// An exported network (zertz.export) to guide the search.
        #[arg(long)]
        model: Option<PathBuf>,
        #[command(flatten)]
        device: DeviceArgs,
        /// Games to play (overrides the config).
        #[arg(long)]
        games: Option<u32>,
        /// Worker threads (overrides the config; 0: every core; at most 1024).
        #[arg(long, value_parser = parse_threads)]
        threads: Option<usize>,
        /// Seed (overrides the config).
        #[arg(long)]
        seed: Option<u64>,
        /// Print the summary as one JSON object.
        #[arg(long)]
        json: bool,
        /// Only check the settings (config file and options) and exit.
        #[arg(long)]
        check: bool,
    },
    /// Train a network: runs `python -m zertz train ARGS...` (the training loop is Python), with
    /// $ZERTZ_PYTHON, else the repository's .venv/bin/python, else python3.
    ///
    /// Example: zertz train --config configs/train/default.toml --run runs/default
    #[command(disable_help_flag = true)]
    Train {
        /// Arguments of `python -m zertz train` (--config FILE [--run FOLDER]).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Exported networks: show the metadata of one, or run it on positions.
    #[command(subcommand)]
    Model(ModelCommand),
    /// Convert game records (JSON lines of `zertz selfplay` or `zertz match`) to boardspace SGF
    /// files, one per game, named GAME.sgf (37, 48 and 61 rings, standard marbles).
    Sgf {
        /// A JSON-lines records file.
        records: PathBuf,
        /// Folder for the .sgf files.
        #[arg(long, default_value = "sgf")]
        out: PathBuf,
    },
    /// Play against the engine in the terminal: type moves in notation, `undo`, `moves`, `quit`.
    Play {
        /// The engine: random, greedy, mcts:SIMS (rollout MCTS), uniform:SIMS or nn:MODEL[:SIMS].
        #[arg(long, default_value = "mcts:1000")]
        opponent: String,
        /// Play against this exported network (the same as --opponent nn:MODEL:SIMS).
        #[arg(long, conflicts_with = "opponent")]
        model: Option<PathBuf>,
        /// Simulations per move of the network given with --model (at most 1048576).
        #[arg(
            long,
            requires = "model",
            default_value_t = zertz_arena::players::DEFAULT_NEURAL_SIMULATIONS,
            value_parser = clap::value_parser!(u32)
                .range(1..=i64::from(zertz_arena::players::MAX_SIMULATIONS))
        )]
        simulations: u32,
        #[command(flatten)]
        device: DeviceArgs,
        /// Board size: 37, 40, 43, 44, 48 or 61 rings.
        #[arg(long, default_value_t = Board::R37)]
        board: Board,
        /// Use the blitz marble set.
        #[arg(long)]
        blitz: bool,
        /// Let the engine move first.
        #[arg(long)]
        engine_first: bool,
        /// Seed of the engine.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Play a match between two players and report the score and the Elo difference.
    ///
    /// Players: random, greedy, mcts:SIMS (rollout MCTS), uniform:SIMS, nn:MODEL[:SIMS] (an
    /// exported network, 400 simulations by default). Player A moves first in the even games, B in
    /// the odd ones.
    Match {
        /// Settings file (see configs/match.toml); the options below override it.
        #[arg(long)]
        config: Option<PathBuf>,
        /// A player, twice: A then B.
        #[arg(long = "player", num_args = 1, value_name = "SPEC")]
        players: Vec<String>,
        /// Number of games (at most 16777216) [default: 100].
        #[arg(long, value_parser = parse_match_games)]
        games: Option<usize>,
        /// Board size: 37, 40, 43, 44, 48 or 61 rings [default: 37].
        #[arg(long)]
        board: Option<Board>,
        /// Use the blitz marble set (5/7/9) instead of the standard one (6/8/10).
        #[arg(long)]
        blitz: bool,
        /// Seed of the match (players and games are seeded from it) [default: 0].
        #[arg(long)]
        seed: Option<u64>,
        /// Worker threads (0: one per core; at most 1024) [default: 0].
        #[arg(long, value_parser = parse_threads)]
        threads: Option<usize>,
        /// Write every game as a JSON line to this file.
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        device: DeviceArgs,
        /// Print the result as one JSON object.
        #[arg(long)]
        json: bool,
        /// Play this many random single actions before the players take over (the same opening
        /// for both games of a pair, A on each side once): varied games between deterministic
        /// players.
        #[arg(long, default_value_t = 0)]
        opening_actions: u32,
    },
    /// Draw a position in the terminal.
    Show {
        #[command(flatten)]
        position: PositionArgs,
        /// Also print the position in the text format and the legal moves.
        #[arg(long)]
        verbose: bool,
    },
    /// Panics on purpose: tests that a panic ends the program with one line and status 70.
    #[command(hide = true, name = "internal-panic-test")]
    InternalPanicTest,
}

#[derive(Subcommand, Debug)]
enum ModelCommand {
    /// Print a model's metadata (JSON) and the device it would run on.
    Info {
        /// The exported model file.
        model: PathBuf,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// Run a model on positions (one per line, in the text format of `zertz show --verbose`)
    /// and print one JSON object per position: the value and the logits of the whole action
    /// space.
    Eval {
        /// The exported model file.
        model: PathBuf,
        /// File of positions, one per line.
        #[arg(long)]
        positions: PathBuf,
        #[command(flatten)]
        device: DeviceArgs,
    },
}

/// Where networks run.
#[derive(Args, Debug, Clone)]
struct DeviceArgs {
    /// Device of the networks: auto (CUDA when available), cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
    /// On the CPU too, run the network on one inference thread that merges the requests of all
    /// search threads (always so on a GPU). By default each CPU search thread runs it itself.
    #[arg(long)]
    shared_inference: bool,
    /// Inference threads per network when one is shared (on a GPU, or with --shared-inference):
    /// while one runs a batch, the next merges and copies its own.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    inference_threads: u16,
}

impl DeviceArgs {
    fn choice(&self) -> Result<zertz_model::DeviceChoice> {
        Ok(self.device.parse()?)
    }

    /// Where and how networks run.
    fn inference(&self) -> Result<zertz_model::Inference> {
        Ok(zertz_model::Inference {
            device: self.choice()?,
            shared: self.shared_inference,
            threads: self.inference_threads,
        })
    }
}

/// `--threads`: a count of worker threads, 0 (one per core) to
/// [`zertz_selfplay::config::MAX_THREADS`], refused before anything starts.
fn parse_threads(s: &str) -> Result<usize, String> {
    let max = zertz_selfplay::config::MAX_THREADS;
    match s.trim().parse::<usize>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!("must be a number of threads from 0 (one per core) to {max}")),
    }
}

/// `match --games`: 0 to [`zertz_arena::matches::MAX_GAMES`].
fn parse_match_games(s: &str) -> Result<usize, String> {
    let max = zertz_arena::matches::MAX_GAMES;
    match s.trim().parse::<usize>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!("must be a number of games from 0 to {max}")),
    }
}

/// An error met while working (a network that fails during a match, a file that cannot be
/// written), as opposed to bad arguments or settings: the program exits with status 1, not 2.
#[derive(Debug)]
struct Failed(anyhow::Error);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for Failed {}

/// `e` as a [`Failed`] error (exit status 1).
fn failed(e: impl Into<anyhow::Error>) -> anyhow::Error {
    anyhow::Error::new(Failed(e.into()))
}

/// Refuses a path that is not a regular file (after symbolic links) before anything opens it:
/// opening a FIFO waits for a writer forever, and a device may never end.
fn check_regular_file(path: &Path) -> Result<()> {
    zertz_env::files::check_regular(path).with_context(|| format!("cannot read {}", path.display()))
}

/// The text of a file named by the user: a regular file only (see [`check_regular_file`]).
fn read_text_file(path: &Path) -> Result<String> {
    check_regular_file(path)?;
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Where a position comes from: a start position, optionally followed by moves.
#[derive(Args, Debug)]
struct PositionArgs {
    /// Board size: 37, 40, 43, 44, 48 or 61 rings.
    #[arg(long, default_value_t = Board::R37)]
    board: Board,
    /// Use the blitz marble set (5/7/9) instead of the standard one (6/8/10).
    #[arg(long)]
    blitz: bool,
    /// Start from a position in the text format instead (board and marble set come from it).
    #[arg(long, conflicts_with_all = ["board", "blitz"])]
    position: Option<String>,
    /// Moves to play first, in notation, separated by spaces: "Wd4,a1 b2xd4 ...".
    #[arg(long, default_value = "")]
    moves: String,
}

impl PositionArgs {
    fn resolve(&self) -> Result<Position> {
        let mut pos = match &self.position {
            Some(text) => Position::from_text(text).context("bad --position")?,
            None => {
                let set = if self.blitz { MarbleSet::Blitz } else { MarbleSet::Standard };
                Position::new(Variant::new(self.board, set), Player::P0)
            }
        };
        for (i, text) in self.moves.split_whitespace().enumerate() {
            let m = pos
                .parse_legal_move(text)
                .with_context(|| format!("move {} ({text}) cannot be played", i + 1))?;
            pos.play_unchecked(&m);
        }
        Ok(pos)
    }
}

/// Where the last panic happened, recorded by the panic hook for the one-line report.
static PANIC_AT: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// The message of a panic's payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic".into())
}

fn main() -> ExitCode {
    // Every failure is an error with one line and a status (see `EXIT_*`). A panic is a bug: as a
    // last line of defence it is caught, reported as one "internal error" line and exits with
    // status 70. The hook only records where it happened, instead of the default report.
    std::panic::set_hook(Box::new(|info| {
        if let Some(at) = info.location() {
            let mut slot = PANIC_AT.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert_with(|| format!("{}:{}", at.file(), at.line()));
        }
    }));
    let cli = Cli::parse();
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_command(cli.command)));
    match result {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            eprintln!("error: {}", one_line(&format!("{e:#}")));
            let failure = e.chain().any(|c| c.is::<Failed>());
            ExitCode::from(if failure { EXIT_FAILED } else { EXIT_USAGE })
        }
        Err(payload) => {
            let at = PANIC_AT.lock().unwrap_or_else(|e| e.into_inner()).take();
            let at = at.map(|a| format!(" (at {a})")).unwrap_or_default();
            eprintln!("internal error: {}{at}", one_line(&panic_message(payload.as_ref())));
            ExitCode::from(EXIT_INTERNAL)
        }
    }
}

/// `text` on one line (the lines of a multi-line message joined by " | ").
fn one_line(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines.join(" | ")
}

fn run_command(command: Command) -> Result<ExitCode> {
    match command {
        Command::Perft { position, depth, divide } => run_perft(&position, depth, divide),
        Command::Replay { json, paths } => run_replay(&paths, json),
        Command::Show { position, verbose } => run_show(&position, verbose),
        Command::Selfplay {
            config,
            out,
            evaluator,
            model,
            device,
            games,
            threads,
            seed,
            json,
            check,
        } => {
            let overrides = SelfplayOverrides { games, threads, seed, check };
            let guide = match model {
                Some(path) => zertz_engine::Guide::Network { path, inference: device.inference()? },
                None => zertz_engine::Guide::builtin(&evaluator)
                    .map_err(|e| anyhow::anyhow!("{e}, or give --model"))?,
            };
            run_selfplay(config.as_deref(), &out, &guide, overrides, json)
        }
        Command::Train { args } => run_train(&args),
        Command::Model(ModelCommand::Info { model, device }) => run_model_info(&model, &device),
        Command::Model(ModelCommand::Eval { model, positions, device }) => {
            run_model_eval(&model, &positions, &device)
        }
        Command::Sgf { records, out } => run_sgf(&records, &out),
        Command::Play {
            opponent,
            model,
            simulations,
            device,
            board,
            blitz,
            engine_first,
            seed,
        } => {
            let opponent = match model {
                Some(m) => format!("nn:{}:{simulations}", m.display()),
                None => opponent,
            };
            run_play(&opponent, &device, board, blitz, engine_first, seed)
        }
        Command::Match {
            config,
            players,
            games,
            board,
            blitz,
            seed,
            threads,
            out,
            device,
            json,
            opening_actions,
        } => (|| {
            let file = match &config {
                Some(path) => {
                    check_regular_file(path)?;
                    zertz_arena::config::MatchFileConfig::from_file(path)?
                }
                None => zertz_arena::config::MatchFileConfig::default(),
            };
            if players.is_empty() && config.is_none() {
                bail!("give two players (--player A --player B) or --config FILE");
            }
            let players = if players.is_empty() { file.players } else { players };
            let out = out.or(file.out);
            let settings = MatchSettings {
                players,
                games: games.unwrap_or(file.games),
                board: board.unwrap_or(file.board),
                blitz: blitz || file.blitz,
                seed: seed.unwrap_or(file.seed),
                threads: threads.unwrap_or(file.threads),
                out,
                json,
                opening_actions,
            };
            run_match(&settings, &device)
        })(),
        Command::InternalPanicTest => panic!("internal-panic-test panics on purpose"),
    }
}

fn run_perft(args: &PositionArgs, depth: u32, divide: bool) -> Result<ExitCode> {
    let pos = args.resolve()?;
    let mut out = std::io::stdout().lock();
    for d in 1..=depth {
        if divide && d == depth {
            let mut total = 0;
            for (m, n) in zertz_env::divide(&pos, d) {
                writeln!(out, "{} {n}", pos.move_to_string(&m))?;
                total += n;
            }
            writeln!(out, "{d} {total}")?;
        } else {
            writeln!(out, "{d} {}", perft(&pos, d))?;
        }
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

fn run_show(args: &PositionArgs, verbose: bool) -> Result<ExitCode> {
    let pos = args.resolve()?;
    print!("{}", pos.diagram());
    if verbose {
        println!("position: {}", pos.to_text());
        let moves: Vec<String> = pos.legal_moves().iter().map(|m| pos.move_to_string(m)).collect();
        println!("{} legal moves: {}", moves.len(), moves.join(" "));
    }
    Ok(ExitCode::SUCCESS)
}

/// The `--json` line of one replayed record.
#[derive(Serialize)]
struct GameLine<'a> {
    file: &'a str,
    ok: bool,
    board: usize,
    turns: usize,
    winner: Option<String>,
    end: &'static str,
    captures: Captures,
    moves: Vec<String>,
    legal_counts: &'a [u64],
}

#[derive(Serialize)]
#[allow(non_snake_case)]
struct Captures {
    P0: [u8; 3],
    P1: [u8; 3],
}

#[derive(Serialize)]
struct ErrorLine<'a> {
    file: &'a str,
    ok: bool,
    error: String,
}

/// Expands folders into their .sgf files, keeping the paths as given.
fn record_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("cannot list {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x.eq_ignore_ascii_case("sgf")))
                .collect();
            inside.sort();
            files.extend(inside);
        } else {
            files.push(p.clone());
        }
    }
    Ok(files)
}

fn replay_file(path: &Path) -> Result<zertz_env::sgf::Replay> {
    // Only a regular file: a FIFO would block the whole batch, a device would never end.
    zertz_env::files::check_regular(path).context("cannot read file")?;
    let bytes = std::fs::read(path).context("cannot read file")?;
    let text = String::from_utf8_lossy(&bytes);
    let record = Record::parse(&text)?;
    Ok(record.replay()?)
}

fn run_replay(paths: &[PathBuf], json: bool) -> Result<ExitCode> {
    let files = record_files(paths)?;
    let bar = if std::io::stderr().is_terminal() && files.len() > 1 {
        indicatif::ProgressBar::new(files.len() as u64).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} records {per_sec} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        )
    } else {
        indicatif::ProgressBar::hidden()
    };
    let mut out = std::io::stdout().lock();
    let (mut ok, mut failed, mut turns) = (0usize, 0usize, 0usize);
    let mut by_end = std::collections::BTreeMap::<&str, usize>::new();
    let mut by_board = std::collections::BTreeMap::<usize, usize>::new();
    for file in &files {
        let name = file.to_string_lossy();
        match replay_file(file) {
            Ok(replay) => {
                ok += 1;
                let pos = replay.game.position();
                let n = replay.game.moves().len();
                turns += n;
                *by_end.entry(replay.end.name()).or_default() += 1;
                *by_board.entry(pos.board().rings()).or_default() += 1;
                let caps = |p: Player| Marble::ALL.map(|m| pos.captures(p)[m]);
                if json {
                    let line = GameLine {
                        file: &name,
                        ok: true,
                        board: pos.board().rings(),
                        turns: n,
                        winner: replay.winner.map(|p| p.to_string()),
                        end: replay.end.name(),
                        captures: Captures { P0: caps(Player::P0), P1: caps(Player::P1) },
                        moves: replay.notation(),
                        legal_counts: &replay.legal_counts,
                    };
                    writeln!(out, "{}", serde_json::to_string(&line)?)?;
                } else {
                    let result = match replay.winner {
                        Some(p) => format!("{p} wins by {}", replay.end),
                        None => replay.end.to_string(),
                    };
                    bar.suspend(|| {
                        writeln!(
                            out,
                            "{name}: {} rings, {n} turns, {result}, captures P0 {} P1 {}",
                            pos.board().rings(),
                            pos.captures(Player::P0),
                            pos.captures(Player::P1)
                        )
                    })?;
                }
            }
            Err(e) => {
                failed += 1;
                if json {
                    let line = ErrorLine { file: &name, ok: false, error: format!("{e:#}") };
                    writeln!(out, "{}", serde_json::to_string(&line)?)?;
                } else {
                    bar.suspend(|| writeln!(out, "{name}: error: {e:#}"))?;
                }
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if !json {
        let boards: Vec<String> = by_board.iter().map(|(b, n)| format!("{n} on {b}")).collect();
        let ends: Vec<String> = by_end.iter().map(|(e, n)| format!("{n} {e}")).collect();
        writeln!(
            out,
            "\n{} records: {ok} replayed, {failed} failed; {turns} turns; boards: {}; ends: {}",
            files.len(),
            boards.join(", "),
            ends.join(", ")
        )?;
    }
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// A match, from the command line over its config file.
struct MatchSettings {
    players: Vec<String>,
    games: usize,
    board: Board,
    blitz: bool,
    seed: u64,
    threads: usize,
    out: Option<PathBuf>,
    json: bool,
    opening_actions: u32,
}

fn run_match(settings: &MatchSettings, device: &DeviceArgs) -> Result<ExitCode> {
    let MatchSettings {
        ref players,
        games,
        board,
        blitz,
        seed,
        threads,
        ref out,
        json,
        opening_actions,
    } = *settings;
    let [a, b] = players.as_slice() else {
        bail!("give exactly two players (--player A --player B), not {}", players.len());
    };
    let set = if blitz { MarbleSet::Blitz } else { MarbleSet::Standard };
    let job = zertz_engine::MatchJob {
        games,
        variant: Variant::new(board, set),
        seed,
        threads,
        opening_actions,
        out: out.clone(),
        inference: device.inference()?,
        ..zertz_engine::MatchJob::new(a.clone(), b.clone())
    };
    let bar = if std::io::stderr().is_terminal() && games > 1 {
        indicatif::ProgressBar::new(games as u64).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} games {elapsed} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        )
    } else {
        indicatif::ProgressBar::hidden()
    };
    let never = std::sync::atomic::AtomicBool::new(false);
    let result = zertz_engine::play_match(&job, &|_| bar.inc(1), &never).map_err(engine_error)?;
    bar.finish_and_clear();
    let mut stdout = std::io::stdout().lock();
    if json {
        writeln!(stdout, "{}", serde_json::to_string(&result)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let secs = result.seconds;
    writeln!(
        stdout,
        "{} vs {}: {} games on {}, seed {seed}, {secs:.1} s",
        result.a, result.b, result.games, job.variant
    )?;
    writeln!(
        stdout,
        "{}: {} wins, {} draws, {} losses (score {:.3})",
        result.a, result.wins, result.draws, result.losses, result.score
    )?;
    writeln!(
        stdout,
        "Elo of {} over {}: {:+.0} ± {:.0} (95%: {:+.0} to {:+.0})",
        result.a,
        result.b,
        result.elo,
        (result.elo_high - result.elo_low) / 2.0,
        result.elo_low,
        result.elo_high
    )?;
    Ok(ExitCode::SUCCESS)
}

/// An engine error with its exit status: failures while working 1, refusals 2.
fn engine_error(e: zertz_engine::EngineError) -> anyhow::Error {
    if e.is_failure_while_working() { failed(e) } else { e.into() }
}

/// Command-line settings of `zertz selfplay` over its config file.
struct SelfplayOverrides {
    games: Option<u32>,
    threads: Option<usize>,
    seed: Option<u64>,
    /// Stop after checking the settings.
    check: bool,
}

fn run_selfplay(
    config: Option<&Path>,
    out: &Path,
    guide: &zertz_engine::Guide,
    overrides: SelfplayOverrides,
    json: bool,
) -> Result<ExitCode> {
    use std::sync::atomic::Ordering;
    use zertz_selfplay::config::SelfPlayConfig;
    use zertz_selfplay::driver::Progress;
    let mut cfg = match config {
        Some(path) => {
            check_regular_file(path)?;
            SelfPlayConfig::from_file(path)?
        }
        None => SelfPlayConfig::default(),
    };
    if let Some(g) = overrides.games {
        cfg.games = g;
    }
    if let Some(t) = overrides.threads {
        cfg.threads = t;
    }
    if let Some(s) = overrides.seed {
        cfg.seed = s;
    }
    cfg.validate()?;
    if overrides.check {
        println!("settings ok");
        return Ok(ExitCode::SUCCESS);
    }
    let progress = Progress::default();
    let started = std::time::Instant::now(); // for the progress bar's rate
    let summary = std::thread::scope(|scope| {
        let worker = scope.spawn(|| zertz_engine::selfplay(&cfg, guide, out, &progress));
        if std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(cfg.games as u64).with_style(
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} games {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            while !worker.is_finished() {
                std::thread::sleep(std::time::Duration::from_millis(200));
                let secs = started.elapsed().as_secs_f64().max(1e-9);
                let evals = progress.evaluations.load(Ordering::Relaxed);
                let batches = progress.batches.load(Ordering::Relaxed).max(1);
                bar.set_position(progress.games.load(Ordering::Relaxed));
                bar.set_message(format!(
                    "{:.0} moves/s, {:.0} evals/s, mean batch {:.1}",
                    progress.actions.load(Ordering::Relaxed) as f64 / secs,
                    evals as f64 / secs,
                    evals as f64 / batches as f64
                ));
            }
            bar.finish_and_clear();
        }
        // A panic of the worker is a bug: on to `main`, which reports it as an internal error.
        worker.join().unwrap_or_else(|payload| std::panic::resume_unwind(payload))
    })
    // Failures while playing (a network that fails, a disk that fills) exit with status 1;
    // settings, models and an output folder already in use are refused with status 2.
    .map_err(engine_error)?;
    if json {
        println!("{}", serde_json::to_string(&summary)?);
        return Ok(ExitCode::SUCCESS);
    }
    let secs = summary.seconds;
    if let (Some(busy), Some(share)) = (summary.network_seconds, summary.network_share) {
        println!(
            "network: {busy:.1} s of forward passes over {secs:.1} s: {:.0}% of the time",
            100.0 * share
        );
    }
    println!(
        "{} games in {secs:.1} s: first player {} wins, second {} wins, {} draws; {} samples in {} \
         shards under {}; mean batch {:.1}; false resignations {}/{}",
        summary.games,
        summary.first_wins,
        summary.second_wins,
        summary.draws,
        summary.samples,
        summary.shards.len(),
        out.display(),
        summary.mean_batch,
        summary.false_resignations,
        summary.playouts_checked
    );
    Ok(ExitCode::SUCCESS)
}

fn run_play(
    opponent: &str,
    device: &DeviceArgs,
    board: Board,
    blitz: bool,
    engine_first: bool,
    seed: u64,
) -> Result<ExitCode> {
    use std::io::BufRead;
    use zertz_arena::players::PlayerSpec;
    let spec: PlayerSpec = opponent.parse().map_err(anyhow::Error::msg)?;
    let mut models = zertz_arena::Models::new();
    let inference = device.inference()?;
    for (path, network) in
        zertz_model::inference::load_networks(spec.model(), board, &inference, 1)?
    {
        models.insert(path, network.evaluator);
    }
    let mut engine = spec.build(seed, &models).map_err(anyhow::Error::msg)?;
    let set = if blitz { MarbleSet::Blitz } else { MarbleSet::Standard };
    let (you, them) =
        if engine_first { (Player::P1, Player::P0) } else { (Player::P0, Player::P1) };
    let mut game = zertz_env::Game::new(Variant::new(board, set), Player::P0);
    // Positions before each of your turns, for undo.
    let mut history: Vec<zertz_env::Game> = Vec::new();
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    println!(
        "You are {you}; the engine ({}) is {them}. Type a move (Wd4,a1, b4xd6, pass), \
              `moves`, `undo` or `quit`.",
        engine.name()
    );
    loop {
        // The engine plays until it is your turn or the game ends.
        while !game.is_over() && game.position().turn() == them {
            let before = *game.position();
            let action = engine.choose(&before).map_err(failed)?;
            println!("{them} plays {}", before.action_to_string(&action));
            game.play_action(&action).map_err(|e| anyhow::anyhow!("the engine played {e}"))?;
            engine.observe(&before, &action);
        }
        print!("\n{}", game.position().diagram());
        if let Some(outcome) = game.outcome() {
            println!(
                "{}",
                match outcome.winner() {
                    Some(p) if p == you => "You win.",
                    Some(_) => "The engine wins.",
                    None => "Draw.",
                }
            );
            return Ok(ExitCode::SUCCESS);
        }
        print!("{you}> ");
        std::io::stdout().flush()?;
        let Some(line) = lines.next() else { return Ok(ExitCode::SUCCESS) };
        let line = line?;
        let input = line.trim();
        let pos = *game.position();
        match input {
            "" => continue,
            "quit" | "exit" => return Ok(ExitCode::SUCCESS),
            "moves" => {
                let moves: Vec<String> =
                    pos.legal_moves().iter().map(|m| pos.move_to_string(m)).collect();
                println!("{} legal moves: {}", moves.len(), moves.join(" "));
                continue;
            }
            "undo" => {
                match history.pop() {
                    Some(g) => {
                        game = g;
                        // The engine's tree follows the game only forwards: start it afresh.
                        engine = spec.build(seed, &models).map_err(anyhow::Error::msg)?;
                        println!("Undone.");
                    }
                    None => println!("Nothing to undo."),
                }
                continue;
            }
            _ => {}
        }
        let before = game.clone();
        // A whole move, or a single hop of a chain.
        let result = match pos.parse_legal_move(input) {
            Ok(m) => {
                let mut p = pos;
                let mut ok = true;
                for a in pos.move_actions(&m) {
                    ok &= game.play_action(&a).is_ok();
                    engine.observe(&p, &a);
                    p.play_action_unchecked(&a);
                }
                ok
            }
            Err(_) => match pos.parse_legal_action(input) {
                Ok(a) => {
                    let ok = game.play_action(&a).is_ok();
                    engine.observe(&pos, &a);
                    ok
                }
                Err(e) => {
                    let moves: Vec<String> =
                        pos.legal_moves().iter().map(|m| pos.move_to_string(m)).collect();
                    let shown = moves.iter().take(40).cloned().collect::<Vec<_>>().join(" ");
                    let more = if moves.len() > 40 { " …" } else { "" };
                    println!("{e}. Legal moves ({}): {shown}{more}", moves.len());
                    false
                }
            },
        };
        if result && before.position().turn() == you {
            history.push(before);
        }
    }
}

fn run_train(args: &[String]) -> Result<ExitCode> {
    let python = match std::env::var_os("ZERTZ_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => {
            // target/release/zertz -> the repository's .venv.
            let exe = std::env::current_exe().context("cannot find this program's path")?;
            let venv = exe.ancestors().nth(3).map(|root| root.join(".venv/bin/python"));
            venv.filter(|p| p.exists()).unwrap_or_else(|| PathBuf::from("python3"))
        }
    };
    // The training loop runs the engine in its own process (the Python module), not this program.
    let mut command = std::process::Command::new(&python);
    command.args(["-m", "zertz", "train"]).args(args);
    let status = command
        .status()
        .with_context(|| format!("cannot run {} (set ZERTZ_PYTHON)", python.display()))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}

/// `cpu` or `cuda:N`, as --device takes them.
fn device_name(d: zertz_model::Device) -> String {
    match d {
        zertz_model::Device::Cuda(i) => format!("cuda:{i}"),
        other => format!("{other:?}").to_ascii_lowercase(),
    }
}

fn run_model_info(path: &Path, device: &DeviceArgs) -> Result<ExitCode> {
    let model = zertz_model::Model::load(path, device.choice()?)?;
    let m = model.metadata();
    let info = serde_json::json!({
        "path": path.display().to_string(), "device": device_name(model.device()),
        "cuda_available": zertz_model::cuda_available(), "name": m.name, "boards": m.boards,
        "encoding_version": m.encoding_version, "format_version": m.format_version,
        "step": m.step, "action_space": m.action_space, "network": m.network,
    });
    println!("{}", serde_json::to_string_pretty(&info)?);
    Ok(ExitCode::SUCCESS)
}

fn run_model_eval(path: &Path, positions: &Path, device: &DeviceArgs) -> Result<ExitCode> {
    use zertz_env::ActionSpace;
    use zertz_env::encode::{GLOBALS, Shape};
    let text = read_text_file(positions)?;
    let model = zertz_model::Model::load(path, device.choice()?)?;
    let mut stdout = std::io::stdout().lock();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let pos = Position::from_text(line.trim())
            .with_context(|| format!("{} line {}", positions.display(), i + 1))?;
        let board = pos.board();
        let shape = Shape::of(board);
        let (mut planes, mut globals) = (vec![0.0; shape.planes_len()], vec![0.0; GLOBALS]);
        pos.encode(&mut planes, &mut globals);
        let mut logits = vec![0.0; ActionSpace::new(board).len()];
        let mut mask = vec![false; logits.len()];
        pos.legal_action_mask(&mut mask);
        let mut value = [0.0];
        model.forward_masked(board, &planes, &globals, &mask, &mut logits, &mut value).map_err(
            |e| match e {
                // The network itself failed: status 1 (a board it was not trained for: 2).
                zertz_model::ModelError::Forward { .. }
                | zertz_model::ModelError::NonFinite { .. } => failed(e),
                other => other.into(),
            },
        )?;
        writeln!(stdout, "{}", serde_json::json!({ "value": value[0], "logits": logits }))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn run_sgf(records: &Path, out: &Path) -> Result<ExitCode> {
    let text = read_text_file(records)?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let (mut written, mut failed) = (0, 0);
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let result = (|| -> Result<String> {
            let record = zertz_selfplay::records::GameRecord::from_json(line)?;
            let sgf = record.to_sgf().map_err(anyhow::Error::msg)?;
            let path = out.join(format!("{}.sgf", record.game));
            std::fs::write(&path, sgf)?;
            Ok(path.display().to_string())
        })();
        match result {
            Ok(_) => written += 1,
            Err(e) => {
                failed += 1;
                eprintln!("{}:{}: {e:#}", records.display(), i + 1);
            }
        }
    }
    println!("{written} SGF files written to {}, {failed} lines failed", out.display());
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
