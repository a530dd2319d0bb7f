//! `zertz selfplay`: self-play that writes training shards and game records.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use zertz_selfplay::config::SelfPlayConfig;
use zertz_settings::Layer;

use crate::common::{DeviceArgs, check_regular_file, classified};
use crate::settings::SettingArgs;

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
    /// A network file (zertz.export writes them) to guide the search.
    #[arg(long)]
    pub model: Option<PathBuf>,
    #[command(flatten)]
    pub device: DeviceArgs,
    /// The self-play settings (`SelfPlayConfig`: one option per key of the config file but
    /// `[search]`), over the config file's.
    #[command(flatten)]
    pub settings: SettingArgs<SelfPlayConfig>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Only check the settings (config file and options) and exit.
    #[arg(long)]
    pub check: bool,
}

/// Plays the self-play the options and the config file describe.
pub fn run(args: SelfplayArgs) -> Result<ExitCode> {
    let SelfplayArgs { config, out, evaluator, model, device, settings, json, check } = args;
    let guide = match model {
        Some(path) => zertz_jobs::Guide::Network { path, inference: device.inference()? },
        None => zertz_jobs::Guide::builtin(&evaluator)
            .map_err(|e| anyhow::anyhow!("{e}, or give --model"))?,
    };
    let file = match &config {
        Some(path) => {
            check_regular_file(path)?;
            let text = zertz_settings::read_text(path)?;
            zertz_settings::toml_layer(&text, &[])?.0
        }
        None => Layer::new(),
    };
    // The options over the config file.
    let cfg: SelfPlayConfig = zertz_settings::from_layers([file, settings.given])?;
    if check {
        println!("settings ok");
        return Ok(ExitCode::SUCCESS);
    }
    play(&cfg, &out, &guide, json)
}

fn play(
    cfg: &SelfPlayConfig,
    out: &Path,
    guide: &zertz_jobs::Guide,
    json: bool,
) -> Result<ExitCode> {
    use std::sync::atomic::Ordering;
    use zertz_selfplay::driver::Progress;
    let progress = Progress::default();
    let started = std::time::Instant::now(); // for the progress bar's rate
    let summary = std::thread::scope(|scope| {
        let worker = scope.spawn(|| zertz_jobs::selfplay(cfg, guide, out, &progress));
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
            "network: {busy:.1} s of forward passes over {secs:.1} s: {:.0}% of the time; {:.1} \
             positions a pass",
            100.0 * share,
            summary.evaluations as f64 / summary.network_batches.unwrap_or(0).max(1) as f64
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
