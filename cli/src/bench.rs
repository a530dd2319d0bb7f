//! `zertz bench`: speed measurements that are not a job (self-play prints its own figures).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Subcommand;
use zertz_env::Board;

use crate::common::{DeviceArgs, device_name, failed};

/// The most seconds per batch size.
const MAX_SECONDS: f64 = 3600.0;
/// The largest batch measured.
const MAX_BATCH: usize = 1 << 16;

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// The bare network without search: evaluations per second at each batch size, and the
    /// shares of a forward pass spent copying in, in the network and copying out.
    ///
    /// Example: zertz bench inference --model m.pt --device cuda --batch 64,256,1024,4096
    /// --precision bf16 [--cuda-graphs]. A model may be an AOTInductor package (.pt2).
    Inference {
        /// An exported network (`python -m zertz random-model` writes one of a preset size).
        #[arg(long)]
        model: PathBuf,
        /// Board of the positions (rings); the model must play it.
        #[arg(long, default_value_t = Board::R37)]
        board: Board,
        /// Batch sizes, comma separated.
        #[arg(long, value_delimiter = ',', default_value = "1,16,64,256,1024")]
        batch: Vec<usize>,
        /// Threads running forward passes at once, each with its own batch.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Seconds per batch size (after a warm-up of 3 passes).
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
        /// One JSON line per batch size instead of the table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        device: DeviceArgs,
    },
}

pub fn run(command: BenchCommand) -> Result<ExitCode> {
    match command {
        BenchCommand::Inference { model, board, batch, threads, seconds, json, device } => {
            if !(seconds > 0.0 && seconds <= MAX_SECONDS) {
                bail!("--seconds must be above 0 and at most {MAX_SECONDS}, not {seconds}");
            }
            if let Some(b) = batch.iter().find(|&&b| b == 0 || b > MAX_BATCH) {
                bail!("batch sizes must be from 1 to {MAX_BATCH}, not {b}");
            }
            let max_threads = zertz_selfplay::config::MAX_THREADS;
            if threads == 0 || threads > max_threads {
                bail!("--threads must be from 1 to {max_threads}, not {threads}");
            }
            let model = device.load(&model)?;
            model.check_board(board)?;
            if model.device() == zertz_model::Device::Cpu {
                // One libtorch thread per forward pass when several run at once (as self-play
                // does on the CPU), else every core in the one pass.
                if threads > 1 {
                    zertz_model::set_cpu_threads(1);
                }
            }
            if !json {
                println!(
                    "{} on {} in {}{}, {board}, {threads} thread(s), {} libtorch thread(s)",
                    model.path().display(),
                    device_name(model.device()),
                    model.precision(),
                    if model.cuda_graphs() { " with CUDA graphs" } else { "" },
                    zertz_model::cpu_threads()
                );
                println!(
                    "{:>6} {:>14} {:>10} {:>8} {:>8} {:>8}",
                    "batch", "evaluations/s", "ms/batch", "copy in", "forward", "copy out"
                );
            }
            for &b in &batch {
                let row = zertz_model::bench::inference(&model, board, b, threads, seconds)
                    .map_err(failed)?;
                if json {
                    let mut line = serde_json::to_value(&row)?;
                    line["device"] = device_name(model.device()).into();
                    line["precision"] = model.precision().name().into();
                    line["cuda_graphs"] = model.cuda_graphs().into();
                    line["board"] = board.rings().into();
                    println!("{line}");
                } else {
                    println!(
                        "{:>6} {:>14.0} {:>10.3} {:>7.1}% {:>7.1}% {:>7.1}%",
                        row.batch,
                        row.evaluations_per_second,
                        row.ms_per_batch,
                        100.0 * row.copy_in,
                        100.0 * row.forward,
                        100.0 * row.copy_out
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
