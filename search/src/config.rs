//! Search settings, in one place: [`SearchConfig`] (every setting, resolved and checked), named
//! [`Preset`]s, and [`SearchSettings`], the `[search]` table of a config file or the keywords of a
//! Python call: a preset and overrides, resolved by [`SearchSettings::resolve`] and nowhere else.
//!
//! Without a preset named, the evaluator chooses one ([`crate::Evaluator::preset`]): rollouts
//! search with [`Preset::Rollout`], networks with [`Preset::Default`]. A network's player in a
//! match (`nn:MODEL`) uses [`Preset::Network`].
//!
//! ```
//! use zertz_search::config::{Preset, SearchSettings};
//! let settings: SearchSettings = toml::from_str("preset = \"rollout\"\nc_puct = 2.5").unwrap();
//! let config = settings.resolve(Preset::Default).unwrap();
//! assert_eq!((config.c_puct, config.leaves_per_round), (2.5, 1)); // the override, the preset
//! assert!(toml::from_str::<SearchSettings>("cpuct = 1").is_err()); // unknown keys are refused
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
pub use zertz_settings::SettingError;
use zertz_settings::{Described, Kind, SettingType, Settings};

/// The most leaves one tree may collect per round.
pub const MAX_LEAVES_PER_ROUND: u32 = 1 << 16;

/// The most root actions a Gumbel search may consider ([`SearchConfig::gumbel_actions`]): every
/// action of the largest board fits.
pub const MAX_GUMBEL_ACTIONS: u32 = 1 << 16;

/// Softmax temperature of a network's priors when it plays (`nn:MODEL`, [`Preset::Network`]). A
/// network trained on the visit counts of its own short searches grows overconfident: its priors
/// keep the search from moves it rates low, and softer priors played best of 1, 2, 3 and 5 in
/// matches (BENCHMARKS.md, the network's player). Leela Chess Zero plays at 1.6–2.2 for the same
/// reason.
pub const NEURAL_POLICY_TEMPERATURE: f32 = 3.0;

zertz_settings::settings! {
    /// Every search setting; the defaults follow AlphaZero and KataGo. The root noise and tree
    /// reuse are applied by whoever drives the search (self-play, players), the rest by
    /// [`crate::mcts`].
    pub struct SearchConfig {
        /// Exploration constant `c_init` of PUCT (AlphaZero: 1.25).
        pub c_puct: f32 = 1.25, in Range::above(0.0),
        /// Growth of exploration with visits, `c_base` (AlphaZero: 19652).
        pub c_base: f32 = 19652.0, in Range::above(0.0),
        /// First-play urgency: an unvisited child is valued at the parent's value minus this times
        /// the square root of the prior mass of the children already visited (KataGo).
        pub fpu_reduction: f32 = 0.2, in Range::finite(),
        /// Virtual loss added on the path of a leaf waiting for evaluation.
        pub virtual_loss: f32 = 1.0, in Range::at_least(0.0),
        /// Leaves collected from one tree per evaluation round.
        pub leaves_per_round: u32 = 8, in Range::between(1.0, MAX_LEAVES_PER_ROUND as f64),
        /// Softmax temperature of the priors: `softmax(logits / policy_temperature)` over the legal
        /// actions (1: the network's own distribution; above 1 flattens it, as Leela Chess Zero's
        /// `PolicySoftmaxTemp`).
        pub policy_temperature: f32 = 1.0, in Range::above(0.0),
        /// Dirichlet noise at the root: total concentration spread over the legal actions (alpha =
        /// this / legal actions; KataGo: 10.83).
        pub dirichlet_alpha_total: f32 = 10.83, in Range::above(0.0),
        /// Weight of the noise in the root priors (0 turns noise off; AlphaZero: 0.25).
        pub dirichlet_fraction: f32 = 0.25, in Range::between(0.0, 1.0),
        /// Keep the chosen child's subtree for the next move.
        pub tree_reuse: bool = true,
        /// Gumbel root search (Danihelka et al., "Policy improvement by planning with Gumbel", ICLR
        /// 2022; mctx's `gumbel_muzero_policy`): the number of root actions considered, sampled
        /// without replacement by Gumbel draws plus log priors and narrowed by sequential halving
        /// over the search's simulations; the policy target is the completed-Q improved policy
        /// (`mcts::Tree::policy`). Below the root the search is PUCT as usual. 0: PUCT at
        /// the root too (visit counts are the policy, Dirichlet noise explores).
        pub gumbel_actions: u32 = 0, in Range::between(2.0, MAX_GUMBEL_ACTIONS as f64).or(0.0),
        /// `c_visit` of the Gumbel search's value transform `sigma(q) = (c_visit + max visits) *
        /// c_scale * q`, `q` rescaled to 0..1 over the root's children (mctx: 50).
        pub gumbel_c_visit: f32 = 50.0, in Range::at_least(0.0),
        /// `c_scale` of the same transform (mctx: 0.1).
        pub gumbel_c_scale: f32 = 0.1, in Range::above(0.0),
    }

    /// The `[search]` table of a config (or the keywords of a Python call): a preset, and
    /// overrides of its settings. Unknown keys are refused.
    pub struct SearchSettings overrides {
        /// The settings to start from (none: the evaluator's choice).
        pub preset: Option<Preset>,
    }
}

