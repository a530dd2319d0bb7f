//! `TimedBot`: a searching player with its own time per move (`SPEC:time=SECONDS`).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use zertz_env::{Action, Position};

use super::{Bot, BotError, WorkUnit};

/// A searching player with its own time per move (`SPEC:time=SECONDS`), named by its whole spec;
/// a match's time per move does not replace its own.
pub(super) struct TimedBot {
    pub(super) name: String,
    pub(super) inner: Box<dyn Bot>,
}

impl Bot for TimedBot {
    fn name(&self) -> &str {
        &self.name
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, BotError> {
        self.inner.choose(pos).map_err(|e| match e {
            BotError::Evaluator { error, .. } => {
                BotError::Evaluator { player: self.name.clone(), error }
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

    fn set_stop(&mut self, stop: Arc<AtomicBool>) {
        self.inner.set_stop(stop);
    }

    fn set_search_threads(&mut self, threads: usize) {
        self.inner.set_search_threads(threads);
    }

    fn cpu_elsewhere(&self) -> Duration {
        self.inner.cpu_elsewhere()
    }
}
