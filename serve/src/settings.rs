//! What the server offers ([`ServeSettings`]) and the limits it keeps ([`Limits`]), with their
//! documented defaults.
//!
//! The memory the server can take is bounded by these limits: its base (the program, its
//! networks) plus [`Limits::searches`] × [`Limits::tree_bytes`] (the searches running at once,
//! each in a tree of at most that) plus [`Limits::games`] games of a few kilobytes each (a kept
//! game holds its moves, never a search tree).

use std::collections::BTreeMap;
use std::time::Duration;

use zertz_arena::players::command::ProgramLimits;
use zertz_arena::{Models, PlayerSpec};
use zertz_env::{MarbleSet, Variant};

/// Most simulations the page may ask of a search (`mcts:N`, `uniform:N`, analysis) that was not
/// offered on the command line: a browser cannot tie up the machine for minutes.
pub const MAX_PAGE_SIMULATIONS: u32 = 20_000;

/// The longest time per move the page may give a searching player (`alphabeta`,
/// `alphabeta:time=SECONDS`, `mcts:time=SECONDS`) that was not offered on the command line.
pub const MAX_PAGE_MOVE_TIME: Duration = Duration::from_secs(10);

/// The deepest fixed-depth alpha-beta (`alphabeta:DEPTH`) the page may ask for without a time:
/// a third turn on 61 rings takes minutes.
pub const MAX_PAGE_DEPTH: u32 = 2;

/// Largest request body (a record file).
pub const MAX_BODY_BYTES: usize = 4 << 20;

/// What a network plays: the boards (ring counts) and marble sets of its metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetworkPlays {
    /// Ring counts.
    pub boards: Vec<usize>,
    /// Marble sets.
    pub marbles: Vec<MarbleSet>,
}

impl NetworkPlays {
    /// Whether it plays `variant`.
    pub fn plays(&self, variant: Variant) -> bool {
        self.boards.contains(&variant.board.rings()) && self.marbles.contains(&variant.marbles)
    }

    /// `the 37 boards with the standard marbles`.
    pub fn describe(&self) -> String {
        let boards: Vec<String> = self.boards.iter().map(ToString::to_string).collect();
        let marbles: Vec<&str> = self.marbles.iter().map(|m| m.name()).collect();
        format!("the {} boards with the {} marbles", boards.join(", "), marbles.join(" or "))
    }
}

/// What the server offers.
#[derive(Clone, Debug, Default)]
pub struct ServeSettings {
    /// Players offered besides those a page may name itself (the players without a network or a
    /// program, within [`MAX_PAGE_SIMULATIONS`], [`MAX_PAGE_DEPTH`] and [`MAX_PAGE_MOVE_TIME`]):
    /// the only networks (`nn:`) and programs (`cmd:`) a page may name. The first is the default
    /// opponent.
    pub players: Vec<PlayerSpec>,
    /// Their networks, loaded.
    pub models: Models,
    /// The boards and marble sets each network plays (its metadata's), by model file: a game or
    /// an analysis of another is refused with a message. A network missing here plays every one.
    pub model_plays: BTreeMap<String, NetworkPlays>,
    /// Seed of the bots (each game gets its own from it).
    pub seed: u64,
    /// The limits the server keeps.
    pub limits: Limits,
    /// What each answer of an offered program (`cmd:`) is held to (by default, those of
    /// [`ProgramLimits`]'s `Default`); the server sets the stop flag itself when it stops.
    pub programs: ProgramLimits,
}

/// The limits of the server: searches at once, games, programs, and how long it waits for
/// clients. [`Limits::default`] holds the documented values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Searches at once (an analysis, or the turn of a bot that searches here: `mcts:`,
    /// `uniform:`, `nn:`). Default 2.
    pub searches: usize,
    /// Requests that may wait for a search to end; past them a request is answered 503 at once.
    /// Default 8.
    pub search_queue: usize,
    /// The memory budget of each search tree, in bytes: a search stops adding simulations there
    /// (20,000 simulations from the 61-ring start, a page's most ([`MAX_PAGE_SIMULATIONS`]) when
    /// this was measured, took about 420 MB with rollouts).
    /// Default 512 MiB.
    pub tree_bytes: usize,
    /// Games kept for all browsers; past it a new game is refused (503), never another
    /// browser's game dropped. Default 1,000.
    pub games: usize,
    /// Games kept for one browser; past it the browser's own game left alone longest is dropped.
    /// Default 100.
    pub client_games: usize,
    /// Program processes (`cmd:` bots, one per bot of a game) at once, those starting
    /// included; past it the browser's own game with a program left alone longest is dropped, or
    /// the new game refused (503). Default 16.
    pub programs: usize,
    /// A game left alone this long is dropped. Default 2 hours.
    pub idle_game: Duration,
    /// The time a client has to send a request's headers, and the longest a kept-alive
    /// connection waits for the next request. Default 10 s.
    pub header_timeout: Duration,
    /// The time a client has to send a request's body (408 past it). Default 30 s.
    pub body_timeout: Duration,
    /// Once asked to stop (Ctrl-C, SIGTERM), the time open requests get to end; then the server
    /// stops whatever still runs. Default 5 s.
    pub shutdown_grace: Duration,
}

impl Limits {
    /// The documented limits.
    pub const DEFAULT: Limits = Limits {
        searches: 2,
        search_queue: 8,
        tree_bytes: 512 << 20,
        games: 1000,
        client_games: 100,
        programs: 16,
        idle_game: Duration::from_secs(2 * 3600),
        header_timeout: Duration::from_secs(10),
        body_timeout: Duration::from_secs(30),
        shutdown_grace: Duration::from_secs(5),
    };

    /// Checks that every count allows something and every time is positive: the setting at
    /// fault.
    pub fn check(&self) -> Result<(), String> {
        let counts = [
            ("searches", self.searches),
            ("games", self.games),
            ("client_games", self.client_games),
            ("programs", self.programs),
            ("tree_bytes", self.tree_bytes),
        ];
        if let Some((name, _)) = counts.iter().find(|(_, n)| *n == 0) {
            return Err(format!("{name} must be at least 1"));
        }
        let times = [
            ("idle_game", self.idle_game),
            ("header_timeout", self.header_timeout),
            ("body_timeout", self.body_timeout),
        ];
        if let Some((name, _)) = times.iter().find(|(_, t)| t.is_zero()) {
            return Err(format!("{name} must be positive"));
        }
        Ok(())
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::DEFAULT
    }
}
