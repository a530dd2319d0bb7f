//! `zertz show`: a position drawn in the terminal.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::common::PositionArgs;

/// The arguments of `zertz show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    #[command(flatten)]
    pub position: PositionArgs,
    /// Also print the position in the text format and the legal moves.
    #[arg(long)]
    pub verbose: bool,
}

/// Draws the position.
pub fn run(args: ShowArgs) -> Result<ExitCode> {
    let ShowArgs { position, verbose } = args;
    show(&position, verbose)
}

fn show(args: &PositionArgs, verbose: bool) -> Result<ExitCode> {
    let pos = args.resolve()?;
    print!("{}", pos.diagram());
    if verbose {
        println!("position: {}", pos.to_text());
        let moves: Vec<String> = pos.legal_moves().iter().map(|m| pos.move_to_string(m)).collect();
        println!("{} legal moves: {}", moves.len(), moves.join(" "));
    }
    Ok(ExitCode::SUCCESS)
}
