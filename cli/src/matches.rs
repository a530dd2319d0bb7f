//! `zertz match`: a match between two players, its score and Elo difference.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;
use zertz_arena::config::{MatchFileConfig, MatchSettings};
use zertz_settings::Layer;

use crate::common::{DeviceArgs, check_regular_file, classified};
use crate::settings::SettingArgs;

/// The arguments of `zertz match`.
#[derive(Args, Debug)]
pub struct MatchArgs {
    /// Settings file (see configs/match.toml); the options below override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// A player, twice: A then B.
    #[arg(long = "player", num_args = 1, value_name = "SPEC")]
    pub players: Vec<String>,
    /// The match's settings (`MatchSettings`: one option per key of the config file).
    #[command(flatten)]
    pub settings: SettingArgs<MatchSettings>,
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Plays the match the options and the config file describe.
pub fn run(args: MatchArgs) -> Result<ExitCode> {
    let MatchArgs { config, players, settings, device, json } = args;
    let (file, layer) = match &config {
        Some(path) => {
            check_regular_file(path)?;
            let text = zertz_settings::read_text(path)?;
            MatchFileConfig::layer(&text)?
        }
        None => (MatchFileConfig::default(), Layer::new()),
    };
    if players.is_empty() && config.is_none() {
        bail!("give two players (--player A --player B) or --config FILE");
    }
    let players = if players.is_empty() { file.players } else { players };
    let [a, b] = players.as_slice() else {
        bail!("give exactly two players (--player A --player B), not {}", players.len());
    };
    // The options over the config file.
    let settings = zertz_settings::from_layers([layer, settings.given])?;
    let job = zertz_jobs::MatchJob {
        inference: device.inference()?,
        ..zertz_jobs::MatchJob::with(a.clone(), b.clone(), settings)
    };
    play(&job, json)
}

/// Plays `job` with a progress bar and prints its result.
fn play(job: &zertz_jobs::MatchJob, json: bool) -> Result<ExitCode> {
    let (games, seed) = (job.settings.games, job.settings.seed);
    let bar = if std::io::stderr().is_terminal() && games > 1 {
        indicatif::ProgressBar::new(games as u64).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} games {elapsed} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        )
    } else {
        indicatif::ProgressBar::hidden()
    };
    let result = zertz_jobs::play_match(job, &|_| bar.inc(1), &crate::STOP).map_err(classified);
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
        result.a,
        result.b,
        result.games,
        job.settings.variant()
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
