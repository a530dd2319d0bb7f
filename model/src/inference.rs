//! How a loaded network serves the search threads of a job (self-play, a match), shared by the
//! `zertz` program and the Python module so that both run networks the same way.
//!
//! On the CPU each search thread runs the network itself on its own batch, with one libtorch
//! thread ([`Model::set_cpu_threads`]; BENCHMARKS.md: OpenMP threads spinning against the search
//! threads, or against another process, cost far more than they give). On a GPU, and on the
//! CPU with [`Inference::shared_inference`], inference threads in front of the network merge the
//! requests of every search thread into large batches
//! ([`zertz_search::batching::BatchingEvaluator`]); several of them let one batch be merged and
//! copied while the device runs another.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use zertz_env::Variant;
use zertz_search::Evaluator;
use zertz_search::batching::Spread;
use zertz_settings::{Described, Settings};

use crate::{Device, DeviceChoice, Model, ModelError, ModelStats, Precision};

/// The most inference threads per shared network.
pub const MAX_INFERENCE_THREADS: u16 = 64;
/// The largest batch the inference threads merge.
pub const MAX_MERGED_BATCH: usize = 4096;
/// How long an inference thread waits for more requests before it runs a partial batch.
pub const MERGE_WAIT: Duration = Duration::from_micros(500);

/// Whether a network on a GPU runs its passes through CUDA graphs captured per batch size
/// (`--cuda-graphs auto|on|off`, the `cuda_graphs` keyword: None, True, False): fewer kernel
/// launches, 2.5 to 2.9 times the self-play of a small network on an H200 (BENCHMARKS.md, "Self-play
/// on the GPU"); the first passes of each size are slower, as they capture.
///
/// ```
/// use zertz_model::inference::CudaGraphs;
/// assert_eq!("AUTO".parse::<CudaGraphs>(), Ok(CudaGraphs::Auto));
/// assert_eq!(CudaGraphs::default(), CudaGraphs::Auto);
/// for c in CudaGraphs::ALL {
///     assert_eq!(c.to_string().parse::<CudaGraphs>(), Ok(c));
/// }
/// assert!("yes".parse::<CudaGraphs>().unwrap_err().contains("auto, on or off"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CudaGraphs {
    /// On a CUDA device where they can be (a network file; a trusted TorchScript file with
    /// `evaluate()`), off elsewhere: an AOTInductor package, an older program, the CPU.
    #[default]
    Auto,
    /// Always: an error where they cannot be used (on the CPU, a package, an older file).
    On,
    /// Never.
    Off,
}

impl CudaGraphs {
    /// Every choice, as written.
    pub const ALL: [CudaGraphs; 3] = [CudaGraphs::Auto, CudaGraphs::On, CudaGraphs::Off];

    /// The name, as parsed.
    pub fn name(self) -> &'static str {
        match self {
            CudaGraphs::Auto => "auto",
            CudaGraphs::On => "on",
            CudaGraphs::Off => "off",
        }
    }

    /// `Some(true)` for on, `Some(false)` for off, `None` for auto (the Python keyword's
    /// values).
    pub fn from_flag(flag: Option<bool>) -> CudaGraphs {
        match flag {
            None => CudaGraphs::Auto,
            Some(true) => CudaGraphs::On,
            Some(false) => CudaGraphs::Off,
        }
    }
}

impl std::fmt::Display for CudaGraphs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for CudaGraphs {
    type Err = String;

    /// `auto`, `on` or `off` (any case).
    fn from_str(s: &str) -> Result<CudaGraphs, String> {
        let t = s.trim().to_ascii_lowercase();
        CudaGraphs::ALL
            .into_iter()
            .find(|c| c.name() == t)
            .ok_or_else(|| format!("{s:?} is not a CUDA graphs choice: use auto, on or off"))
    }
}

zertz_settings::text_setting!(CudaGraphs, flag = "on");

