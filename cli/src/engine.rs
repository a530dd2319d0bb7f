//! `zertz engine`: the engine protocol on standard input and output (docs/engine-protocol.md),
//! for other programs: GUIs, tournament managers, `zertz match --player "cmd:zertz engine ..."`.

use std::collections::BTreeMap;
use std::io::{BufRead, Read, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use zertz_arena::players::SpecError;
use zertz_arena::protocol::{EngineSession, VariantHook};
use zertz_arena::{Models, PlayerSpec};
use zertz_env::{MarbleSet, Variant};
use zertz_model::Model;
use zertz_model::inference::Inference;
use zertz_search::mcts::{DEFAULT_MAX_TREE_BYTES, MAX_TREE_BYTES};

use crate::common::{
    DeviceArgs, SearchThreadsArgs, VariantArgs, default_player, default_player_help, player_help,
};

/// The longest line read, in bytes; the rest of a longer line is read and dropped, and the line
/// answered as an error.
const MAX_LINE: usize = 1 << 20;

/// The arguments of `zertz engine`.
#[derive(Args, Debug)]
pub struct EngineArgs {
    /// The engine's player (see `zertz match --help` for the specs).
    #[arg(long, long_help = player_help(
        "The engine's player",
        &format!(
            "`analyze` searches with its network (nn:), else with uniform priors (uniform:) or \
             random playouts (the others); an alpha-beta engine's `analyze N` searches to depth \
             N and answers its score and principal variation. {}",
            default_player_help()
        ),
    ))]
    pub player: Option<String>,
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub search: SearchThreadsArgs,
    /// The first game's board and marble set (and a network's player's).
    #[command(flatten)]
    pub variant: VariantArgs,
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

/// How long the engine's searches may still run once its input has ended: it answers the
/// commands read before the end, then exits, and a search under way then, or begun after it,
/// ends within this (with what it found). Keep the input open for longer searches.
pub const EOF_GRACE: Duration = Duration::from_secs(10);

/// How often the engine looks whether its input's grace is over or its output has gone.
const WATCH_POLL: Duration = Duration::from_millis(50);

/// A line of input, as the reader thread hands it over.
enum Input {
    Line(Vec<u8>),
    /// A line longer than [`MAX_LINE`] (read and dropped).
    TooLong,
}

/// The networks of `spec`, loaded once for a game of `variant` (an error when a network was not
/// trained for it), and their models (for their metadata).
fn load_models(
    spec: &PlayerSpec,
    variant: Variant,
    inference: &Inference,
    search_threads: usize,
) -> Result<(Models, Vec<Arc<Model>>)> {
    let (mut models, mut loaded) = (Models::new().with_search_threads(search_threads), Vec::new());
    for (key, network) in
        zertz_model::inference::load_networks(spec.network(), Some(variant), inference)?
    {
        loaded.push(network.model.clone());
        models.insert_key(key, network.evaluator);
    }
    Ok((models, loaded))
}

/// What the engine does when a game of another board or marble set begins. A player named with
/// `--player` stays, and its networks play only the boards and marble sets they were trained for
/// (the others are refused). Without one (`player` is [`default_player`]'s), the engine plays the
/// default player of each game: the built-in network where it plays, else rollout MCTS at
/// [`DEFAULT_SIMULATIONS`](zertz_arena::players::DEFAULT_SIMULATIONS).
fn variant_hook(
    named: bool,
    player: &str,
    spec: &PlayerSpec,
    variant: Variant,
    inference: Inference,
    search_threads: usize,
) -> Result<(Models, VariantHook)> {
    let (models, networks) = load_models(spec, variant, &inference, search_threads)?;
    if named {
        let hook: VariantHook = Box::new(move |v: Variant| {
            for model in &networks {
                model.check_variant(v).map_err(|e| e.to_string())?;
            }
            Ok(None)
        });
        return Ok((models, hook));
    }
    // The default players' networks, loaded once each, by their specs' text.
    let mut current = player.to_string();
    let mut loaded = BTreeMap::from([(current.clone(), models.clone())]);
    let hook: VariantHook = Box::new(move |v: Variant| {
        let text = default_player(v.board, v.marbles == MarbleSet::Blitz);
        if text == current {
            return Ok(None);
        }
        let spec: PlayerSpec = text.parse().map_err(|e: SpecError| e.to_string())?;
        let models = match loaded.get(&text) {
            Some(models) => models.clone(),
            None => {
                let (models, _) = load_models(&spec, v, &inference, search_threads)
                    .map_err(|e| format!("{e:#}"))?;
                loaded.insert(text.clone(), models.clone());
                models
            }
        };
        current = text;
        Ok(Some((spec, models)))
    });
    Ok((models, hook))
}

