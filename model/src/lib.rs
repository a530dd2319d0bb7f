//! Networks in the engine.
//!
//! `zertz.export` (Python) writes a network as a *network file* ([`format`]): a safetensors file
//! of its weights whose header holds their SHA-256 and the metadata (JSON: the file format and
//! version, the architecture and its sizes, the encoding version, the boards the weights were
//! trained for with the action-space size of each, the marble sets, the training step,
//! provenance). A network file is data: the engine owns the architecture ([`architecture`]) and
//! runs it on the weights, and nothing of the file is executed. [`Model::load`] reads and checks
//! one (its header against this engine and the architecture before any weight is read, then the
//! checksum and the weights; a file that is not exactly a network file is refused with a
//! [`ModelError`]), and places it on a device ([`DeviceChoice`]: CUDA when available, else CPU,
//! unless told otherwise) in a [`Precision`] ([`Model::load_with`]: `auto` is bf16 on a GPU,
//! fp32 on the CPU). Programs (TorchScript files, AOTInductor packages) run only when the user
//! trusts them ([`Model::load_code`], `--trust-code`); [`Model::load`] refuses them with
//! [`ModelError::Code`], which names the command that converts an old TorchScript network.
//!
//! A [`Model`] is a batched [`Evaluator`]: it checks the board of every batch against the
//! metadata (naming both sides when they differ), copies the inputs into a reused host buffer
//! (pinned on a GPU's host, one asynchronous transfer), runs the network without gradients and
//! copies logits `[B, A]` and values `[B]` back in its precision into the caller's buffers
//! ([`Model::forward_timed`] says where the time went; [`bench`](mod@bench) measures it per batch size). Answers of the wrong shape, NaN or
//! infinite values, and NaN or infinite logits of legal actions are errors naming the model
//! ([`ModelError::Forward`], [`ModelError::NonFinite`]), never a panic further on. Put it behind
//! [`zertz_search::batching::BatchingEvaluator`] ([`Model::batching`]) so that one inference
//! thread per device gathers the requests of every search thread into large batches.
//!
//! The architecture has two backends, one definition: its layers through libtorch (`net.rs`,
//! any device and precision, bit for bit PyTorch's `zertz.nn.ZertzNet` in eval mode, which
//! CUDA graphs capture), and on the CPU, for batches of up to 16 positions in fp32, a native
//! pass written in Rust (`native.rs`: batch norms folded into the convolutions, direct
//! convolutions with AVX2 and FMA, no libtorch dispatch per operation), several times faster
//! than libtorch at batch 1 (BENCHMARKS.md, "The network player on a CPU"; [`Model::native_forward`] says whether it
//! runs, or why not; [`ModelStats::native_batches`] counts its passes). The tests hold the two
//! to the same answers on every board and batch size.
//!
//! [`inference`] says how a loaded network serves the search threads of a job ([`Network`]).
//!
//! This is the only crate of the workspace that links libtorch (through `tch`).

mod aoti;
pub mod architecture;
pub mod bench;
mod device;
mod error;
pub mod format;
mod forward;
mod graphs;
pub mod inference;
mod metadata;
mod model;
mod native;
mod net;
mod shim;
mod stats;
mod tensors;

pub use tch::Device;
pub use zertz_search::Precision;

pub use aoti::{AOTI_MODEL_PREFIX, compiled_dir, compiled_name};
pub use bench::BenchRow;
pub use device::{DeviceChoice, MAX_CUDA_DEVICES, cuda_available};
pub use error::ModelError;
pub use format::{NetworkFile, builtin_metadata, decode_network, encode_network, read_network};
pub use inference::{CudaGraphs, Inference, Network};
pub use metadata::{
    BUILTIN, CODE_FORMAT_VERSION, MODEL_FORMAT, MODEL_FORMAT_VERSION, Metadata, builtin_bytes,
    is_builtin,
};
pub use model::{Model, is_package};
pub use stats::{Answers, ModelStats, Phases};

// Only the crate docs above name it.
#[cfg(doc)]
use zertz_search::Evaluator;
