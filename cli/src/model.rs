//! `zertz model`: network files' metadata, and their raw outputs on positions.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Subcommand;
use zertz_env::Position;
use zertz_model::architecture::Sizes;

use crate::common::{DeviceArgs, classified, device_name, read_text_file};

/// The subcommands of `zertz model`.
#[derive(Subcommand, Debug)]
pub enum ModelCommand {
    /// Print a network's metadata (JSON): its architecture, sizes (`network`) and preset, the
    /// SHA-256 of its weights, format version, boards and marble sets, provenance, and the
    /// device and precision it would run in. A program (TorchScript, an AOTInductor package),
    /// which runs only with --trust-code, has no architecture, preset or checksum here (null).
    Info {
        /// The network file (builtin: the network built into the engine).
        model: PathBuf,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// Run a model on positions (one per line, in the text format of `zertz show --verbose`)
    /// and print one JSON object per position: the value and the logits of the whole action
    /// space.
    Eval {
        /// The network file (builtin: the network built into the engine).
        model: PathBuf,
        /// File of positions, one per line.
        #[arg(long)]
        positions: PathBuf,
        #[command(flatten)]
        device: DeviceArgs,
    },
}

/// Runs one subcommand.
pub fn run(command: ModelCommand) -> Result<ExitCode> {
    match command {
        ModelCommand::Info { model, device } => info(&model, &device),
        ModelCommand::Eval { model, positions, device } => eval(&model, &positions, &device),
    }
}

fn info(path: &Path, device: &DeviceArgs) -> Result<ExitCode> {
    let model = device.load(path)?;
    let m = model.metadata();
    // A network file: the engine's architecture at its sizes (named when they are a preset's)
    // and the checksum of its weights. A trusted program runs its own code: none of these.
    let program = m.sha256.is_none();
    let architecture = if program { None } else { m.architecture.as_deref() };
    let sizes = architecture.and_then(|_| serde_json::from_value::<Sizes>(m.network.clone()).ok());
    let info = serde_json::json!({
        "path": path.display().to_string(), "device": device_name(model.device()),
        "precision": model.precision().name(),
        "cuda_available": zertz_model::cuda_available(), "name": m.name, "boards": m.boards,
        "marbles": m.marbles, "encoding_version": m.encoding_version,
        "format_version": m.format_version, "program": program, "architecture": architecture,
        "preset": sizes.and_then(|s| s.preset()), "parameters": sizes.map(|s| s.parameters()),
        "sha256": m.sha256, "step": m.step, "action_space": m.action_space,
        "network": m.network, "provenance": m.provenance,
    });
    println!("{}", serde_json::to_string_pretty(&info)?);
    Ok(ExitCode::SUCCESS)
}

fn eval(path: &Path, positions: &Path, device: &DeviceArgs) -> Result<ExitCode> {
    use zertz_env::ActionSpace;
    use zertz_env::encode::{GLOBALS, Shape};
    let text = read_text_file(positions)?;
    let model = device.load(path)?;
    let mut stdout = std::io::stdout().lock();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let pos = Position::from_text(line.trim())
            .with_context(|| format!("{} line {}", positions.display(), i + 1))?;
        let board = pos.board();
        let shape = Shape::of(board);
        let (mut planes, mut globals) = (vec![0.0; shape.planes_len()], vec![0.0; GLOBALS]);
        pos.encode(&mut planes, &mut globals);
        let mut logits = vec![0.0; ActionSpace::new(board).len()];
        let mut mask = vec![false; logits.len()];
        pos.legal_action_mask(&mut mask);
        let mut value = [0.0];
        model
            .forward_masked(board, &planes, &globals, &mask, &mut logits, &mut value)
            .map_err(classified)?;
        writeln!(stdout, "{}", serde_json::json!({ "value": value[0], "logits": logits }))?;
    }
    Ok(ExitCode::SUCCESS)
}
