//! The [`Model`] type: loading and checking an exported network, its counters, and the
//! forward passes it offers (run by `forward.rs`).
//!
//! Why one file of this size: one type. Loading a network file or a trusted program (TorchScript,
//! AOTInductor),
//! checking the metadata against what it is asked to play, and counting its work all read and
//! write the same fields; the passes themselves are `forward.rs`'s.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tch::{CModule, Device, IValue};
use zertz_env::encode::{GLOBALS, Shape};
use zertz_env::files::MAX_NETWORK_BYTES;
use zertz_env::{ActionSpace, Board, Variant};
use zertz_search::batching::BatchingEvaluator;
use zertz_search::{Batch, EvalError, Evaluator, LegalAnswers, Output, Precision};

use crate::format::NetworkFile;
use crate::inference::CudaGraphs;
use crate::metadata::{BUILTIN_BYTES, CODE_FORMAT_VERSION, check_metadata};
use crate::native::{NATIVE_MAX_BATCH, Native};
use crate::net::Net;
use crate::stats::{Running, Staging};
use crate::tensors::{first_line, kind_of};
use crate::{
    Answers, DeviceChoice, Metadata, ModelError, ModelStats, Phases, aoti, graphs, is_builtin,
};

/// What runs a model: the engine's architecture on a network file's weights, or a trusted
/// program (a TorchScript module, an AOTInductor package).
pub(crate) enum Backend {
    Net(Box<Net>),
    Script(CModule),
    Aoti(aoti::AotiPackage),
}

/// Whether `path` names an AOTInductor package (`.pt2`) rather than a TorchScript file.
pub fn is_package(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "pt2")
}

/// The network file at `path`, or the built-in network's.
fn read_file(path: &Path) -> Result<NetworkFile, ModelError> {
    match is_builtin(path) {
        true => crate::format::decode_network(path, BUILTIN_BYTES),
        false => crate::format::read_network(path),
    }
}

/// Whether the file at `path` is a zip archive (a TorchScript file), from its first bytes.
fn is_zip(path: &Path) -> Result<bool, ModelError> {
    use std::io::Read;
    let io = |source: std::io::Error| ModelError::Read { path: path.to_path_buf(), source };
    let file = zertz_env::files::open_bounded(path, MAX_NETWORK_BYTES, "an exported network");
    let mut prefix = Vec::new();
    file.map_err(io)?.take(4).read_to_end(&mut prefix).map_err(io)?;
    Ok(crate::format::is_code(&prefix))
}

/// A loaded, checked, exported network (see the crate docs).
pub struct Model {
    pub(crate) backend: Backend,
    /// CUDA graphs, when enabled ([`Model::enable_cuda_graphs`]).
    pub(crate) graphs: Option<graphs::Graphs>,
    metadata: Metadata,
    pub(crate) device: Device,
    pub(crate) precision: Precision,
    pub(crate) path: PathBuf,
    pub(crate) staging: Mutex<Vec<Staging>>,
    /// Reused pinned host buffers the answers of a GPU pass come back into.
    pub(crate) answers: Mutex<Vec<Staging>>,
    pub(crate) batches: AtomicU64,
    pub(crate) positions: AtomicU64,
    pub(crate) native_batches: AtomicU64,
    pub(crate) busy_nanos: AtomicU64,
    pub(crate) running: Mutex<Running>,
    /// libtorch threads of one forward pass on the CPU ([`Model::set_cpu_threads`]).
    pub(crate) cpu_threads: usize,
    /// The native pass of small batches on the CPU, or why the network has none
    /// ([`Model::native_forward`]).
    pub(crate) native: Result<Native, String>,
    /// Whether small batches go to `native` ([`Model::set_native_forward`]).
    native_on: bool,
    /// Whether the TorchScript module has the `evaluate()` method that CUDA graphs record
    /// (files exported before them lack it); asked on a CUDA device only.
    evaluate_method: bool,
    /// Why passes do not run through CUDA graphs, where [`CudaGraphs::Auto`] left them off on a
    /// CUDA device.
    graphs_off: Option<String>,
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
    /// Loads and checks a network file and places it on `device`, in the precision `auto`
    /// means there (see [`Model::load_with`]).
    pub fn load(path: impl AsRef<Path>, device: DeviceChoice) -> Result<Model, ModelError> {
        Model::load_with(path, device, Precision::Auto)
    }

