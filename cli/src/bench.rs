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
    /// Example: zertz bench inference --model m.safetensors --device cuda --batch
    /// 64,256,1024,4096 --precision bf16 [--cuda-graphs off]. Several networks side by side,
    /// each batch size measured for one after the other: --model builtin --model
    /// model/tests/data/builtin-v1.pt --trust-code (the built-in network file and the
    /// TorchScript file it was converted from; a program, TorchScript or an AOTInductor package
    /// (.pt2), runs only with --trust-code, and only one you made yourself).
    Inference {
        /// A network file (`python -m zertz random-model` writes one of a preset size, builtin
        /// is the built-in network); more than once to compare networks (at most 8).
        #[arg(long, required = true)]
        model: Vec<PathBuf>,
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
    /// Several players are measured one after the other, each row naming its player: nn:builtin
    /// nn:model/tests/data/builtin-v1.pt --trust-code (the built-in network file and the
    /// TorchScript file it was converted from, a program that runs only with --trust-code).
    /// scripts/bench-player.sh runs it quiet and with a busy process on every core.
    Player {
        /// The players, ones that search, by their specs (see `zertz match --help`): mcts:SIMS,
        /// alphabeta, nn:builtin, ... (at most 8).
        #[arg(required = true)]
        spec: Vec<String>,
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
            bench_player(
                &spec,
                board.as_deref(),
                &search_threads,
                move_time,
                searches,
                json,
                &device,
            )
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
            let max_threads = zertz_settings::MAX_THREADS;
            if threads == 0 || threads > max_threads {
                bail!("--threads must be from 1 to {max_threads}, not {threads}");
            }
            if torch_threads == 0 || torch_threads > max_threads {
                bail!("--torch-threads must be from 1 to {max_threads}, not {torch_threads}");
            }
            check_compared("network", &model.iter().map(|m| m.display()).collect::<Vec<_>>())?;
            // Every network loaded and checked before the first is measured.
            let mut models = Vec::with_capacity(model.len());
            for path in &model {
                let mut model = device.load(path)?;
                model.check_board(board)?;
                model.set_cpu_threads(torch_threads);
                model.set_native_forward(!libtorch);
                models.push(model);
            }
            // Rows name their network when there are several.
            let labels: Vec<String> = model.iter().map(|m| m.display().to_string()).collect();
            let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0).max(5);
            let label = |i: usize| match models.len() {
                1 => String::new(),
                _ => format!("{:<width$} ", labels[i]),
            };
            if !json {
                for model in &models {
                    println!("{}", describe(model, board, threads, torch_threads));
                }
                println!(
                    "{}{:>6} {:>14} {:>14} {:>10} {:>8} {:>8} {:>8}",
                    if models.len() > 1 { format!("{:<width$} ", "model") } else { String::new() },
                    "batch",
                    "evaluations/s",
                    "per CPU-second",
                    "ms/batch",
                    "copy in",
                    "forward",
                    "copy out"
                );
            }
            // Each batch size for one network after the other: a machine whose load changes
            // during the run weighs on them alike.
            for &b in &batch {
                for (i, model) in models.iter().enumerate() {
                    let row = zertz_model::bench::inference(model, board, b, threads, seconds)
                        .map_err(failed)?;
                    if json {
                        let mut line = serde_json::to_value(&row)?;
                        line["model"] = labels[i].clone().into();
                        line["device"] = device_name(model.device()).into();
                        line["precision"] = model.precision().name().into();
                        line["cuda_graphs"] = model.cuda_graphs().into();
                        line["board"] = board.rings().into();
                        line["torch_threads"] = torch_threads.into();
                        line["native"] =
                            (model.native_forward().is_ok() && b <= model.native_batch()).into();
                        println!("{line}");
                    } else {
                        println!(
                            "{}{:>6} {:>14.0} {:>14.0} {:>10.3} {:>7.1}% {:>7.1}% {:>7.1}%",
                            label(i),
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
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The most networks of one `zertz bench inference`, and players of one `zertz bench player`.
const MAX_COMPARED: usize = 8;

/// Networks or players to compare (`what`: network or player): at most [`MAX_COMPARED`], none
/// twice (their rows would not tell them apart).
fn check_compared(what: &str, items: &[impl std::fmt::Display]) -> Result<()> {
    if items.len() > MAX_COMPARED {
        bail!("at most {MAX_COMPARED} {what}s at once, not {}", items.len());
    }
    let names: Vec<String> = items.iter().map(|i| i.to_string()).collect();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            bail!("the {what} {name} is named twice");
        }
    }
    Ok(())
}

/// A network's line above the table: where and how it runs.
fn describe(
    model: &zertz_model::Model,
    board: Board,
    threads: usize,
    torch_threads: usize,
) -> String {
    format!(
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
        match model.native_forward() {
            Ok(()) => format!("native pass up to batch {}", model.native_batch()),
            Err(why) => format!("no native pass ({why})"),
        }
    )
}

/// `zertz bench player`: each player in turn, after every one is checked (its spec, that it
/// searches, that its network loads).
fn bench_player(
    specs: &[String],
    boards: Option<&[Board]>,
    search_threads: &[usize],
    move_time: f64,
    searches: u32,
    json: bool,
    device: &DeviceArgs,
) -> Result<ExitCode> {
    let move_time = zertz_arena::players::check_move_time(move_time).map_err(anyhow::Error::msg)?;
    let search_threads = zertz_arena::bench::check_search_threads(search_threads)?;
    let searches = zertz_arena::bench::check_searches(searches)?;
    let inference = device.inference()?;
    check_compared("player", specs)?;
    for spec in specs {
        let parsed: zertz_arena::PlayerSpec = spec.parse()?;
        zertz_arena::bench::check_player(&parsed)?;
        // A network that cannot be loaded (a program without --trust-code, say) is refused
        // before any player is measured; the boards come later.
        zertz_model::inference::load_networks(parsed.network(), None, &inference)
            .map_err(classified)?;
    }
    let several = specs.len() > 1;
    let width = specs.iter().map(|s| s.chars().count()).max().unwrap_or(0).max(6);
    if !json {
        println!("{}, {move_time:?} a search, {searches} searches a position", specs.join("; "));
        println!(
            "{}{:>5} {:>8} {:>7} {:>12} {:>14} {:>9} {:>9}",
            if several { format!("{:<width$} ", "player") } else { String::new() },
            "board",
            "position",
            "threads",
            "work/s",
            "work/CPU-s",
            "CPU/wall",
            "unit"
        );
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for spec in specs {
        let rows = zertz_jobs::bench_player(
            spec,
            boards,
            &search_threads,
            move_time,
            searches,
            &inference,
            &stop,
        )
        .map_err(classified)?;
        for row in rows {
            if json {
                let mut line = serde_json::to_value(&row)?;
                line["player"] = spec.clone().into();
                println!("{line}");
            } else {
                println!(
                    "{}{:>5} {:>8} {:>7} {:>12.0} {:>14.0} {:>9.2} {:>9}",
                    if several { format!("{spec:<width$} ") } else { String::new() },
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
    }
    Ok(ExitCode::SUCCESS)
}
