//! Exported networks in the engine.
//!
//! `zertz.export` (Python) writes a network as one TorchScript file whose `metadata()` method
//! returns JSON: the file format and version, the encoding version, the boards the weights were
//! trained for, the action-space size of each, the network's name and size, the training step.
//! [`Model::load`] reads such a file, checks its metadata against this engine (a file that is not a
//! zertz model, or one for another encoding, is refused with a [`ModelError`]), and places it on
//! a device ([`DeviceChoice`]: CUDA when available, else CPU, unless told otherwise) in a
//! [`Precision`] ([`Model::load_with`]: `auto` is bf16 on a GPU, fp32 on the CPU; a network that
//! cannot run in the precision asked for is refused at load time).
//!
//! A [`Model`] is a batched [`Evaluator`]: it checks the board of every batch against the
//! metadata (naming both sides when they differ), copies the inputs into a reused host buffer
//! (pinned on a GPU's host, one asynchronous transfer), runs the network without gradients and
//! copies logits `[B, A]` and values `[B]` back in its precision into the caller's buffers
//! ([`Model::forward_timed`] says where the time went; [`bench`] measures it per batch size). Answers of the wrong shape, NaN or
//! infinite values, and NaN or infinite logits of legal actions are errors naming the model
//! ([`ModelError::Forward`], [`ModelError::NonFinite`]), never a panic further on. Put it behind
//! [`zertz_search::batching::BatchingEvaluator`] ([`Model::batching`]) so that one inference
//! thread per device gathers the requests of every search thread into large batches.
//!
//! [`inference`] says how a loaded network serves the search threads of a job ([`Network`]).
//!
//! This is the only crate of the workspace that links libtorch (through `tch`).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
pub use tch::Device;
use tch::{CModule, IValue, Kind, Tensor};
use zertz_env::encode::{ENCODING_VERSION, GLOBALS, Shape};
use zertz_env::{ActionSpace, Board};
pub use zertz_search::Precision;
use zertz_search::batching::BatchingEvaluator;
use zertz_search::{Batch, EvalError, Evaluator, Output};

mod aoti;
pub mod bench;
mod graphs;
pub mod inference;
mod shim;

pub use aoti::AOTI_MODEL_PREFIX;

pub use bench::BenchRow;
pub use inference::{Inference, Network};

/// The `format` field of every exported model's metadata.
pub const MODEL_FORMAT: &str = "zertz-model";
/// The layout version of exported files that this engine reads.
pub const MODEL_FORMAT_VERSION: u32 = 1;

/// Why a model cannot be loaded or used.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The file is missing, unreadable, or not a regular file.
    #[error("cannot read model {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The file is not a TorchScript file, or not one written by `zertz.export`.
    #[error("{path} is not an exported zertz model: {reason}")]
    NotAModel {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The model was written for another file format or encoding.
    #[error("model {path} uses {what} {model}, but this engine reads {what} {engine}")]
    Version {
        /// The file.
        path: PathBuf,
        /// "format version" or "encoding version".
        what: &'static str,
        /// The model's.
        model: u32,
        /// The engine's.
        engine: u32,
    },
    /// The game's board is not among the model's.
    #[error(
        "model {path} was trained for {} rings, but the game is on {board} rings",
        list(.accepts)
    )]
    WrongBoard {
        /// The file.
        path: PathBuf,
        /// Boards in the model's metadata (ring counts).
        accepts: Vec<usize>,
        /// The game's board (ring count).
        board: usize,
    },
    /// A device that cannot be used.
    #[error("device {0}")]
    Device(String),
    /// Text that names no precision.
    #[error(transparent)]
    Precision(#[from] zertz_search::UnknownPrecision),
    /// The network fails in the precision asked for (files exported before reduced precision
    /// was supported keep an index buffer that libtorch converts to floats).
    #[error(
        "model {path} cannot run in {precision} ({reason}): use --precision fp32, or export it \
         again with this version"
    )]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// The precision.
        precision: Precision,
        /// What failed.
        reason: String,
    },
    /// The network failed or answered with the wrong shapes.
    #[error("model {path} failed: {reason}")]
    Forward {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// The network answered NaN or infinities: a value, or the logit of a legal action (the logits
    /// of illegal actions may be `-inf`).
    #[error("model {path} produced NaN/non-finite {what}")]
    NonFinite {
        /// The file.
        path: PathBuf,
        /// Which output, where, and what it held.
        what: String,
    },
}

/// Reads and checks an exported model's metadata JSON against this engine: a file that is not a
/// zertz model, or one for another file format or encoding, is refused.
fn check_metadata(path: &Path, json: &str) -> Result<Metadata, ModelError> {
    let not_a_model = |reason: String| ModelError::NotAModel { path: path.to_path_buf(), reason };
    let metadata: Metadata = serde_json::from_str(json)
        .map_err(|e| not_a_model(format!("unreadable metadata ({e})")))?;
    if metadata.format != MODEL_FORMAT {
        return Err(not_a_model(format!("its format is {:?}", metadata.format)));
    }
    for (what, model, engine) in [
        ("format version", metadata.format_version, MODEL_FORMAT_VERSION),
        ("encoding version", metadata.encoding_version, ENCODING_VERSION),
    ] {
        if model != engine {
            return Err(ModelError::Version { path: path.to_path_buf(), what, model, engine });
        }
    }
    for &b in &metadata.boards {
        let Some(board) = Board::from_rings(b) else {
            return Err(not_a_model(format!("unknown board {b} in its metadata")));
        };
        let size = metadata.action_space.get(&b.to_string()).copied();
        if size != Some(ActionSpace::new(board).len()) {
            return Err(not_a_model(format!(
                "its action space for {b} rings is {size:?}, the engine's is {}",
                ActionSpace::new(board).len()
            )));
        }
    }
    Ok(metadata)
}

fn list(boards: &[usize]) -> String {
    let v: Vec<String> = boards.iter().map(|b| b.to_string()).collect();
    v.join(" or ")
}