    /// Loads and checks a network file (`crate::format`: weights and metadata, which are data)
    /// and places it on `device`, its weights converted to `precision` ([`Precision::Auto`]:
    /// bf16 on a GPU, fp32 on the CPU). The engine runs its own architecture on the weights:
    /// nothing of the file is executed. A program (a TorchScript file, an AOTInductor package)
    /// is refused ([`ModelError::Code`]): [`Model::load_code`] runs one that the user trusts.
    /// Inputs are converted on the device; answers come back in that precision and are
    /// widened to fp32 on the host.
    pub fn load_with(
        path: impl AsRef<Path>,
        device: DeviceChoice,
        precision: Precision,
    ) -> Result<Model, ModelError> {
        Model::open(path.as_ref(), device, precision, false)
    }

    /// [`Model::load_with`] that also runs programs: a TorchScript file or an AOTInductor
    /// package (`.pt2`) that the user made (`--trust-code`, `trust_code=True`). Such a file
    /// runs its own code, with the rights of the process: never one from somebody else.
    pub fn load_code(
        path: impl AsRef<Path>,
        device: DeviceChoice,
        precision: Precision,
    ) -> Result<Model, ModelError> {
        Model::open(path.as_ref(), device, precision, true)
    }

    /// A network file run through the AOTInductor package compiled from it on this machine
    /// (`python -m zertz compile-network`), found in `cache` (`compiled_dir()`) by the SHA-256 of
    /// its weights, the device type and the precision: the package is code, but code this
    /// machine compiled from data, never a file that came with the network. A package that does
    /// not say it was compiled from these weights is refused; a missing one is a
    /// [`ModelError::NotCompiled`] that names the command that compiles it.
    pub fn load_compiled(
        path: impl AsRef<Path>,
        device: DeviceChoice,
        precision: Precision,
        cache: &Path,
    ) -> Result<Model, ModelError> {
        let path = path.as_ref().to_path_buf();
        let file = read_file(&path)?;
        let resolved = device.resolve()?;
        let on = precision.on(resolved.is_cuda());
        let kind = if resolved.is_cuda() { "cuda" } else { "cpu" };
        let package = cache.join(crate::compiled_name(&file.sha256, kind, on.name()));
        if !package.is_file() {
            return Err(ModelError::NotCompiled {
                path,
                package,
                device: kind,
                precision: on.name(),
            });
        }
        let choice = match resolved {
            Device::Cuda(i) => DeviceChoice::Cuda(i),
            _ => DeviceChoice::Cpu,
        };
        let mut model = Model::load_package(package.clone(), choice, on)?;
        let source = model.metadata.source_sha256.as_deref();
        if source != Some(file.sha256.as_str()) {
            return Err(ModelError::NotAModel {
                path: package,
                reason: format!(
                    "it was not compiled from {} (its source weights are {}, the file's {})",
                    path.display(),
                    source.unwrap_or("not named"),
                    file.sha256
                ),
            });
        }
        if model.metadata.boards != file.metadata.boards {
            return Err(ModelError::NotAModel {
                path: package,
                reason: format!(
                    "it plays {:?}, the network file {:?}",
                    model.metadata.boards, file.metadata.boards
                ),
            });
        }
        model.metadata.sha256 = Some(file.sha256);
        Ok(model)
    }

    fn open(
        path: &Path,
        device: DeviceChoice,
        precision: Precision,
        trust_code: bool,
    ) -> Result<Model, ModelError> {
        let path = path.to_path_buf();
        // (read_network and is_zip open a file only if regular: opening a FIFO would wait for a
        // writer forever, a device never ends.)
        if is_builtin(&path) || !(trust_code && (is_package(&path) || is_zip(&path)?)) {
            return Model::load_network(read_file(&path)?, path, device, precision);
        }
        if let Err(e) = zertz_env::files::check_regular(&path) {
            return Err(ModelError::Read { path, source: e });
        }
        if is_package(&path) {
            return Model::load_package(path, device, precision);
        }
        let resolved = device.resolve()?;
        let model = Model::load_script(path.clone(), resolved, precision.on(resolved.is_cuda()))?;
        match (model.probe(), precision) {
            (Ok(()), _) => {
                model.reset_stats();
                Ok(model)
            }
            // `auto` means the best this model can do.
            (Err(_), Precision::Auto) => Model::load_script(path, resolved, Precision::Fp32),
            (Err(e), _) => Err(e),
        }
    }