zertz_settings::settings! {
    /// Where and how networks run: the options of every command that loads networks
    /// (`--device`, `--precision`, `--shared-inference`, `--inference-threads`,
    /// `--cuda-graphs`) and the keywords of `zertz.match` and `zertz.selfplay`, declared once.
    #[derive(Copy, Eq)]
    pub struct Inference {
        /// Device of the networks: auto (every CUDA device when there is one, else the CPU),
        /// cpu, cuda (every CUDA device), cuda:N, or cuda:N,cuda:M (self-play and matches run a
        /// copy of each network on every device named; playing a game, the first).
        pub device: DeviceChoice = DeviceChoice::Auto,
        /// Number format of the networks: auto (bf16 on a GPU, fp32 on the CPU), fp32, bf16 or
        /// fp16. A player's nn:MODEL:SIMS:PRECISION overrides it for its network.
        pub precision: Precision = Precision::Auto,
        /// On the CPU too, run the network on one inference thread that merges the requests of
        /// all search threads (always so on a GPU). By default each CPU search thread runs it
        /// itself.
        pub shared_inference: bool = false,
        /// Inference threads per network when one is shared (on a GPU, or with shared
        /// inference): while one runs a batch, the next merges and copies its own.
        pub inference_threads: u16 = 4, in Range::between(1.0, MAX_INFERENCE_THREADS as f64),
        /// On a GPU, run the networks through CUDA graphs captured per batch size (fewer kernel
        /// launches; the first passes of each size are slower, as they capture): auto (where
        /// they can be: a network file, a trusted program with evaluate()), on (an error where they
        /// cannot be) or off.
        pub cuda_graphs: CudaGraphs = CudaGraphs::Auto,
        /// Also run networks that are programs (TorchScript files, AOTInductor packages) that
        /// you made yourself: such a file runs its own code with this process's rights (it can
        /// read, write and delete your files). Never for a file from somebody else: convert that
        /// one (python -m zertz convert-network) and run the network file, which is data.
        pub trust_code: bool = false,
        /// Run network files through the AOTInductor package compiled from each on this
        /// machine (python -m zertz compile-network FILE --device D --precision P), found in
        /// the cache by the SHA-256 of its weights ($ZERTZ_CACHE/compiled, else
        /// ~/.cache/zertz/compiled); an error names the command where there is none.
        pub compiled: bool = false,
    }
}

/// Every value checked by its declared range ([`Inference::validate`] says it as a model error).
impl Settings for Inference {}

impl Inference {
    /// Loads the model at `path` as this says: device, precision, CUDA graphs, and whether a
    /// program may run ([`Model::load_code`]) or only a network file ([`Model::load_with`]).
    pub fn load(&self, path: &Path) -> Result<Model, ModelError> {
        let mut model = if self.compiled {
            let Some(cache) = crate::compiled_dir() else {
                return Err(ModelError::Device(
                    "--compiled: no cache folder (set ZERTZ_CACHE, or HOME)".into(),
                ));
            };
            Model::load_compiled(path, self.device, self.precision, &cache)?
        } else if self.trust_code {
            Model::load_code(path, self.device, self.precision)?
        } else {
            Model::load_with(path, self.device, self.precision)?
        };
        model.use_cuda_graphs(self.cuda_graphs)?;
        Ok(model)
    }

    /// Checks the thread count (its declared range).
    pub fn validate(&self) -> Result<(), ModelError> {
        self.check_ranges().map_err(|e| ModelError::Device(e.to_string()))
    }
}