/// The metadata of an exported model (the JSON of its `metadata()` method). Unknown fields are
/// kept out of the way: newer exporters may add some.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Metadata {
    /// Always [`MODEL_FORMAT`].
    pub format: String,
    /// File layout version ([`MODEL_FORMAT_VERSION`]).
    pub format_version: u32,
    /// Network name.
    pub name: String,
    /// Encoding version of the inputs ([`ENCODING_VERSION`]).
    pub encoding_version: u32,
    /// Boards (ring counts) the weights were trained for.
    pub boards: Vec<usize>,
    /// Action-space size per board (keys are ring counts).
    pub action_space: std::collections::BTreeMap<String, usize>,
    /// Training step of the weights.
    #[serde(default)]
    pub step: u64,
    /// The network's size, as the exporter wrote it.
    #[serde(default)]
    pub network: serde_json::Value,
    /// `aoti` for an AOTInductor package (absent in TorchScript files).
    #[serde(default)]
    pub backend: Option<String>,
    /// The number format a package was compiled in (`fp32`, `bf16`, `fp16`; packages only).
    #[serde(default)]
    pub precision: Option<String>,
    /// Where the weights come from, when the exporter said (`python -m zertz export
    /// --provenance`): the built-in network's training config, commit and figures.
    #[serde(default)]
    pub provenance: Option<serde_json::Value>,
}

/// The name of the network built into the engine: `nn:builtin` wherever a model can be named
/// (a file of that name is read as `./builtin`).
pub const BUILTIN: &str = "builtin";

/// The built-in network, `model/builtin/builtin.pt` (its provenance, in its metadata, says how
/// it was trained and how it plays: `zertz model info builtin`).
static BUILTIN_BYTES: &[u8] = include_bytes!("../builtin/builtin.pt");

/// The built-in network's file: TorchScript, as `python -m zertz export` writes it.
pub fn builtin_bytes() -> &'static [u8] {
    BUILTIN_BYTES
}

/// Whether `path` names the built-in network ([`BUILTIN`]).
pub fn is_builtin(path: &Path) -> bool {
    path.as_os_str() == BUILTIN
}

/// The metadata of the built-in network (read once; `None` when this engine cannot load it: a
/// libtorch that cannot read it).
pub fn builtin_metadata() -> Option<&'static Metadata> {
    static META: std::sync::OnceLock<Option<Metadata>> = std::sync::OnceLock::new();
    META.get_or_init(|| Some(Model::load(BUILTIN, DeviceChoice::Cpu).ok()?.metadata().clone()))
        .as_ref()
}

/// Where a model runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// Every CUDA device when there is one, else the CPU.
    #[default]
    Auto,
    /// The CPU.
    Cpu,
    /// A CUDA device by index.
    Cuda(usize),
    /// Every CUDA device of the machine (`cuda`).
    AllCuda,
    /// Several CUDA devices (`cuda:0,cuda:2`): bit `i` set for `cuda:i`.
    CudaSet(u64),
}

/// The most CUDA devices a [`DeviceChoice::CudaSet`] names.
pub const MAX_CUDA_DEVICES: usize = 64;

impl std::str::FromStr for DeviceChoice {
    type Err = ModelError;

    /// `auto`, `cpu`, `cuda` (every CUDA device), `cuda:N`, or `cuda:N,cuda:M,...`.
    fn from_str(s: &str) -> Result<DeviceChoice, ModelError> {
        let bad = || {
            ModelError::Device(format!(
                "{s:?} is not a device: use auto, cpu, cuda (every GPU), cuda:N or cuda:N,cuda:M"
            ))
        };
        let one = |part: &str| -> Result<usize, ModelError> {
            match part.trim().strip_prefix("cuda:").map(str::parse::<usize>) {
                Some(Ok(i)) if i < MAX_CUDA_DEVICES => Ok(i),
                _ => Err(bad()),
            }
        };
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(DeviceChoice::Auto),
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" | "gpu" => Ok(DeviceChoice::AllCuda),
            list if list.contains(',') => {
                let mut set = 0u64;
                for part in list.split(',') {
                    set |= 1 << one(part)?;
                }
                Ok(if set.count_ones() == 1 {
                    DeviceChoice::Cuda(set.trailing_zeros() as usize)
                } else {
                    DeviceChoice::CudaSet(set)
                })
            }
            other => one(other).map(DeviceChoice::Cuda),
        }
    }
}

impl DeviceChoice {
    /// The device of a job that runs one copy of a network (playing a game, a benchmark): the
    /// first of the devices [`DeviceChoice::resolve_all`] gives.
    pub fn resolve(self) -> Result<Device, ModelError> {
        Ok(self.resolve_all()?[0])
    }

    /// Every device this names, each checked to exist: jobs that spread a network over several
    /// GPUs (self-play, matches) run a copy on each.
    pub fn resolve_all(self) -> Result<Vec<Device>, ModelError> {
        let n = tch::Cuda::device_count().max(0) as usize;
        let check = |i: usize| {
            if i < n {
                Ok(Device::Cuda(i))
            } else {
                Err(ModelError::Device(format!(
                    "cuda:{i} is not available ({n} CUDA devices found)"
                )))
            }
        };
        match self {
            DeviceChoice::Auto if n == 0 => Ok(vec![Device::Cpu]),
            DeviceChoice::Auto => Ok((0..n).map(Device::Cuda).collect()),
            DeviceChoice::Cpu => Ok(vec![Device::Cpu]),
            DeviceChoice::Cuda(i) => Ok(vec![check(i)?]),
            DeviceChoice::AllCuda if n == 0 => {
                Err(ModelError::Device("cuda: no CUDA device is available (0 found)".to_string()))
            }
            DeviceChoice::AllCuda => Ok((0..n).map(Device::Cuda).collect()),
            DeviceChoice::CudaSet(set) => {
                (0..MAX_CUDA_DEVICES).filter(|i| set & (1 << i) != 0).map(check).collect()
            }
        }
    }
}

/// Counters of a model's work.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ModelStats {
    /// Forward passes.
    pub batches: u64,
    /// Positions evaluated.
    pub positions: u64,
    /// Time spent in forward passes (including the copies to and from the device), summed over
    /// the threads that ran them.
    pub busy: Duration,
    /// Wall time during which at least one forward pass was running (`busy` without counting
    /// overlapping passes twice).
    pub covered: Duration,
}

