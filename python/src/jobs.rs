//! `zertz.load_records`, `zertz.parse_player`, `zertz.dataset`, `zertz.selfplay_config`,
//! `zertz._zertz.match_config` and `zertz._zertz.match_settings`: records, player specs,
//! datasets and settings, without networks (the jobs that run them, `zertz.selfplay` and
//! `zertz.match`, are the engine module's: `python/engine`).

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use zertz_arena::config::MatchSettings;
use zertz_pycommon::args::BoardArg;
use zertz_pycommon::convert::{describe_settings, settings_layer, to_python};
use zertz_pycommon::error::Error;
use zertz_selfplay::config::SelfPlayConfig;

/// The game records of a file (`games-*.jsonl` of self-play, `zertz match --out`), one dict per
/// line, each checked by Rust's record type and replayed: `{"game", "board", "blitz",
/// "first_player", "players" (matches only), "moves", "winner", "end", "captures"}`. Raises
/// ValueError naming the line that is not a record or does not replay, OSError for a file that
/// cannot be read. (Records of earlier versions name `first_player` `first`; they read the same.)
#[pyfunction]
pub fn load_records<'py>(py: Python<'py>, path: PathBuf) -> Result<Bound<'py, PyAny>, Error> {
    use zertz_env::records::GameRecord;
    let text = zertz_env::files::read_text(&path)
        .map_err(|source| Error::Io { path: path.clone(), source })?;
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let bad = |e: zertz_env::records::RecordError| {
            Error::Shape(format!("{}:{}: {e}", path.display(), i + 1))
        };
        let record = GameRecord::from_json(line).map_err(bad)?;
        record.replay().map_err(bad)?;
        records.push(record);
    }
    to_python(py, &records)
}

/// A player spec (its grammar: `zertz.PLAYER_SPECS`) read by Rust: `{"name": canonical spec,
/// "model": the model file or None, "simulations": the count or None, "precision": the precision
/// it names or None, "gumbel": the actions its Gumbel root considers or None, "depth": an
/// alpha-beta depth or None, "time": its own time per move in seconds or None, "program": a
/// `cmd:` player's program or None}`. Raises ValueError for anything else.
#[pyfunction]
pub fn parse_player<'py>(py: Python<'py>, spec: &str) -> Result<Bound<'py, PyDict>, Error> {
    use zertz_arena::PlayerSpec;
    let parsed: PlayerSpec =
        spec.parse().map_err(|e: zertz_arena::players::SpecError| Error::Shape(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("name", parsed.to_string())?;
    d.set_item("model", parsed.model())?;
    let simulations = match parsed.untimed() {
        PlayerSpec::Mcts(n) | PlayerSpec::Uniform(n) => Some(*n),
        PlayerSpec::Neural { simulations, .. } => Some(*simulations),
        PlayerSpec::Random
        | PlayerSpec::Greedy
        | PlayerSpec::Command(_)
        | PlayerSpec::AlphaBeta(_)
        | PlayerSpec::Timed { .. } => None,
    };
    let depth = match parsed.untimed() {
        PlayerSpec::AlphaBeta(d) => *d,
        _ => None,
    };
    d.set_item("simulations", simulations)?;
    d.set_item("depth", depth)?;
    d.set_item("time", parsed.own_time().map(|t| t.as_secs_f64()))?;
    d.set_item("precision", parsed.network().and_then(|(_, p)| p).map(|p| p.name()))?;
    let gumbel = match parsed.untimed() {
        PlayerSpec::Neural { gumbel, .. } => *gumbel,
        _ => None,
    };
    d.set_item("gumbel", gumbel)?;
    d.set_item("program", parsed.command().and_then(|words| words.first()))?;
    Ok(d)
}

/// Training shards from game records (see `zertz dataset`): `sources` are record files, folders
/// and archives; `out` a new or empty folder that gets `train/`, `validation/`, `games.jsonl`
/// and, last, the manifest `dataset.json` (made beside it as `.NAME.partial-PID` and renamed when
/// complete: a failure leaves nothing, and the next build removes what a killed one left).
/// Games are kept by `boards` (None: all), `min_turns`, players left out (`exclude_players`, and
/// boardspace's robots with `exclude_robots`), `ends` (names of ends of a finished game,
/// "capture" say; None: all of them), at most `max_games`; `validation` of them (by game) are
/// held out. Returns the summary dict (counts by reason of what was left out or failed).
#[pyfunction]
#[pyo3(signature = (sources, out, *, boards=None, min_turns=0, exclude_players=Vec::new(),
                    exclude_robots=false, ends=None, validation=None, seed=0, shard_size=None,
                    max_games=None),
       text_signature = "(sources, out, *, boards=None, min_turns=0, exclude_players=(), \
                         exclude_robots=False, ends=None, validation=None, seed=0, \
                         shard_size=None, max_games=None)")]
