//! `zertz engine`: the engine protocol on standard input and output (docs/engine-protocol.md),
//! for other programs: GUIs, tournament managers, `zertz match --player "cmd:zertz engine ..."`.

use std::io::{BufRead, Read, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use zertz_arena::protocol::EngineSession;
use zertz_arena::{Models, PlayerSpec};
use zertz_env::{Board, MarbleSet, Variant};
use zertz_search::mcts::{DEFAULT_MAX_TREE_BYTES, MAX_TREE_BYTES};

use crate::common::{DeviceArgs, default_player};

/// The longest line read, in bytes; the rest of a longer line is read and dropped, and the line
/// answered as an error.
const MAX_LINE: usize = 1 << 20;

/// The arguments of `zertz engine`.
#[derive(Args, Debug)]
pub struct EngineArgs {
    /// The engine's player: random, greedy, mcts:SIMS (rollout MCTS), uniform:SIMS,
    /// nn:MODEL[:SIMS][:PRECISION][:gumbel=K], alphabeta[:DEPTH] or cmd:PROGRAM ARGS; a searching
    /// player may end with :time=SECONDS. `analyze` searches with its network (nn:), else with uniform
    /// priors (uniform:) or random playouts (the others); an alpha-beta engine's `analyze N`
    /// searches to depth N and answers its score and principal variation. Default: the built-in
    /// network (nn:builtin) on the boards it plays, else mcts:1000.
    #[arg(long)]
    pub player: Option<String>,
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Board of the first game, and of a network's player: 37, 40, 43, 44, 48 or 61 rings.
    #[arg(long, default_value_t = Board::R37)]
    pub board: Board,
    /// Use the blitz marble set in the first game.
    #[arg(long)]
    pub blitz: bool,
    /// Seed of the engine's random choices and playouts.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Memory budget of each search tree (genmove's, analyze's), in MiB: a search stops adding
    /// simulations there, and analyze answers with those it ran.
    #[arg(
        long,
        value_name = "MIB",
        default_value_t = (DEFAULT_MAX_TREE_BYTES >> 20) as u64,
        value_parser = clap::value_parser!(u64).range(1..=(MAX_TREE_BYTES >> 20) as u64)
    )]
    pub tree_mib: u64,
}

/// Answers the protocol on standard input and output until `quit` or the end of the input.
pub fn run(args: EngineArgs) -> Result<ExitCode> {
    let EngineArgs { player, device, board, blitz, seed, tree_mib } = args;
    let player = player.unwrap_or_else(|| default_player(board, blitz));
    let spec: PlayerSpec = player.parse().map_err(anyhow::Error::msg)?;
    let mut models = Models::new();
    let inference = device.inference()?;
    for (key, network) in
        zertz_model::inference::load_networks(spec.network(), Some(board), &inference, 1)?
    {
        models.insert_key(key, network.evaluator);
    }
    let set = if blitz { MarbleSet::Blitz } else { MarbleSet::Standard };
    let mut session = EngineSession::new(&spec, &models, seed, Variant::new(board, set))
        .map_err(anyhow::Error::msg)?
        .with_max_tree_bytes(usize::try_from(tree_mib << 20)?);
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut stdout = std::io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut input).take(MAX_LINE as u64).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(ExitCode::SUCCESS);
        }
        let too_long = n >= MAX_LINE && line.last() != Some(&b'\n');
        if too_long {
            // Drop the rest of the line.
            let mut rest = Vec::new();
            loop {
                rest.clear();
                let m = (&mut input).take(MAX_LINE as u64).read_until(b'\n', &mut rest)?;
                if m == 0 || rest.last() == Some(&b'\n') {
                    break;
                }
            }
        }
        let reply = if too_long {
            zertz_arena::Reply::Error {
                id: None,
                text: format!("line longer than {MAX_LINE} bytes"),
            }
        } else {
            session.handle(&String::from_utf8_lossy(&line))
        };
        let out = reply.format();
        // A reader that has gone away ends the session.
        if stdout.write_all(out.as_bytes()).and_then(|()| stdout.flush()).is_err() {
            return Ok(ExitCode::SUCCESS);
        }
        if reply.is_quit() {
            return Ok(ExitCode::SUCCESS);
        }
    }
}