/// Which logits a forward pass writes into the caller's buffer ([`Model::forward_timed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answers {
    /// Every action's.
    All,
    /// Only the legal actions' (by the masks); the others are left as they were. Search reads
    /// nothing else, and on a GPU only those cross back to the host (a tenth of the action space
    /// in a typical position), gathered on the device.
    Legal,
}

/// Where the time of one forward pass went ([`Model::forward_timed`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    /// Copying the caller's inputs into the host buffer and on to the device (converted to the
    /// model's precision).
    pub copy_in: Duration,
    /// The network itself.
    pub forward: Duration,
    /// Copying the answers back, converting them to fp32 and checking them.
    pub copy_out: Duration,
}

/// A reused host buffer of one forward pass: the planes then the globals of a batch, one `f32`
/// tensor, pinned on a GPU's host so that its copy is one asynchronous transfer. Kept in
/// [`Model::staging`] between passes; each pass takes one, so concurrent passes never share.
struct Staging {
    host: Tensor,
    capacity: usize,
}

/// Forward passes running now, for [`ModelStats::covered`].
#[derive(Debug)]
struct Running {
    count: usize,
    since: Instant,
    covered: Duration,
}

/// Counts a forward pass as running while it lives.
struct RunningGuard<'a>(&'a Mutex<Running>);

impl<'a> RunningGuard<'a> {
    fn start(running: &'a Mutex<Running>) -> RunningGuard<'a> {
        let mut r = running.lock().unwrap_or_else(|e| e.into_inner());
        if r.count == 0 {
            r.since = Instant::now();
        }
        r.count += 1;
        RunningGuard(running)
    }
}

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        let mut r = self.0.lock().unwrap_or_else(|e| e.into_inner());
        r.count -= 1;
        if r.count == 0 {
            let ran = r.since.elapsed();
            r.covered += ran;
        }
    }
}

/// What runs a model: a TorchScript module, or an AOTInductor package.
enum Backend {
    Script(CModule),
    Aoti(aoti::AotiPackage),
}

/// Whether `path` names an AOTInductor package (`.pt2`) rather than a TorchScript file.
pub fn is_package(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "pt2")
}

/// A loaded, checked, exported network (see the crate docs).
pub struct Model {
    backend: Backend,
    /// CUDA graphs, when enabled ([`Model::enable_cuda_graphs`]).
    graphs: Option<graphs::Graphs>,
    metadata: Metadata,
    device: Device,
    precision: Precision,
    path: PathBuf,
    staging: Mutex<Vec<Staging>>,
    /// Reused pinned host buffers the answers of a GPU pass come back into.
    answers: Mutex<Vec<Staging>>,
    batches: AtomicU64,
    positions: AtomicU64,
    busy_nanos: AtomicU64,
    running: Mutex<Running>,
}

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Model")
            .field("path", &self.path)
            .field("device", &self.device)
            .field("precision", &self.precision)
            .field("metadata", &self.metadata)
            .finish_non_exhaustive()
    }
}

impl Model {
    /// Loads and checks an exported model and places it on `device`, in the precision `auto`
    /// means there (see [`Model::load_with`]).
    pub fn load(path: impl AsRef<Path>, device: DeviceChoice) -> Result<Model, ModelError> {
        Model::load_with(path, device, Precision::Auto)
    }

    /// Loads and checks an exported model and places it on `device`, its weights converted to
    /// `precision` ([`Precision::Auto`]: bf16 on a GPU, fp32 on the CPU). Inputs are converted
    /// on the device; answers come back in that precision and are widened to fp32 on the host.
    pub fn load_with(
        path: impl AsRef<Path>,
        device: DeviceChoice,
        precision: Precision,
    ) -> Result<Model, ModelError> {
        let path = path.as_ref().to_path_buf();
        // The built-in network is in memory; a file only if regular: opening a FIFO would wait
        // for a writer forever, a device never ends.
        if !is_builtin(&path) {
            if let Err(e) = zertz_env::files::check_regular(&path) {
                return Err(ModelError::Read { path, source: e });
            }
            if is_package(&path) {
                return Model::load_package(path, device, precision);
            }
        }
        let resolved = device.resolve()?;
        let model = Model::load_as(path.clone(), resolved, precision.on(resolved.is_cuda()))?;
        match (model.probe(), precision) {
            (Ok(()), _) => {
                model.reset_stats();
                Ok(model)
            }
            // `auto` means the best this model can do.
            (Err(_), Precision::Auto) => Model::load_as(path, resolved, Precision::Fp32),
            (Err(e), _) => Err(e),
        }
    }

    /// [`Model::load_with`] in a precision already resolved.
    fn load_as(path: PathBuf, device: Device, precision: Precision) -> Result<Model, ModelError> {
        let not_a_model = |reason: String| ModelError::NotAModel { path: path.clone(), reason };
        let module = match is_builtin(&path) {
            true => CModule::load_data_on_device(&mut std::io::Cursor::new(BUILTIN_BYTES), device),
            false => CModule::load_on_device(&path, device),
        };
        let mut module = module
            .map_err(|e| not_a_model(format!("not a TorchScript file ({})", first_line(&e))))?;
        module.set_eval();
        if precision != Precision::Fp32 {
            module.to(device, kind_of(precision), false);
        }
        let json = match module.method_is::<IValue>("metadata", &[]) {
            Ok(IValue::String(s)) => s,
            Ok(other) => return Err(not_a_model(format!("metadata() returned {other:?}"))),
            Err(e) => {
                return Err(not_a_model(format!("no metadata() method ({})", first_line(&e))));
            }
        };
        let metadata = check_metadata(&path, &json)?;
        Ok(Model::new(Backend::Script(module), metadata, device, precision, path))
    }

