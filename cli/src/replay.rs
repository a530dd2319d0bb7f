//! `zertz replay`: boardspace.net records replayed through the rules.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use zertz_env::sgf::{Record, SgfError};

use zertz_archive::printable;
use zertz_env::{Marble, Player};

/// The arguments of `zertz replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Print one JSON object per game instead of a readable summary.
    #[arg(long)]
    pub json: bool,
    /// Print only the records that fail and the summary.
    #[arg(long, short, conflicts_with = "json")]
    pub quiet: bool,
    /// Record files, folders (every *.sgf inside, subfolders too, in name order) and archives as
    /// shipped (.tar.xz, .tar.gz, .tar, .zip), read as streams.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

/// Replays every record and prints a line each (a failure's line always), then the summary.
/// Readable lines show names and messages through [`printable`] (they come from the records'
/// makers); `--json` lines escape through serde.
pub fn run(args: ReplayArgs) -> Result<ExitCode> {
    replay(&args.paths, args.json, args.quiet)
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

/// Why a record failed, for the counts by reason: the kind of rule broken, or why it cannot be read.
fn reason(e: &ReplayFailure) -> String {
    match e {
        ReplayFailure::Read(_) => "unreadable file".into(),
        ReplayFailure::Sgf(e) => e.reason(),
        ReplayFailure::Rules(e) => e.kind.name().into(),
    }
}

/// A record that cannot be read or breaks the rules.
#[derive(Debug, thiserror::Error)]
enum ReplayFailure {
    #[error("{0}")]
    Read(String),
    #[error(transparent)]
    Sgf(#[from] SgfError),
    #[error(transparent)]
    Rules(#[from] zertz_env::sgf::ReplayError),
}

fn replay_record(
    bytes: Result<&[u8], &zertz_archive::ArchiveError>,
    count: bool,
) -> Result<zertz_env::sgf::Replay, ReplayFailure> {
    let bytes = bytes.map_err(|e| ReplayFailure::Read(e.to_string()))?;
    let record = Record::parse(&String::from_utf8_lossy(bytes))?;
    Ok(if count { record.replay()? } else { record.replay_moves()? })
}

fn replay(paths: &[PathBuf], json: bool, quiet: bool) -> Result<ExitCode> {
    let started = std::time::Instant::now();
    let hint = zertz_archive::count_hint(paths)?;
    let bar = match hint {
        _ if !std::io::stderr().is_terminal() || hint == Some(1) => {
            indicatif::ProgressBar::hidden()
        }
        Some(n) => indicatif::ProgressBar::new(n).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} records {per_sec} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        ),
        None => indicatif::ProgressBar::new_spinner().with_style(
            indicatif::ProgressStyle::with_template("{spinner} {pos} records {per_sec}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        ),
    };
    let mut out = std::io::stdout().lock();
    let (mut ok, mut failed, mut turns) = (0usize, 0usize, 0usize);
    let mut by_end = BTreeMap::<&str, usize>::new();
    let mut by_board = BTreeMap::<usize, usize>::new();
    let mut by_reason = BTreeMap::<String, usize>::new();
    let mut written: std::io::Result<()> = Ok(());
    let counts = zertz_archive::for_each_record(paths, |record| {
        bar.inc(1);
        let name = record.name;
        let line = match replay_record(record.bytes, json) {
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
                        file: name,
                        ok: true,
                        board: pos.board().rings(),
                        turns: n,
                        winner: replay.winner.map(|p| p.to_string()),
                        end: replay.end.name(),
                        captures: Captures { P0: caps(Player::P0), P1: caps(Player::P1) },
                        moves: replay.notation(),
                        legal_counts: &replay.legal_counts,
                    };
                    Some(serde_json::to_string(&line).unwrap_or_default())
                } else if quiet {
                    None
                } else {
                    let result = match replay.winner {
                        Some(p) => format!("{p} wins by {}", replay.end),
                        None => replay.end.to_string(),
                    };
                    Some(format!(
                        "{}: {} rings, {n} turns, {result}, captures P0 {} P1 {}",
                        printable(name),
                        pos.board().rings(),
                        pos.captures(Player::P0),
                        pos.captures(Player::P1)
                    ))
                }
            }
            Err(e) => {
                failed += 1;
                *by_reason.entry(reason(&e)).or_default() += 1;
                if json {
                    let line = ErrorLine { file: name, ok: false, error: format!("{e:#}") };
                    Some(serde_json::to_string(&line).unwrap_or_default())
                } else {
                    // The message may quote the record (`GM[...]`): escaped like the name.
                    Some(format!("{}: error: {}", printable(name), printable(&format!("{e:#}"))))
                }
            }
        };
        if let Some(line) = line {
            written = bar.suspend(|| writeln!(out, "{line}"));
        }
        if written.is_err() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    })?;
    written?;
    bar.finish_and_clear();
    if !json {
        let seconds = started.elapsed().as_secs_f64();
        let boards: Vec<String> = by_board.iter().map(|(b, n)| format!("{n} on {b}")).collect();
        let ends: Vec<String> = by_end.iter().map(|(e, n)| format!("{n} {e}")).collect();
        writeln!(
            out,
            "\n{} records: {ok} replayed, {failed} failed, {} skipped (not records); {turns} \
             turns; boards: {}; ends: {}; {seconds:.1} s, {:.0} records/s",
            counts.records,
            counts.skipped,
            boards.join(", "),
            ends.join(", "),
            counts.records as f64 / seconds.max(1e-9)
        )?;
        if failed > 0 {
            let mut reasons: Vec<(&String, &usize)> = by_reason.iter().collect();
            reasons.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let reasons: Vec<String> =
                reasons.iter().map(|(r, n)| format!("{n} {}", printable(r))).collect();
            writeln!(out, "failed by reason: {}", reasons.join(", "))?;
        }
    }
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
