//! The engine of the `zertz` package with exported networks: the private native module
//! `zertz_engine._engine` (the Python package `zertz-engine`, which `zertz[train]` installs).
//! It links libtorch through `zertz-model`; the environment (`zertz._zertz`) does not, so that
//! `import zertz` needs numpy alone. `zertz.match`, `zertz.selfplay`, the model format and the
//! built-in network come from here, imported on first use.
//!
//! The jobs are `zertz-engine`'s, the same code as the `zertz` program's; the work runs with the
//! GIL released, and Ctrl-C stops it and raises `KeyboardInterrupt`.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use zertz_arena::Models;
use zertz_arena::bench::BenchError;
use zertz_arena::config::MatchSettings;
use zertz_env::{Classify, Position, Variant};
use zertz_jobs::{Guide, JobError, MatchJob};
use zertz_model::inference::load_networks;
use zertz_model::{CudaGraphs, DeviceChoice, Inference, ModelError};
use zertz_pycommon::args::BoardArg;
use zertz_pycommon::convert::{selfplay_settings, settings_layer, to_python};
use zertz_pycommon::error::Error;
use zertz_pycommon::error::guard;
use zertz_pycommon::evaluators::{Raised, evaluator};
use zertz_pycommon::players::{BotPlayer, parse_spec};
use zertz_pycommon::signals::run_detached;
use zertz_search::mcts::MAX_SEARCH_THREADS;
use zertz_selfplay::driver::{Progress, SelfPlayError};

/// A network file's tensors, as Python takes them: `(name, shape, bytes of little-endian
/// float32)`.
type PyTensors<'py> = Vec<(String, Vec<usize>, Bound<'py, pyo3::types::PyBytes>)>;

/// What [`read_network`] and [`decode_network`] return.
type PyNetwork<'py> = (String, String, PyTensors<'py>);

fn network_to_python(py: Python<'_>, file: zertz_model::NetworkFile) -> PyNetwork<'_> {
    let tensors = file.tensors.into_iter().map(|(name, shape, values)| {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        (name, shape, pyo3::types::PyBytes::new(py, &bytes))
    });
    (file.json, file.sha256, tensors.collect())
}

/// Reads and checks the network file at `path` as the engine does before it plays one (the
/// header against the architecture and bounds before any weight is read, the checksum, finite
/// weights): `(metadata JSON, SHA-256 of the weights, [(name, shape, float32 bytes)])`, the
/// tensors in name order. ValueError says what is wrong with a file that is not exactly a
/// network file (a program is refused: `python -m zertz convert-network` converts one);
/// OSError for one that cannot be read. `zertz.load_network` builds the PyTorch network.
#[pyfunction]
fn read_network(py: Python<'_>, path: PathBuf) -> Result<PyNetwork<'_>, Error> {
    let file = py.detach(|| zertz_model::read_network(&path)).map_err(model_error)?;
    Ok(network_to_python(py, file))
}

/// [`read_network`] on a file's bytes (`name` names it in errors).
#[pyfunction]
fn decode_network<'py>(py: Python<'py>, data: &[u8], name: &str) -> Result<PyNetwork<'py>, Error> {
    let file =
        zertz_model::decode_network(std::path::Path::new(name), data).map_err(model_error)?;
    Ok(network_to_python(py, file))
}

/// The bytes of a network file of `metadata` (JSON) and `tensors` (`(name, shape, bytes of
/// little-endian float32)`), checked as the engine checks one it reads: ValueError names what
/// does not fit the architecture the metadata names. `zertz.export` writes networks with it.
#[pyfunction]
fn encode_network<'py>(
    py: Python<'py>,
    metadata: &str,
    tensors: Vec<(String, Vec<usize>, Vec<u8>)>,
) -> Result<Bound<'py, pyo3::types::PyBytes>, Error> {
    let mut values = Vec::with_capacity(tensors.len());
    for (name, shape, bytes) in tensors {
        if bytes.len() % 4 != 0 {
            return Err(Error::Shape(format!("{name}: {} bytes are not float32s", bytes.len())));
        }
        let v = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        values.push((name, shape, v.collect::<Vec<f32>>()));
    }
    let data = zertz_model::encode_network(metadata, &values).map_err(model_error)?;
    Ok(pyo3::types::PyBytes::new(py, &data))
}

