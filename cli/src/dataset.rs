//! `zertz dataset`: training shards from game records.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use zertz_env::Board;
use zertz_selfplay::dataset::{DatasetConfig, ROBOTS, build};

/// The arguments of `zertz dataset`.
#[derive(Args, Debug)]
pub struct DatasetArgs {
    /// Record files, folders and archives (.tar.xz, .tar.gz, .tar, .zip), as `zertz replay`
    /// reads them.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The folder to write (new or empty): train/ and validation/ shards, games.jsonl and
    /// dataset.json. It is made as .NAME.partial-PID beside it and renamed when complete: a
    /// build that fails or is killed leaves nothing there (the next build removes the
    /// temporary folder of a killed one).
    #[arg(long)]
    pub out: PathBuf,
    /// Boards to keep, comma separated (default: all).
    #[arg(long, value_delimiter = ',')]
    pub boards: Vec<Board>,
    /// Fewest whole turns a game must have.
    #[arg(long, default_value_t = 0)]
    pub min_turns: usize,
    /// Player names to leave out, comma separated (any case).
    #[arg(long, value_delimiter = ',')]
    pub exclude_players: Vec<String>,
    /// Leave out games with one of boardspace's robots (Dumbot, SmartBot, WeakBot).
    #[arg(long)]
    pub exclude_robots: bool,
    /// Ends to keep, comma separated (default: every end of a finished game; a wrong name is
    /// answered with the list).
    #[arg(long, value_delimiter = ',')]
    pub ends: Vec<String>,
    /// Share of games held out for validation (by game, never by position).
    #[arg(long, default_value_t = DatasetConfig::default().validation)]
    pub validation: f64,
    /// Seed of the split.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Samples per shard.
    #[arg(long, default_value_t = DatasetConfig::default().shard_size)]
    pub shard_size: usize,
    /// Stop after this many kept games.
    #[arg(long)]
    pub max_games: Option<u64>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: DatasetArgs) -> Result<ExitCode> {
    let mut exclude = args.exclude_players.clone();
    if args.exclude_robots {
        exclude.extend(ROBOTS.iter().map(|r| r.to_string()));
    }
    let config = DatasetConfig {
        boards: args.boards.clone(),
        min_turns: args.min_turns,
        exclude_players: exclude,
        ends: match args.ends.as_slice() {
            [] => DatasetConfig::default().ends,
            names => zertz_selfplay::dataset::parse_ends(names)?,
        },
        validation: args.validation,
        seed: args.seed,
        shard_size: args.shard_size,
        max_games: args.max_games,
    };
    zertz_selfplay::dataset::validate(&config)?;
    let bar = if std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new_spinner().with_style(
            indicatif::ProgressStyle::with_template("{spinner} {pos} records {per_sec}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        )
    } else {
        indicatif::ProgressBar::hidden()
    };
    let summary = build(&args.paths, &config, &args.out, &|n| {
        if n % 256 == 0 {
            bar.set_position(n);
        }
    })
    .map_err(crate::common::classified)?;

    bar.finish_and_clear();
    for leftover in &summary.removed_leftovers {
        eprintln!(
            "note: removed {}, the temporary folder of a build of {} that was stopped part-way",
            leftover.display(),
            args.out.display()
        );
    }
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
        return Ok(ExitCode::SUCCESS);
    }
    let list = |m: &std::collections::BTreeMap<String, u64>| {
        // Reasons can quote a record's text: shown escaped, as `zertz replay` does.
        let v: Vec<String> =
            m.iter().map(|(k, n)| format!("{n} {}", zertz_archive::printable(k))).collect();
        if v.is_empty() { "none".to_string() } else { v.join(", ") }
    };
    println!(
        "{} records in {:.1} s: {} train games ({} samples), {} validation games ({} samples), \
         {} shards in {}",
        summary.records,
        summary.seconds,
        summary.train_games,
        summary.train_samples,
        summary.validation_games,
        summary.validation_samples,
        summary.shards.len(),
        args.out.display()
    );
    println!("left out: {}", list(&summary.filtered));
    println!("failed: {}; skipped files: {}", list(&summary.failed), summary.skipped_files);
    Ok(ExitCode::SUCCESS)
}
