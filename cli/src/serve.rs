//! `zertz serve`: the web board (play, watch, records, analysis) on a local address.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use zertz_arena::{Models, PlayerSpec};
use zertz_env::MarbleSet;
use zertz_search::mcts::MAX_TREE_BYTES;
use zertz_serve::{Limits, NetworkPlays};

use crate::common::{DeviceArgs, SearchThreadsArgs};

/// The arguments of `zertz serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Port to listen on (0: any free port; the address is printed).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Address to listen on. Only this machine by default: anyone who can reach the port can
    /// make the server's bots think.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// A player the page offers, by its spec (as in `zertz match --help`); repeatable, the first
    /// is the default opponent. The page names players without a network or a program itself,
    /// within its limits (docs/web.md); networks (nn:MODEL) and programs (cmd:PROGRAM ARGS) it
    /// may use only when offered here, loaded when the server starts. Default: the built-in
    /// network, nn:builtin.
    #[arg(long = "player", value_name = "SPEC")]
    pub players: Vec<String>,
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub search: SearchThreadsArgs,
    /// Seed of the bots.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Searches at once (analyses, and turns of bots that search here); a few more wait, the
    /// rest are answered "busy".
    #[arg(
        long,
        default_value_t = Limits::DEFAULT.searches as u64,
        value_parser = clap::value_parser!(u64).range(1..=1024)
    )]
    pub searches: u64,
    /// Memory budget of each search tree, in MiB: a search stops adding simulations there. The
    /// server's searches take at most --searches times this.
    #[arg(
        long,
        value_name = "MIB",
        default_value_t = (Limits::DEFAULT.tree_bytes >> 20) as u64,
        value_parser = clap::value_parser!(u64).range(1..=(MAX_TREE_BYTES >> 20) as u64)
    )]
    pub tree_mib: u64,
}

/// Loads the offered players' networks and serves until Ctrl-C.
pub fn run(args: ServeArgs) -> Result<ExitCode> {
    let ServeArgs { port, host, mut players, device, search, seed, searches, tree_mib } = args;
    if players.is_empty() {
        players.push(format!("nn:{}", zertz_model::BUILTIN));
    }
    let specs = players
        .iter()
        .map(|p| p.parse::<PlayerSpec>().map_err(anyhow::Error::msg))
        .collect::<Result<Vec<_>>>()?;
    let mut models = Models::new().with_search_threads(search.get());
    let mut plays = BTreeMap::new();
    let networks = specs.iter().filter_map(PlayerSpec::network);
    // Loaded for any board: a game or an analysis of a board or marble set the network does not
    // list is refused by the server.
    for ((path, precision), network) in
        zertz_model::inference::load_networks(networks, None, &device.inference()?)?
    {
        let meta = network.model.metadata();
        let marbles = MarbleSet::ALL.into_iter().filter(|&m| meta.plays_marbles(m)).collect();
        plays.insert(path.clone(), NetworkPlays { boards: meta.boards.clone(), marbles });
        models.insert_key((path, precision), network.evaluator);
    }
    let limits = Limits {
        searches: usize::try_from(searches)?,
        tree_bytes: usize::try_from(tree_mib << 20)?,
        ..Limits::default()
    };
    let settings = zertz_serve::ServeSettings {
        players: specs,
        models,
        model_plays: plays,
        seed,
        limits,
        ..zertz_serve::ServeSettings::default()
    };
    zertz_serve::run(&host, port, settings, |addr| {
        println!("zertz serve: http://{addr}/ (Ctrl-C stops)");
        let _ = std::io::stdout().flush();
    })?;
    Ok(ExitCode::SUCCESS)
}