    /// [`Model::load_with`] for an AOTInductor package: it runs on the device type and in the
    /// number format it was compiled for (`device` and `precision` may say `auto`, or must name
    /// those).
    fn load_package(
        path: PathBuf,
        device: DeviceChoice,
        precision: Precision,
    ) -> Result<Model, ModelError> {
        // The device asked for; with `auto`, the package's own (decided once it is open).
        let asked = match device {
            DeviceChoice::Auto => None,
            named => Some(named.resolve()?),
        };
        let index = match asked {
            Some(Device::Cuda(i)) => i as i32,
            _ => -1,
        };
        // One runner per concurrent caller: search threads on the CPU, inference threads on a
        // GPU.
        let runners = std::thread::available_parallelism().map_or(8, |n| n.get().max(8));
        let not_a_model = |reason: String| ModelError::NotAModel {
            path: path.clone(),
            reason: format!("AOTInductor: {reason}"),
        };
        let package = match aoti::AotiPackage::open(&path, runners, index) {
            Ok(package) => package,
            // A CPU package refuses a CUDA device as it loads: opened on the CPU, it says so.
            Err(reason) if index >= 0 => match aoti::AotiPackage::open(&path, 1, -1) {
                Ok(cpu) if cpu.device == "cpu" => cpu,
                _ => return Err(not_a_model(reason)),
            },
            Err(reason) => return Err(not_a_model(reason)),
        };
        let metadata = check_metadata(&path, &package.metadata)?;
        let compiled = match (package.device.as_str(), asked) {
            ("cuda", None) => Some(DeviceChoice::AllCuda.resolve()?),
            ("cuda", Some(cuda @ Device::Cuda(_))) => Some(cuda),
            ("cpu", None | Some(Device::Cpu)) => Some(Device::Cpu),
            _ => None,
        };
        let Some(on) = compiled else {
            return Err(ModelError::Device(format!(
                "{}: the package was compiled for {}, not for {}; run it there (--device), or \
                 export one for this device",
                path.display(),
                package.device,
                match asked {
                    Some(Device::Cuda(i)) => format!("cuda:{i}"),
                    Some(Device::Cpu) => "cpu".to_string(),
                    _ => "the device asked for".to_string(),
                }
            )));
        };
        let own = metadata.precision.as_deref().unwrap_or("fp32");
        let own: Precision = own.parse()?;
        if precision != Precision::Auto && precision != own {
            return Err(ModelError::Unsupported {
                path,
                precision,
                reason: format!("the package was compiled for {own}"),
            });
        }
        let model = Model::new(Backend::Aoti(package), metadata, on, own, path);
        model.probe()?;
        model.reset_stats();
        Ok(model)
    }

    fn new(
        backend: Backend,
        metadata: Metadata,
        device: Device,
        precision: Precision,
        path: PathBuf,
    ) -> Model {
        Model {
            backend,
            graphs: None,
            metadata,
            device,
            precision,
            path,
            staging: Mutex::new(Vec::new()),
            answers: Mutex::new(Vec::new()),
            batches: AtomicU64::new(0),
            positions: AtomicU64::new(0),
            busy_nanos: AtomicU64::new(0),
            running: Mutex::new(Running {
                count: 0,
                since: Instant::now(),
                covered: Duration::ZERO,
            }),
        }
    }

    /// In reduced precision (and for every package, and with CUDA graphs), runs the network once
    /// on the start of its first board: a network that cannot run fails now
    /// ([`ModelError::Unsupported`]), not in the middle of a job.
    fn probe(&self) -> Result<(), ModelError> {
        let Some(board) = self.metadata.boards.first().and_then(|&b| Board::from_rings(b)) else {
            return Ok(());
        };
        let package = matches!(self.backend, Backend::Aoti(_));
        if self.precision == Precision::Fp32 && !package && self.graphs.is_none() {
            return Ok(());
        }
        let shape = Shape::of(board);
        let start = zertz_env::Position::new(
            zertz_env::Variant::new(board, zertz_env::MarbleSet::Standard),
            zertz_env::Player::P0,
        );
        let (mut planes, mut globals) = (vec![0.0; shape.planes_len()], vec![0.0; GLOBALS]);
        start.encode(&mut planes, &mut globals);
        let (mut logits, mut values) = (vec![0.0; ActionSpace::new(board).len()], vec![0.0]);
        let unsupported = |reason: String| ModelError::Unsupported {
            path: self.path.clone(),
            precision: self.precision,
            reason,
        };
        let all = Answers::All;
        match self.run_timed(board, &planes, &globals, None, all, &mut logits, &mut values, false) {
            Ok(_) => Ok(()),
            // A package's own errors say what is wrong (a processor without its instructions),
            // and so do those of a capture.
            Err(e) if package || self.graphs.is_some() => Err(e),
            Err(ModelError::Forward { reason, .. }) => Err(unsupported(reason)),
            Err(ModelError::NonFinite { what, .. }) => Err(unsupported(format!("it gives {what}"))),
            Err(e) => Err(e),
        }
    }

    /// Counters back to zero.
    fn reset_stats(&self) {
        self.batches.store(0, Ordering::Relaxed);
        self.positions.store(0, Ordering::Relaxed);
        self.busy_nanos.store(0, Ordering::Relaxed);
        self.running.lock().unwrap_or_else(|e| e.into_inner()).covered = Duration::ZERO;
    }

