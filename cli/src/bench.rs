//! `zertz bench`: speed measurements that are not a job (self-play prints its own figures).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Subcommand;
use zertz_env::Board;

use crate::common::{DeviceArgs, classified, device_name, failed};

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
    /// --precision bf16 [--cuda-graphs off]. A model may be an AOTInductor package (.pt2).
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
        /// libtorch threads inside each forward pass on the CPU (players and self-play use 1).
        #[arg(long, default_value_t = 1)]
        torch_threads: usize,
        /// Every batch through libtorch: without the native pass that runs small batches of a
        /// network on the CPU (to compare the two).
        #[arg(long)]
        libtorch: bool,
        /// Seconds per batch size (after a warm-up of 3 passes).
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
        /// One JSON line per batch size instead of the table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// A player's search speed: simulations (or alpha-beta's positions) per second and per
    /// CPU-second, on the opening, a middle game and an endgame of each board, with each number
    /// of search threads (a fresh player each search, after one to warm up).
    ///
    /// Example: zertz bench player nn:builtin --search-threads 1,2 --move-time 1.
    /// scripts/bench-player.sh runs it quiet and with a busy process on every core.
    Player {
        /// The player, one that searches, by its spec (see `zertz match --help`): mcts:SIMS,
        /// alphabeta, nn:builtin, ...
        spec: String,
        /// Boards (rings), comma separated [default: 37 and 61, those the player's network plays].
        #[arg(long, value_delimiter = ',')]
        board: Option<Vec<Board>>,
        /// Search threads, comma separated: each count is measured.
        #[arg(long, value_delimiter = ',', default_value = "1")]
        search_threads: Vec<usize>,
        /// Seconds of each search (unless the spec has its own :time=).
        #[arg(long, default_value_t = zertz_arena::bench::DEFAULT_MOVE_TIME)]
        move_time: f64,
        /// Searches timed per position.
        #[arg(long, default_value_t = zertz_arena::bench::DEFAULT_SEARCHES)]
        searches: u32,
        /// One JSON line per row instead of the table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        device: DeviceArgs,
    },
}

pub fn run(command: BenchCommand) -> Result<ExitCode> {
    match command {
        BenchCommand::Player { spec, board, search_threads, move_time, searches, json, device } => {
            let move_time =
                zertz_arena::players::check_move_time(move_time).map_err(anyhow::Error::msg)?;
            let search_threads = zertz_arena::bench::check_search_threads(&search_threads)?;
            let searches = zertz_arena::bench::check_searches(searches)?;
            let inference = device.inference()?;
            if !json {
                println!("{spec}, {move_time:?} a search, {searches} searches a position");
                println!(
                    "{:>5} {:>8} {:>7} {:>12} {:>14} {:>9} {:>9}",
                    "board", "position", "threads", "work/s", "work/CPU-s", "CPU/wall", "unit"
                );
            }
            let rows = zertz_jobs::bench_player(
                &spec,
                board.as_deref(),
                &search_threads,
                move_time,
                searches,
                &inference,
                &std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
            )
            .map_err(classified)?;
            for row in rows {
                if json {
                    println!("{}", serde_json::to_string(&row)?);
                } else {
                    println!(
                        "{:>5} {:>8} {:>7} {:>12.0} {:>14.0} {:>9.2} {:>9}",
                        row.board,
                        row.position,
                        row.search_threads,
                        row.per_second,
                        row.per_cpu_second,
                        row.cpu_seconds / row.seconds.max(1e-12),
                        row.unit.name()
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        BenchCommand::Inference {
            model,
            board,
            batch,
            threads,
            torch_threads,
            libtorch,
            seconds,
            json,
            device,
        } => {
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
            if torch_threads == 0 || torch_threads > max_threads {
                bail!("--torch-threads must be from 1 to {max_threads}, not {torch_threads}");
            }
            let mut model = device.load(&model)?;
            model.check_board(board)?;
            model.set_cpu_threads(torch_threads);
            model.set_native_forward(!libtorch);
            let native = model.native_forward();
            if !json {
                println!(
                    "{} on {} in {}{}, {board}, {threads} thread(s), {} libtorch thread(s), {}",
                    model.path().display(),
                    device_name(model.device()),
                    model.precision(),
                    match (model.cuda_graphs(), model.cuda_graphs_off()) {
                        (true, _) => " with CUDA graphs".to_string(),
                        (false, Some(why)) => format!(" without CUDA graphs ({why})"),
                        (false, None) => String::new(),
                    },
                    if model.device() == zertz_model::Device::Cpu { torch_threads } else { 0 },
                    match native {
                        Ok(()) => format!("native pass up to batch {}", model.native_batch()),
                        Err(why) => format!("no native pass ({why})"),
                    }
                );
                println!(
                    "{:>6} {:>14} {:>14} {:>10} {:>8} {:>8} {:>8}",
                    "batch",
                    "evaluations/s",
                    "per CPU-second",
                    "ms/batch",
                    "copy in",
                    "forward",
                    "copy out"
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
                    line["torch_threads"] = torch_threads.into();
                    line["native"] = (native.is_ok() && b <= model.native_batch()).into();
                    println!("{line}");
                } else {
                    println!(
                        "{:>6} {:>14.0} {:>14.0} {:>10.3} {:>7.1}% {:>7.1}% {:>7.1}%",
                        row.batch,
                        row.evaluations_per_second,
                        row.evaluations_per_cpu_second,
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
