//! `zertz`: the command-line program of the zertz workspace.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use serde::Serialize;
use zertz_env::sgf::Record;
use zertz_env::{Board, Marble, MarbleSet, Player, Position, Variant, perft};

/// ZÈRTZ rules engine tools.
#[derive(Parser, Debug)]
#[command(name = "zertz", version, about, max_term_width = 100)]
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
    /// Play a match between two players and report the score and the Elo difference.
    ///
    /// Players: random, greedy, mcts:SIMS (rollout MCTS), uniform:SIMS. Player A moves first in
    /// the even games, B in the odd ones.
    Match {
        /// A player, twice: A then B.
        #[arg(long = "player", required = true, num_args = 1, value_name = "SPEC")]
        players: Vec<String>,
        /// Number of games.
        #[arg(long, default_value_t = 100)]
        games: usize,
        /// Board size: 37, 40, 43, 44, 48 or 61 rings.
        #[arg(long, default_value_t = 37)]
        board: usize,
        /// Use the blitz marble set (5/7/9) instead of the standard one (6/8/10).
        #[arg(long)]
        blitz: bool,
        /// Seed of the match (players and games are seeded from it).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Worker threads (0: one per core).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Write every game as a JSON line to this file.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Draw a position in the terminal.
    Show {
        #[command(flatten)]
        position: PositionArgs,
        /// Also print the position in the text format and the legal moves.
        #[arg(long)]
        verbose: bool,
    },
}

/// Where a position comes from: a start position, optionally followed by moves.
#[derive(Args, Debug)]
struct PositionArgs {
    /// Board size: 37, 40, 43, 44, 48 or 61 rings.
    #[arg(long, default_value_t = 37)]
    board: usize,
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
                let Some(board) = Board::from_rings(self.board) else {
                    bail!("no {}-ring board: choose 37, 40, 43, 44, 48 or 61", self.board);
                };
                let set = if self.blitz { MarbleSet::Blitz } else { MarbleSet::Standard };
                Position::new(Variant::new(board, set), Player::P0)
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft { position, depth, divide } => run_perft(&position, depth, divide),
        Command::Replay { json, paths } => run_replay(&paths, json),
        Command::Show { position, verbose } => run_show(&position, verbose),
        Command::Match { players, games, board, blitz, seed, threads, out } => {
            run_match(&players, games, board, blitz, seed, threads, out.as_deref())
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
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

fn run_match(
    players: &[String],
    games: usize,
    board: usize,
    blitz: bool,
    seed: u64,
    threads: usize,
    out: Option<&Path>,
) -> Result<ExitCode> {
    use zertz_selfplay::arena::{DEFAULT_MAX_ACTIONS, MatchConfig, run_match};
    let [a, b] = players else {
        bail!("give exactly two players (--player A --player B), not {}", players.len());
    };
    let Some(board) = Board::from_rings(board) else {
        bail!("no {board}-ring board: choose 37, 40, 43, 44, 48 or 61");
    };
    let set = if blitz { MarbleSet::Blitz } else { MarbleSet::Standard };
    let config = MatchConfig {
        a: a.parse().map_err(anyhow::Error::msg)?,
        b: b.parse().map_err(anyhow::Error::msg)?,
        games,
        variant: Variant::new(board, set),
        seed,
        threads,
        max_actions: DEFAULT_MAX_ACTIONS,
    };
    let bar = if std::io::stderr().is_terminal() && games > 1 {
        indicatif::ProgressBar::new(games as u64).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} games {elapsed} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        )
    } else {
        indicatif::ProgressBar::hidden()
    };
    let started = std::time::Instant::now();
    let result = run_match(&config, &|_| bar.inc(1)).map_err(anyhow::Error::msg)?;
    bar.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    if let Some(path) = out {
        result
            .write_records_to(path)
            .with_context(|| format!("cannot write records to {}", path.display()))?;
    }
    let elo = result.elo();
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "{} vs {}: {} games on {}, seed {seed}, {secs:.1} s",
        result.a,
        result.b,
        result.games(),
        config.variant
    )?;
    writeln!(
        stdout,
        "{}: {} wins, {} draws, {} losses (score {:.3})",
        result.a,
        result.wins,
        result.draws,
        result.losses,
        result.score()
    )?;
    writeln!(
        stdout,
        "Elo of {} over {}: {:+.0} ± {:.0} (95%: {:+.0} to {:+.0})",
        result.a,
        result.b,
        elo.diff,
        (elo.high - elo.low) / 2.0,
        elo.low,
        elo.high
    )?;
    Ok(ExitCode::SUCCESS)
}