    /// The model's metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The device it runs on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The precision it computes in (never [`Precision::Auto`]).
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The file it came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the model was trained for `board`; the error names both sides.
    pub fn check_board(&self, board: Board) -> Result<(), ModelError> {
        if self.metadata.boards.contains(&board.rings()) {
            Ok(())
        } else {
            Err(ModelError::WrongBoard {
                path: self.path.clone(),
                accepts: self.metadata.boards.clone(),
                board: board.rings(),
            })
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> ModelStats {
        ModelStats {
            batches: self.batches.load(Ordering::Relaxed),
            positions: self.positions.load(Ordering::Relaxed),
            busy: Duration::from_nanos(self.busy_nanos.load(Ordering::Relaxed)),
            covered: self.running.lock().unwrap_or_else(|e| e.into_inner()).covered,
        }
    }

    /// Runs the network on `b` encoded positions of `board`: `planes` `[b, C, H, W]` and
    /// `globals` `[b, G]` in, `logits` `[b, A]` and `values` `[b]` out. Without the legal masks,
    /// a value that is not finite, or a logit that is NaN or `+inf`, is an error
    /// ([`ModelError::NonFinite`]); [`Model::forward_masked`] checks the legal logits exactly.
    pub fn forward(
        &self,
        board: Board,
        planes: &[f32],
        globals: &[f32],
        logits: &mut [f32],
        values: &mut [f32],
    ) -> Result<(), ModelError> {
        self.run_timed(board, planes, globals, None, Answers::All, logits, values, false)
            .map(|_| ())
    }

    /// [`Model::forward`] with the legal masks `[b, A]` of the positions: every value and the
    /// logit of every legal action must be finite (illegal ones may be anything, `-inf` included),
    /// else the answer is a [`ModelError::NonFinite`] naming the model.
    pub fn forward_masked(
        &self,
        board: Board,
        planes: &[f32],
        globals: &[f32],
        masks: &[bool],
        logits: &mut [f32],
        values: &mut [f32],
    ) -> Result<(), ModelError> {
        self.run_timed(board, planes, globals, Some(masks), Answers::All, logits, values, false)
            .map(|_| ())
    }

    /// [`Model::forward_masked`] (without masks when `masks` is empty) that also says where the
    /// time went, writing the logits `answers` says (only the legal ones need masks). With
    /// `sync`, the device is synchronised between the parts so that each is timed whole (for
    /// benchmarks: `zertz bench inference`); without it a GPU's copy in and forward pass run
    /// asynchronously and their time shows up in the copy out.
    #[allow(clippy::too_many_arguments)]
    pub fn forward_timed(
        &self,
        board: Board,
        planes: &[f32],
        globals: &[f32],
        masks: &[bool],
        answers: Answers,
        logits: &mut [f32],
        values: &mut [f32],
        sync: bool,
    ) -> Result<Phases, ModelError> {
        let masks = (!masks.is_empty()).then_some(masks);
        self.run_timed(board, planes, globals, masks, answers, logits, values, sync)
    }

    #[allow(clippy::too_many_arguments)]
    fn run_timed(
        &self,
        board: Board,
        planes: &[f32],
        globals: &[f32],
        masks: Option<&[bool]>,
        answers: Answers,
        logits: &mut [f32],
        values: &mut [f32],
        sync: bool,
    ) -> Result<Phases, ModelError> {
        self.check_board(board)?;
        let shape = Shape::of(board);
        let actions = ActionSpace::new(board).len();
        let b = values.len();
        let fail = |reason: String| ModelError::Forward { path: self.path.clone(), reason };
        if planes.len() != b * shape.planes_len()
            || globals.len() != b * GLOBALS
            || logits.len() != b * actions
            || masks.is_some_and(|m| m.len() != b * actions)
        {
            return Err(fail(format!("buffers do not hold {b} positions of {board}")));
        }
        if b == 0 {
            return Ok(Phases::default());
        }
        let started = Instant::now();
        let _running = RunningGuard::start(&self.running);
        // (Only the calling thread's stream: a device-wide synchronisation would break the
        // capture of a CUDA graph that another inference thread may be recording.)
        let wait = || match (sync, self.device) {
            (true, Device::Cuda(i)) => graphs::synchronize_current(i),
            _ => Ok(()),
        };

        // In: one copy of planes and globals into a reused host buffer, one transfer to the
        // device (asynchronous from pinned memory), converted to the model's precision there.
        let staging = self.stage(planes, globals);
        let dims = [b as i64, shape.planes as i64, shape.height as i64, shape.width as i64];
        let host_planes = staging.host.narrow(0, 0, planes.len() as i64).view(dims);
        let host_globals = staging.host.narrow(0, planes.len() as i64, globals.len() as i64);
        let host_globals = host_globals.view([b as i64, GLOBALS as i64]);
        // With CUDA graphs, the pass runs on a lane (a stream and its graphs) of its own, from
        // the copy in to the copy out.
        let mut lane = match (&self.graphs, graphs::bucket(b)) {
            (Some(graphs), Some(_)) => graphs.take().map_err(fail)?,
            _ => None,
        };
        let entered = lane.as_ref().map(|lane| lane.stream.enter()).transpose().map_err(fail)?;
        let (copied_in, out) = if let Some(lane) = lane.as_mut() {
            let network = |p: &Tensor, g: &Tensor| self.evaluate_fixed(board, p, g);
            lane.run(board.rings(), &host_planes, &host_globals, network, wait).map_err(fail)?
        } else {
            // (Copied as f32 then converted: libtorch would convert a CPU tensor on the CPU
            // first, into pageable memory, and the transfer would no longer be asynchronous.)
            let total = (planes.len() + globals.len()) as i64;
            let on_device = staging.host.narrow(0, 0, total).to_device_(
                self.device,
                Kind::Float,
                self.device.is_cuda(),
                false,
            );
            let on_device = on_device.to_kind(kind_of(self.precision));
            let p = on_device.narrow(0, 0, planes.len() as i64).view(dims);
            let g = on_device.narrow(0, planes.len() as i64, globals.len() as i64);
            let g = g.view([b as i64, GLOBALS as i64]);
            wait().map_err(fail)?;
            let copied_in = Instant::now();
            (copied_in, tch::no_grad(|| self.run_backend(board, p, g)).map_err(fail)?)
        };
        wait().map_err(fail)?;
        let forwarded = Instant::now();
        let (l, v) = out;
        if l.size() != [b as i64, actions as i64] || v.size() != [b as i64] {
            return Err(fail(format!(
                "outputs of shapes {:?} and {:?}, expected [{b}, {actions}] and [{b}]",
                l.size(),
                v.size()
            )));
        }
        // Out: the answers cross in the model's precision (half the bytes of fp32 in bf16 and
        // fp16) into a reused pinned host buffer, and are widened from there straight into the
        // caller's buffers.
        let legal_checked = if self.device.is_cuda() {
            // Only the legal logits: their flat indices go over, the logits are gathered there
            // (flat indices are i32: batches past that size bring every logit back).
            let legal = match (answers, masks) {
                (Answers::Legal, Some(masks)) if b * actions <= i32::MAX as usize => {
                    Some(self.legal_indices(masks))
                }
                _ => None,
            };
            let la = legal.as_ref().map_or(b * actions, |(_, k)| *k) as i64;
            // In the answers' own number format (a package may give f32 in any precision).
            let back = self.pooled(&self.answers, la as usize, l.kind());
            let mut host_l = back.host.narrow(0, 0, la);
            let flat = l.reshape([-1]);
            let gathered = match &legal {
                Some((indices, k)) => {
                    let mut on_device = Tensor::empty([*k as i64], (Kind::Int, self.device));
                    graphs::copy_async(&mut on_device, &indices.host.narrow(0, 0, *k as i64))
                        .map_err(fail)?;
                    flat.f_index_select(0, &on_device).map_err(|e| fail(first_line(&e)))?
                }
                None => flat,
            };
            // In order on the pass's stream: the second copy, blocking, waits for both.
            graphs::copy_async(&mut host_l, &gathered).map_err(fail)?;
            let host_v =
                v.reshape([-1]).f_to_device(Device::Cpu).map_err(|e| fail(first_line(&e)))?;
            // Gathered, only the legal logits are checked (as they are written): the check
            // below reads every logit, and on a GPU's large batches that pass over the whole
            // action space cost more than the network.
            let legal_checked = match &legal {
                Some((indices, k)) => {
                    let indices = indices.host.narrow(0, 0, *k as i64);
                    Some(scatter_widen(&host_l, &indices, logits).map_err(fail)?)
                }
                None => {
                    widen(&host_l, logits).map_err(fail)?;
                    None
                }
            };
            widen(&host_v, values).map_err(fail)?;
            let mut pool = self.answers.lock().unwrap_or_else(|e| e.into_inner());
            pool.push(back);
            if let Some((indices, _)) = legal {
                pool.push(indices);
            }
            legal_checked
        } else {
            widen(&l.contiguous(), logits).map_err(fail)?;
            widen(&v.contiguous(), values).map_err(fail)?;
            None
        };
        // The device has read the host buffer once the answers are back.
        self.unstage(staging);
        drop(entered);
        if let (Some(graphs), Some(lane)) = (&self.graphs, lane) {
            graphs.put(lane);
        }
        match legal_checked {
            Some(bad_logit) => self.check_finite_at(logits, values, bad_logit, actions, true)?,
            None => self.check_finite(logits, values, masks, actions)?,
        }
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.positions.fetch_add(b as u64, Ordering::Relaxed);
        self.busy_nanos.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(Phases {
            copy_in: copied_in - started,
            forward: forwarded - copied_in,
            copy_out: forwarded.elapsed(),
        })
    }

    /// The network on inputs already on the device in its precision: `(logits, values)`.
    fn run_backend(&self, board: Board, p: Tensor, g: Tensor) -> Result<(Tensor, Tensor), String> {
        match &self.backend {
            Backend::Script(module) => {
                pair(module.forward_is(&[IValue::Tensor(p), IValue::Tensor(g)]))
            }
            Backend::Aoti(package) => package.run(board.rings(), &p, &g),
        }
    }

    /// What a CUDA graph records: the network on f32 inputs on the device, converted to its
    /// precision, for a board known in advance (TorchScript's `evaluate` method, which does not
    /// read the board from the input as `forward` does; a package's model of the board).
    fn evaluate_fixed(
        &self,
        board: Board,
        planes: &Tensor,
        globals: &Tensor,
    ) -> Result<(Tensor, Tensor), String> {
        let kind = kind_of(self.precision);
        let convert = |t: &Tensor| t.f_to_kind(kind).map_err(|e| first_line(&e));
        let (p, g) = (convert(planes)?, convert(globals)?);
        tch::no_grad(|| match &self.backend {
            Backend::Script(module) => {
                let rings = IValue::Int(board.rings() as i64);
                pair(module.method_is("evaluate", &[IValue::Tensor(p), IValue::Tensor(g), rings]))
                    .map_err(|e| {
                        format!(
                            "{e} (files exported before CUDA graphs lack evaluate(): export again)"
                        )
                    })
            }
            // (Refused by enable_cuda_graphs; run as without graphs.)
            Backend::Aoti(_) => self.run_backend(board, p, g),
        })
    }

    /// Runs forward passes on this model's CUDA device through CUDA graphs (see
    /// [`graphs`](crate::graphs)): `--cuda-graphs`. One pass is captured now, so that a network
    /// that cannot be captured is refused here.
    pub fn enable_cuda_graphs(&mut self) -> Result<(), ModelError> {
        let Device::Cuda(i) = self.device else {
            return Err(ModelError::Device(format!(
                "CUDA graphs need a CUDA device, and {} runs on the CPU",
                self.path.display()
            )));
        };
        if matches!(self.backend, Backend::Aoti(_)) {
            // A package's runners record an event per run, which a capture cannot hold and a
            // later run then fails to query.
            return Err(ModelError::Unsupported {
                path: self.path.clone(),
                precision: self.precision,
                reason: "CUDA graphs are for TorchScript files, not AOTInductor packages".into(),
            });
        }
        self.graphs = Some(graphs::Graphs::new(i));
        if let Err(e) = self.probe() {
            self.graphs = None;
            return Err(e);
        }
        self.reset_stats();
        Ok(())
    }

    /// Whether passes run through CUDA graphs.
    pub fn cuda_graphs(&self) -> bool {
        self.graphs.is_some()
    }

    /// A host buffer from the pool (a new one, or one grown, when none is large enough) holding
    /// `planes` then `globals`.
    fn stage(&self, planes: &[f32], globals: &[f32]) -> Staging {
        let staging = self.pooled(&self.staging, planes.len() + globals.len(), Kind::Float);
        let dst = staging.host.data_ptr().cast::<f32>();
        // SAFETY: `host` is a contiguous CPU tensor of `capacity >= need` f32s that this pass
        // alone holds (taken from the pool under its lock, returned only after the device has
        // read it), so the two copies write inside it and nothing reads or writes it meanwhile.
        #[allow(unsafe_code)]
        unsafe {
            std::ptr::copy_nonoverlapping(planes.as_ptr(), dst, planes.len());
            std::ptr::copy_nonoverlapping(globals.as_ptr(), dst.add(planes.len()), globals.len());
        }
        staging
    }

    /// The flat indices (`position * A + action`) of the legal actions of `masks`, in a pinned
    /// host buffer of i32 from the pool, and how many there are.
    fn legal_indices(&self, masks: &[bool]) -> (Staging, usize) {
        // Counted first, so that the buffer holds the legal actions, not the action space.
        let k = masks.iter().filter(|&&m| m).count();
        let buffer = self.pooled(&self.answers, k.max(1), Kind::Int);
        let ptr = buffer.host.data_ptr().cast::<i32>();
        // SAFETY: a contiguous CPU tensor of at least `k` i32s that this pass alone holds
        // (taken from the pool under its lock), and `k` entries of `masks` are true.
        #[allow(unsafe_code)]
        let out = unsafe { std::slice::from_raw_parts_mut(ptr, k) };
        let written = legal_positions(masks, out);
        debug_assert_eq!(written, k);
        (buffer, k)
    }

    /// A host buffer of at least `need` numbers of `kind` (pinned on a GPU's host) from `pool`,
    /// or a new one, grown in powers of two so that a few sizes serve every batch. A pass holds
    /// it alone until it gives it back.
    fn pooled(&self, pool: &Mutex<Vec<Staging>>, need: usize, kind: Kind) -> Staging {
        let mut buffers = pool.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = buffers.iter().position(|s| s.capacity >= need && s.host.kind() == kind) {
            return buffers.swap_remove(i);
        }
        drop(buffers);
        let capacity = need.next_power_of_two();
        let host = Tensor::zeros([capacity as i64], (kind, Device::Cpu));
        // Pinned on a GPU's host, for asynchronous copies; pageable memory if that fails.
        let host = match self.device.is_cuda() {
            true => graphs::pin_memory(&host).unwrap_or(host),
            false => host,
        };
        Staging { host, capacity }
    }

    /// Returns a host buffer to the pool.
    fn unstage(&self, staging: Staging) {
        self.staging.lock().unwrap_or_else(|e| e.into_inner()).push(staging);
    }

    /// Refuses NaN and infinite answers (see [`Model::forward_masked`]).
    fn check_finite(
        &self,
        logits: &[f32],
        values: &[f32],
        masks: Option<&[bool]>,
        actions: usize,
    ) -> Result<(), ModelError> {
        let wrong = |i: usize, l: f32| match masks {
            Some(m) => m[i] && !l.is_finite(),
            None => l.is_nan() || l == f32::INFINITY,
        };
        let bad_logit = logits.iter().enumerate().position(|(i, &l)| wrong(i, l));
        self.check_finite_at(logits, values, bad_logit, actions, masks.is_some())
    }

    /// Refuses NaN and infinite values, and the logit at `bad_logit` (a flat index) if any.
    fn check_finite_at(
        &self,
        logits: &[f32],
        values: &[f32],
        bad_logit: Option<usize>,
        actions: usize,
        legal: bool,
    ) -> Result<(), ModelError> {
        let b = values.len();
        let bad = |what: String| ModelError::NonFinite { path: self.path.clone(), what };
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(bad(format!("values ({} for position {i} of {b})", values[i])));
        }
        if let Some(i) = bad_logit {
            let legal = if legal { "legal " } else { "" };
            return Err(bad(format!(
                "logits ({} for {legal}action {} of position {} of {b})",
                logits[i],
                i % actions,
                i / actions
            )));
        }
        Ok(())
    }

    /// This model behind `threads` inference threads that merge the concurrent requests of all
    /// search threads into batches of at most `max_batch` positions, waiting at most `max_wait`
    /// for more. More than one thread lets a batch be merged and copied while the device runs the
    /// last one.
    pub fn batching(
        self: Arc<Self>,
        max_batch: usize,
        max_wait: Duration,
        threads: usize,
    ) -> BatchingEvaluator {
        BatchingEvaluator::with_threads(self, max_batch, max_wait, threads)
    }
}

impl Evaluator for Model {
    /// Runs [`Model::forward_timed`] with the batch's legal masks (when it carries them), for
    /// the legal actions' logits only ([`Answers::Legal`]: search reads nothing else): NaN or
    /// infinite answers are an error naming the model.
    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        self.forward_timed(
            batch.board,
            batch.planes,
            batch.globals,
            batch.masks,
            Answers::Legal,
            out.logits,
            out.values,
            false,
        )
        .map(|_| ())
        .map_err(|e| EvalError(e.to_string()))
    }
}

