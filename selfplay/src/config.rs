//! Typed self-play settings, read from TOML. Every key is documented and defaulted; an unknown key
//! is an error naming it. Examples: `configs/selfplay.toml`.

use std::path::Path;

use zertz_env::{Board, Variant};
use zertz_search::{Preset, SearchConfig, SearchSettings, SettingError};
use zertz_settings::Settings;
pub use zertz_settings::{ConfigError, read_text};

/// The fewest simulations of a self-play search: the first evaluates the root, the second visits
/// a move.
pub const MIN_SIMULATIONS: u32 = 2;
/// The most worker threads of self-play and matches (0 asks for one per core): the one cap of
/// every job's worker threads (`zertz_settings::limits`).
pub use zertz_settings::MAX_THREADS;
/// The most games one self-play worker searches together.
pub const MAX_GAMES_PER_WORKER: usize = 1 << 16;
/// The most samples of one shard file.
pub const MAX_SHARD_SIZE: usize = 1 << 20;

zertz_settings::settings! {
    /// Self-play settings: a config file's keys (configs/selfplay.toml), `zertz selfplay`'s
    /// options and the keywords of `zertz.selfplay`.
    pub struct SelfPlayConfig {
        /// The board, by its number of rings.
        pub board: Board = Board::R37,
        /// Blitz marble set (5/7/9) instead of the standard one.
        pub blitz: bool = false,
        /// Games to play.
        pub games: u32 = 100,
        /// Worker threads (0: every core).
        pub threads: usize = 0, in Range::at_most(MAX_THREADS as f64),
        /// Games searched together by one worker; their leaves are evaluated in one batch.
        pub games_per_worker: usize = 32, in Range::between(1.0, MAX_GAMES_PER_WORKER as f64),
        /// Seed of everything random (first player, noise, temperature, playout caps).
        pub seed: u64 = 0,
        /// Simulations of a full search (its visits become a policy target; one simulation
        /// evaluates the root only).
        pub full_simulations: u32 = 400, in Range::at_least(MIN_SIMULATIONS as f64),
        /// Simulations of a fast search (KataGo's playout-cap randomization; not a policy
        /// target).
        pub fast_simulations: u32 = 80, in Range::at_least(MIN_SIMULATIONS as f64),
        /// Probability that a move gets a full search (1 turns playout-cap randomization off).
        pub full_search_probability: f32 = 0.25, in Range::between(0.0, 1.0),
        /// Temperature of move selection for the first `temperature_actions` actions of a game.
        pub temperature: f32 = 1.0, in Range::at_least(0.0),
        /// Number of actions played with `temperature`; later ones use `final_temperature`.
        pub temperature_actions: u32 = 20,
        /// Temperature after that (0: the most visited action).
        pub final_temperature: f32 = 0.0, in Range::at_least(0.0),
        /// Resign when the root value of the player to move stays below this (-1 turns it
        /// off).
        pub resign_threshold: f32 = -0.95, in Range::between(-1.0, 1.0),
        /// Share of games that never resign, to measure how often resignation would have been
        /// wrong.
        pub resign_playout_fraction: f32 = 0.1, in Range::between(0.0, 1.0),
        /// A game is stopped as a draw after this many actions.
        pub max_actions: u32 = zertz_settings::DEFAULT_MAX_ACTIONS, in Range::at_least(1.0),
        /// Training samples per shard file.
        pub shard_size: usize = 4096, in Range::between(1.0, MAX_SHARD_SIZE as f64),
        /// Search settings: a preset (`preset = "rollout"`; none: the evaluator's choice) and
        /// overrides of its settings (`c_puct`, ...; docs/search.md).
        pub search: SearchSettings = SearchSettings::default(),
    }
}

impl Settings for SelfPlayConfig {
    /// The search's overrides, over any preset (every preset is in range).
    fn check_together(&self) -> Result<(), ConfigError> {
        self.search_config(Preset::Default).map(|_| ())
    }
}

impl SelfPlayConfig {
    /// Reads a TOML file (missing keys take their defaults).
    pub fn from_file(path: &Path) -> Result<SelfPlayConfig, ConfigError> {
        let text = read_text(path)?;
        SelfPlayConfig::from_toml(&text)
    }

    /// Parses TOML text and checks the values: the settings' one reader of files
    /// ([`zertz_settings::from_layers`]), an error naming the key.
    pub fn from_toml(text: &str) -> Result<SelfPlayConfig, ConfigError> {
        zertz_settings::from_layers([zertz_settings::toml_layer(text, &[])?.0])
    }