/// The number of weights a network file of these sizes holds (the engine's architecture:
/// every weight and batch-norm statistic, without the training-only head), which
/// `MAX_PARAMETERS` bounds (`zertz.nn.NetConfig` checks the sizes).
#[pyfunction]
fn network_weights(
    channels: usize,
    blocks: usize,
    policy_rank: usize,
    value_channels: usize,
    value_hidden: usize,
) -> usize {
    let sizes = zertz_model::architecture::Sizes {
        channels,
        blocks,
        policy_rank,
        value_channels,
        value_hidden,
    };
    sizes.parameters()
}

/// Where the package compiled on this machine from the network file whose weights' SHA-256 is
/// `sha256`, for `device` (`cpu`, `cuda`) in `precision`, is kept (`--compiled` looks there):
/// None without a cache folder ($ZERTZ_CACHE, else ~/.cache/zertz).
#[pyfunction]
fn compiled_network_path(sha256: &str, device: &str, precision: &str) -> Option<PathBuf> {
    Some(zertz_model::compiled_dir()?.join(zertz_model::compiled_name(sha256, device, precision)))
}

/// A network's error as the bindings' ([`Error::Model`], with its class).
fn model_error(e: ModelError) -> Error {
    Error::Model { message: e.to_string(), class: e.class() }
}

/// A job's error as the bindings'.
fn engine_error(e: JobError) -> Error {
    match e {
        JobError::Model(e) => model_error(e),
        JobError::Config(e) => Error::Config(e),
        JobError::SelfPlay(e) => Error::SelfPlay(e),
        JobError::Match(e) => Error::Match(e),
        JobError::Bench(BenchError::Bot(e)) => Error::Player(e),
        JobError::Bench(e) => Error::Shape(e.to_string()),
        JobError::Output { path, source } | JobError::Records { path, source } => {
            Error::Write { path, source }
        }
    }
}

/// What guides self-play from Python: `None`/"uniform", "rollout", or a callable (see
/// `zertz_pycommon::evaluators::evaluator`); with the slot where a callable's exception is kept.
fn guide(arg: Option<&Bound<'_, PyAny>>) -> Result<(Guide, Raised), Error> {
    match arg.filter(|o| !o.is_none()).map(|o| o.extract::<String>()) {
        None => Ok((Guide::Uniform, Raised::default())),
        Some(Ok(name)) => {
            let guide =
                Guide::builtin(&name).map_err(|e| Error::Shape(format!("{e}, or a callable")))?;
            Ok((guide, Raised::default()))
        }
        Some(Err(_)) => {
            let (evaluator, raised) = evaluator(arg)?;
            Ok((Guide::Custom(Arc::from(evaluator)), raised))
        }
    }
}

/// Checks a device name of the engine's grammar (`auto`, `cpu`, `cuda` (every GPU), `cuda:N` or
/// `cuda:N,cuda:M`) without asking the machine what it has; ValueError for one that is not a
/// device. Configs check their `device` with it, so that the engine owns the grammar.
#[pyfunction]
pub fn check_device(name: &str) -> Result<(), Error> {
    name.parse::<DeviceChoice>().map_err(model_error)?;
    Ok(())
}

/// The devices a device name gives on this machine, in order (`["cpu"]`, `["cuda:0", "cuda:1"]`):
/// `auto` is every GPU, or the CPU when there is none. ValueError for a name that is not a device
/// or names a GPU this machine does not have. A job that runs one copy of a network (training)
/// takes the first.
#[pyfunction]
pub fn devices(name: &str) -> Result<Vec<String>, Error> {
    let all =
        name.parse::<DeviceChoice>().map_err(model_error)?.resolve_all().map_err(model_error)?;
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
    inference_threads: Option<i64>,
    cuda_graphs: Option<bool>,
    trust_code: bool,
) -> Result<Inference, Error> {
    // The keywords as a layer of the settings type (None: its default), read and checked by its
    // declaration: an error names the keyword.
    let mut layer = zertz_settings::Layer::new();
    let mut set = |key: &str, value: zertz_settings::Value| layer.insert(key.to_string(), value);
    if let Some(d) = device {
        set("device", d.into());
    }
    if let Some(p) = precision {
        set("precision", p.into());
    }
    set("shared_inference", shared_inference.into());
    if let Some(t) = inference_threads {
        set("inference_threads", t.into());
    }
    set("cuda_graphs", CudaGraphs::from_flag(cuda_graphs).name().into());
    set("trust_code", trust_code.into());
    Ok(zertz_settings::from_layers(std::iter::once(layer))?)
}