/// Sets the number of threads libtorch uses inside one operation on the CPU.
pub fn set_cpu_threads(n: usize) {
    tch::set_num_threads(n.max(1) as i32);
}

/// The number of threads libtorch uses inside one operation on the CPU.
pub fn cpu_threads() -> usize {
    tch::get_num_threads().max(1) as usize
}

/// Whether a CUDA device is available to libtorch.
pub fn cuda_available() -> bool {
    tch::Cuda::is_available()
}

/// The tensor kind of a precision (`auto` resolved before).
fn kind_of(precision: Precision) -> Kind {
    match precision {
        Precision::Bf16 => Kind::BFloat16,
        Precision::Fp16 => Kind::Half,
        Precision::Fp32 | Precision::Auto => Kind::Float,
    }
}

/// Writes the positions of the `true` entries of `masks` into `out` (as i32), in order, and
/// returns how many. Masks are mostly `false`: they are read eight at a time, and a word of
/// eight `false` is skipped whole.
fn legal_positions(masks: &[bool], out: &mut [i32]) -> usize {
    let mut k = 0;
    let mut base = 0;
    for chunk in masks.chunks(8) {
        let word = chunk.iter().fold(0u64, |w, &m| (w << 8) | u64::from(m));
        if word != 0 {
            for (j, &m) in chunk.iter().enumerate() {
                if m {
                    out[k] = (base + j) as i32;
                    k += 1;
                }
            }
        }
        base += chunk.len();
    }
    k
}

