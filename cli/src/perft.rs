//! `zertz perft`: whole-turn move counts per depth.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use zertz_env::perft;

use crate::common::PositionArgs;

/// The arguments of `zertz perft`.
#[derive(Args, Debug)]
pub struct PerftArgs {
    #[command(flatten)]
    pub position: PositionArgs,
    /// Deepest level to count.
    #[arg(long, short)]
    pub depth: u32,
    /// Also print the count below each first move at the deepest level.
    #[arg(long)]
    pub divide: bool,
}

/// Counts and prints one line per depth.
pub fn run(args: PerftArgs) -> Result<ExitCode> {
    let PerftArgs { position, depth, divide } = args;
    count(&position, depth, divide)
}

fn count(args: &PositionArgs, depth: u32, divide: bool) -> Result<ExitCode> {
    let pos = args.resolve()?;
    let mut out = std::io::stdout().lock();
    for d in 1..=depth {
        if divide && d == depth {
            let mut total = 0;
            for (m, n) in zertz_env::divide(&pos, d) {
                writeln!(out, "{} {n}", pos.move_to_string(&m))?;
                total += n;
            }
            writeln!(out, "{d} {total}")?;
        } else {
            writeln!(out, "{d} {}", perft(&pos, d))?;
        }
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}
