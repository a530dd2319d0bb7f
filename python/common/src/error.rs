//! Every failure of the bindings, and the one place where it becomes a Python exception.

use std::path::PathBuf;

use pyo3::exceptions::{
    PyIndexError, PyKeyboardInterrupt, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::{PyErr, PyTypeInfo, Python};
use zertz_arena::matches::MatchError;
use zertz_env::sgf::{ReplayError, SgfError};
use zertz_env::{
    Cause, Classify, ErrorClass, MoveError, ParseMoveError, PlayError, Player, SetupError,
};
use zertz_search::EvalError;
use zertz_search::SettingError;
use zertz_selfplay::driver::SelfPlayError;
use zertz_settings::ConfigError;

/// Why a call into the bindings failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A board size that is not one of the six shapes.
    #[error(transparent)]
    UnknownBoard(#[from] zertz_env::UnknownBoard),
    /// A player name that is not `P0` or `P1`.
    #[error("unknown player {0:?}: expected \"P0\" or \"P1\"")]
    UnknownPlayer(String),
    /// A position text that does not parse or is not a legal position.
    #[error("bad position text: {0}")]
    Setup(#[from] SetupError),
    /// A file that is not a readable boardspace record.
    #[error("{source_name}: {error}")]
    Sgf {
        /// The file name, or `<text>`.
        source_name: String,
        /// What is wrong.
        error: SgfError,
    },
    /// A record that breaks the rules (the error names the turn).
    #[error("{source_name}: {error}")]
    Replay {
        /// The file name, or `<text>`.
        source_name: String,
        /// The turn and what is wrong there.
        error: ReplayError,
    },
    /// A file that cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// A file that cannot be written, or that exists where output never replaces one.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// Text that is not a move or action in the notation.
    #[error(transparent)]
    Parse(#[from] ParseMoveError),
    /// A move or action that is not legal in the position.
    #[error(transparent)]
    Move(#[from] MoveError),
    /// A move or action refused by the rules (`zertz_env`).
    #[error(transparent)]
    Play(#[from] PlayError),
    /// An action index that is legal nowhere on this board.
    #[error("action index {index} out of range 0..{len}")]
    IndexRange {
        /// The index given.
        index: String,
        /// The size of the action space.
        len: usize,
    },
    /// An action index of a hop that leaves the board: never legal, and without notation.
    #[error("action index {index} is a hop from {from} off the board: it is never legal")]
    OffBoardHop {
        /// The index given.
        index: usize,
        /// The ring it starts from.
        from: String,
    },
    /// An action index that is not legal in the position.
    #[error("illegal action {index} ({notation})")]
    IllegalIndex {
        /// The index given.
        index: usize,
        /// The action in notation.
        notation: String,
    },
    /// A move after the end of the game.
    #[error("cannot play {0}: the game is over")]
    Over(String),
    /// An argument of the wrong Python type.
    #[error("{0}")]
    Type(String),
    /// An array of the wrong shape, or an index out of range.
    #[error("{0}")]
    Shape(String),
    /// A refused call to the vectorized environment (bad settings, array shapes, actions).
    #[error(transparent)]
    Env(#[from] zertz_vecenv::Error),
    /// A step that an episode refused (over, failed, an illegal answer of its opponent).
    #[error(transparent)]
    Episode(#[from] zertz_vecenv::StepError),
    /// An index past the end of a sequence (a game of a `VecEnv`).
    #[error("{0}")]
    Index(String),
    /// A search setting out of range.
    #[error(transparent)]
    Setting(#[from] SettingError),
    /// A self-play config that cannot be used.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An evaluator's failure (a wrong answer; an exception it raised is passed on as itself).
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// Self-play failed.
    #[error(transparent)]
    SelfPlay(#[from] SelfPlayError),
    /// An exported network failed while it worked (NaN answers, a device error): the work
    /// failed, not its settings, in self-play as in a match (where it is a [`MatchError`]).
    #[error(transparent)]
    Network(EvalError),
    /// A network that cannot be loaded or run (from the engine module, `zertz_engine`, which
    /// classifies it: this module links no libtorch).
    #[error("{message}")]
    Model {
        /// What is wrong.
        message: String,
        /// How it is reported.
        class: ErrorClass,
    },
    /// A player that could not choose (`Player.choose`): its search's evaluator or its program
    /// failed, or the game is over.
    #[error(transparent)]
    Player(#[from] zertz_arena::players::BotError),
    /// A match that cannot be played, failed or was stopped.
    #[error(transparent)]
    Match(#[from] MatchError),
    /// A dataset that cannot be made (bad records are counted, not errors).
    #[error(transparent)]
    Dataset(#[from] zertz_selfplay::dataset::DatasetError),
    /// A call into an object that is in a call already (an opponent that steps the
    /// environment it plays in).
    #[error("{0}")]
    Busy(String),
    /// A panic in Rust, caught where the call returns to Python: a bug.
    #[error("internal error of zertz (a bug, please report it): {0}")]
    Internal(String),
    /// An exception raised by Python itself (a failed conversion, a signal handler, an
    /// evaluator); passed on unchanged.
    #[error(transparent)]
    Python(#[from] PyErr),
}

impl Error {
    /// The error of a caught panic, from its payload.
    pub fn internal(payload: &(dyn std::any::Any + Send)) -> Error {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        Error::Internal(message)
    }
}

/// Runs `f`, turning a panic into [`Error::Internal`] (a `RuntimeError` in Python, which
/// `except Exception` catches, unlike pyo3's `PanicException`). The last line of defence only:
/// every failure Rust can foresee is an error of its own.
pub fn guard<T>(f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|payload| Err(Error::internal(payload.as_ref())))
}

/// `mutex` locked, or [`Error::Busy`] with `busy` where a call holds it already: a call made
/// from inside another on the same object (an opponent that calls the environment it plays in),
/// which waiting would never end. A lock poisoned by a panic is taken as it is (the panic was
/// reported as [`Error::Internal`]).
pub fn lock_or_busy<'a, T>(
    mutex: &'a std::sync::Mutex<T>,
    busy: &str,
) -> Result<std::sync::MutexGuard<'a, T>, Error> {
    match mutex.try_lock() {
        Ok(guard) => Ok(guard),
        Err(std::sync::TryLockError::Poisoned(p)) => Ok(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => Err(Error::Busy(busy.to_string())),
    }
}

impl Classify for Error {
    /// The class of Rust's own errors, each decided beside its type; the bindings' own
    /// refusals are bad values (the Python types of [`Error::Type`] and [`Error::Index`] are
    /// chosen before, in `From<Error> for PyErr`).
    fn class(&self) -> ErrorClass {
        match self {
            Error::Io { source, .. } => ErrorClass::refused(Cause::Io(source.kind())),
            Error::Write { source, .. } => ErrorClass::during(Cause::Io(source.kind())),
            Error::Env(e) => e.class(),
            Error::Episode(e) => e.class(),
            Error::Config(e) => e.class(),
            Error::SelfPlay(e) => e.class(),
            Error::Match(e) => e.class(),
            Error::Dataset(e) => e.class(),
            Error::Model { class, .. } => *class,
            Error::Player(zertz_arena::players::BotError::NoLegalAction { .. }) => {
                ErrorClass::refused(Cause::Invalid)
            }
            Error::Player(_) => ErrorClass::during(Cause::Failed),
            // A Python evaluator's wrong answer: a bad value (its exception is passed on as
            // itself, as Error::Python).
            Error::Eval(_) => ErrorClass::during(Cause::Invalid),
            // A network that fails while a match or self-play is played: the work failed.
            Error::Network(_) | Error::Internal(_) | Error::Busy(_) => {
                ErrorClass::during(Cause::Failed)
            }
            Error::UnknownBoard(_)
            | Error::UnknownPlayer(_)
            | Error::Setup(_)
            | Error::Sgf { .. }
            | Error::Replay { .. }
            | Error::Parse(_)
            | Error::Move(_)
            | Error::Play(_)
            | Error::IndexRange { .. }
            | Error::OffBoardHop { .. }
            | Error::IllegalIndex { .. }
            | Error::Over(_)
            | Error::Type(_)
            | Error::Shape(_)
            | Error::Index(_)
            | Error::Setting(_)
            | Error::Python(_) => ErrorClass::refused(Cause::Invalid),
        }
    }
}

impl From<Error> for PyErr {
    /// The exception of the error's class ([`Classify`]): a bad value `ValueError`, a file the
    /// `OSError` subclass of its kind (`FileNotFoundError`, `FileExistsError`, ...), a failure of
    /// the work `RuntimeError`, a stop `KeyboardInterrupt`.
    fn from(e: Error) -> PyErr {
        let class = e.class();
        let message = e.to_string();
        match e {
            Error::Python(e) => e,
            Error::Type(_) => PyTypeError::new_err(message),
            Error::Index(_) => PyIndexError::new_err(message),
            _ => match class.cause {
                Cause::Invalid => PyValueError::new_err(message),
                Cause::Io(kind) => PyErr::from(std::io::Error::new(kind, message)),
                Cause::Failed => PyRuntimeError::new_err(message),
                Cause::Stopped => PyKeyboardInterrupt::new_err(message),
            },
        }
    }
}

/// `P0` or `P1` (case-insensitive).
pub fn parse_player(name: &str) -> Result<Player, Error> {
    match name.trim().to_ascii_uppercase().as_str() {
        "P0" => Ok(Player::P0),
        "P1" => Ok(Player::P1),
        _ => Err(Error::UnknownPlayer(name.to_string())),
    }
}

/// The side that moves first, from `first_player` ("P0" or "P1"; default "P0") or from `first`,
/// its old name, which warns (DeprecationWarning) for one release. TypeError where both are
/// given.
pub fn first_player_arg(
    py: Python<'_>,
    first_player: Option<&str>,
    first: Option<&str>,
) -> Result<Player, Error> {
    match (first_player, first) {
        (Some(_), Some(_)) => {
            Err(Error::Type("give first_player only (first is its old name)".to_string()))
        }
        (None, Some(first)) => {
            let warning = pyo3::exceptions::PyDeprecationWarning::type_object(py);
            PyErr::warn(
                py,
                &warning,
                c"first= is deprecated and goes in the next release: use first_player=",
                1,
            )?;
            parse_player(first)
        }
        (side, None) => parse_player(side.unwrap_or("P0")),
    }
}

/// `"P0"` or `"P1"`.
pub const fn player_name(p: Player) -> &'static str {
    match p {
        Player::P0 => "P0",
        Player::P1 => "P1",
    }
}