/// Runs self-play and writes shards (`.npz`, read with `zertz.load_shards`) and game records
/// (`games-*.jsonl`) into `out`, a new or empty folder (one that holds self-play output is
/// refused with `FileExistsError`: nothing is ever replaced); returns the summary dict.
///
/// The games are guided by `evaluator` ("uniform", "rollout" or a callable) or by the exported
/// network `model` (on `device`: auto, cpu, cuda (every GPU), cuda:N or cuda:N,cuda:M; in `precision`: auto, fp32, bf16 or
/// fp16, where auto is bf16 on a GPU and fp32 on the CPU). `config` is a TOML file, a dict of
/// the same keys or None (the defaults); the keywords `settings` override its keys (`games`,
/// `threads`, `seed`, ...: those of `zertz selfplay`, listed by `selfplay_settings()`; an
/// unknown one is a TypeError; `search` is a table, given in `config`). Ctrl-C stops
/// the workers after their round of evaluations; the games finished by then are written whole,
/// and `KeyboardInterrupt` is raised. A network on a GPU runs through CUDA graphs where it can
/// (`cuda_graphs` None; True: always, an error where it cannot; False: never; `zertz selfplay
/// --cuda-graphs auto|on|off`). `model` is a network file; a program (TorchScript) runs only
/// with `trust_code=True`, for one you made yourself (`--trust-code`).
#[pyfunction]
#[pyo3(signature = (out, evaluator=None, *, model=None, config=None, device=None,
                    precision=None, shared_inference=false, inference_threads=None,
                    cuda_graphs=None, trust_code=false, **settings),
       text_signature = "(out, evaluator=None, *, model=None, config=None, device=None, \
                         precision=None, shared_inference=False, inference_threads=None, \
                         cuda_graphs=None, trust_code=False, **settings)")]
#[allow(clippy::too_many_arguments)]
pub fn selfplay<'py>(
    py: Python<'py>,
    out: PathBuf,
    evaluator: Option<&Bound<'py, PyAny>>,
    model: Option<PathBuf>,
    config: Option<&Bound<'py, PyAny>>,
    device: Option<&str>,
    precision: Option<&str>,
    shared_inference: bool,
    inference_threads: Option<i64>,
    cuda_graphs: Option<bool>,
    trust_code: bool,
    settings: Option<&Bound<'py, PyDict>>,
) -> Result<Bound<'py, PyDict>, Error> {
    let cfg = selfplay_settings(config, settings)?;
    let (guide, raised) = match model {
        Some(path) => {
            if evaluator.is_some_and(|e| !e.is_none()) {
                return Err(Error::Shape("give an evaluator or a model, not both".into()));
            }
            let inference = inference(
                device,
                precision,
                shared_inference,
                inference_threads,
                cuda_graphs,
                trust_code,
            )?;
            (Guide::Network { path, inference }, Default::default())
        }
        None => guide(evaluator)?,
    };
    let progress = Progress::default();
    let (result, signal) = run_detached(py, &progress.stop, || {
        Ok(zertz_jobs::selfplay(&cfg, &guide, &out, &progress))
    });
    let network = matches!(guide, Guide::Network { .. });
    let summary = match result? {
        Ok(summary) => summary,
        Err(JobError::SelfPlay(SelfPlayError::Stopped { .. })) if signal.is_some() => {
            return Err(Error::Python(signal.expect("checked")));
        }
        // A network's failure is the work's; the caller's evaluator's is a bad answer (or the
        // exception it raised, passed on).
        Err(JobError::SelfPlay(SelfPlayError::Eval(e))) => {
            return Err(raised.or(if network { Error::Network(e) } else { Error::Eval(e) }));
        }
        Err(e) => return Err(raised.or(engine_error(e))),
    };
    Ok(to_python(py, &summary)?.cast_into::<PyDict>().map_err(PyErr::from)?)
}

