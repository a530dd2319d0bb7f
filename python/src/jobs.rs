//! `zertz.selfplay`, `zertz.match` and `zertz.selfplay_config`: the engine's jobs in-process
//! (`zertz-engine`, the same code as the `zertz` program), with exported networks, built-in
//! evaluators or a Python callable. The work runs with the GIL released; Ctrl-C stops it between
//! batches and raises `KeyboardInterrupt`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList};
use zertz_arena::config::MatchSettings;
use zertz_engine::{EngineError, Guide, MatchJob};
use zertz_model::{DeviceChoice, Inference, Precision};
use zertz_selfplay::config::{ConfigError, SelfPlayConfig};
use zertz_selfplay::driver::{Progress, SelfPlayError};

use crate::args::BoardArg;
use crate::convert::{describe_settings, settings_layer, to_python};
use crate::error::Error;
use crate::evaluators::guide;
use crate::signals::run_detached;

/// Self-play settings from a TOML file, a dict (the same keys and tables: `{"games": 8,
/// "search": {"preset": "rollout"}}`) or None (the defaults), checked by the engine's own types.
fn selfplay_settings(config: Option<&Bound<'_, PyAny>>) -> Result<SelfPlayConfig, Error> {
    let Some(obj) = config.filter(|o| !o.is_none()) else {
        return Ok(SelfPlayConfig::default());
    };
    if let Ok(table) = obj.cast::<PyDict>() {
        if let Some(key) = non_finite(table.as_any(), "")? {
            return Err(ConfigError::Value {
                key: "config",
                reason: format!("{key} is not finite"),
            }
            .into());
        }
        let text: String = obj.py().import("json")?.call_method1("dumps", (table,))?.extract()?;
        return Ok(SelfPlayConfig::from_json(&text)?);
    }
    let path: PathBuf = obj.extract().map_err(|_| {
        Error::Type(format!(
            "config must be a path, a dict or None, not {}",
            obj.get_type().name().map_or_else(|_| "?".into(), |n| n.to_string())
        ))
    })?;
    Ok(SelfPlayConfig::from_file(&path)?)
}

/// The key path of the first NaN or infinite float in nested dicts (JSON has no way to say them).
fn non_finite(obj: &Bound<'_, PyAny>, at: &str) -> PyResult<Option<String>> {
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok((!f.value().is_finite()).then(|| at.to_string()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        for (k, v) in d.iter() {
            let key =
                if at.is_empty() { k.str()?.to_string() } else { format!("{at}.{}", k.str()?) };
            if let Some(found) = non_finite(&v, &key)? {
                return Ok(Some(found));
            }
        }
    }
    Ok(None)
}

/// Checks a device name of the engine's grammar (`auto`, `cpu`, `cuda` (every GPU), `cuda:N` or
/// `cuda:N,cuda:M`) without asking the machine what it has; ValueError for one that is not a
/// device. Configs check their `device` with it, so that the engine owns the grammar.
#[pyfunction]
pub fn check_device(name: &str) -> Result<(), Error> {
    name.parse::<DeviceChoice>()?;
    Ok(())
}

/// The devices a device name gives on this machine, in order (`["cpu"]`, `["cuda:0", "cuda:1"]`):
/// `auto` is every GPU, or the CPU when there is none. ValueError for a name that is not a device
/// or names a GPU this machine does not have. A job that runs one copy of a network (training)
/// takes the first.
#[pyfunction]
pub fn devices(name: &str) -> Result<Vec<String>, Error> {
    let all = name.parse::<DeviceChoice>()?.resolve_all()?;
    Ok(all
        .into_iter()
        .map(|d| match d {
            zertz_model::Device::Cuda(i) => format!("cuda:{i}"),
            _ => "cpu".to_string(),
        })
        .collect())
}

/// Where and how networks run, from the keywords (None: the engine's defaults, `Inference`).
fn inference(
    device: Option<&str>,
    precision: Option<&str>,
    shared_inference: bool,
    inference_threads: Option<u16>,
    cuda_graphs: bool,
) -> Result<Inference, Error> {
    let default = Inference::default();
    let inference = Inference {
        device: device.map(str::parse::<DeviceChoice>).transpose()?.unwrap_or(default.device),
        precision: match precision {
            Some(p) => p.parse::<Precision>().map_err(|e| Error::Shape(e.to_string()))?,
            None => default.precision,
        },
        shared: shared_inference,
        threads: inference_threads.unwrap_or(default.threads),
        cuda_graphs,
    };
    inference.validate()?;
    Ok(inference)
}

/// The game records of a file (`games-*.jsonl` of self-play, `zertz match --out`), one dict per
/// line, each checked by the engine's record type and replayed: `{"game", "board", "blitz",
/// "first", "players" (matches only), "moves", "winner", "end", "captures"}`. Raises ValueError
/// naming the line that is not a record or does not replay, OSError for a file that cannot be
/// read.
#[pyfunction]
pub fn load_records<'py>(py: Python<'py>, path: PathBuf) -> Result<Bound<'py, PyAny>, Error> {
    use zertz_selfplay::records::GameRecord;
    let text = zertz_env::files::read_text(&path)
        .map_err(|source| Error::Io { path: path.clone(), source })?;
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let bad = |e: zertz_selfplay::records::RecordError| {
            Error::Shape(format!("{}:{}: {e}", path.display(), i + 1))
        };
        let record = GameRecord::from_json(line).map_err(bad)?;
        record.replay().map_err(bad)?;
        records.push(record);
    }
    to_python(py, &records)
}