/// Whether nobody reads standard output any more (a pipe whose reader has gone).
#[cfg(unix)]
fn output_gone() -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdout = std::io::stdout();
    let mut fds = [PollFd::new(&stdout, PollFlags::OUT)];
    let now = Timespec { tv_sec: 0, tv_nsec: 0 };
    poll(&mut fds, Some(&now)).is_ok_and(|_| {
        fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL)
    })
}

#[cfg(not(unix))]
fn output_gone() -> bool {
    false
}

/// Reads standard input on a thread of its own, line by line, into a short queue (a line longer
/// than [`MAX_LINE`] is dropped as [`Input::TooLong`]); at its end it notes the time in `ended`.
fn read_input(ended: Arc<OnceLock<Instant>>) -> Receiver<Input> {
    let (tx, rx) = std::sync::mpsc::sync_channel(16);
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        loop {
            let mut line = Vec::new();
            // An input that cannot be read ends as the end of the input does.
            let n = (&mut input).take(MAX_LINE as u64).read_until(b'\n', &mut line).unwrap_or(0);
            if n == 0 {
                let _ = ended.set(Instant::now());
                return;
            }
            let too_long = n >= MAX_LINE && line.last() != Some(&b'\n');
            if too_long {
                // Drop the rest of the line.
                let mut rest = Vec::new();
                loop {
                    rest.clear();
                    let m = (&mut input)
                        .take(MAX_LINE as u64)
                        .read_until(b'\n', &mut rest)
                        .unwrap_or(0);
                    if m == 0 || rest.last() == Some(&b'\n') {
                        break;
                    }
                }
            }
            let item = if too_long { Input::TooLong } else { Input::Line(line) };
            if tx.send(item).is_err() {
                return;
            }
        }
    });
    rx
}

/// Answers the protocol on standard input and output until `quit` or the end of the input
/// (see [`EOF_GRACE`]); a search stops at once when nobody reads the answers any more.
pub fn run(args: EngineArgs) -> Result<ExitCode> {
    let EngineArgs { player, device, search, variant, seed, tree_mib } = args;
    let (board, blitz, variant) = (variant.board, variant.blitz, variant.variant());
    let named = player.is_some();
    let player = player.unwrap_or_else(|| default_player(board, blitz));
    let spec: PlayerSpec = player.parse().map_err(anyhow::Error::msg)?;
    let inference = device.inference()?;
    let (models, hook) = variant_hook(named, &player, &spec, variant, inference, search.get())?;
    let stop = Arc::new(AtomicBool::new(false));
    let mut session = EngineSession::new(&spec, &models, seed, variant)
        .map_err(anyhow::Error::msg)?
        .with_max_tree_bytes(usize::try_from(tree_mib << 20)?)
        .with_stop(stop.clone())
        .with_variant_hook(hook);
    let ended = Arc::new(OnceLock::new());
    let lines = read_input(ended.clone());
    std::thread::spawn(move || {
        loop {
            let late = ended.get().is_some_and(|t: &Instant| t.elapsed() >= EOF_GRACE);
            if late || output_gone() {
                stop.store(true, Ordering::Relaxed);
                return;
            }
            std::thread::sleep(WATCH_POLL);
        }
    });
    let mut stdout = std::io::stdout().lock();
    // The sender goes when the input ends: every line read before is answered first.
    for input in lines {
        let reply = match input {
            Input::TooLong => zertz_arena::Reply::Error {
                id: None,
                text: format!("line longer than {MAX_LINE} bytes"),
            },
            Input::Line(line) => session.handle(&String::from_utf8_lossy(&line)),
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
    Ok(ExitCode::SUCCESS)
}
