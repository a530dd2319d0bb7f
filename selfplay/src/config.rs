//! Typed self-play settings, read from TOML. Every key is documented and defaulted; an unknown key
//! is an error naming it. Examples: `configs/selfplay.toml`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use zertz_env::{Board, MarbleSet, Variant};

use crate::mcts::SearchConfig;

/// A config file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not valid TOML, an unknown key, or a value of the wrong type.
    #[error("{0}")]
    Toml(String),
    /// A value out of range.
    #[error("{key}: {reason}")]
    Value {
        /// The key.
        key: &'static str,
        /// What is wrong.
        reason: String,
    },
}

/// PUCT search settings (see [`SearchConfig`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchSection {
    /// Exploration constant `c_init` (AlphaZero: 1.25).
    pub c_puct: f32,
    /// Growth of exploration with visits, `c_base` (AlphaZero: 19652).
    pub c_base: f32,
    /// First-play urgency: unvisited children are valued at the parent's value minus this.
    pub fpu_reduction: f32,
    /// Virtual loss on the path of a leaf waiting for evaluation.
    pub virtual_loss: f32,
    /// Leaves collected from one tree per evaluation round.
    pub leaves_per_round: u32,
    /// Softmax temperature of the network's priors (1: as it says; above 1 flatter).
    pub policy_temperature: f32,
    /// Dirichlet noise at the root: total concentration spread over the legal actions
    /// (alpha = this / legal actions; KataGo: 10.83).
    pub dirichlet_alpha_total: f32,
    /// Weight of the noise in the root priors (0 turns noise off; AlphaZero: 0.25).
    pub dirichlet_fraction: f32,
    /// Keep the chosen child's subtree for the next move.
    pub tree_reuse: bool,
}

impl Default for SearchSection {
    fn default() -> SearchSection {
        let s = SearchConfig::default();
        SearchSection {
            c_puct: s.c_puct,
            c_base: s.c_base,
            fpu_reduction: s.fpu_reduction,
            virtual_loss: s.virtual_loss,
            leaves_per_round: s.leaves_per_round,
            policy_temperature: s.policy_temperature,
            dirichlet_alpha_total: 10.83,
            dirichlet_fraction: 0.25,
            tree_reuse: true,
        }
    }
}

impl SearchSection {
    /// The search part as a [`SearchConfig`].
    pub fn search_config(&self) -> SearchConfig {
        SearchConfig {
            c_puct: self.c_puct,
            c_base: self.c_base,
            fpu_reduction: self.fpu_reduction,
            virtual_loss: self.virtual_loss,
            leaves_per_round: self.leaves_per_round,
            policy_temperature: self.policy_temperature,
        }
    }
}

/// Self-play settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfPlayConfig {
    /// Board size: 37, 40, 43, 44, 48 or 61 rings.
    pub board: usize,
    /// Blitz marble set (5/7/9) instead of the standard one.
    pub blitz: bool,
    /// Games to play.
    pub games: u32,
    /// Worker threads (0: every core).
    pub threads: usize,
    /// Games searched together by one worker; their leaves are evaluated in one batch.
    pub games_per_worker: usize,
    /// Seed of everything random (first player, noise, temperature, playout caps).
    pub seed: u64,
    /// Simulations of a full search (its visits become a policy target).
    pub full_simulations: u32,
    /// Simulations of a fast search (KataGo's playout-cap randomization; not a policy target).
    pub fast_simulations: u32,
    /// Probability that a move gets a full search (1 turns playout-cap randomization off).
    pub full_search_probability: f32,
    /// Temperature of move selection for the first `temperature_actions` actions of a game.
    pub temperature: f32,
    /// Number of actions played with `temperature`; later ones use `final_temperature`.
    pub temperature_actions: u32,
    /// Temperature after that (0: the most visited action).
    pub final_temperature: f32,
    /// Resign when the root value of the player to move stays below this (-1 turns it off).
    pub resign_threshold: f32,
    /// Share of games that never resign, to measure how often resignation would have been wrong.
    pub resign_playout_fraction: f32,
    /// A game is stopped as a draw after this many actions.
    pub max_actions: u32,
    /// Training samples per shard file.
    pub shard_size: usize,
    /// Search settings.
    pub search: SearchSection,
}

impl Default for SelfPlayConfig {
    fn default() -> SelfPlayConfig {
        SelfPlayConfig {
            board: 37,
            blitz: false,
            games: 100,
            threads: 0,
            games_per_worker: 32,
            seed: 0,
            full_simulations: 400,
            fast_simulations: 80,
            full_search_probability: 0.25,
            temperature: 1.0,
            temperature_actions: 20,
            final_temperature: 0.0,
            resign_threshold: -0.95,
            resign_playout_fraction: 0.1,
            max_actions: 1000,
            shard_size: 4096,
            search: SearchSection::default(),
        }
    }
}