/// Plays a match between players `a` and `b` (specs: `zertz.PLAYER_SPECS` says their grammar),
/// alternating who starts; returns the summary dict (wins,
/// draws and losses of `a`, score, Elo with its 95% interval, `move_time`, and each side's effort
/// `a_effort`/`b_effort`: moves, seconds, CPU seconds, work, unit). `settings` are the match's
/// settings by keyword, those of `zertz match` (`match_settings()` lists them with their
/// defaults, ranges and docs); an unknown one is a TypeError. Networks run on `device` in
/// `precision` (unless their spec names one; on a GPU through CUDA graphs where they can be, as
/// `cuda_graphs` says: None, True, False). With `out`, a new file
/// (one that exists is refused with `FileExistsError`, never replaced), every game is written
/// there as a JSON line as it ends, in game order. Ctrl-C stops it (`KeyboardInterrupt`;
/// programs are ended at once, the games finished are in `out`). Networks are network files;
/// programs (TorchScript) run only with `trust_code=True`, for those you made yourself.
#[pyfunction(name = "match")]
#[pyo3(signature = (a, b, *, device=None, precision=None, shared_inference=false,
                    inference_threads=None, cuda_graphs=None, trust_code=false, **settings),
       text_signature = "(a, b, *, device=None, precision=None, shared_inference=False, \
                         inference_threads=None, cuda_graphs=None, trust_code=False, **settings)")]
#[allow(clippy::too_many_arguments)]
pub fn play_match<'py>(
    py: Python<'py>,
    a: String,
    b: String,
    device: Option<&str>,
    precision: Option<&str>,
    shared_inference: bool,
    inference_threads: Option<i64>,
    cuda_graphs: Option<bool>,
    trust_code: bool,
    settings: Option<&Bound<'py, PyDict>>,
) -> Result<Bound<'py, PyDict>, Error> {
    let layer = settings_layer::<MatchSettings>("match", settings, &[])?;
    let job = MatchJob {
        inference: inference(
            device,
            precision,
            shared_inference,
            inference_threads,
            cuda_graphs,
            trust_code,
        )?,
        ..MatchJob::with(a, b, zertz_settings::from_layers([layer])?)
    };
    let stop = AtomicBool::new(false);
    let (result, signal) =
        run_detached(py, &stop, || Ok(zertz_jobs::play_match(&job, &|_| {}, &stop)));
    match result? {
        Ok(summary) => Ok(to_python(py, &summary)?.cast_into::<PyDict>().map_err(PyErr::from)?),
        Err(JobError::Match(zertz_arena::matches::MatchError::Stopped { .. }))
            if signal.is_some() && stop.load(Ordering::Relaxed) =>
        {
            Err(Error::Python(signal.expect("checked")))
        }
        Err(e) => Err(engine_error(e)),
    }
}

/// A player's search speed (`zertz bench player`): for each of `boards` (rings; None: 37 and 61,
/// those the player's network plays) and
/// each count of `search_threads` (None: 1), the simulations (or alpha-beta's positions) per
/// second and per CPU-second of `searches` searches of `move_time` seconds on the opening, a
/// middle game and an endgame (a fresh player each search, after one to warm up); a list of dicts, one per row
/// (`board`, `position`, `search_threads`, `searches`, `seconds`, `cpu_seconds`, `work`, `unit`,
/// `per_second`, `per_cpu_second`). Networks run on `device` in `precision`. `move_time` and
/// `searches` default to `zertz_arena::bench`'s. Ctrl-C stops it.
#[pyfunction]
#[pyo3(signature = (spec, *, boards=None, search_threads=None,
                    move_time=zertz_arena::bench::DEFAULT_MOVE_TIME,
                    searches=i64::from(zertz_arena::bench::DEFAULT_SEARCHES), device=None,
                    precision=None))]