/// A network loaded for a job: the model (for its figures) and the evaluator the search threads
/// call. On several GPUs (`--device cuda` on a machine with more than one, or
/// `cuda:0,cuda:1`), a copy of the model runs on each, behind inference threads of its own, and
/// the search threads' requests go to them in turn.
#[derive(Clone)]
pub struct Network {
    /// The model (the first copy, on several GPUs).
    pub model: Arc<Model>,
    /// What the search threads call: the model itself, or inference threads in front of it (of
    /// each copy).
    pub evaluator: Arc<dyn Evaluator>,
    /// Every copy of the model, `model` first.
    copies: Vec<Arc<Model>>,
    /// Whether each search thread runs the model itself (on the CPU, not shared).
    per_worker: bool,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network")
            .field("model", &self.model.path())
            .field("devices", &self.copies.iter().map(|m| m.device()).collect::<Vec<_>>())
            .field("per_worker", &self.per_worker)
            .finish_non_exhaustive()
    }
}

impl Network {
    /// Loads the model at `path` on `inference.device` in `inference.precision`, checks that it
    /// plays `variant` (its board and marble set), and puts it in front of the search threads.
    pub fn load(
        path: &Path,
        variant: Variant,
        inference: &Inference,
    ) -> Result<Network, ModelError> {
        let network = Network::load_any_board(path, inference)?;
        network.model.check_variant(variant)?;
        Ok(network)
    }

    /// [`Network::load`] without the variant check, for callers that play whichever boards and
    /// marble sets the model's metadata lists ([`Model::check_variant`] checks one).
    pub fn load_any_board(path: &Path, inference: &Inference) -> Result<Network, ModelError> {
        inference.validate()?;
        // A package says itself where it runs when the device is `auto`.
        let devices = match inference.device {
            DeviceChoice::Auto if crate::is_package(path) => vec![],
            device => device.resolve_all()?,
        };
        if devices.len() <= 1 {
            let model = inference.load(path)?;
            return Ok(Network::new(Arc::new(model), inference));
        }
        let mut copies = Vec::with_capacity(devices.len());
        for device in devices {
            let Device::Cuda(i) = device else { unreachable!("several devices are GPUs") };
            let on = Inference { device: DeviceChoice::Cuda(i), ..*inference };
            copies.push(Arc::new(on.load(path)?));
        }
        Ok(Network::spread(copies, inference))
    }

    /// Copies of one model on several GPUs, each behind `inference.inference_threads` inference
    /// threads;
    /// the search threads' requests go to them in turn.
    pub fn spread(copies: Vec<Arc<Model>>, inference: &Inference) -> Network {
        let parts = copies.iter().map(|m| batched(m, inference)).collect();
        Network {
            model: copies[0].clone(),
            evaluator: Arc::new(Spread::new(parts)),
            copies,
            per_worker: false,
        }
    }

    /// `model` in front of the search threads: on the CPU without sharing, each runs it itself
    /// (on [`Model::cpu_threads`] libtorch threads, one unless set).
    pub fn new(model: Arc<Model>, inference: &Inference) -> Network {
        let per_worker = model.device() == Device::Cpu && !inference.shared_inference;
        let evaluator: Arc<dyn Evaluator> =
            if per_worker { model.clone() } else { batched(&model, inference) };
        Network { copies: vec![model.clone()], model, evaluator, per_worker }
    }

    /// The devices the copies of the model run on.
    pub fn devices(&self) -> Vec<Device> {
        self.copies.iter().map(|m| m.device()).collect()
    }

    /// The model's figures so far, summed over its copies.
    pub fn stats(&self) -> ModelStats {
        self.copies.iter().map(|m| m.stats()).fold(ModelStats::default(), |a, s| ModelStats {
            batches: a.batches + s.batches,
            positions: a.positions + s.positions,
            native_batches: a.native_batches + s.native_batches,
            busy: a.busy + s.busy,
            covered: a.covered + s.covered,
        })
    }

    /// `(network_seconds, network_share)` of a job of `seconds` with `workers` search threads:
    /// the time in forward passes summed over the threads that ran them, and the share of the
    /// job's time with the network running: per worker on the CPU (each runs it itself), the wall
    /// time with a forward pass running behind the inference threads (per GPU, on several).
    pub fn figures(&self, seconds: f64, workers: usize) -> (f64, f64) {
        let s = self.stats();
        let lanes = if self.per_worker { workers.max(1) } else { self.copies.len() };
        let inside = if self.per_worker { s.busy } else { s.covered };
        (s.busy.as_secs_f64(), inside.as_secs_f64() / (seconds * lanes as f64).max(1e-9))
    }
}

