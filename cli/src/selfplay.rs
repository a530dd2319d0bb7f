//! `zertz selfplay`: self-play that writes training shards and game records.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::common::{DeviceArgs, check_regular_file, classified, parse_threads};

/// The arguments of `zertz selfplay`.
#[derive(Args, Debug)]
pub struct SelfplayArgs {
    /// Settings (see configs/selfplay.toml); the defaults without it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Folder for shards (shard-*.npz) and records (games-*.jsonl).
    #[arg(long, default_value = "selfplay-out")]
    pub out: PathBuf,
    /// Evaluator without a model: uniform or rollout.
    #[arg(long, default_value = "rollout", conflicts_with = "model")]
    pub evaluator: String,
    /// An exported network (zertz.export) to guide the search.
    #[arg(long)]
    pub model: Option<PathBuf>,
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Games to play (overrides the config).
    #[arg(long)]
    pub games: Option<u32>,
    /// Worker threads (overrides the config; 0: every core; at most 1024).
    #[arg(long, value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Seed (overrides the config).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Only check the settings (config file and options) and exit.
    #[arg(long)]
    pub check: bool,
}

/// Plays the self-play the options and the config file describe.
pub fn run(args: SelfplayArgs) -> Result<ExitCode> {
    let SelfplayArgs { config, out, evaluator, model, device, games, threads, seed, json, check } =
        args;
    let overrides = SelfplayOverrides { games, threads, seed, check };
    let guide = match model {
        Some(path) => zertz_engine::Guide::Network { path, inference: device.inference()? },
        None => zertz_engine::Guide::builtin(&evaluator)
            .map_err(|e| anyhow::anyhow!("{e}, or give --model"))?,
    };
    play(config.as_deref(), &out, &guide, overrides, json)
}

/// Command-line settings of `zertz selfplay` over its config file.
struct SelfplayOverrides {
    games: Option<u32>,
    threads: Option<usize>,
    seed: Option<u64>,
    /// Stop after checking the settings.
    check: bool,
}

fn play(
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
    .map_err(classified)?;
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