impl SearchSettings {
    /// The settings of the preset named here (else `default_preset`, the evaluator's choice)
    /// with the overrides applied, checked.
    pub fn resolve(&self, default_preset: Preset) -> Result<SearchConfig, SettingError> {
        let config = self.apply(self.preset.unwrap_or(default_preset).config());
        config.validate()?;
        Ok(config)
    }
}

/// The overrides as settings of their own (Python's `MCTS(**settings)`), each checked by its
/// declared range.
impl Settings for SearchSettings {}

/// A table of its own in a config (`[search]`).
impl SettingType for SearchSettings {
    const KIND: Kind = Kind::Table;
}

impl SearchConfig {
    /// Checks every value against its declared range; NaN and infinities are refused
    /// everywhere.
    pub fn validate(&self) -> Result<(), SettingError> {
        self.check_ranges()
    }
}

/// Named search settings. Each is [`SearchConfig::default`] with a few settings changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// AlphaZero's and KataGo's settings: for networks in self-play.
    Default,
    /// For evaluators without a policy (uniform priors: rollouts): one leaf per round, `c_puct`
    /// 4 and an optimistic first-play urgency (-1: unvisited children valued above their parent,
    /// by up to 1 as the visited prior mass grows).
    ///
    /// With uniform priors over ~2000 placements the default settings hardly explore: the prior
    /// term is tiny, and a pessimistic first-play value ranks an unvisited child below one that
    /// loses outright once the parent's value nears -1. These settings beat the greedy player
    /// where the defaults lose to it (the matches: BENCHMARKS.md, rollout MCTS).
    Rollout,
    /// A network's player in matches (`nn:MODEL`): the priors at policy temperature
    /// [`NEURAL_POLICY_TEMPERATURE`].
    Network,
}

impl Preset {
    /// Every preset.
    pub const ALL: [Preset; 3] = [Preset::Default, Preset::Rollout, Preset::Network];

