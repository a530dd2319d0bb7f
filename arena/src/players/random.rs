//! [`RandomPlayer`]: a uniformly random legal action.

use zertz_env::{Action, Position, SplitMix64};

use super::{Player, PlayerError};

/// Plays a uniformly random legal action.
#[derive(Clone, Debug)]
pub struct RandomPlayer {
    rng: SplitMix64,
}

impl RandomPlayer {
    /// A random player with its own seed.
    pub fn new(seed: u64) -> RandomPlayer {
        RandomPlayer { rng: SplitMix64(seed) }
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> &str {
        "random"
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, PlayerError> {
        let n = pos.count_legal_actions();
        if n == 0 {
            return Err(PlayerError::no_legal_action(self.name(), pos));
        }
        pos.nth_legal_action(self.rng.below(n))
            .ok_or_else(|| PlayerError::no_legal_action(self.name(), pos))
    }
}
