//! `zertz`: the command-line program of the zertz workspace. One module per command (its
//! arguments and what it does), and [`common`] for what they share.

// The doc comments of the argument types are clap's help text, where `nn:MODEL[:SIMS]` is the
// grammar of a player, not a link.
#![allow(rustdoc::broken_intra_doc_links)]

mod bench;
mod common;
mod dataset;
mod engine;
mod matches;
mod model;
mod perft;
mod play;
mod replay;
mod selfplay;
mod serve;
mod settings;
mod sgf;
mod show;
mod train;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::common::Failed;

/// Exit status of a failure met while working: a record that breaks the rules, a network that
/// fails or answers NaN during a match, a file that cannot be written.
const EXIT_FAILED: u8 = 1;
/// Exit status of bad arguments or settings (clap's own status for them).
const EXIT_USAGE: u8 = 2;
/// Exit status of an internal error (a bug: a panic), as sysexits' `EX_SOFTWARE`.
const EXIT_INTERNAL: u8 = 70;

/// ZÈRTZ tools: rules, search, matches, self-play and networks.
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
    Perft(perft::PerftArgs),
    /// Replay boardspace.net records (.sgf files, or folders of them) through the rules.
    Replay(replay::ReplayArgs),
    /// Training shards from game records (people's and robots'): one sample per action played,
    /// the result as the value target, split by game into train/ and validation/.
    ///
    /// Example: zertz dataset ../shared/records/boardspace-zertz.tar.xz --out data/human
    Dataset(dataset::DatasetArgs),
    /// Self-play, writing training shards and game records: with a network file (--model)
    /// or a built-in evaluator (uniform: the search's own cost; rollout).
    Selfplay(selfplay::SelfplayArgs),
    /// Train a network: runs `python -m zertz train ARGS...` (the training loop is Python), with
    /// $ZERTZ_PYTHON, else the repository's .venv/bin/python, else python3.
    ///
    /// Example: zertz train --config configs/train/default.toml --run runs/default
    #[command(disable_help_flag = true)]
    Train(train::TrainArgs),
    /// Network files: show the metadata of one (architecture, sizes, checksum), or run it on
    /// positions.
    #[command(subcommand)]
    Model(model::ModelCommand),
    /// Convert game records (JSON lines of `zertz selfplay` or `zertz match`) to boardspace SGF
    /// files, one per game, named GAME.sgf (37, 48 and 61 rings, standard marbles).
    Sgf(sgf::SgfArgs),
    /// Play against the engine in the terminal: type moves in notation, `undo`, `moves`, `quit`.
    Play(play::PlayArgs),
    /// The web board in a browser (it prints its address): play any player by mouse or keyboard
    /// on any board, watch two bots, step through records, see a network's analysis.
    ///
    /// Example: zertz serve --player nn:runs/default/models/best.safetensors:400
    Serve(serve::ServeArgs),
    /// Play a match between two players and report the score and the Elo difference.
    #[command(long_about = common::player_help(
        "Play a match between two players and report the score and the Elo difference.\n\n\
         Players",
        &format!(
            "{}; a cmd: player runs one process of its program per game (\"cmd:zertz engine \
             --player nn:old.safetensors:800\"). --move-time gives a time per move to every searching \
             player without one of its own. Player A moves first in the even games, B in the \
             odd ones.",
            common::spec_defaults()
        ),
    ))]
    Match(matches::MatchArgs),
    /// The engine protocol on standard input and output, for other programs (GTP style:
    /// `genmove`, `play MOVE`, `analyze N`...; docs/engine-protocol.md).
    ///
    /// Example: zertz engine --player nn:runs/default/models/best.safetensors:800
    Engine(engine::EngineArgs),
    /// Draw a position in the terminal.
    Show(show::ShowArgs),
    /// Speed measurements: `zertz bench inference` (the bare network, without search).
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Panics on purpose: tests that a panic ends the program with one line and status 70.
    #[command(hide = true, name = "internal-panic-test")]
    InternalPanicTest,
}

/// Exit status after a second Ctrl-C or SIGTERM (or the first, in a command that cannot stop
/// cleanly), as a shell reports a program ended by SIGINT.
const EXIT_SIGNAL: i32 = 130;

/// Set by the first Ctrl-C, SIGTERM or SIGHUP in a command that stops cleanly (a match: no game
/// starts, the games under way end at their next decision, programs are ended at once).
pub static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Catches Ctrl-C, SIGTERM and SIGHUP for a command that may run `cmd:` players' programs (each in
/// a process group of its own, which the terminal's Ctrl-C does not reach): with `stops_cleanly`
/// the first signal sets [`STOP`]; otherwise, and at the second, every program is ended and the
/// program exits at once with status 130.
fn catch_signals(stops_cleanly: bool) {
    use std::sync::atomic::Ordering;
    let handled = ctrlc::set_handler(move || {
        if stops_cleanly && !STOP.swap(true, Ordering::SeqCst) {
            eprintln!("stopping (again to stop at once)");
            return;
        }
        zertz_arena::players::command::end_all_programs();
        std::process::exit(EXIT_SIGNAL);
    });
    if let Err(e) = handled {
        eprintln!(
            "warning: Ctrl-C cannot be caught ({e}): programs of cmd: players may outlive it"
        );
    }
}

/// Ends a command line that clap refused: help and version as clap prints them (status 0), every
/// error as one line with status 2, clap's first (`error: ...`) with any tip it gives after it
/// on the same line (`--help` shows the usage).
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let text = e.render().to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("error: bad arguments").to_string();
    let tips: Vec<&str> = lines.filter(|l| l.starts_with("tip:")).collect();
    let line = std::iter::once(first.as_str()).chain(tips).collect::<Vec<_>>().join("; ");
    eprintln!("{line}");
    ExitCode::from(2)
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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    match &cli.command {
        Command::Match(_) => catch_signals(true),
        Command::Play(_) | Command::Engine(_) => catch_signals(false),
        // serve catches its own (tokio); the others start no program.
        _ => {}
    }
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_command(cli.command)));
    // Programs whose players were never dropped (a server's abandoned task, a panic) end here.
    zertz_arena::players::command::end_all_programs();
    match result {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            eprintln!("error: {}", one_line(&common::message(&e)));
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
        Command::Perft(args) => perft::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Dataset(args) => dataset::run(args),
        Command::Show(args) => show::run(args),
        Command::Selfplay(args) => selfplay::run(args),
        Command::Train(args) => train::run(args),
        Command::Model(command) => model::run(command),
        Command::Sgf(args) => sgf::run(args),
        Command::Play(args) => play::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Match(args) => matches::run(args),
        Command::Engine(args) => engine::run(args),
        Command::Bench(command) => bench::run(command),
        Command::InternalPanicTest => panic!("internal-panic-test panics on purpose"),
    }
}