/// Widens the gathered numbers of `src` (a contiguous CPU tensor of fp32, bf16 or fp16) into
/// `dst` at the positions `indices` (a CPU tensor of i32 of the same length), and says where
/// the first NaN or infinity went, if any.
fn scatter_widen(src: &Tensor, indices: &Tensor, dst: &mut [f32]) -> Result<Option<usize>, String> {
    let k = src.numel();
    if indices.numel() != k || indices.kind() != Kind::Int || !src.is_contiguous() {
        return Err(format!("{k} gathered answers for {} indices", indices.numel()));
    }
    if k == 0 {
        return Ok(None);
    }
    let n = dst.len();
    let mut bad = None;
    let mut put = |i: i32, x: f32| match dst.get_mut(i as usize) {
        Some(d) => {
            *d = x;
            if !x.is_finite() && bad.is_none() {
                bad = Some(i as usize);
            }
            Ok(())
        }
        None => Err(format!("index {i} past {n} answers")),
    };
    // SAFETY: contiguous CPU tensors of `k` elements of the kinds matched below, alive for the
    // call and not written meanwhile.
    #[allow(unsafe_code)]
    unsafe {
        let at = std::slice::from_raw_parts(indices.data_ptr().cast::<i32>(), k);
        let ptr = src.data_ptr();
        match src.kind() {
            Kind::Float => {
                let from = std::slice::from_raw_parts(ptr.cast::<f32>(), k);
                at.iter().zip(from).try_for_each(|(&i, &x)| put(i, x))
            }
            Kind::BFloat16 => {
                let from = std::slice::from_raw_parts(ptr.cast::<half::bf16>(), k);
                at.iter().zip(from).try_for_each(|(&i, &x)| put(i, x.to_f32()))
            }
            Kind::Half => {
                let from = std::slice::from_raw_parts(ptr.cast::<half::f16>(), k);
                at.iter().zip(from).try_for_each(|(&i, &x)| put(i, x.to_f32()))
            }
            other => Err(format!("answers of kind {other:?}")),
        }
    }?;
    Ok(bad)
}