impl SelfPlayConfig {
    /// Reads a TOML file (missing keys take their defaults).
    pub fn from_file(path: &Path) -> Result<SelfPlayConfig, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Io { path: path.to_path_buf(), source })?;
        SelfPlayConfig::from_toml(&text)
    }

    /// Parses TOML text and checks the values.
    pub fn from_toml(text: &str) -> Result<SelfPlayConfig, ConfigError> {
        let config: SelfPlayConfig =
            toml::from_str(text).map_err(|e| ConfigError::Toml(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// The board and marble set.
    pub fn variant(&self) -> Variant {
        let board = Board::from_rings(self.board).unwrap_or(Board::R37);
        Variant::new(board, if self.blitz { MarbleSet::Blitz } else { MarbleSet::Standard })
    }

    /// Checks every value's range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key, reason: &str| Err(ConfigError::Value { key, reason: reason.to_string() });
        if Board::from_rings(self.board).is_none() {
            return bad("board", "must be 37, 40, 43, 44, 48 or 61");
        }
        if self.games_per_worker == 0 {
            return bad("games_per_worker", "must be at least 1");
        }
        if self.full_simulations == 0 || self.fast_simulations == 0 {
            return bad("full_simulations", "simulations must be at least 1");
        }
        if !(0.0..=1.0).contains(&self.full_search_probability) {
            return bad("full_search_probability", "must be between 0 and 1");
        }
        if !(0.0..=1.0).contains(&self.resign_playout_fraction) {
            return bad("resign_playout_fraction", "must be between 0 and 1");
        }
        if self.temperature < 0.0 || self.final_temperature < 0.0 {
            return bad("temperature", "must not be negative");
        }
        if self.shard_size == 0 {
            return bad("shard_size", "must be at least 1");
        }
        if !(0.0..=1.0).contains(&self.search.dirichlet_fraction) {
            return bad("search.dirichlet_fraction", "must be between 0 and 1");
        }
        if self.search.c_puct <= 0.0 || self.search.c_base <= 0.0 {
            return bad("search.c_puct", "c_puct and c_base must be positive");
        }
        if !(self.search.policy_temperature > 0.0 && self.search.policy_temperature.is_finite()) {
            return bad("search.policy_temperature", "must be a positive number");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip_and_unknown_keys_are_named() {
        let text = toml::to_string(&SelfPlayConfig::default()).unwrap();
        assert_eq!(SelfPlayConfig::from_toml(&text).unwrap(), SelfPlayConfig::default());
        let err = SelfPlayConfig::from_toml("gmaes = 3").unwrap_err().to_string();
        assert!(err.contains("gmaes"), "{err}");
        let err = SelfPlayConfig::from_toml("[search]\ncpuct = 1").unwrap_err().to_string();
        assert!(err.contains("cpuct"), "{err}");
        let err = SelfPlayConfig::from_toml("board = 38").unwrap_err().to_string();
        assert!(err.starts_with("board:"), "{err}");
        assert!(SelfPlayConfig::from_toml("games = \"many\"").is_err());
        for bad in ["0.0", "-1.0", "nan"] {
            let text = format!("[search]\npolicy_temperature = {bad}");
            let err = SelfPlayConfig::from_toml(&text).unwrap_err().to_string();
            assert!(err.starts_with("search.policy_temperature:"), "{err}");
        }
        let cfg = SelfPlayConfig::from_toml("[search]\npolicy_temperature = 2.5").unwrap();
        assert_eq!(cfg.search.search_config().policy_temperature, 2.5);
    }
}

/// Match settings (`zertz match --config`); command-line options override them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MatchFileConfig {
    /// The two players: `random`, `greedy`, `mcts:SIMS` (rollout MCTS) or `uniform:SIMS`.
    pub players: Vec<String>,
    /// Number of games; the players alternate who starts.
    pub games: usize,
    /// Board size: 37, 40, 43, 44, 48 or 61 rings.
    pub board: usize,
    /// Blitz marble set.
    pub blitz: bool,
    /// Seed of the match (players and games are seeded from it).
    pub seed: u64,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// Where the games are written as JSON lines (none: not written).
    pub out: Option<PathBuf>,
}

impl Default for MatchFileConfig {
    fn default() -> MatchFileConfig {
        MatchFileConfig {
            players: vec!["greedy".into(), "random".into()],
            games: 100,
            board: 37,
            blitz: false,
            seed: 0,
            threads: 0,
            out: None,
        }
    }
}

impl MatchFileConfig {
    /// Reads a TOML file (missing keys take their defaults) and checks it.
    pub fn from_file(path: &Path) -> Result<MatchFileConfig, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Io { path: path.to_path_buf(), source })?;
        let config: MatchFileConfig =
            toml::from_str(&text).map_err(|e| ConfigError::Toml(e.to_string()))?;
        let bad = |key, reason: String| Err(ConfigError::Value { key, reason });
        if config.players.len() != 2 {
            return bad("players", format!("give two players, not {}", config.players.len()));
        }
        for p in &config.players {
            if let Err(e) = p.parse::<crate::players::PlayerSpec>() {
                return bad("players", e);
            }
        }
        if Board::from_rings(config.board).is_none() {
            return bad("board", "must be 37, 40, 43, 44, 48 or 61".into());
        }
        Ok(config)
    }
}