/// A player spec (`random`, `greedy`, `mcts:SIMS`, `uniform:SIMS`,
/// `nn:MODEL[:SIMS][:PRECISION][:gumbel=K]`, `alphabeta[:DEPTH]`, `cmd:PROGRAM ARGS`; a searching
/// player's may end with `:time=SECONDS`) read by the engine's grammar: `{"name": canonical spec,
/// "model": the model file or None, "simulations": the count or None, "precision": the precision
/// it names or None, "gumbel": the actions its Gumbel root considers or None, "depth": an
/// alpha-beta depth or None, "time": its own time per move in seconds or None}`.
/// Raises ValueError for anything else.
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
    Ok(d)
}

/// Training shards from game records (see `zertz dataset`): `sources` are record files, folders
/// and archives; `out` a new or empty folder that gets `train/`, `validation/`, `games.jsonl`
/// and, last, the manifest `dataset.json` (made beside it as `.NAME.partial-PID` and renamed when
/// complete: a failure leaves nothing, and the next build removes what a killed one left).
/// Games are kept by `boards` (None: all), `min_turns`, players left out (`exclude_players`, and
/// boardspace's robots with `exclude_robots`), `ends` ("capture", "resign", "time", "draw"; None:
/// all four), at most `max_games`; `validation` of them (by game) are held out. Returns the
/// summary dict (counts by reason of what was left out or failed).
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
    use zertz_env::sgf::End;
    use zertz_selfplay::dataset::{DatasetConfig, ROBOTS};
    let default = DatasetConfig::default();
    let mut exclude = exclude_players;
    if exclude_robots {
        exclude.extend(ROBOTS.iter().map(|r| r.to_string()));
    }
    let ends = match ends {
        None => default.ends.clone(),
        Some(names) => names
            .iter()
            // `unfinished` is refused by the dataset's own checks.
            .map(|n| match End::from_name(n) {
                Some(e) => Ok(e),
                None => Err(Error::Shape(format!(
                    "ends take capture, resign, time and draw, not {n:?}"
                ))),
            })
            .collect::<Result<_, _>>()?,
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
/// as the engine reads them: a dict with every key, checked. Raises ValueError naming a key that
/// is unknown or out of range.
#[pyfunction]
#[pyo3(signature = (config=None))]
pub fn selfplay_config<'py>(
    py: Python<'py>,
    config: Option<&Bound<'py, PyAny>>,
) -> Result<Bound<'py, PyAny>, Error> {
    to_python(py, &selfplay_settings(config)?)
}

/// Runs self-play and writes shards (`.npz`, read with `zertz.load_shards`) and game records
/// (`games-*.jsonl`) into `out`, a new or empty folder (one that holds self-play output is
/// refused with `FileExistsError`: nothing is ever replaced); returns the summary dict.
///
/// The games are guided by `evaluator` ("uniform", "rollout" or a callable) or by the exported
/// network `model` (on `device`: auto, cpu, cuda (every GPU), cuda:N or cuda:N,cuda:M; in `precision`: auto, fp32, bf16 or
/// fp16, where auto is bf16 on a GPU and fp32 on the CPU). `config` is a TOML file, a dict of
/// the same keys or None (the defaults); `games`, `threads` and `seed` override it. Ctrl-C stops
/// the workers after their round of evaluations; the games finished by then are written whole,
/// and `KeyboardInterrupt` is raised. With `cuda_graphs`, a network on a GPU runs through CUDA
/// graphs (`zertz selfplay --cuda-graphs`).
#[pyfunction]
#[pyo3(signature = (out, evaluator=None, *, model=None, config=None, games=None, threads=None,
                    seed=None, device=None, precision=None, shared_inference=false,
                    inference_threads=None, cuda_graphs=false))]
