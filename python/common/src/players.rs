//! Rust's players one decision at a time, for both native modules: `zertz.Bot` (the
//! players without a network) and the engine's `Player` (networks too). Each module builds the
//! bot; this is what they share: choosing with the GIL released, Ctrl-C during a search, and
//! the action as an index of the board's action space.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use zertz_arena::players::SpecError;
use zertz_arena::{Bot, PlayerSpec};
use zertz_env::{ActionSpace, Position};

use crate::error::{Error, guard};
use crate::signals::run_detached;

/// A spec read by Rust's grammar of player specs; ValueError for one that is not a player.
pub fn parse_spec(spec: &str) -> Result<PlayerSpec, Error> {
    spec.parse().map_err(|e: SpecError| Error::Shape(e.to_string()))
}

/// A built player and the stop its searches look at.
pub struct BotPlayer {
    bot: Mutex<Box<dyn Bot>>,
    name: String,
    /// Whether it searches (then a decision may take long: Ctrl-C is looked for).
    searches: bool,
    stop: Arc<AtomicBool>,
}

impl std::fmt::Debug for BotPlayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotPlayer").field("name", &self.name).finish_non_exhaustive()
    }
}

impl BotPlayer {
    /// `bot`, built from `spec`.
    pub fn new(spec: &PlayerSpec, mut bot: Box<dyn Bot>) -> BotPlayer {
        let stop = Arc::new(AtomicBool::new(false));
        bot.set_stop(stop.clone());
        let name = bot.name().to_string();
        BotPlayer { bot: Mutex::new(bot), name, searches: spec.searches(), stop }
    }

    /// The player's name (its canonical spec).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The action index (in the board's action space) the player chooses in `pos`, with the
    /// GIL released. ValueError where the game is over; RuntimeError where the player failed; a
    /// search stopped by Ctrl-C raises `KeyboardInterrupt`.
    pub fn choose(&self, py: Python<'_>, pos: Position) -> Result<usize, Error> {
        if pos.is_over() {
            return Err(Error::Shape(format!("{} cannot choose: the game is over", self.name)));
        }
        let choose = || {
            let mut bot = self.bot.lock().unwrap_or_else(|p| p.into_inner());
            Ok(bot.choose(&pos)?)
        };
        let action = if self.searches {
            self.stop.store(false, Ordering::Relaxed);
            let (result, signal) = run_detached(py, &self.stop, choose);
            if let Some(e) = signal {
                return Err(Error::Python(e));
            }
            result?
        } else {
            py.detach(|| guard(choose))?
        };
        Ok(ActionSpace::new(pos.board()).index(&action))
    }
}
