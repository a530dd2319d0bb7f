//! `zertz.Game`: a game with its history, driven by notation or action indices.

use std::collections::BTreeMap;
use std::path::PathBuf;

use numpy::{IntoPyArray, PyArray1, PyArray3, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyString;
use zertz_env::encode::Shape;
use zertz_env::sgf::Record;
use zertz_env::{Action, Board, Game, MarbleSet, Outcome, Player, Position, Variant, notation};

use crate::args::{BoardArg, IndexArg, MoveArg};
use crate::error::{Error, first_player_arg, guard, parse_player, player_name};
use crate::svg;

/// A ZÈRTZ game: the current position and the moves that led to it (third repetition draws).
///
/// Moves are written in notation (`Wd4,a1`, `Wd4`, `b4xd6xf6`, `pass`); a single action is a
/// placement, one hop of a capture, or a pass, and has an index in the board's fixed action space
/// (`action_space_size` indices).
#[pyclass(name = "Game", module = "zertz")]
#[derive(Clone, Debug)]
pub struct PyGame {
    game: Game,
}

/// Planes float32 [C, H, W] and globals float32 [G].
type Observation<'py> = (Bound<'py, PyArray3<f32>>, Bound<'py, PyArray1<f32>>);

/// Where `Game.from_sgf` reads a record from.
enum SgfSource {
    /// The SGF text itself (it starts with `(`).
    Text(String),
    /// A file.
    Path(PathBuf),
}

impl PyGame {
    /// A game that starts from `position`.
    pub fn from_position(position: Position) -> PyGame {
        PyGame { game: Game::from_position(position) }
    }

    /// `game`, with its history.
    pub fn from_game(game: Game) -> PyGame {
        PyGame { game }
    }

    fn position(&self) -> &Position {
        self.game.position()
    }

    /// The current position.
    pub fn current(&self) -> &Position {
        self.game.position()
    }

    fn play_text(&mut self, text: &str) -> Result<(), Error> {
        let pos = *self.position();
        let m = pos.parse_move(text)?;
        if self.game.is_over() {
            return Err(Error::Over(pos.move_to_string(&m)));
        }
        if pos.is_legal_move(&m) {
            return Ok(self.game.play(&m)?);
        }
        // One hop of a longer chain is a legal single action but not a whole move.
        if let Ok(a) = pos.parse_action(text)
            && pos.is_legal_action(&a)
        {
            return Ok(self.game.play_action(&a)?);
        }
        Err(zertz_env::MoveError::Illegal(text.trim().to_string()).into())
    }

    fn play_index(&mut self, index: &IndexArg) -> Result<(), Error> {
        let pos = *self.position();
        let (i, a) = index.decode(&pos.action_space())?;
        let notation = pos.action_to_string(&a);
        if self.game.is_over() {
            return Err(Error::Over(notation));
        }
        if !pos.is_legal_action(&a) {
            return Err(Error::IllegalIndex { index: i, notation });
        }
        Ok(self.game.play_action(&a)?)
    }

    /// Calls `f` with every legal single action (none once the game is over).
    fn for_each_legal_action(&self, f: impl FnMut(Action)) {
        if !self.game.is_over() {
            self.position().for_each_legal_action(f);
        }
    }
}

#[pymethods]
impl PyGame {
    /// A new game from the start position: `board` rings (one of `zertz.BOARDS`), the blitz
    /// marble set or the standard one, `first_player` ("P0" or "P1") to move (`first`, its old
    /// name, is deprecated).
    #[new]
    #[pyo3(
        signature = (board = BoardArg(Board::R37), blitz = false, first_player = None, *,
                     first = None),
        text_signature = "(board=37, blitz=False, first_player='P0')"
    )]
    fn new(
        py: Python<'_>,
        board: BoardArg,
        blitz: bool,
        first_player: Option<&str>,
        first: Option<&str>,
    ) -> Result<PyGame, Error> {
        let side = first_player_arg(py, first_player, first)?;
        guard(|| {
            let variant = Variant::of_blitz(board.0, blitz);
            Ok(PyGame { game: Game::new(variant, side) })
        })
    }

    /// A game that starts from a position in the text format (see `to_text`).
    #[staticmethod]
    fn from_text(text: &str) -> Result<PyGame, Error> {
        guard(|| Ok(PyGame { game: Game::from_position(Position::from_text(text)?) }))
    }

    /// A game replayed from a boardspace.net record: SGF text, or the path of a `.sgf` file.
    /// A record that breaks the rules raises ValueError naming the turn.
    #[staticmethod]
    fn from_sgf(py: Python<'_>, source: &Bound<'_, PyAny>) -> Result<PyGame, Error> {
        guard(|| {
            let source = if let Ok(s) = source.cast::<PyString>() {
                let s = s.to_cow()?.into_owned();
                if s.trim_start().starts_with('(') {
                    SgfSource::Text(s)
                } else {
                    SgfSource::Path(s.into())
                }
            } else {
                SgfSource::Path(source.extract().map_err(|_| {
                    Error::Type(
                        "from_sgf takes SGF text or a path (str or os.PathLike)".to_string(),
                    )
                })?)
            };
            let game = py.detach(move || -> Result<Game, Error> {
                let (text, source_name) = match source {
                    SgfSource::Text(text) => (text, "<text>".to_string()),
                    SgfSource::Path(path) => {
                        let io = |source| Error::Io { path: path.clone(), source };
                        if !std::fs::metadata(&path).map_err(io)?.is_file() {
                            let not_file = std::io::ErrorKind::InvalidInput;
                            return Err(io(std::io::Error::new(not_file, "not a regular file")));
                        }
                        let text = std::fs::read_to_string(&path).map_err(io)?;
                        (text, path.display().to_string())
                    }
                };
                let record = Record::parse(&text)
                    .map_err(|error| Error::Sgf { source_name: source_name.clone(), error })?;
                let replay =
                    record.replay().map_err(|error| Error::Replay { source_name, error })?;
                Ok(replay.game)
            })?;
            Ok(PyGame { game })
        })
    }

    /// Number of rings of the board shape.
    #[getter]
    fn board(&self) -> usize {
        self.position().board().rings()
    }

    /// Whether the game uses the blitz marble set.
    #[getter]
    fn blitz(&self) -> bool {
        self.position().marble_set() == MarbleSet::Blitz
    }

    /// The player to move: "P0" or "P1".
    #[getter]
    fn to_play(&self) -> &'static str {
        player_name(self.position().turn())
    }

    /// Marbles left in the pool: (white, grey, black).
    #[getter]
    fn pool(&self) -> (u8, u8, u8) {
        let [w, g, b] = self.position().pool().0;
        (w, g, b)
    }

    /// Marbles captured by each player: {"P0": (white, grey, black), "P1": (...)}.
    #[getter]
    fn captures(&self) -> BTreeMap<&'static str, (u8, u8, u8)> {
        Player::ALL
            .into_iter()
            .map(|p| {
                let [w, g, b] = self.position().captures(p).0;
                (player_name(p), (w, g, b))
            })
            .collect()
    }

    /// The ring of the marble that must continue a capture chain, or None.
    #[getter]
    fn chain(&self) -> Option<String> {
        let pos = self.position();
        pos.chain().map(|r| pos.geometry().name(r).to_string())
    }

    /// None while the game goes on, else the winner ("P0" or "P1") or "draw".
    #[getter]
    fn outcome(&self) -> Option<&'static str> {
        self.game.outcome().map(|o| match o {
            Outcome::Win(p) => player_name(p),
            Outcome::Draw => "draw",
        })
    }

    /// Whether the game is over.
    #[getter]
    fn is_over(&self) -> bool {
        self.game.is_over()
    }

    /// The whole-turn moves played so far, in notation.
    #[getter]
    fn moves(&self) -> Result<Vec<String>, Error> {
        guard(|| {
            Ok({
                let geo = self.position().geometry();
                self.game
                    .moves()
                    .iter()
                    .map(|m| {
                        let mut s = String::new();
                        notation::write_move(geo, m, &mut s);
                        s
                    })
                    .collect()
            })
        })
    }

    /// Number of indices of the board's action space (legal or not).
    #[getter]
    fn action_space_size(&self) -> usize {
        self.position().action_space().len()
    }

    /// Legal whole-turn moves in notation: placements with their ring removal, complete capture
    /// chains, or "pass". Empty once the game is over.
    fn legal_moves(&self, py: Python<'_>) -> Result<Vec<String>, Error> {
        guard(|| {
            Ok({
                let game = &self.game;
                py.detach(|| {
                    let pos = game.position();
                    game.legal_moves().iter().map(|m| pos.move_to_string(m)).collect()
                })
            })
        })
    }

    /// Legal single actions in notation: placements, single hops, or "pass".
    fn legal_actions(&self) -> Result<Vec<String>, Error> {
        guard(|| {
            Ok({
                let pos = self.position();
                let mut out = Vec::new();
                self.for_each_legal_action(|a| out.push(pos.action_to_string(&a)));
                out
            })
        })
    }

    /// Indices of the legal single actions, int64 [n], in the order of `legal_actions`.
    fn legal_action_indices<'py>(
        &self,
        py: Python<'py>,
    ) -> Result<Bound<'py, PyArray1<i64>>, Error> {
        guard(|| {
            Ok({
                let space = self.position().action_space();
                let mut out = Vec::new();
                self.for_each_legal_action(|a| out.push(space.index(&a) as i64));
                out.into_pyarray(py)
            })
        })
    }

    /// Legal-action mask, bool [action_space_size].
    fn legal_action_mask<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyArray1<bool>>, Error> {
        guard(|| {
            Ok({
                let space = self.position().action_space();
                let mut mask = vec![false; space.len()];
                // Rust's row-wise mask; a game drawn by repetition has no legal action.
                if !self.game.is_over() {
                    self.position().legal_action_mask(&mut mask);
                }
                mask.into_pyarray(py)
            })
        })
    }

    /// Plays a whole-turn move or a single action, given in notation or as an action index.
    /// Raises ValueError for text that is not a move, an illegal move, or a finished game.
    #[pyo3(signature = (move_, /))]
    fn play(&mut self, move_: MoveArg) -> Result<(), Error> {
        guard(|| match move_ {
            MoveArg::Text(text) => self.play_text(&text),
            MoveArg::Index(i) => self.play_index(&i),
        })
    }

    /// The single action with this index, in notation (legal or not). Raises ValueError for an
    /// index past the end, and for the hops that would leave the board (they have no notation).
    fn decode_action(&self, index: IndexArg) -> Result<String, Error> {
        guard(|| {
            let pos = self.position();
            let (i, a) = index.decode(&pos.action_space())?;
            if let Action::Hop(h) = a {
                let geo = pos.board().geometry();
                if geo.jump(h.from, h.dir).is_none() {
                    return Err(Error::OffBoardHop {
                        index: i,
                        from: geo.name(h.from).to_string(),
                    });
                }
            }
            Ok(pos.action_to_string(&a))
        })
    }

    /// The index of a single action given in notation (legal or not).
    fn action_index(&self, action: &str) -> Result<usize, Error> {
        guard(|| {
            let pos = self.position();
            Ok(pos.action_space().index(&pos.parse_action(action)?))
        })
    }

    /// The observation seen from the player to move (or from `player`, "P0" or "P1": the planes
    /// are the same, the globals' own and opponent sides are that player's): planes float32
    /// [C, H, W] and globals float32 [G] (encoding version `ENCODING_VERSION`).
    #[pyo3(signature = (player=None))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        player: Option<&str>,
    ) -> Result<Observation<'py>, Error> {
        guard(|| {
            let pos = self.position();
            let viewer = player.map(parse_player).transpose()?.unwrap_or(pos.turn());
            let shape = Shape::of(pos.board());
            let mut planes = vec![0.0; shape.planes_len()];
            let mut globals = vec![0.0; shape.globals];
            pos.encode_as(viewer, &mut planes, &mut globals);
            let planes =
                planes.into_pyarray(py).reshape([shape.planes, shape.height, shape.width])?;
            Ok((planes, globals.into_pyarray(py)))
        })
    }

    /// The current position in the text format (`Game.from_text` reads it back).
    fn to_text(&self) -> Result<String, Error> {
        guard(|| Ok(self.position().to_text()))
    }

    /// The position under symmetry `s` of the board (`0 <= s < symmetry_count(board)`), as a new
    /// game without history. Its encoding, mask and policy are this game's moved by
    /// `symmetry_tables(board)`.
    fn transformed(&self, s: usize) -> Result<PyGame, Error> {
        guard(|| {
            let pos = self.position();
            let syms = zertz_env::symmetry::symmetries(pos.board());
            let sym = syms.get(s).ok_or_else(|| {
                Error::Shape(format!(
                    "symmetry {s} is out of range: the {}-ring board has {}",
                    pos.board().rings(),
                    syms.len()
                ))
            })?;
            Ok(PyGame::from_position(sym.apply_position(pos)))
        })
    }

    /// An independent copy of the game.
    fn clone(&self) -> PyGame {
        Clone::clone(self)
    }

    fn __copy__(&self) -> PyGame {
        Clone::clone(self)
    }

    #[pyo3(signature = (_memo, /))]
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyGame {
        Clone::clone(self)
    }

    /// The board drawn as text: vacant rings by name, marbles as (W), (G), (B).
    fn __repr__(&self) -> String {
        let diagram = self.position().diagram();
        if !self.game.is_repetition() {
            return diagram;
        }
        // The position does not know about repetition: its last line says who is to move.
        let body = diagram.trim_end().rsplit_once('\n').map_or("", |(body, _)| body);
        format!("{body}\ngame over: draw by third repetition\n")
    }

    /// The board drawn as SVG, for notebooks.
    fn _repr_svg_(&self) -> Result<String, Error> {
        guard(|| Ok(svg::draw(self.position(), self.game.outcome())))
    }
}