/// Copies a contiguous CPU tensor of fp32, bf16 or fp16 numbers into `dst` as f32 (its length).
fn widen(src: &Tensor, dst: &mut [f32]) -> Result<(), String> {
    let n = dst.len();
    if src.device() != Device::Cpu || !src.is_contiguous() || src.numel() != n {
        return Err(format!("answers of {} numbers where {n} were expected", src.numel()));
    }
    if n == 0 {
        return Ok(());
    }
    let ptr = src.data_ptr();
    // SAFETY: a contiguous CPU tensor of `n` elements of the kind matched below, alive for the
    // whole call and not written meanwhile.
    #[allow(unsafe_code)]
    unsafe {
        match src.kind() {
            Kind::Float => dst.copy_from_slice(std::slice::from_raw_parts(ptr.cast::<f32>(), n)),
            Kind::BFloat16 => {
                let from = std::slice::from_raw_parts(ptr.cast::<half::bf16>(), n);
                half::slice::HalfFloatSliceExt::convert_to_f32_slice(from, dst);
            }
            Kind::Half => {
                let from = std::slice::from_raw_parts(ptr.cast::<half::f16>(), n);
                half::slice::HalfFloatSliceExt::convert_to_f32_slice(from, dst);
            }
            other => return Err(format!("answers of kind {other:?}")),
        }
    }
    Ok(())
}

/// The `(logits, value)` pair a network's method returns.
fn pair(out: Result<IValue, tch::TchError>) -> Result<(Tensor, Tensor), String> {
    match out {
        Ok(IValue::Tuple(mut parts)) if parts.len() == 2 => {
            match (parts.remove(0), parts.remove(0)) {
                (IValue::Tensor(l), IValue::Tensor(v)) => Ok((l, v)),
                _ => Err("the outputs are not two tensors".to_string()),
            }
        }
        Ok(_) => Err("the output is not a (logits, value) pair".to_string()),
        Err(e) => Err(first_line(&e)),
    }
}

/// The line that says what went wrong in a libtorch error (they carry long backtraces): the
/// Python exception raised by TorchScript code when there is one, else the first line.
fn first_line(e: &impl fmt::Display) -> String {
    let text = e.to_string();
    let raised = text.lines().rev().find(|l| l.contains("Error: ")).map(str::trim);
    let line = raised.or_else(|| text.lines().find(|l| !l.trim().is_empty())).unwrap_or("").trim();
    line.strip_prefix("Internal torch error: ").unwrap_or(line).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legal_positions_are_found_in_order_whatever_the_words() {
        let mut rng = zertz_env::SplitMix64(3);
        for len in [0usize, 1, 7, 8, 9, 63, 64, 4441, 3 * 4441 + 5] {
            for density in [0u64, 1, 10, 50, 100] {
                let masks: Vec<bool> =
                    (0..len).map(|_| rng.below(100) < density as usize).collect();
                let mut out = vec![-1i32; len];
                let k = legal_positions(&masks, &mut out);
                let want: Vec<i32> =
                    masks.iter().enumerate().filter(|(_, m)| **m).map(|(i, _)| i as i32).collect();
                assert_eq!(&out[..k], &want[..], "{len} {density}");
            }
        }
    }

    #[test]
    fn gathered_answers_are_widened_into_their_places() {
        let dense: Vec<f32> = (0..20).map(|i| i as f32 * 0.5 - 3.0).collect();
        let indices = [0i32, 3, 4, 19];
        for kind in [Kind::Float, Kind::BFloat16, Kind::Half] {
            let gathered: Vec<f32> = indices.iter().map(|&i| dense[i as usize]).collect();
            let src = Tensor::from_slice(&gathered).to_kind(kind);
            let at = Tensor::from_slice(&indices);
            let mut dst = vec![f32::NAN; 20];
            scatter_widen(&src, &at, &mut dst).unwrap();
            for (i, d) in dst.iter().enumerate() {
                if indices.contains(&(i as i32)) {
                    assert_eq!(*d, dense[i], "{kind:?} {i}");
                } else {
                    assert!(d.is_nan(), "{kind:?}: {i} was written");
                }
            }
            // An index past the answers is an error, not a write out of bounds.
            let e = scatter_widen(&src, &Tensor::from_slice(&[0i32, 3, 4, 20]), &mut dst);
            assert!(e.unwrap_err().contains("index 20 past 20"));
        }
        let mut dst = vec![0.0; 4];
        widen(&Tensor::from_slice(&[1.5f32, -2.0, 0.25, 8.0]).to_kind(Kind::BFloat16), &mut dst)
            .unwrap();
        assert_eq!(dst, [1.5, -2.0, 0.25, 8.0]);
        assert!(widen(&Tensor::from_slice(&[1i64, 2]), &mut [0.0; 2]).is_err());
        assert!(widen(&Tensor::from_slice(&[1.0f32]), &mut [0.0; 2]).is_err());
    }
}