/// `model` behind `inference.threads` inference threads that merge the search threads' requests.
fn batched(model: &Arc<Model>, inference: &Inference) -> Arc<dyn Evaluator> {
    let threads = usize::from(inference.inference_threads.max(1));
    Arc::new(model.clone().batching(MAX_MERGED_BATCH, MERGE_WAIT, threads))
}

/// A network of a match: its model file and the precision its player names, if any (the key of
/// `zertz_arena::Models`).
pub type NetworkKey = (String, Option<Precision>);

/// Networks for the `nn:MODEL` players of a match, each loaded once: by model path and precision
/// (a player's own, else `inference.precision`), in the order first named. Each is checked to
/// play `variant` (board and marble set); with `None`, it plays what its metadata lists.
pub fn load_networks<'a>(
    models: impl IntoIterator<Item = (&'a str, Option<Precision>)>,
    variant: Option<Variant>,
    inference: &Inference,
) -> Result<Vec<(NetworkKey, Network)>, ModelError> {
    let mut out: Vec<(NetworkKey, Network)> = Vec::new();
    for (path, precision) in models {
        if !out.iter().any(|((p, q), _)| p == path && *q == precision) {
            let own =
                Inference { precision: precision.unwrap_or(inference.precision), ..*inference };
            let network = match variant {
                Some(variant) => Network::load(Path::new(path), variant, &own)?,
                None => Network::load_any_board(Path::new(path), &own)?,
            };
            out.push(((path.to_string(), precision), network));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use zertz_settings::{Described, Layer, from_layers};

    use super::*;

    #[test]
    fn the_inference_settings_are_read_and_checked_by_their_declaration() {
        let layer = |pairs: &[(&str, zertz_settings::Value)]| -> Layer {
            pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
        };
        let read =
            |pairs: &[(&str, zertz_settings::Value)]| from_layers::<Inference>([layer(pairs)]);
        assert_eq!(read(&[]).unwrap(), Inference::default());
        let i = read(&[
            ("device", "cuda:1,cuda:3".into()),
            ("precision", "BF16".into()),
            ("shared_inference", true.into()),
            ("inference_threads", 8.into()),
            ("cuda_graphs", "off".into()),
        ])
        .unwrap();
        assert_eq!(i.device, DeviceChoice::CudaSet(0b1010));
        assert_eq!((i.precision, i.shared_inference), (Precision::Bf16, true));
        assert_eq!((i.inference_threads, i.cuda_graphs), (8, CudaGraphs::Off));
        // Written and read back as the same words (a device set as its list).
        let text = serde_json::to_string(&i).unwrap();
        assert!(text.contains("\"cuda:1,cuda:3\"") && text.contains("\"bf16\""), "{text}");
        assert_eq!(serde_json::from_str::<Inference>(&text).unwrap(), i);
        for (key, value, words) in [
            ("inference_threads", zertz_settings::Value::from(0), "must be between 1 and 64"),
            ("inference_threads", 65.into(), "must be between 1 and 64"),
            ("device", "tpu".into(), "is not a device"),
            ("precision", "fp8".into(), "is not a precision"),
            ("cuda_graphs", "maybe".into(), "auto, on or off"),
        ] {
            let e = read(&[(key, value)]).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{key}: ")) && e.contains(words), "{e}");
        }
        let threads = Inference::field("inference_threads").unwrap();
        assert_eq!(threads.range_text().as_deref(), Some("1 to 64"));
        assert_eq!(Inference::field("cuda_graphs").unwrap().flag, Some("on"));
        let bad = Inference { inference_threads: 0, ..Inference::default() };
        assert!(bad.validate().unwrap_err().to_string().contains("between 1 and 64"));
    }
}
