//! [`RandomBot`]: a uniformly random legal action.

use zertz_env::{Action, Position, SplitMix64};

use super::{Bot, BotError};

/// Plays a uniformly random legal action.
#[derive(Clone, Debug)]
pub struct RandomBot {
    rng: SplitMix64,
}

impl RandomBot {
    /// A random player with its own seed.
    pub fn new(seed: u64) -> RandomBot {
        RandomBot { rng: SplitMix64(seed) }
    }
}

impl Bot for RandomBot {
    fn name(&self) -> &str {
        "random"
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, BotError> {
        let n = pos.count_legal_actions();
        if n == 0 {
            return Err(BotError::no_legal_action(self.name(), pos));
        }
        pos.nth_legal_action(self.rng.below(n))
            .ok_or_else(|| BotError::no_legal_action(self.name(), pos))
    }
}