#[allow(clippy::too_many_arguments)]
pub fn selfplay<'py>(
    py: Python<'py>,
    out: PathBuf,
    evaluator: Option<&Bound<'py, PyAny>>,
    model: Option<PathBuf>,
    config: Option<&Bound<'py, PyAny>>,
    games: Option<u32>,
    threads: Option<usize>,
    seed: Option<u64>,
    device: Option<&str>,
    precision: Option<&str>,
    shared_inference: bool,
    inference_threads: Option<u16>,
    cuda_graphs: bool,
) -> Result<Bound<'py, PyDict>, Error> {
    let mut cfg = selfplay_settings(config)?;
    if let Some(g) = games {
        cfg.games = g;
    }
    if let Some(t) = threads {
        cfg.threads = t;
    }
    if let Some(s) = seed {
        cfg.seed = s;
    }
    cfg.validate()?;
    let (guide, raised) = match model {
        Some(path) => {
            if evaluator.is_some_and(|e| !e.is_none()) {
                return Err(Error::Shape("give an evaluator or a model, not both".into()));
            }
            let inference =
                inference(device, precision, shared_inference, inference_threads, cuda_graphs)?;
            (Guide::Network { path, inference }, Default::default())
        }
        None => guide(evaluator)?,
    };
    let progress = Progress::default();
    let (result, signal) = run_detached(py, &progress.stop, || {
        Ok(zertz_engine::selfplay(&cfg, &guide, &out, &progress))
    });
    let network = matches!(guide, Guide::Network { .. });
    let summary = match result? {
        Ok(summary) => summary,
        Err(EngineError::SelfPlay(SelfPlayError::Stopped { .. })) if signal.is_some() => {
            return Err(Error::Python(signal.expect("checked")));
        }
        Err(EngineError::SelfPlay(SelfPlayError::Eval(e))) if network => {
            return Err(Error::Network(e));
        }
        Err(e) => return Err(raised.or(e)),
    };
    Ok(to_python(py, &summary)?.cast_into::<PyDict>().map_err(PyErr::from)?)
}

/// The settings of `zertz.match` (those of `zertz match` and its config files, the engine's
/// `MatchSettings`), one dict per keyword in order: `{"name", "type"` (its annotation),
/// `"default"` (None: none), `"doc"}`. The stub's keywords are generated from it, and a test
/// holds them to it.
#[pyfunction]
pub fn match_settings(py: Python<'_>) -> Result<Bound<'_, PyList>, Error> {
    describe_settings::<MatchSettings>(py)
}

/// Plays a match between players `a` and `b` (`random`, `greedy`, `mcts:SIMS`, `uniform:SIMS`,
/// `nn:MODEL[:SIMS][:PRECISION][:gumbel=K]`, `alphabeta[:DEPTH]`, `cmd:PROGRAM ARGS`; a searching
/// player's may end with `:time=SECONDS`), alternating who starts; returns the summary dict (wins,
/// draws and losses of `a`, score, Elo with its 95% interval, `move_time`, and each side's effort
/// `a_effort`/`b_effort`: moves, seconds, work, unit). `settings` are the match's settings by
/// keyword, those of `zertz match` (`match_settings()` lists them with their defaults: `games`,
/// `board`, `blitz`, `seed`, `threads`, `opening_actions`, `max_actions`, `out`, `answer_time`,
/// `move_time`); an unknown one is a TypeError. Networks run on `device` in `precision` (unless
/// their spec names one; with `cuda_graphs` through CUDA graphs on a GPU). With `out`, a new file
/// (one that exists is refused with `FileExistsError`, never replaced), every game is written
/// there as a JSON line as it ends, in game order. Ctrl-C stops it (`KeyboardInterrupt`;
/// programs are ended at once, the games finished are in `out`).
#[pyfunction(name = "match")]
#[pyo3(signature = (a, b, *, device=None, precision=None, shared_inference=false,
                    inference_threads=None, cuda_graphs=false, **settings),
       text_signature = "(a, b, *, device=None, precision=None, shared_inference=False, \
                         inference_threads=None, cuda_graphs=False, **settings)")]
#[allow(clippy::too_many_arguments)]
pub fn play_match<'py>(
    py: Python<'py>,
    a: String,
    b: String,
    device: Option<&str>,
    precision: Option<&str>,
    shared_inference: bool,
    inference_threads: Option<u16>,
    cuda_graphs: bool,
    settings: Option<&Bound<'py, PyDict>>,
) -> Result<Bound<'py, PyDict>, Error> {
    let layer = settings_layer::<MatchSettings>("match", settings)?;
    let job = MatchJob {
        inference: inference(device, precision, shared_inference, inference_threads, cuda_graphs)?,
        ..MatchJob::with(a, b, zertz_selfplay::settings::from_layers([layer])?)
    };
    let stop = AtomicBool::new(false);
    let (result, signal) =
        run_detached(py, &stop, || Ok(zertz_engine::play_match(&job, &|_| {}, &stop)));
    match result? {
        Ok(summary) => Ok(to_python(py, &summary)?.cast_into::<PyDict>().map_err(PyErr::from)?),
        Err(EngineError::Match(zertz_arena::matches::MatchError::Stopped { .. }))
            if signal.is_some() && stop.load(Ordering::Relaxed) =>
        {
            Err(Error::Python(signal.expect("checked")))
        }
        Err(e) => Err(e.into()),
    }
}
