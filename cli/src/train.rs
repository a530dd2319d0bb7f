//! `zertz train`: hands over to the training loop, `python -m zertz train`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

/// The arguments of `zertz train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Arguments of `python -m zertz train` (--config FILE [--run FOLDER]).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Runs `python -m zertz train ARGS...` and exits with its status.
pub fn run(args: TrainArgs) -> Result<ExitCode> {
    train(&args.args)
}

fn train(args: &[String]) -> Result<ExitCode> {
    let python = match std::env::var_os("ZERTZ_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => {
            // target/release/zertz -> the repository's .venv.
            let exe = std::env::current_exe().context("cannot find this program's path")?;
            let venv = exe.ancestors().nth(3).map(|root| root.join(".venv/bin/python"));
            venv.filter(|p| p.exists()).unwrap_or_else(|| PathBuf::from("python3"))
        }
    };
    // The training loop runs the engine in its own process (the Python module), not this program.
    let mut command = std::process::Command::new(&python);
    command.args(["-m", "zertz", "train"]).args(args);
    let status = command
        .status()
        .with_context(|| format!("cannot run {} (set ZERTZ_PYTHON)", python.display()))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}
