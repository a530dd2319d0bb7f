//! `TimedPlayer`: a searching player with its own time per move (`SPEC:time=SECONDS`).

use zertz_env::{Action, Position};

use super::{Player, PlayerError, WorkUnit};

/// A searching player with its own time per move (`SPEC:time=SECONDS`), named by its whole spec;
/// a match's time per move does not replace its own.
pub(super) struct TimedPlayer {
    pub(super) name: String,
    pub(super) inner: Box<dyn Player>,
}

impl Player for TimedPlayer {
    fn name(&self) -> &str {
        &self.name
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, PlayerError> {
        self.inner.choose(pos).map_err(|e| match e {
            PlayerError::Evaluator { error, .. } => {
                PlayerError::Evaluator { player: self.name.clone(), error }
            }
            other => other,
        })
    }

    fn observe(&mut self, before: &Position, action: &Action) {
        self.inner.observe(before, action);
    }

    fn release_memory(&mut self) {
        self.inner.release_memory();
    }

    fn kept_bytes(&self) -> usize {
        self.inner.kept_bytes()
    }

    fn set_max_tree_bytes(&mut self, bytes: usize) {
        self.inner.set_max_tree_bytes(bytes);
    }

    fn work(&self) -> Option<(WorkUnit, u64)> {
        self.inner.work()
    }
}