#[allow(clippy::too_many_arguments)]
pub fn bench_player<'py>(
    py: Python<'py>,
    spec: &str,
    boards: Option<Vec<BoardArg>>,
    search_threads: Option<Vec<i64>>,
    move_time: f64,
    searches: i64,
    device: Option<&str>,
    precision: Option<&str>,
) -> Result<Bound<'py, PyAny>, Error> {
    let inference = inference(device, precision, false, None, None, false)?;
    let move_time = zertz_arena::players::check_move_time(move_time).map_err(Error::Shape)?;
    let refused = |e: zertz_arena::bench::BenchError| Error::Shape(e.to_string());
    let threads = zertz_arena::bench::check_search_threads(&search_threads.unwrap_or(vec![1]))
        .map_err(refused)?;
    let searches = zertz_arena::bench::check_searches(searches).map_err(refused)?;
    let boards: Option<Vec<zertz_env::Board>> =
        boards.map(|boards| boards.into_iter().map(|b| b.0).collect());
    let stop = Arc::new(AtomicBool::new(false));
    let (result, signal) = run_detached(py, &stop, || {
        Ok(zertz_jobs::bench_player(
            spec,
            boards.as_deref(),
            &threads,
            move_time,
            searches,
            &inference,
            &stop,
        ))
    });
    match result? {
        Ok(rows) => to_python(py, &rows),
        Err(JobError::Bench(BenchError::Stopped)) if signal.is_some() => {
            Err(Error::Python(signal.expect("checked")))
        }
        Err(e) => Err(engine_error(e)),
    }
}

/// One of the engine's players, networks' included (`nn:MODEL[:SIMS]...`, `nn:builtin`), asked
/// for one single action at a time in games of `board` rings and the blitz marble set or not
/// (a network is checked to play them when it loads). Networks run on `device` in `precision`
/// (unless the spec names one), one libtorch thread per forward pass; a network's search uses
/// `search_threads` threads (default: every core), each evaluating rounds of its own.
/// `zertz.player` builds it for a network's spec; the others are `zertz.Bot`'s.
#[pyclass(name = "Bot", module = "zertz_engine")]
#[derive(Debug)]
pub struct EnginePlayer {
    player: BotPlayer,
    variant: Variant,
}

#[pymethods]
impl EnginePlayer {
    #[new]
    #[pyo3(signature = (spec, board=BoardArg(zertz_env::Board::R37), blitz=false, *, seed=0,
                        device=None, precision=None, inference_threads=None,
                        search_threads=None),
           text_signature = "(spec, board=37, blitz=False, *, seed=0, device=None, \
                             precision=None, inference_threads=None, search_threads=None)")]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        spec: &str,
        board: BoardArg,
        blitz: bool,
        seed: u64,
        device: Option<&str>,
        precision: Option<&str>,
        inference_threads: Option<i64>,
        search_threads: Option<i64>,
    ) -> Result<EnginePlayer, Error> {
        let parsed = parse_spec(spec)?;
        let search_threads = match search_threads {
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
            Some(n) if (1..=MAX_SEARCH_THREADS as i64).contains(&n) => n as usize,
            Some(n) => {
                return Err(Error::Shape(format!(
                    "search_threads must be from 1 to {MAX_SEARCH_THREADS}, not {n}"
                )));
            }
        };
        let inference = inference(device, precision, false, inference_threads, None, false)?;
        let variant = Variant::of_blitz(board.0, blitz);
        py.detach(|| {
            guard(|| {
                let mut models = Models::new().with_search_threads(search_threads);
                let networks = load_networks(parsed.network(), Some(variant), &inference)
                    .map_err(model_error)?;
                for (key, network) in networks {
                    models.insert_key(key, network.evaluator);
                }
                let bot = parsed.build(seed, &models).map_err(|e| Error::Shape(e.to_string()))?;
                Ok(EnginePlayer { player: BotPlayer::new(&parsed, bot), variant })
            })
        })
    }

    /// The player's name (its spec, as the engine writes it).
    #[getter]
    fn name(&self) -> &str {
        self.player.name()
    }

    /// The action index the player chooses in the current position of `game` (a `zertz.Game`
    /// of the player's board and marble set; ValueError where the game is over).
    fn choose(&self, py: Python<'_>, game: &Bound<'_, PyAny>) -> Result<usize, Error> {
        let text: String = game.call_method0("to_text")?.extract()?;
        let pos = Position::from_text(&text)?;
        if pos.variant() != self.variant {
            return Err(Error::Shape(format!(
                "{} plays {} games, not {}",
                self.player.name(),
                self.variant,
                pos.variant()
            )));
        }
        self.player.choose(py, pos)
    }

    fn __repr__(&self) -> String {
        format!("Bot({:?})", self.player.name())
    }
}

