//! Match settings, read from TOML (`zertz match --config`; example: `configs/match.toml`). Every
//! key is documented and defaulted; an unknown key is an error naming it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use zertz_env::Board;
use zertz_selfplay::config::{ConfigError, MAX_THREADS, read_text};

/// Match settings (`zertz match --config`); command-line options override them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MatchFileConfig {
    /// The two players: `random`, `greedy`, `mcts:SIMS` (rollout MCTS), `uniform:SIMS`,
    /// `nn:MODEL[:SIMS][:PRECISION][:gumbel=K]` (an exported network) or `cmd:PROGRAM ARGS` (a
    /// program that speaks the engine protocol).
    pub players: Vec<String>,
    /// Number of games; the players alternate who starts.
    pub games: usize,
    /// The board, by its number of rings (37, 40, 43, 44, 48 or 61; checked when read).
    pub board: Board,
    /// Blitz marble set.
    pub blitz: bool,
    /// Seed of the match (players and games are seeded from it).
    pub seed: u64,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// Where the games are written as JSON lines (none: not written): a new file, never one
    /// that exists.
    pub out: Option<PathBuf>,
    /// The longest a `cmd:` player's program may take to answer one command, in seconds (more
    /// than 0, at most a day).
    pub answer_time: f64,
    /// Time per move in seconds of every searching player without its own `:time=` (0: none,
    /// each player searches its simulations or depth; else from 0.001 to 3600).
    pub move_time: f64,
}

impl Default for MatchFileConfig {
    fn default() -> MatchFileConfig {
        MatchFileConfig {
            players: vec!["greedy".into(), "random".into()],
            games: crate::matches::DEFAULT_GAMES,
            board: Board::R37,
            blitz: false,
            seed: 0,
            threads: 0,
            out: None,
            answer_time: crate::command::DEFAULT_ANSWER_TIME.as_secs_f64(),
            move_time: 0.0,
        }
    }
}

impl MatchFileConfig {
    /// Reads a TOML file (missing keys take their defaults) and checks it.
    pub fn from_file(path: &Path) -> Result<MatchFileConfig, ConfigError> {
        let text = read_text(path)?;
        let config: MatchFileConfig =
            toml::from_str(&text).map_err(|e| ConfigError::Parse(e.to_string()))?;
        let bad = |key, reason: String| Err(ConfigError::Value { key, reason });
        if config.players.len() != 2 {
            return bad("players", format!("give two players, not {}", config.players.len()));
        }
        for p in &config.players {
            if let Err(e) = p.parse::<crate::players::PlayerSpec>() {
                return bad("players", e.to_string());
            }
        }
        if config.threads > MAX_THREADS {
            return bad("threads", format!("must be at most {MAX_THREADS} (0: one per core)"));
        }
        if let Err(reason) = crate::command::check_answer_time(config.answer_time) {
            return bad("answer_time", reason);
        }
        if config.move_time != 0.0 {
            if let Err(reason) = crate::players::check_move_time(config.move_time) {
                return bad("move_time", format!("{reason} (or 0 for none)"));
            }
        }
        Ok(config)
    }

    /// [`MatchFileConfig::move_time`] as a duration (checked when read), `None` for 0.
    pub fn move_time(&self) -> Option<std::time::Duration> {
        if self.move_time == 0.0 {
            return None;
        }
        crate::players::check_move_time(self.move_time).ok()
    }

    /// [`MatchFileConfig::answer_time`] as a duration (checked when read).
    pub fn answer_time(&self) -> std::time::Duration {
        crate::command::check_answer_time(self.answer_time)
            .unwrap_or(crate::command::DEFAULT_ANSWER_TIME)
    }
}
