//! `zertz.Episode`: one game under the rules of an episode, Rust's own
//! (`zertz_vecenv::Episode`, which the `VecEnv` runs for each game of its batch), against an
//! opponent written in Python or between two players. The Gymnasium and PettingZoo
//! environments wrap it.

use pyo3::exceptions::PyValueError;
use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;
use pyo3::{PyTraverseError, PyVisit};
use zertz_env::{Action, Board, Game, MarbleSet, Player, Position, Variant};
use zertz_vecenv::{Episode, Step, StepError};

use crate::args::{BoardArg, IndexArg, IntArg};
use crate::error::{Error, first_player_arg, guard, lock_or_busy, parse_player, player_name};
use crate::game::PyGame;

/// What one step did: the player who acted (`mover`), both players' rewards (`rewards`: P0's,
/// P1's), whether the game ended by the rules or by forfeit (`terminated`), reached the step
/// limit (`truncated`), and whether the action was illegal (`illegal`: its player lost, and it
/// was not played).
#[pyclass(name = "Step", module = "zertz", frozen)]
#[derive(Clone, Debug)]
pub struct PyStep {
    step: Step,
    /// The opponent's actions that answered this step, as indices.
    opponent_actions: Vec<usize>,
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

    /// The opponent's actions (indices) that answered the learner's action, in order: its
    /// whole turn (empty without an opponent, and when the step ended the game).
    #[getter]
    fn opponent_actions(&self) -> Vec<usize> {
        self.opponent_actions.clone()
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

/// One game under the rules of an episode, Rust's (those of `VecEnv` too): a step is one
/// single action of the player to move (an index of the action space); a game that ends by the
/// rules is terminated (+1 to the winner, -1 to the loser, 0 each for a draw by passes or third
/// repetition); after `max_steps` actions a game that goes on is truncated (rewards 0); an
/// action of the action space that is not legal forfeits the game (terminated, -1 to its player,
/// +1 to the other; not played); an index outside the action space is no action (ValueError).
///
/// With an opponent (`set_opponent`), a step is the learner's action and the opponent's whole
/// turn after it; an opponent that raises or answers an action that is not legal ends the
/// episode without a result (its exception comes through as itself; an illegal answer is a
/// ValueError), and every later step raises RuntimeError, naming that failure, until
/// `restart`. An opponent cannot call the episode it plays in (RuntimeError): it is given a
/// copy of the game.
#[pyclass(name = "Episode", module = "zertz")]
#[derive(Debug)]
pub struct PyEpisode {
    /// Locked by each call, so that a call made while another runs (an opponent that calls its
    /// own episode) is refused, not waited for.
    state: Mutex<State>,
}

/// What an episode's calls read and play.
#[derive(Debug)]
struct State {
    episode: Episode,
    /// The same game with its moves, for `game` (it plays every action the episode plays).
    game: Game,
    /// The opponent, `opponent(game) -> action index`, and the side it plays against.
    opponent: Option<(Py<PyAny>, Player)>,
}

/// The error of a call made while the episode is in a step: from its own opponent.
const BUSY: &str = "the episode is in a step: an opponent cannot step or restart the episode it \
                    plays in (nor read it: it is given a copy of the game)";

impl PyEpisode {
    /// The state, locked; [`BUSY`] while a call (a step) holds it.
    fn state(&self) -> Result<MutexGuard<'_, State>, Error> {
        lock_or_busy(&self.state, BUSY)
    }

    /// Plays the opponent's turn in `state`, if there is an opponent and it is to move: the
    /// actions it played, and the step of the last one. Its exception is returned as itself.
    fn opponent_turn(
        py: Python<'_>,
        state: &mut State,
    ) -> Result<(Vec<usize>, Option<Step>), Error> {
        let State { episode, game, opponent } = state;
        let Some((opponent, learner)) = opponent else { return Ok((Vec::new(), None)) };
        let space = episode.position().action_space();
        let game_now = &*game;
        let mut raised: Option<PyErr> = None;
        let mut ask = |_: &Position, so_far: &[Action]| -> zertz_vecenv::Answer {
            let mut copy = game_now.clone();
            for a in so_far {
                copy.play_action(a).map_err(|e| e.to_string())?;
            }
            let answer = opponent
                .call1(py, (PyGame::from_game(copy),))
                .and_then(|a| a.extract::<IndexArg>(py).map_err(PyErr::from))
                .and_then(|index| {
                    let (_, action) = index
                        .decode(&space)
                        .map_err(|e| PyValueError::new_err(format!("the opponent answered {e}")))?;
                    Ok(action)
                });
            match answer {
                Ok(action) => Ok(action),
                Err(e) => {
                    let message = e.to_string();
                    raised.get_or_insert(e);
                    Err(message)
                }
            }
        };
        let turn = episode.opponent_turn(*learner, &mut ask);
        let turn = match (turn, raised) {
            (Ok(turn), _) => turn,
            (Err(_), Some(e)) => return Err(Error::Python(e)),
            (Err(e), None) => return Err(e.into()),
        };
        for a in &turn.actions {
            game.play_action(a)?;
        }
        Ok((turn.actions.iter().map(|a| space.index(a)).collect(), turn.last))
    }
}

#[pymethods]
impl PyEpisode {
    /// A new episode: `board` rings, the blitz marble set or not, `first_player` ("P0" or "P1")
    /// to move (`first`, its old name, is deprecated), truncated after `max_steps` actions (at
    /// least 1).
    #[new]
    #[pyo3(
        signature = (board = BoardArg(Board::R37), blitz = false, first_player = None,
                     max_steps = IntArg(Ok(i64::from(zertz_vecenv::DEFAULT_MAX_STEPS))), *,
                     first = None),
        text_signature = "(board=37, blitz=False, first_player='P0', max_steps=1000)"
    )]
    fn new(
        py: Python<'_>,
        board: BoardArg,
        blitz: bool,
        first_player: Option<&str>,
        max_steps: IntArg,
        first: Option<&str>,
    ) -> Result<Self, Error> {
        let side = first_player_arg(py, first_player, first)?;
        guard(|| {
            // Any Python int: one past Rust's u32 is named, not an OverflowError.
            let steps = max_steps.0.as_ref().ok().and_then(|&m| u32::try_from(m).ok());
            let max_steps = steps.filter(|&m| m >= 1).ok_or_else(|| {
                let most = u32::MAX;
                Error::Shape(format!(
                    "max_steps must be at least 1 and at most {most}, not {max_steps}"
                ))
            })?;
            let start = Position::new(Variant::of_blitz(board.0, blitz), side);
            let (episode, game) = (Episode::new(start, max_steps), Game::from_position(start));
            let state = State { episode, game, opponent: None };
            Ok(PyEpisode { state: Mutex::new(state) })
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // (Not while a step holds the state: the collector then does not see its opponent, as
        // it sees no borrowed object's references.)
        if let Ok(state) = self.state.try_lock()
            && let Some((opponent, _)) = &state.opponent
        {
            visit.call(opponent)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.state.get_mut().unwrap_or_else(|p| p.into_inner()).opponent = None;
    }

    /// The game of the episode, with its moves: a copy (playing on it leaves the episode as it
    /// is).
    #[getter]
    fn game(&self) -> Result<PyGame, Error> {
        Ok(PyGame::from_game(self.state()?.game.clone()))
    }

    /// The step limit.
    #[getter]
    fn max_steps(&self) -> Result<u32, Error> {
        Ok(self.state()?.episode.max_steps())
    }

    /// Actions played.
    #[getter]
    fn steps(&self) -> Result<u32, Error> {
        Ok(self.state()?.episode.steps())
    }

    /// Whether the episode has ended: by the rules, by forfeit, by the step limit, or by a
    /// failure of its opponent.
    #[getter]
    fn is_over(&self) -> Result<bool, Error> {
        Ok(self.state()?.episode.is_over())
    }

    /// Whether an illegal action ended it.
    #[getter]
    fn forfeited(&self) -> Result<bool, Error> {
        Ok(self.state()?.episode.forfeited())
    }

    /// Whether the step limit ended it.
    #[getter]
    fn truncated(&self) -> Result<bool, Error> {
        Ok(self.state()?.episode.truncated())
    }

    /// Why the episode ended without a result (its opponent failed), or None.
    #[getter]
    fn failure(&self) -> Result<Option<String>, Error> {
        Ok(self.state()?.episode.failure().map(str::to_string))
    }

    /// Plays the side that is not `learner`'s ("P0" or "P1") with `opponent`, a callable
    /// `opponent(game) -> action index` given a copy of the game where it is to move (None: two
    /// players again), from the next step or restart on.
    #[pyo3(signature = (opponent, learner = "P0"))]
    fn set_opponent(&self, opponent: Option<Bound<'_, PyAny>>, learner: &str) -> Result<(), Error> {
        let mut state = self.state()?;
        let learner = parse_player(learner)?;
        state.opponent = match opponent.filter(|o| !o.is_none()) {
            None => None,
            Some(o) if o.is_callable() => Some((o.unbind(), learner)),
            Some(o) => {
                return Err(Error::Type(format!(
                    "opponent must be a callable opponent(game) -> action, or None, not {}",
                    o.get_type().name().map_or_else(|_| "?".to_string(), |n| n.to_string())
                )));
            }
        };
        Ok(())
    }

    /// Starts the episode again from the start, `first_player` ("P0" or "P1") to move (`first`,
    /// its old name, is deprecated), and plays the opponent's first turn where it begins; the
    /// opponent's actions (indices). The episode is whole again after a failure.
    #[pyo3(
        signature = (first_player = None, *, first = None),
        text_signature = "(self, first_player='P0')"
    )]
    fn restart(
        &self,
        py: Python<'_>,
        first_player: Option<&str>,
        first: Option<&str>,
    ) -> Result<Vec<usize>, Error> {
        let side = first_player_arg(py, first_player, first)?;
        let mut state = self.state()?;
        let start = Position::new(state.episode.position().variant(), side);
        state.episode.restart(start);
        state.game = Game::from_position(start);
        Ok(PyEpisode::opponent_turn(py, &mut state)?.0)
    }

    /// Plays `action` (an index of the action space) for the player to move, and then the
    /// opponent's turn, if there is an opponent: the step says what the action did with the
    /// rewards and the end of the whole turn, and the opponent's actions. ValueError for an
    /// index outside the action space, once the episode is over, and when it is the
    /// opponent's turn; RuntimeError once its opponent failed.
    fn step(&self, py: Python<'_>, action: IndexArg) -> Result<PyStep, Error> {
        let mut state = self.state()?;
        guard(|| {
            let state = &mut *state;
            if let Some(reason) = state.episode.failure() {
                return Err(StepError::Failed(reason.to_string()).into());
            }
            if let Some((_, learner)) = state.opponent
                && state.episode.opponent_to_move(learner)
            {
                return Err(Error::Shape(format!(
                    "it is the opponent's turn ({}), not the learner's: restart the episode",
                    player_name(state.episode.position().turn())
                )));
            }
            let (_, a) = action.decode(&state.episode.position().action_space())?;
            let step = state.episode.step(&a)?;
            if !step.illegal {
                state.game.play_action(&a)?;
            }
            let (opponent_actions, last) = PyEpisode::opponent_turn(py, state)?;
            Ok(PyStep { step: step.then(last), opponent_actions })
        })
    }

    fn __repr__(&self) -> Result<String, Error> {
        let state = self.state()?;
        let (episode, pos) = (&state.episode, state.episode.position());
        Ok(format!(
            "Episode(board={}, blitz={}, steps={}, max_steps={}, is_over={})",
            pos.board().rings(),
            if pos.variant().marbles == MarbleSet::Blitz { "True" } else { "False" },
            episode.steps(),
            episode.max_steps(),
            if episode.is_over() { "True" } else { "False" }
        ))
    }
}
