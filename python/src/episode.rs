//! `zertz.episode.Episode`: one game under the rules of an episode, the engine's own
//! (`zertz_vecenv::Episode`, which the `VecEnv` runs for each game of its batch). The Gymnasium
//! and PettingZoo environments wrap it.

use pyo3::prelude::*;
use zertz_env::{Board, Game, MarbleSet, Position, Variant};
use zertz_vecenv::{Episode, EpisodeOver, Step};

use crate::args::{BoardArg, IndexArg, IntArg};
use crate::error::{Error, guard, parse_player, player_name};
use crate::game::PyGame;

/// What one step did: the player who acted (`mover`), both players' rewards (`rewards`: P0's,
/// P1's), whether the game ended by the rules or by forfeit (`terminated`), reached the step
/// limit (`truncated`), and whether the action was illegal (`illegal`: its player lost, and it
/// was not played).
#[pyclass(name = "Step", module = "zertz", frozen)]
#[derive(Clone, Debug)]
pub struct PyStep {
    step: Step,
}

#[pymethods]
impl PyStep {
    /// The player who acted: "P0" or "P1".
    #[getter]
    fn mover(&self) -> &'static str {
        player_name(self.step.mover)
    }

    /// The rewards of P0 and of P1.
    #[getter]
    fn rewards(&self) -> (f32, f32) {
        (self.step.rewards[0], self.step.rewards[1])
    }

    /// Whether the game ended, by the rules or by forfeit.
    #[getter]
    fn terminated(&self) -> bool {
        self.step.terminated
    }

    /// Whether the game reached the step limit.
    #[getter]
    fn truncated(&self) -> bool {
        self.step.truncated
    }

    /// Whether the action was illegal (a forfeit).
    #[getter]
    fn illegal(&self) -> bool {
        self.step.illegal
    }

    /// The reward of `player` ("P0" or "P1").
    fn reward(&self, player: &str) -> Result<f32, Error> {
        Ok(self.step.rewards[parse_player(player)?.index()])
    }

    fn __repr__(&self) -> String {
        let s = &self.step;
        let flag = |b: bool| if b { "True" } else { "False" };
        format!(
            "Step(mover='{}', rewards=({:?}, {:?}), terminated={}, truncated={}, illegal={})",
            player_name(s.mover),
            s.rewards[0],
            s.rewards[1],
            flag(s.terminated),
            flag(s.truncated),
            flag(s.illegal)
        )
    }
}

/// One game under the rules of an episode, the engine's (those of `VecEnv` too): a step is one
/// single action of the player to move (an index of the action space); a game that ends by the
/// rules is terminated (+1 to the winner, -1 to the loser, 0 each for a draw by passes or third
/// repetition); after `max_steps` actions a game that goes on is truncated (rewards 0); an
/// action of the action space that is not legal forfeits the game (terminated, -1 to its player,
/// +1 to the other; not played); an index outside the action space is no action (ValueError).
#[pyclass(name = "Episode", module = "zertz")]
#[derive(Clone, Debug)]
pub struct PyEpisode {
    episode: Episode,
    /// The same game with its moves, for `game` (it plays every action the episode plays).
    game: Game,
}

#[pymethods]
impl PyEpisode {
    /// A new episode: `board` rings, the blitz marble set or not, `first` ("P0" or "P1") to
    /// move, truncated after `max_steps` actions (at least 1).
    #[new]
    #[pyo3(
        signature = (board = BoardArg(Board::R37), blitz = false, first = "P0",
                     max_steps = IntArg(Ok(i64::from(zertz_vecenv::DEFAULT_MAX_STEPS)))),
        text_signature = "(board=37, blitz=False, first='P0', max_steps=1000)"
    )]
    fn new(board: BoardArg, blitz: bool, first: &str, max_steps: IntArg) -> Result<Self, Error> {
        guard(|| {
            // Any Python int: one past the engine's u32 is named, not an OverflowError.
            let steps = max_steps.0.as_ref().ok().and_then(|&m| u32::try_from(m).ok());
            let max_steps = steps.filter(|&m| m >= 1).ok_or_else(|| {
                let most = u32::MAX;
                Error::Shape(format!(
                    "max_steps must be at least 1 and at most {most}, not {max_steps}"
                ))
            })?;
            let start = Position::new(Variant::of_blitz(board.0, blitz), parse_player(first)?);
            Ok(PyEpisode {
                episode: Episode::new(start, max_steps),
                game: Game::from_position(start),
            })
        })
    }

    /// The game of the episode, with its moves: a copy (playing on it leaves the episode as it
    /// is).
    #[getter]
    fn game(&self) -> PyGame {
        PyGame::from_game(self.game.clone())
    }

    /// The step limit.
    #[getter]
    fn max_steps(&self) -> u32 {
        self.episode.max_steps()
    }

    /// Actions played.
    #[getter]
    fn steps(&self) -> u32 {
        self.episode.steps()
    }

    /// Whether the episode has ended: by the rules, by forfeit or by the step limit.
    #[getter]
    fn is_over(&self) -> bool {
        self.episode.is_over()
    }

    /// Whether an illegal action ended it.
    #[getter]
    fn forfeited(&self) -> bool {
        self.episode.forfeited()
    }

    /// Whether the step limit ended it.
    #[getter]
    fn truncated(&self) -> bool {
        self.episode.truncated()
    }

    /// Plays `action` (an index of the action space) for the player to move. ValueError for an
    /// index outside the action space, and once the episode is over.
    fn step(&mut self, action: IndexArg) -> Result<PyStep, Error> {
        guard(|| {
            let (_, a) = action.decode(&self.episode.position().action_space())?;
            let step =
                self.episode.step(&a).map_err(|e: EpisodeOver| Error::Shape(e.to_string()))?;
            if !step.illegal {
                self.game.play_action(&a)?;
            }
            Ok(PyStep { step })
        })
    }

    fn __repr__(&self) -> String {
        let pos = self.episode.position();
        format!(
            "Episode(board={}, blitz={}, steps={}, max_steps={}, is_over={})",
            pos.board().rings(),
            if pos.variant().marbles == MarbleSet::Blitz { "True" } else { "False" },
            self.episode.steps(),
            self.episode.max_steps(),
            if self.episode.is_over() { "True" } else { "False" }
        )
    }
}