#[allow(clippy::too_many_arguments)]
pub fn dataset<'py>(
    py: Python<'py>,
    sources: Vec<PathBuf>,
    out: PathBuf,
    boards: Option<Vec<BoardArg>>,
    min_turns: usize,
    exclude_players: Vec<String>,
    exclude_robots: bool,
    ends: Option<Vec<String>>,
    validation: Option<f64>,
    seed: u64,
    shard_size: Option<usize>,
    max_games: Option<u64>,
) -> Result<Bound<'py, PyDict>, Error> {
    use zertz_selfplay::dataset::{DatasetConfig, ROBOTS};
    let default = DatasetConfig::default();
    let mut exclude = exclude_players;
    if exclude_robots {
        exclude.extend(ROBOTS.iter().map(|r| r.to_string()));
    }
    let ends = match ends {
        None => default.ends.clone(),
        Some(names) => {
            zertz_selfplay::dataset::parse_ends(&names).map_err(|e| Error::Shape(e.to_string()))?
        }
    };
    let config = DatasetConfig {
        boards: boards.unwrap_or_default().into_iter().map(|b| b.0).collect(),
        min_turns,
        exclude_players: exclude,
        ends,
        validation: validation.unwrap_or(default.validation),
        seed,
        shard_size: shard_size.unwrap_or(default.shard_size),
        max_games,
    };
    let summary = py.detach(|| zertz_selfplay::dataset::build(&sources, &config, &out, &|_| {}))?;
    Ok(to_python(py, &summary)?.cast_into::<PyDict>().map_err(PyErr::from)?)
}

/// The self-play settings `config` (a TOML file, a dict of the same keys, or None: the defaults)
/// as Rust reads them: a dict with every key, checked. Raises ValueError naming a key that
/// is unknown or out of range.
#[pyfunction]
#[pyo3(signature = (config=None))]
pub fn selfplay_config<'py>(
    py: Python<'py>,
    config: Option<&Bound<'py, PyAny>>,
) -> Result<Bound<'py, PyAny>, Error> {
    to_python(py, &zertz_pycommon::convert::selfplay_settings(config, None)?)
}

/// The keyword settings of `zertz.selfplay` (those of `zertz selfplay` and of its config files
/// but the `search` table: Rust's `SelfPlayConfig`), one dict per keyword in order:
/// `{"name", "type"` (its annotation), `"default"` (without a config), `"doc"}`. The stub's
/// keywords are generated from it, and a test holds them to it.
#[pyfunction]
pub fn selfplay_settings<'py>(py: Python<'py>) -> Result<Bound<'py, PyList>, Error> {
    describe_settings::<SelfPlayConfig>(py)
}

/// The settings of `zertz.match` (those of `zertz match` and its config files, Rust's
/// `MatchSettings`), one dict per keyword in order: `{"name", "type"` (its annotation),
/// `"default"` (None: none), `"doc"}`. The stub's keywords are generated from it, and a test
/// holds them to it.
#[pyfunction]
pub fn match_settings(py: Python<'_>) -> Result<Bound<'_, PyList>, Error> {
    describe_settings::<MatchSettings>(py)
}

/// The match settings `settings` (keywords of `zertz.match`, of any match: `zertz.evaluate`'s
/// too) as Rust reads them: a dict with every key, checked by Rust's own ranges.
/// ValueError names a value out of range, TypeError an unknown keyword or a value of the wrong
/// type.
#[pyfunction]
#[pyo3(signature = (**settings))]
pub fn match_config<'py>(
    py: Python<'py>,
    settings: Option<&Bound<'py, PyDict>>,
) -> Result<Bound<'py, PyAny>, Error> {
    let layer = settings_layer::<MatchSettings>("match_config", settings, &[])?;
    to_python(py, &zertz_settings::from_layers::<MatchSettings>([layer])?)
}