/// The engine with exported networks (private: `import zertz_engine`, or use `zertz.match` and
/// `zertz.selfplay`, which import it).
#[pyo3::pymodule]
mod _engine {
    use pyo3::prelude::*;

    #[pymodule_export]
    use super::{EnginePlayer, bench_player, check_device, devices, play_match, selfplay};

    /// The `format` field of every exported model's metadata (`zertz.export`).
    #[pymodule_export]
    const MODEL_FORMAT: &str = zertz_model::MODEL_FORMAT;

    /// The layout version of exported model files that this engine reads and `zertz.export`
    /// writes.
    #[pymodule_export]
    const MODEL_FORMAT_VERSION: u32 = zertz_model::MODEL_FORMAT_VERSION;

    /// The name of a board's model inside an AOTInductor package: this prefix and the ring count
    /// (`zertz.exported.export_aoti` writes them, the engine reads them).
    #[pymodule_export]
    const AOTI_MODEL_PREFIX: &str = zertz_model::AOTI_MODEL_PREFIX;

    /// The name of the network built into the engine: `"nn:" + BUILTIN_MODEL` names it wherever
    /// a player is named (`zertz.match("nn:builtin", "alphabeta")`).
    #[pymodule_export]
    const BUILTIN_MODEL: &str = zertz_model::BUILTIN;

    /// The built-in network's file (a network file, as `zertz.export` writes them) as bytes:
    /// `zertz.load_network("builtin")` reads it, and its metadata says how it was trained and
    /// how it plays (`provenance`).
    #[pyfunction]
    fn builtin_model(py: Python<'_>) -> Bound<'_, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, zertz_model::builtin_bytes())
    }

    #[pymodule_export]
    use super::{
        compiled_network_path, decode_network, encode_network, network_weights, read_network,
    };

    /// The layout version of the metadata of programs (TorchScript, AOTInductor packages), which
    /// the engine runs only when trusted (`zertz.exported.export_aoti` writes it).
    #[pymodule_export]
    const CODE_FORMAT_VERSION: u32 = zertz_model::CODE_FORMAT_VERSION;

    /// The name of the architecture the engine runs (`architecture` in a network file's
    /// metadata).
    #[pymodule_export]
    const ARCHITECTURE: &str = zertz_model::architecture::ARCHITECTURE;

    /// The most parameters a network may have.
    #[pymodule_export]
    const MAX_PARAMETERS: usize = zertz_model::architecture::MAX_PARAMETERS;

    /// The most bytes of a network file's header.
    #[pymodule_export]
    const MAX_HEADER_BYTES: u64 = zertz_model::format::MAX_HEADER_BYTES;

    /// The fewest simulations a move of self-play's searches.
    #[pymodule_export]
    const MIN_SIMULATIONS: u32 = zertz_selfplay::config::MIN_SIMULATIONS;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        // The precisions networks run in (`precision=`, `nn:MODEL:SIMS:PRECISION`), as named.
        let precisions: Vec<&str> = zertz_model::Precision::ALL.iter().map(|p| p.name()).collect();
        m.add("PRECISIONS", pyo3::types::PyTuple::new(m.py(), precisions)?)?;
        // The architecture's named sizes (`zertz.nn.NetConfig.preset`) and each size's largest
        // value, the engine's: Python asks for them.
        let presets = pyo3::types::PyDict::new(m.py());
        for (name, s) in zertz_model::architecture::PRESETS {
            let sizes = pyo3::types::PyDict::new(m.py());
            sizes.set_item("channels", s.channels)?;
            sizes.set_item("blocks", s.blocks)?;
            sizes.set_item("policy_rank", s.policy_rank)?;
            sizes.set_item("value_channels", s.value_channels)?;
            sizes.set_item("value_hidden", s.value_hidden)?;
            presets.set_item(name, sizes)?;
        }
        m.add("NETWORK_PRESETS", presets)?;
        let limits = pyo3::types::PyDict::new(m.py());
        for (name, most) in zertz_model::architecture::SIZE_LIMITS {
            limits.set_item(name, most)?;
        }
        m.add("NETWORK_SIZE_LIMITS", limits)?;
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}
