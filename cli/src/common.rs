//! What the commands share: device options, position options, counts with their maxima, files
//! named by the user, and the exit status of errors.

use std::path::Path;

use anyhow::{Context, Result};
use clap::Args;
use zertz_env::{Board, Player, Position, Variant};

use crate::settings::SettingArgs;

/// Where networks run: the options of [`zertz_model::Inference`], made from its declaration
/// (`--device`, `--precision`, `--shared-inference`, `--inference-threads`, `--cuda-graphs`).
#[derive(Args, Debug, Clone)]
pub struct DeviceArgs {
    #[command(flatten)]
    settings: SettingArgs<zertz_model::Inference>,
}

/// `--search-threads`: the threads of one game's search.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct SearchThreadsArgs {
    /// Threads of each search of a network's player and of each analysis with a network
    /// (default: every core): each evaluates rounds of leaves of its own, one libtorch thread
    /// each, and takes turns on the tree.
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u16)
            .range(1..=zertz_search::mcts::MAX_SEARCH_THREADS as i64)
    )]
    search_threads: Option<u16>,
}

impl SearchThreadsArgs {
    /// The threads named, else the cores.
    pub fn get(self) -> usize {
        self.search_threads.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            usize::from,
        )
    }
}

impl DeviceArgs {
    /// Loads the model at `path` on the chosen device in the chosen precision (through CUDA
    /// graphs as --cuda-graphs says).
    pub fn load(&self, path: &Path) -> Result<zertz_model::Model> {
        Ok(self.inference()?.load(path)?)
    }

    /// Where and how networks run: the options given, over the defaults (each checked as it was
    /// parsed).
    pub fn inference(&self) -> Result<zertz_model::Inference> {
        Ok(zertz_settings::from_layers([self.settings.given.clone()])?)
    }
}

/// The help of an option or command that names players: `lead`, the spec grammar
/// ([`zertz_arena::players::SPEC_GRAMMAR`], its one text), then `tail`.
pub fn player_help(lead: &str, tail: &str) -> String {
    format!("{lead}: {}. {tail}", zertz_arena::players::SPEC_GRAMMAR)
}

/// The defaults of the spec grammar in words, from their constants: a network's simulations and
/// alpha-beta's time per move.
pub fn spec_defaults() -> String {
    use zertz_arena::players::{DEFAULT_ALPHABETA_TIME, DEFAULT_NEURAL_SIMULATIONS};
    format!(
        "nn:MODEL plays {DEFAULT_NEURAL_SIMULATIONS} simulations a move by default; alphabeta \
         without a depth deepens for {} s a move",
        DEFAULT_ALPHABETA_TIME.as_secs_f64()
    )
}

/// [`default_player`] in words, for the help of the commands that use it.
pub fn default_player_help() -> String {
    let fallback = zertz_arena::PlayerSpec::Mcts(zertz_arena::players::DEFAULT_SIMULATIONS);
    format!(
        "Default: the built-in network (nn:{}) on the boards it plays, else {fallback}.",
        zertz_model::BUILTIN
    )
}

/// `cpu` or `cuda:N`, as --device takes them.
pub fn device_name(d: zertz_model::Device) -> String {
    match d {
        zertz_model::Device::Cuda(i) => format!("cuda:{i}"),
        other => format!("{other:?}").to_ascii_lowercase(),
    }
}

/// An error met while working (a network that fails during a match, a file that cannot be
/// written), as opposed to bad arguments or settings: the program exits with status 1, not 2.
#[derive(Debug)]
pub struct Failed(anyhow::Error);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&message(&self.0))
    }
}

/// An error and its causes, `error: cause: cause`, where a cause whose text its error already
/// holds (an error that names its source in its own message) is said once.
pub fn message(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.is_empty() {
            text = part;
        } else if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
    }
    text
}

impl std::error::Error for Failed {}

/// `e` as a [`Failed`] error (exit status 1).
pub fn failed(e: impl Into<anyhow::Error>) -> anyhow::Error {
    anyhow::Error::new(Failed(e.into()))
}

/// The engine's player when none is named (`zertz play`, `zertz engine`): the built-in
/// network (`nn:builtin`, [`zertz_model::BUILTIN`]) on the boards it was trained for with the
/// standard marbles, else rollout MCTS at its default simulations
/// ([`DEFAULT_SIMULATIONS`](zertz_arena::players::DEFAULT_SIMULATIONS), as the web board falls
/// back to).
pub fn default_player(board: Board, blitz: bool) -> String {
    let plays = !blitz
        && zertz_model::builtin_metadata().is_some_and(|m| m.boards.contains(&board.rings()));
    if plays {
        format!("nn:{}", zertz_model::BUILTIN)
    } else {
        zertz_arena::PlayerSpec::Mcts(zertz_arena::players::DEFAULT_SIMULATIONS).to_string()
    }
}

/// Refuses a path that is not a regular file (after symbolic links) before anything opens it:
/// opening a FIFO waits for a writer forever, and a device may never end.
pub fn check_regular_file(path: &Path) -> Result<()> {
    zertz_env::files::check_regular(path).with_context(|| format!("cannot read {}", path.display()))
}

/// The text of a file named by the user: a regular file only (see [`check_regular_file`]).
pub fn read_text_file(path: &Path) -> Result<String> {
    zertz_env::files::read_text(path).with_context(|| format!("cannot read {}", path.display()))
}

/// The board and marble set of a game (`--board RINGS`, `--blitz`): the one declaration of
/// both options, which the commands that start games flatten into theirs.
#[derive(Args, Clone, Copy, Debug)]
pub struct VariantArgs {
    /// The board, by its number of rings.
    #[arg(long, default_value_t = Board::R37, help = board_help())]
    pub board: Board,
    /// Use the blitz marble set (5/7/9) instead of the standard one (6/8/10).
    #[arg(long)]
    pub blitz: bool,
}

/// `--board`'s help: the boards there are.
fn board_help() -> String {
    format!("The board, by its number of rings: {}", Board::choices())
}

impl VariantArgs {
    /// The board and marble set.
    pub fn variant(&self) -> Variant {
        Variant::of_blitz(self.board, self.blitz)
    }
}

/// Where a position comes from: a start position, optionally followed by moves.
#[derive(Args, Debug)]
pub struct PositionArgs {
    #[command(flatten)]
    variant: VariantArgs,
    /// Start from a position in the text format instead (board and marble set come from it).
    #[arg(long, conflicts_with_all = ["board", "blitz"])]
    position: Option<String>,
    /// Moves to play first, in notation, separated by spaces: "Wd4,a1 b2xd4 ...".
    #[arg(long, default_value = "")]
    moves: String,
}

impl PositionArgs {
    pub fn resolve(&self) -> Result<Position> {
        let mut pos = match &self.position {
            Some(text) => Position::from_text(text).context("bad --position")?,
            None => Position::new(self.variant.variant(), Player::P0),
        };
        for (i, text) in self.moves.split_whitespace().enumerate() {
            let m = pos
                .parse_legal_move(text)
                .with_context(|| format!("move {} ({text}) cannot be played", i + 1))?;
            pos.play_unchecked(&m);
        }
        Ok(pos)
    }
}
/// An error with the exit status of its class ([`zertz_env::ErrorClass`]): failures while
/// working 1, refusals 2.
pub fn classified<E>(e: E) -> anyhow::Error
where
    E: zertz_env::Classify + std::error::Error + Send + Sync + 'static,
{
    if e.class().while_working { failed(e) } else { e.into() }
}
