//! One game of Rust's match with Python on either side (`zertz.evaluate`'s games): a
//! policy or a player written in Python is a [`Bot`] of the match, so that the opening, the
//! sides, the seeds, the action limit and the result are Rust's, as `zertz match` plays
//! them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use numpy::{IntoPyArray, PyArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use zertz_arena::config::MatchSettings;
use zertz_arena::matches::{match_bot, match_opening, play_match_game_between};
use zertz_arena::players::command::ProgramLimits;
use zertz_arena::players::{BotError, WorkUnit};
use zertz_arena::{Bot, Models};
use zertz_env::encode::Shape;
use zertz_env::{Action, Game, Position};
use zertz_pycommon::convert::{settings_layer, to_python};
use zertz_pycommon::evaluators::Raised;
use zertz_pycommon::players::parse_spec;
use zertz_pycommon::signals::{Signals, watch};

use crate::error::Error;
use crate::game::PyGame;
use crate::players::NETWORK_PLAYERS;

/// A side of a match played in Python: a policy, `policy(observation, mask) -> action` (the
/// observation of the player to move, flat or a dict, and its legal mask), or a player,
/// `choose(game) -> action` (a copy of the game, its history included). Its answer must be a
/// legal action index; an exception it raises, or an answer that is not one, is kept in `raised`
/// (for the caller to raise, unchanged) and fails the game.
struct PyAgent {
    agent: Py<PyAny>,
    /// A player (`choose`), not a policy.
    chooses: bool,
    /// Policies see flat observations (or dicts).
    flat: bool,
    name: String,
    /// Who it is in an error, with the game ("the policy (game 3)").
    who: String,
    /// The game so far, followed through [`Bot::observe`] (a player is given a copy).
    game: Game,
    raised: Raised,
}

impl PyAgent {
    /// The agent's answer in `pos` (its game's position), checked to be a legal action.
    fn answer(&self, py: Python<'_>, pos: &Position) -> PyResult<Action> {
        let space = pos.action_space();
        let mut mask = vec![false; space.len()];
        pos.legal_action_mask(&mut mask);
        let answer = if self.chooses {
            let copy = Py::new(py, PyGame::from_game(self.game.clone()))?;
            self.agent.call_method1(py, "choose", (copy,))?
        } else {
            let shape = Shape::of(pos.board());
            let mut planes = vec![0.0f32; shape.planes_len()];
            let mut globals = vec![0.0f32; shape.globals];
            pos.encode(&mut planes, &mut globals);
            let observation = if self.flat {
                planes.extend_from_slice(&globals);
                planes.into_pyarray(py).into_any()
            } else {
                let d = PyDict::new(py);
                let planes =
                    planes.into_pyarray(py).reshape([shape.planes, shape.height, shape.width])?;
                d.set_item("planes", planes)?;
                d.set_item("globals", globals.into_pyarray(py))?;
                d.into_any()
            };
            self.agent.call1(py, (observation, mask.clone().into_pyarray(py)))?
        };
        let item = py.import("numpy")?.call_method1("asarray", (answer.bind(py),))?;
        let index: i64 = item.call_method0("item")?.extract().map_err(|_| {
            PyValueError::new_err(format!(
                "{} answered {}, not an action index",
                self.who,
                answer.bind(py).repr().map_or_else(|_| "?".to_string(), |r| r.to_string())
            ))
        })?;
        let legal = usize::try_from(index).ok().filter(|&i| mask.get(i).copied().unwrap_or(false));
        let Some(action) = legal.and_then(|i| space.decode(i)) else {
            return Err(PyValueError::new_err(format!(
                "{} answered action {index}, which is not legal in this position (its legal \
                 actions: {} of {}; give the policy the mask)",
                self.who,
                mask.iter().filter(|&&m| m).count(),
                mask.len()
            )));
        };
        Ok(action)
    }
}

impl Bot for PyAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, BotError> {
        Python::attach(|py| self.answer(py, pos)).map_err(|e| {
            let error = e.to_string();
            self.raised.keep(e);
            BotError::Engine { player: self.name.clone(), error }
        })
    }

    fn observe(&mut self, _before: &Position, action: &Action) {
        // The match plays only legal actions; the copy follows it.
        let _ = self.game.play_action(action);
    }
}

/// One of Rust's players whose decisions run on a thread of their own while the thread
/// that Python called from looks for Ctrl-C: a signal stops its search at once (the exception
/// is kept in `raised`, and the game stops).
struct Watched {
    bot: Box<dyn Bot>,
    stop: Arc<AtomicBool>,
    raised: Raised,
}

