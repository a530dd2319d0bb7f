//! `zertz.Bot`: Rust's players without a network, by their specs
//! ([`zertz_arena::players::SPEC_GRAMMAR`]), one decision at a time; a match's Elo (`elo`);
//! and its openings and seeds (`match_opening`, `match_player_seed`: `zertz.evaluate` seeds a
//! network's player with the latter; both leave the public API, deprecated for one release).

use pyo3::prelude::*;
use zertz_arena::Models;
use zertz_arena::matches::{match_opening as opening, player_seed};
use zertz_env::Variant;
use zertz_pycommon::args::BoardArg;
use zertz_pycommon::players::{BotPlayer, parse_spec};

use crate::error::{Error, guard};
use crate::game::PyGame;

/// What the error says of a network's player here: the engine plays it.
pub const NETWORK_PLAYERS: &str = "a network's player (nn:) is the engine's: zertz.player() \
     builds it where the engine is installed (pip install 'zertz[train]')";

/// The bot of one of Rust's players, asked for one single action at a time: `Bot("greedy")`,
/// `Bot("mcts:200", seed=3)`, `Bot("alphabeta:2")`. `choose(game)` returns the action
/// index (in the game's action space) it plays in the game's current position, with the GIL
/// released (a search stops at Ctrl-C: `KeyboardInterrupt`). `seed` drives its random choices.
/// A network's player (`nn:`) is the engine's: build it with `zertz.player`.
#[pyclass(name = "Bot", module = "zertz")]
#[derive(Debug)]
pub struct PyBot {
    player: BotPlayer,
}

#[pymethods]
impl PyBot {
    #[new]
    #[pyo3(signature = (spec, *, seed=0))]
    fn new(spec: &str, seed: u64) -> Result<PyBot, Error> {
        guard(|| {
            let parsed = parse_spec(spec)?;
            if parsed.network().is_some() {
                return Err(Error::Shape(format!("{spec:?}: {NETWORK_PLAYERS}")));
            }
            let bot =
                parsed.build(seed, &Models::new()).map_err(|e| Error::Shape(e.to_string()))?;
            Ok(PyBot { player: BotPlayer::new(&parsed, bot) })
        })
    }

    /// The player's name (its spec, as Rust writes it).
    #[getter]
    fn name(&self) -> &str {
        self.player.name()
    }

    /// The action index the player chooses in `game`'s current position (ValueError where the
    /// game is over).
    fn choose(&self, py: Python<'_>, game: PyRef<'_, PyGame>) -> Result<usize, Error> {
        let pos = *game.current();
        drop(game);
        self.player.choose(py, pos)
    }

    fn __repr__(&self) -> String {
        format!("Bot({:?})", self.player.name())
    }
}

/// The start of game `game` of a match seeded `seed` with `actions` random opening actions
/// (`zertz match --opening-actions`): games `2k` and `2k + 1` start from the same position, which
/// the players then play from both sides (player A is P0 in the even games). Where the match's
/// game would end within the opening, fewer actions are played.
#[pyfunction]
#[pyo3(signature = (board=BoardArg(zertz_env::Board::R37), blitz=false, *, seed=0, game=0,
                    actions=0),
       text_signature = "(board=37, blitz=False, *, seed=0, game=0, actions=0)")]
pub fn match_opening(
    board: BoardArg,
    blitz: bool,
    seed: u64,
    game: usize,
    actions: u32,
) -> Result<PyGame, Error> {
    guard(|| {
        let variant = Variant::of_blitz(board.0, blitz);
        let (start, _) = opening(variant, seed, game, actions)?;
        Ok(PyGame::from_game(start))
    })
}

/// The seed a match seeded `seed` gives a player of game `game`: side 0 is player A, side 1
/// player B (`zertz.match`'s own players are built with it).
#[pyfunction]
pub fn match_player_seed(seed: u64, game: usize, side: u64) -> u64 {
    player_seed(seed, game, side)
}

/// The Elo difference of a player with these results over its opponent, with the 95% interval,
/// as `zertz match` reports it: `(elo, low, high)`.
#[pyfunction]
pub fn elo(wins: u32, draws: u32, losses: u32) -> (f64, f64, f64) {
    let e = zertz_arena::matches::elo(wins, draws, losses);
    (e.diff, e.low, e.high)
}