    /// Its name in configs (`preset = "rollout"`).
    pub const fn name(self) -> &'static str {
        match self {
            Preset::Default => "default",
            Preset::Rollout => "rollout",
            Preset::Network => "network",
        }
    }

    /// Its settings.
    pub fn config(self) -> SearchConfig {
        let default = SearchConfig::default();
        match self {
            Preset::Default => default,
            Preset::Rollout => {
                SearchConfig { c_puct: 4.0, fpu_reduction: -1.0, leaves_per_round: 1, ..default }
            }
            Preset::Network => {
                SearchConfig { policy_temperature: NEURAL_POLICY_TEMPERATURE, ..default }
            }
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Preset {
    type Err = String;

    fn from_str(s: &str) -> Result<Preset, String> {
        Preset::ALL.into_iter().find(|p| p.name() == s.trim()).ok_or_else(|| {
            let names: Vec<&str> = Preset::ALL.iter().map(|p| p.name()).collect();
            format!("unknown search preset {s:?}: expected one of {}", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_is_described_with_its_doc_and_kind() {
        let text = toml::to_string(&SearchConfig::default()).unwrap();
        let config: toml::Table = toml::from_str(&text).unwrap();
        let mut keys: Vec<&str> = config.keys().map(String::as_str).collect();
        let mut described: Vec<&str> = SearchSettings::FIELDS.iter().map(|f| f.name).collect();
        keys.sort_unstable();
        described.sort_unstable();
        assert_eq!(keys, described);
        for field in SearchSettings::FIELDS {
            assert!(field.optional && !field.help().is_empty(), "{}", field.name);
            let kind = match &config[field.name] {
                toml::Value::Float(_) => Kind::Number,
                toml::Value::Integer(_) => Kind::Int,
                toml::Value::Boolean(_) => Kind::Bool,
                other => panic!("{}: {other:?}", field.name),
            };
            assert_eq!(field.kind, kind, "{}", field.name);
        }
        assert_eq!(
            SearchSettings::field("c_puct").unwrap().help(),
            "Exploration constant `c_init` of PUCT (AlphaZero: 1.25). More than 0."
        );
    }

    #[test]
    fn presets_are_valid_and_named() {
        for p in Preset::ALL {
            p.config().validate().unwrap();
            assert_eq!(p.name().parse::<Preset>(), Ok(p));
            let toml = format!("preset = \"{p}\"");
            let s: SearchSettings = toml::from_str(&toml).unwrap();
            assert_eq!(s.resolve(Preset::Default), Ok(p.config()));
        }
        assert!("alphazero".parse::<Preset>().unwrap_err().contains("default, rollout, network"));
        assert!(toml::from_str::<SearchSettings>("preset = \"alphazero\"").is_err());
    }

    #[test]
    fn overrides_apply_to_the_chosen_preset_and_are_checked() {
        let s = SearchSettings { policy_temperature: Some(1.5), ..SearchSettings::default() };
        let c = s.resolve(Preset::Rollout).unwrap();
        assert_eq!(c, SearchConfig { policy_temperature: 1.5, ..Preset::Rollout.config() });
        let named = SearchSettings { preset: Some(Preset::Default), ..s.clone() };
        assert_eq!(named.resolve(Preset::Rollout).unwrap().c_puct, 1.25);
        for (bad, key) in [
            (SearchSettings { c_puct: Some(f32::NAN), ..s.clone() }, "c_puct"),
            (SearchSettings { leaves_per_round: Some(0), ..s.clone() }, "leaves_per_round"),
            (SearchSettings { dirichlet_fraction: Some(2.0), ..s.clone() }, "dirichlet_fraction"),
            (SearchSettings { dirichlet_alpha_total: Some(-1.0), ..s }, "dirichlet_alpha_total"),
        ] {
            assert_eq!(bad.resolve(Preset::Default).unwrap_err().key, key);
        }
    }

    #[test]
    fn settings_round_trip_with_only_their_keys() {
        let s = SearchSettings {
            preset: Some(Preset::Rollout),
            tree_reuse: Some(false),
            ..SearchSettings::default()
        };
        let text = toml::to_string(&s).unwrap();
        assert_eq!(text, "preset = \"rollout\"\ntree_reuse = false\n");
        assert_eq!(toml::from_str::<SearchSettings>(&text).unwrap(), s);
        assert_eq!(toml::to_string(&SearchSettings::default()).unwrap(), "");
    }
}
