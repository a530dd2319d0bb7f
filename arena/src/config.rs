//! Match settings: [`MatchSettings`], the one type the command line (`zertz match`), config files
//! (`zertz match --config`; example: `configs/match.toml`), the match job (`zertz-jobs`) and
//! Python's `zertz.match(**settings)` read. Every key is documented and defaulted; an unknown key
//! is an error naming it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use zertz_env::{Board, Variant};
use zertz_search::mcts::MAX_SEARCH_THREADS;
use zertz_settings::{
    ConfigError, DEFAULT_MAX_ACTIONS, Layer, MAX_THREADS, Seconds, Settings, read_text,
};

use crate::players::MOVE_TIME;
use crate::players::command::{ANSWER_TIME, DEFAULT_ANSWER_TIME};

/// Games of a match when none are asked for (`zertz match`, `zertz.match`, match configs).
pub const DEFAULT_GAMES: usize = 100;

/// Most games of one match.
pub const MAX_GAMES: usize = 1 << 24;

zertz_settings::settings! {
    /// The settings of a match (everything but its two players and where networks run).
    pub struct MatchSettings {
        /// Number of games; the players alternate who starts.
        pub games: usize = DEFAULT_GAMES, in Range::at_most(MAX_GAMES as f64),
        /// The board, by its number of rings.
        pub board: Board = Board::R37,
        /// The blitz marble set (5/7/9) instead of the standard one (6/8/10).
        pub blitz: bool = false,
        /// Seed of the match (players and games are seeded from it).
        pub seed: u64 = 0,
        /// Worker threads (0: one per core). Each plays one game at a time and
        /// keeps its two players' memory: 32 MiB for two alpha-beta players (a 16 MiB table
        /// each), a search tree for an MCTS or network player (up to 1 GiB on long searches).
        pub threads: usize = 0, in Range::at_most(MAX_THREADS as f64),
        /// Threads of each network player's search (0: the cores shared among the games played
        /// at once, so that one game at a time searches on every core): each thread evaluates
        /// rounds of at least 8 leaves of its own and takes turns on the tree. The games of a fixed number of simulations depend on it (not on the timing): name it
        /// (1, say) for games that do not depend on the machine's cores.
        pub search_threads: usize = 0, in Range::at_most(MAX_SEARCH_THREADS as f64),
        /// Random single actions played before the players take over, the same for both games
        /// of a pair (A on each side once): varied games between deterministic players.
        pub opening_actions: u32 = 0,
        /// Actions after which an unfinished game is a draw.
        pub max_actions: u32 = DEFAULT_MAX_ACTIONS, in Range::at_least(1.0),
        /// Write every game as a JSON line to this file, in game order as they end: a new file,
        /// never one that exists (left out: not written).
        pub out: Option<PathBuf> = None,
        /// The longest a cmd: player's program may take to answer one command, in seconds;
        /// past it, or past 1 MiB, it fails the match and is ended.
        pub answer_time: Seconds = Seconds(DEFAULT_ANSWER_TIME.as_secs_f64()), in ANSWER_TIME,
        /// Time per move in seconds (left out or 0: none) for every player that
        /// searches (alphabeta, mcts, uniform, nn) and has no :time= of its own: each search runs
        /// until it is spent instead of counting simulations or depth. Players of different kinds
        /// meet fairly only this way.
        pub move_time: Option<Seconds> = None, in MOVE_TIME.or(0.0),
    }
}

impl Settings for MatchSettings {}

impl MatchSettings {
    /// The board and marble set.
    pub fn variant(&self) -> Variant {
        Variant::of_blitz(self.board, self.blitz)
    }

    /// The threads of each network player's search: [`MatchSettings::search_threads`], or with
    /// 0 the cores divided among the games played at once (at least 1).
    pub fn search_threads(&self) -> usize {
        if self.search_threads > 0 {
            return self.search_threads.min(MAX_SEARCH_THREADS);
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let workers = if self.threads == 0 { cores } else { self.threads };
        (cores / workers.min(self.games).max(1)).clamp(1, MAX_SEARCH_THREADS)
    }

    /// [`MatchSettings::answer_time`] as a duration (the default if out of range: checked by
    /// [`Settings::validate`]).
    pub fn answer_time(&self) -> Duration {
        crate::players::command::check_answer_time(self.answer_time.0)
            .unwrap_or(DEFAULT_ANSWER_TIME)
    }

    /// [`MatchSettings::move_time`] as a duration, `None` for none (or 0, or out of range:
    /// checked by [`Settings::validate`]).
    pub fn move_time(&self) -> Option<Duration> {
        let Seconds(t) = self.move_time?;
        crate::players::check_move_time(t).ok()
    }
}

/// A match file (`zertz match --config`): the two players and the [`MatchSettings`], in one
/// table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatchFileConfig {
    /// The two players, by their specs ([`crate::players::SPEC_GRAMMAR`]).
    pub players: Vec<String>,
    /// The settings.
    #[serde(flatten)]
    pub settings: MatchSettings,
}

impl Default for MatchFileConfig {
    fn default() -> MatchFileConfig {
        MatchFileConfig {
            players: vec!["greedy".into(), "random".into()],
            settings: MatchSettings::default(),
        }
    }
}

impl MatchFileConfig {
    /// Reads a TOML file (missing keys take their defaults) and checks it.
    pub fn from_file(path: &Path) -> Result<MatchFileConfig, ConfigError> {
        let (config, _) = MatchFileConfig::layer(&read_text(path)?)?;
        Ok(config)
    }

    /// Parses TOML text and checks it: the file's settings, and the same as a layer of settings
    /// (only the keys it has) for options to go over ([`zertz_settings::from_layers`]).
    pub fn layer(text: &str) -> Result<(MatchFileConfig, Layer), ConfigError> {
        let (layer, mut others) = zertz_settings::toml_layer(text, &["players"])?;
        let players = match others.remove("players") {
            None => MatchFileConfig::default().players,
            Some(v) => Vec::<String>::deserialize(v).map_err(|_| ConfigError::Value {
                key: "players",
                reason: "give a list of two strings".into(),
            })?,
        };
        let bad = |reason: String| Err(ConfigError::Value { key: "players", reason });
        if players.len() != 2 {
            return bad(format!("give two players, not {}", players.len()));
        }
        for p in &players {
            if let Err(e) = p.parse::<crate::players::PlayerSpec>() {
                return bad(e.to_string());
            }
        }
        let settings = zertz_settings::from_layers([layer.clone()])?;
        Ok((MatchFileConfig { players, settings }, layer))
    }
}