    /// A network file's weights in the engine's architecture on `device`: through libtorch,
    /// and on the CPU in fp32 for small batches through the native pass too.
    fn load_network(
        file: NetworkFile,
        path: PathBuf,
        device: DeviceChoice,
        precision: Precision,
    ) -> Result<Model, ModelError> {
        let resolved = device.resolve()?;
        let on = precision.on(resolved.is_cuda());
        let build = |on: Precision| {
            Net::new(&file, resolved, kind_of(on)).map_err(|reason| ModelError::Unsupported {
                path: path.clone(),
                precision: on,
                reason,
            })
        };
        let net = build(on)?;
        let mut model = Model::new(
            Backend::Net(Box::new(net)),
            file.metadata.clone(),
            resolved,
            on,
            path.clone(),
        );
        if resolved == Device::Cpu && on == Precision::Fp32 {
            model.native = Native::from_file(&file);
            model.native_on = model.native.is_ok();
        }
        match (model.probe(), precision) {
            (Ok(()), _) => {}
            // `auto` means the best this device can do.
            (Err(_), Precision::Auto) if on != Precision::Fp32 => {
                return Model::load_network(file, path, device, Precision::Fp32);
            }
            (Err(e), _) => return Err(e),
        }
        model.reset_stats();
        Ok(model)
    }

