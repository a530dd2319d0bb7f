//! Players and matches: baselines and searching players named by specs (`random`, `greedy`,
//! `mcts:1000`, `uniform:800`, `nn:MODEL:400`, `cmd:PROGRAM ARGS`), matches between two of them on
//! a thread pool, and Elo differences with their intervals; the engine protocol that other
//! programs play through.
//!
//! - [`players`]: the [`Bot`] trait, every bot (alpha-beta among them, and [`CommandBot`], a
//!   player behind another program that speaks the protocol: [`players::command`]) and
//!   [`PlayerSpec`], their grammar.
//! - [`protocol`]: the engine protocol's server side, [`EngineSession`] (`zertz engine`).
//! - [`analysis`]: [`analyze`], a search of one position and what it thinks of every action.
//! - [`matches`](mod@matches): one game between two players, a whole match, [`matches::elo`].
//! - [`config`]: match settings from TOML (`zertz match --config`).
//! - [`bench`](mod@bench): a player's speed per second and per CPU-second (`zertz bench player`).
//!
//! ```
//! use zertz_arena::matches::play_match;
//! use zertz_env::Variant;
//! let result = play_match("greedy", "random", 4, Variant::default(), 1, 1).unwrap();
//! assert_eq!(result.games(), 4);
//! ```

pub mod analysis;
pub mod bench;
pub mod config;
pub mod matches;
pub mod players;
pub mod protocol;
pub mod results;

pub use analysis::{Analysis, Analyzer, MoveStats, analyze};
pub use players::{
    AlphaBetaBot, Bot, CommandBot, GreedyBot, MctsBot, Models, PlayerSpec, RandomBot, parse_player,
};
pub use protocol::{EngineSession, Reply};