    /// The board and marble set.
    pub fn variant(&self) -> Variant {
        Variant::of_blitz(self.board, self.blitz)
    }

    /// The search settings for an evaluator that suits `preset` (when the config names none),
    /// with the overrides of `[search]`, checked.
    pub fn search_config(&self, preset: Preset) -> Result<SearchConfig, ConfigError> {
        self.search
            .resolve(preset)
            .map_err(|e: SettingError| ConfigError::Setting { section: "search", error: e })
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
        assert!(err.contains("no 38-ring board: choose 37, 40, 43, 44, 48 or 61"), "{err}");
        assert_eq!(SelfPlayConfig::from_toml("board = 61").unwrap().board, Board::R61);
        assert!(SelfPlayConfig::from_toml("games = \"many\"").is_err());
        for bad in ["0.0", "-1.0", "nan", "inf"] {
            let text = format!("[search]\npolicy_temperature = {bad}");
            let err = SelfPlayConfig::from_toml(&text).unwrap_err().to_string();
            assert!(err.starts_with("search.policy_temperature:"), "{err}");
        }
        let cfg = SelfPlayConfig::from_toml("[search]\npolicy_temperature = 2.5").unwrap();
        assert_eq!(cfg.search_config(Preset::Default).unwrap().policy_temperature, 2.5);
        // A preset, named or chosen by the evaluator, with the overrides on top.
        let cfg =
            SelfPlayConfig::from_toml("[search]\npreset = \"rollout\"\nc_puct = 3.0").unwrap();
        let c = cfg.search_config(Preset::Default).unwrap();
        assert_eq!((c.c_puct, c.leaves_per_round), (3.0, 1));
        let c = SelfPlayConfig::default().search_config(Preset::Rollout).unwrap();
        assert_eq!(c, Preset::Rollout.config());
        let err = SelfPlayConfig::from_toml("[search]\npreset = \"fast\"").unwrap_err();
        assert!(err.to_string().contains("fast"), "{err}");
    }

    #[test]
    fn non_finite_and_out_of_range_values_are_refused_by_key() {
        let refused = [
            ("temperature = nan", "temperature:"),
            ("temperature = inf", "temperature:"),
            ("final_temperature = -inf", "final_temperature:"),
            ("resign_threshold = 5.0", "resign_threshold:"),
            ("resign_threshold = nan", "resign_threshold:"),
            ("full_search_probability = nan", "full_search_probability:"),
            ("resign_playout_fraction = inf", "resign_playout_fraction:"),
            ("threads = 100000", "threads:"),
            ("games_per_worker = 0", "games_per_worker:"),
            ("games_per_worker = 1000000000", "games_per_worker:"),
            ("shard_size = 1000000000", "shard_size:"),
            ("max_actions = 0", "max_actions:"),
            ("full_simulations = 0", "full_simulations:"),
            ("full_simulations = 1", "full_simulations:"),
            ("fast_simulations = 1", "fast_simulations:"),
            ("[search]\nc_puct = nan", "search.c_puct:"),
            ("[search]\nc_puct = 0.0", "search.c_puct:"),
            ("[search]\nc_base = inf", "search.c_base:"),
            ("[search]\nfpu_reduction = nan", "search.fpu_reduction:"),
            ("[search]\nvirtual_loss = nan", "search.virtual_loss:"),
            ("[search]\nvirtual_loss = -1.0", "search.virtual_loss:"),
            ("[search]\nleaves_per_round = 0", "search.leaves_per_round:"),
            ("[search]\ndirichlet_alpha_total = -1.0", "search.dirichlet_alpha_total:"),
            ("[search]\ndirichlet_alpha_total = inf", "search.dirichlet_alpha_total:"),
            ("[search]\ndirichlet_alpha_total = nan", "search.dirichlet_alpha_total:"),
            ("[search]\ndirichlet_fraction = 2.0", "search.dirichlet_fraction:"),
            ("[search]\ndirichlet_fraction = nan", "search.dirichlet_fraction:"),
        ];
        for (text, key) in refused {
            let err = SelfPlayConfig::from_toml(text).unwrap_err().to_string();
            assert!(err.starts_with(key), "{text}: {err}");
        }
        // The edges of the ranges are accepted.
        let cfg = SelfPlayConfig::from_toml(
            "resign_threshold = -1.0\ntemperature = 0.0\nfull_simulations = 2\nfast_simulations = \
             2\n[search]\nfpu_reduction = -1.0",
        )
        .unwrap();
        assert_eq!(cfg.resign_threshold, -1.0);
        assert_eq!(cfg.fast_simulations, MIN_SIMULATIONS);
    }
}