    /// A TorchScript file, trusted, in a precision already resolved: it runs its own code.
    fn load_script(
        path: PathBuf,
        device: Device,
        precision: Precision,
    ) -> Result<Model, ModelError> {
        let not_a_model = |reason: String| ModelError::NotAModel { path: path.clone(), reason };
        let bytes = zertz_env::files::read_bounded(&path, MAX_NETWORK_BYTES, "an exported network")
            .map_err(|source| ModelError::Read { path: path.clone(), source })?;
        let module = CModule::load_data_on_device(&mut std::io::Cursor::new(&bytes[..]), device);
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
        let metadata = check_metadata(&path, &json, CODE_FORMAT_VERSION)?;
        let mut model = Model::new(Backend::Script(module), metadata, device, precision, path);
        if device.is_cuda() {
            model.evaluate_method = crate::shim::module_methods(&bytes)
                .is_ok_and(|methods| methods.iter().any(|m| m == "evaluate"));
        }
        Ok(model)
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
        let metadata = check_metadata(&path, &package.metadata, CODE_FORMAT_VERSION)?;
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
            native_batches: AtomicU64::new(0),
            busy_nanos: AtomicU64::new(0),
            running: Mutex::new(Running {
                count: 0,
                since: Instant::now(),
                covered: Duration::ZERO,
            }),
            cpu_threads: 1,
            native: Err("it runs through libtorch alone".into()),
            native_on: false,
            evaluate_method: false,
            graphs_off: None,
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

    /// Sets the libtorch threads of each forward pass on the CPU: 1 unless set (BENCHMARKS.md,
    /// issue 46: a second thread gains little on a small network, and its OpenMP team spinning
    /// at every operation's barrier makes a pass a hundred times slower when another process
    /// wants the core). Search threads ([`zertz_search::mcts::search_threads`]) are how one game
    /// uses several cores. libtorch keeps the count per thread: the thread that runs a pass is given it (once:
    /// setting it rebuilds a pool of libtorch's, which costs more than a small pass), so a Python
    /// process's own threads (its main thread, which torch set up when imported) keep theirs.
    pub fn set_cpu_threads(&mut self, threads: usize) {
        self.cpu_threads = threads.max(1);
    }

    /// The libtorch threads of each forward pass on the CPU ([`Model::set_cpu_threads`]).
    pub fn cpu_threads(&self) -> usize {
        self.cpu_threads
    }

    /// Whether batches of up to [`Model::native_batch`] positions run through the native pass
    /// (`native.rs`: the network written out in Rust, without libtorch's dispatch per
    /// operation), as they do for a network file on the CPU in fp32 whose trunk is at most 32
    /// channels wide, on one thread a pass ([`Model::set_cpu_threads`]). Otherwise the reason
    /// is given.
    pub fn native_forward(&self) -> Result<(), &str> {
        match (&self.native, self.native_on, self.cpu_threads) {
            (Err(why), _, _) => Err(why),
            (Ok(_), false, _) => Err("turned off"),
            (Ok(_), true, 1) => Ok(()),
            (Ok(_), true, _) => Err("a pass runs on several libtorch threads"),
        }
    }

    /// The largest batch the native pass runs ([`Model::native_forward`]): larger ones go
    /// through libtorch.
    pub fn native_batch(&self) -> usize {
        NATIVE_MAX_BATCH
    }

    /// Turns the native pass off (every batch through libtorch), or back on where the network
    /// has one: for comparisons ([`Model::native_forward`]).
    pub fn set_native_forward(&mut self, on: bool) {
        self.native_on = on;
    }

    /// The native pass for a batch of `b` positions, if it runs it.
    pub(crate) fn native_for(&self, b: usize) -> Option<&Native> {
        let native = self.native.as_ref().ok()?;
        (self.native_on && self.cpu_threads == 1 && b <= NATIVE_MAX_BATCH).then_some(native)
    }

    /// Counters back to zero.
    fn reset_stats(&self) {
        self.batches.store(0, Ordering::Relaxed);
        self.positions.store(0, Ordering::Relaxed);
        self.native_batches.store(0, Ordering::Relaxed);
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

    /// Whether the model was trained for `variant`: its board ([`Model::check_board`]) and its
    /// marble set; the error names both sides.
    pub fn check_variant(&self, variant: Variant) -> Result<(), ModelError> {
        self.check_board(variant.board)?;
        if self.metadata.plays_marbles(variant.marbles) {
            Ok(())
        } else {
            Err(ModelError::WrongMarbles {
                path: self.path.clone(),
                accepts: self.metadata.marbles.clone(),
                marbles: variant.marbles.name(),
            })
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> ModelStats {
        ModelStats {
            batches: self.batches.load(Ordering::Relaxed),
            positions: self.positions.load(Ordering::Relaxed),
            native_batches: self.native_batches.load(Ordering::Relaxed),
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

    /// Runs forward passes on this model's CUDA device through CUDA graphs (see
    /// `graphs`): `--cuda-graphs`. One pass is captured now, so that a network
    /// that cannot be captured is refused here.
    pub fn enable_cuda_graphs(&mut self) -> Result<(), ModelError> {
        let Device::Cuda(i) = self.device else {
            return Err(ModelError::Device(format!(
                "CUDA graphs need a CUDA device, and {} runs on the CPU",
                self.path.display()
            )));
        };
        if let Some(reason) = self.cannot_graph() {
            return Err(ModelError::Unsupported {
                path: self.path.clone(),
                precision: self.precision,
                reason: reason.into(),
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

    /// Why this model on its CUDA device cannot run through CUDA graphs, if it cannot.
    fn cannot_graph(&self) -> Option<&'static str> {
        match self.backend {
            // A package's runners record an event per run, which a capture cannot hold and a
            // later run then fails to query.
            Backend::Aoti(_) => {
                Some("CUDA graphs are for network files and TorchScript, not AOTInductor packages")
            }
            Backend::Script(_) if !self.evaluate_method => Some(
                "CUDA graphs record the evaluate() method, which files exported before them lack: \
                 export the network again",
            ),
            Backend::Script(_) | Backend::Net(_) => None,
        }
    }

    /// Runs passes through CUDA graphs or not, as `when` says: [`CudaGraphs::On`] as
    /// [`Model::enable_cuda_graphs`] (an error where they cannot be used), [`CudaGraphs::Off`]
    /// never, [`CudaGraphs::Auto`] on a CUDA device where they can be (a network file, a trusted
    /// TorchScript file with
    /// `evaluate()`; [`Model::cuda_graphs_off`] says why not elsewhere on a CUDA device, and a
    /// capture that fails leaves them off with its reason).
    pub fn use_cuda_graphs(&mut self, when: CudaGraphs) -> Result<(), ModelError> {
        match when {
            CudaGraphs::Off => Ok(()),
            CudaGraphs::On => self.enable_cuda_graphs(),
            CudaGraphs::Auto if !self.device.is_cuda() => Ok(()),
            CudaGraphs::Auto => {
                if let Some(reason) = self.cannot_graph() {
                    self.graphs_off = Some(reason.into());
                } else if let Err(e) = self.enable_cuda_graphs() {
                    self.graphs_off = Some(e.to_string());
                }
                Ok(())
            }
        }
    }

    /// Whether passes run through CUDA graphs.
    pub fn cuda_graphs(&self) -> bool {
        self.graphs.is_some()
    }

    /// Why passes do not run through CUDA graphs on this model's CUDA device, when
    /// [`CudaGraphs::Auto`] left them off (an AOTInductor package, a file without `evaluate()`,
    /// a capture that failed).
    pub fn cuda_graphs_off(&self) -> Option<&str> {
        self.graphs_off.as_deref()
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

    /// [`Answers::Compact`]: on a GPU the legal logits come back alone and are widened as they
    /// come, with no buffer of the whole action space.
    fn evaluate_legal(&self, batch: &Batch<'_>, out: &mut LegalAnswers) -> Result<(), EvalError> {
        out.check_masks(batch)?;
        let legal = batch.masks.iter().filter(|&&m| m).count();
        out.legal.resize(legal, 0.0);
        out.values.resize(batch.len(), 0.0);
        self.forward_timed(
            batch.board,
            batch.planes,
            batch.globals,
            batch.masks,
            Answers::Compact,
            &mut out.legal,
            &mut out.values,
            false,
        )
        .map(|_| ())
        .map_err(|e| EvalError(e.to_string()))
    }
}
