//! Dirichlet noise at the root ([`Noise`]) and the Gamma draws it is made of.

use zertz_env::SplitMix64;

use zertz_settings::Described;

use crate::config::{SearchConfig, SettingError};

/// Dirichlet noise at the root: `alpha = alpha_total / legal actions`, mixed with weight
/// `fraction`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Noise {
    /// Total concentration, spread over the legal actions (KataGo: 10.83).
    pub alpha_total: f32,
    /// Weight of the noise in the root priors (AlphaZero: 0.25).
    pub fraction: f32,
    /// Seed of the noise.
    pub seed: u64,
}

impl Noise {
    /// Checks the concentration and the weight against the ranges of the search settings they
    /// come from (`dirichlet_alpha_total`, `dirichlet_fraction`).
    pub fn validate(&self) -> Result<(), SettingError> {
        // The defaults are in range: only the noise's own settings can fail.
        SearchConfig {
            dirichlet_alpha_total: self.alpha_total,
            dirichlet_fraction: self.fraction,
            ..SearchConfig::default()
        }
        .check_ranges()
    }
}

impl SearchConfig {
    /// The root noise of these settings, with `seed`.
    pub fn noise(&self, seed: u64) -> Noise {
        Noise { alpha_total: self.dirichlet_alpha_total, fraction: self.dirichlet_fraction, seed }
    }
}

/// A Gamma(alpha, 1) draw (Marsaglia and Tsang; boosted for alpha < 1). `alpha` must be positive
/// and finite ([`Noise::validate`]).
pub(super) fn gamma(rng: &mut SplitMix64, alpha: f32) -> f64 {
    let uniform =
        |rng: &mut SplitMix64| ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let (a, boost) = if alpha < 1.0 {
        (alpha as f64 + 1.0, uniform(rng).powf(1.0 / alpha as f64))
    } else {
        (alpha as f64, 1.0)
    };
    let d = a - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        // A standard normal by Box-Muller.
        let z = (-2.0 * uniform(rng).ln()).sqrt() * (std::f64::consts::TAU * uniform(rng)).cos();
        let v = (1.0 + c * z).powi(3);
        if v <= 0.0 {
            continue;
        }
        if uniform(rng).ln() < 0.5 * z * z + d - d * v + d * v.ln() {
            return d * v * boost;
        }
    }
}