impl Bot for Watched {
    fn name(&self) -> &str {
        self.bot.name()
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, BotError> {
        let mut signals = Signals::new();
        let bot = &mut self.bot;
        let result = watch(&mut signals, &self.stop, || Ok(bot.choose(pos)));
        if let Some(e) = signals.raised.take() {
            self.raised.keep(e);
        }
        // (A panic of the search: an error of Rust's.)
        result.unwrap_or_else(|e| {
            Err(BotError::Engine { player: self.bot.name().to_string(), error: e.to_string() })
        })
    }

    fn observe(&mut self, before: &Position, action: &Action) {
        self.bot.observe(before, action);
    }

    fn work(&self) -> Option<(WorkUnit, u64)> {
        self.bot.work()
    }
}

/// What plays a side: a player spec, or a Python agent.
enum Side {
    Spec(String),
    Agent { agent: Py<PyAny>, chooses: bool, name: String },
}

impl Side {
    fn of(side: &Bound<'_, PyAny>, which: &str) -> Result<Side, Error> {
        if let Ok(spec) = side.extract::<String>() {
            return Ok(Side::Spec(spec));
        }
        let chooses = side.hasattr("choose")?;
        if !chooses && !side.is_callable() {
            return Err(PyTypeError::new_err(format!(
                "{which} must be a player spec, a callable or a player (choose(game)), not {}",
                side.repr()?
            ))
            .into());
        }
        let name = match side.getattr("name").and_then(|n| n.extract::<String>()) {
            Ok(name) => name,
            Err(_) if chooses => "player".to_string(),
            Err(_) => "policy".to_string(),
        };
        Ok(Side::Agent { agent: side.clone().unbind(), chooses, name })
    }
}

/// Game `game` of a match (the keywords of `zertz.match`: `board`, `blitz`, `seed`,
/// `opening_actions`, `max_actions`, `move_time`, ...) between `a` (player A, P0 in the even
/// games) and `b`, each a player spec (not a network's: the engine builds those) or a
/// Python agent: a policy `policy(observation, mask) -> action` (given observations of the kind
/// `observation`, "flat" or "dict") or a player `choose(game) -> action`. `who` names each side
/// in errors ("the policy (game 3) answered ..."). Returns `{"record": the game's record (as
/// `zertz.load_records` reads them), "a_is_p0", "actions", "a_score"}`. An agent's exception is
/// raised unchanged; an answer that is not a legal action index is a ValueError naming its side
/// and the game; Ctrl-C stops a Rust player's search at once.
#[pyfunction]
#[pyo3(signature = (a, b, game, *, observation="flat", who=None, **settings))]
pub fn play_match_game<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    game: usize,
    observation: &str,
    who: Option<(String, String)>,
    settings: Option<&Bound<'py, PyDict>>,
) -> Result<Bound<'py, PyDict>, Error> {
    let flat = match observation {
        "flat" => true,
        "dict" => false,
        other => {
            return Err(Error::Shape(format!(
                "observation must be 'flat' or 'dict', not {other:?}"
            )));
        }
    };
    let layer = settings_layer::<MatchSettings>("play_match_game", settings, &[])?;
    let settings: MatchSettings = zertz_settings::from_layers([layer])?;
    let (who_a, who_b) = who.unwrap_or_else(|| ("player A".to_string(), "player B".to_string()));
    // Both sides are read before either is built (a cmd: program started).
    let (side_a, side_b) = (Side::of(a, "a")?, Side::of(b, "b")?);
    let (start, _) =
        match_opening(settings.variant(), settings.seed, game, settings.opening_actions)?;
    let raised = Raised::default();
    let stop = Arc::new(AtomicBool::new(false));
    let limits = ProgramLimits {
        stop: Some(stop.clone()),
        ..ProgramLimits::with_answer_time(settings.answer_time())
    };
    let build = |side: Side, who: String, index: u64| -> Result<Box<dyn Bot>, Error> {
        Ok(match side {
            Side::Spec(spec) => {
                let spec = parse_spec(&spec)?;
                if spec.network().is_some() {
                    return Err(Error::Shape(format!("{spec}: {NETWORK_PLAYERS}")));
                }
                let mut bot = match_bot(&spec, &settings, game, index, &Models::new(), &limits)?;
                bot.set_stop(stop.clone());
                Box::new(Watched { bot, stop: stop.clone(), raised: raised.clone() })
            }
            Side::Agent { agent, chooses, name } => Box::new(PyAgent {
                agent,
                chooses,
                flat,
                name,
                who: format!("{who} (game {game})"),
                game: start.clone(),
                raised: raised.clone(),
            }),
        })
    };
    let mut bot_a = build(side_a, who_a, 0)?;
    let mut bot_b = build(side_b, who_b, 1)?;
    let played = py.detach(|| {
        play_match_game_between(&settings, game, bot_a.as_mut(), bot_b.as_mut(), &|| {
            stop.load(Ordering::Relaxed)
        })
    });
    if let Some(e) = raised.take() {
        return Err(Error::Python(e));
    }
    let played = played?;
    let d = PyDict::new(py);
    d.set_item("record", to_python(py, &played.record)?)?;
    d.set_item("a_is_p0", played.a_is_p0)?;
    d.set_item("actions", played.actions)?;
    d.set_item("a_score", played.a_score())?;
    Ok(d)
}
