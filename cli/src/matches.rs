//! `zertz match`: a match between two players, its score and Elo difference.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;
use zertz_env::{Board, MarbleSet, Variant};

use crate::common::{
    DeviceArgs, check_regular_file, engine_error, parse_match_games, parse_threads,
};

/// The arguments of `zertz match`.
#[derive(Args, Debug)]
pub struct MatchArgs {
    /// Settings file (see configs/match.toml); the options below override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// A player, twice: A then B.
    #[arg(long = "player", num_args = 1, value_name = "SPEC")]
    pub players: Vec<String>,
    /// Number of games (at most 16777216) [default: 100].
    #[arg(long, value_parser = parse_match_games)]
    pub games: Option<usize>,
    /// Board size: 37, 40, 43, 44, 48 or 61 rings [default: 37].
    #[arg(long)]
    pub board: Option<Board>,
    /// Use the blitz marble set (5/7/9) instead of the standard one (6/8/10).
    #[arg(long)]
    pub blitz: bool,
    /// Seed of the match (players and games are seeded from it) [default: 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads (0: one per core; at most 1024) [default: 0].
    #[arg(long, value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Write every game as a JSON line to this file.
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Play this many random single actions before the players take over (the same opening
    /// for both games of a pair, A on each side once): varied games between deterministic
    /// players.
    #[arg(long, default_value_t = 0)]
    pub opening_actions: u32,
    /// The longest a cmd: player's program may take to answer one command, in seconds (past it,
    /// or past 1 MiB, it fails the match and is ended) [default: 30].
    #[arg(long, value_name = "SECONDS", value_parser = parse_answer_time)]
    pub answer_time: Option<std::time::Duration>,
    /// Time per move in seconds for every player that searches (alphabeta, mcts, uniform, nn)
    /// and has no :time= of its own: each search runs until it is spent, instead of counting
    /// simulations or depth. Players of different kinds meet fairly only this way.
    #[arg(long, value_name = "SECONDS", value_parser = parse_move_time, allow_hyphen_values = true)]
    pub move_time: Option<std::time::Duration>,
}

/// A number of seconds on the command line, before its range is checked.
fn seconds(s: &str) -> Result<f64, String> {
    s.trim().parse().map_err(|_| format!("{s:?} is not a number of seconds"))
}

fn parse_move_time(s: &str) -> Result<std::time::Duration, String> {
    zertz_arena::players::check_move_time(seconds(s)?)
}

fn parse_answer_time(s: &str) -> Result<std::time::Duration, String> {
    zertz_arena::command::check_answer_time(seconds(s)?)
}

/// Plays the match the options and the config file describe.
pub fn run(args: MatchArgs) -> Result<ExitCode> {
    let MatchArgs {
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
        answer_time,
        move_time,
    } = args;
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
    let file_answer_time = file.answer_time();
    let file_move_time = file.move_time();
    let players = if players.is_empty() { file.players } else { players };
    let [a, b] = players.as_slice() else {
        bail!("give exactly two players (--player A --player B), not {}", players.len());
    };
    // The options over the config file.
    let set = if blitz || file.blitz { MarbleSet::Blitz } else { MarbleSet::Standard };
    let job = zertz_engine::MatchJob {
        games: games.unwrap_or(file.games),
        variant: Variant::new(board.unwrap_or(file.board), set),
        seed: seed.unwrap_or(file.seed),
        threads: threads.unwrap_or(file.threads),
        opening_actions,
        answer_time: answer_time.unwrap_or(file_answer_time),
        move_time: move_time.or(file_move_time),
        out: out.or(file.out),
        inference: device.inference()?,
        ..zertz_engine::MatchJob::new(a.clone(), b.clone())
    };
    play(&job, json)
}

/// Plays `job` with a progress bar and prints its result.
fn play(job: &zertz_engine::MatchJob, json: bool) -> Result<ExitCode> {
    let (games, seed) = (job.games, job.seed);
    let bar = if std::io::stderr().is_terminal() && games > 1 {
        indicatif::ProgressBar::new(games as u64).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} games {elapsed} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        )
    } else {
        indicatif::ProgressBar::hidden()
    };
    let result = zertz_engine::play_match(job, &|_| bar.inc(1), &crate::STOP).map_err(engine_error);
    bar.finish_and_clear();
    let result = result?;
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
    let elo =
        zertz_arena::matches::Elo { diff: result.elo, low: result.elo_low, high: result.elo_high };
    writeln!(stdout, "Elo of {} over {}: {elo}", result.a, result.b)?;
    if let Some(t) = result.move_time {
        writeln!(stdout, "time per move: {t} s")?;
    }
    for (name, effort) in [(&result.a, &result.a_effort), (&result.b, &result.b_effort)] {
        writeln!(stdout, "{name}: {}", effort.describe())?;
    }
    Ok(ExitCode::SUCCESS)
}
