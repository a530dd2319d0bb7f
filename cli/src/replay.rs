//! `zertz replay`: boardspace.net records replayed through the rules engine.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;
use zertz_env::sgf::Record;
use zertz_env::{Marble, Player};

/// The arguments of `zertz replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Print one JSON object per game instead of a readable summary.
    #[arg(long)]
    pub json: bool,
    /// Record files or folders (every *.sgf directly inside a folder, in name order).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

/// Replays every record and prints a line each.
pub fn run(args: ReplayArgs) -> Result<ExitCode> {
    replay(&args.paths, args.json)
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

fn replay(paths: &[PathBuf], json: bool) -> Result<ExitCode> {
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
