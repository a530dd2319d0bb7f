//! An exported model's metadata ([`Metadata`]), its check against this engine, and the network
//! built into the engine ([`BUILTIN`]).

use std::path::Path;

use serde::Deserialize;
use zertz_env::encode::ENCODING_VERSION;
use zertz_env::{ActionSpace, Board, MarbleSet};

use crate::ModelError;

/// The `format` field of every exported model's metadata.
pub const MODEL_FORMAT: &str = "zertz-model";
/// The layout version of network files (`crate::format`: safetensors) that this engine reads
/// and `zertz.export` writes.
pub const MODEL_FORMAT_VERSION: u32 = 2;
/// The layout version of the metadata of programs (TorchScript files and AOTInductor packages,
/// which run only when trusted: `Model::load_code`).
pub const CODE_FORMAT_VERSION: u32 = 1;

/// Reads and checks an exported model's metadata JSON against this engine: a file that is not a
/// zertz model, or one for another file format (`format_version`, which must be `version`) or
/// encoding, is refused.
pub(crate) fn check_metadata(
    path: &Path,
    json: &str,
    version: u32,
) -> Result<Metadata, ModelError> {
    let not_a_model = |reason: String| ModelError::NotAModel { path: path.to_path_buf(), reason };
    let metadata: Metadata = serde_json::from_str(json)
        .map_err(|e| not_a_model(format!("unreadable metadata ({e})")))?;
    if metadata.format != MODEL_FORMAT {
        return Err(not_a_model(format!("its format is {:?}", metadata.format)));
    }
    for (what, model, engine) in [
        ("format version", metadata.format_version, version),
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
    for name in &metadata.marbles {
        if MarbleSet::from_name(name).is_none() {
            return Err(not_a_model(format!("unknown marble set {name:?} in its metadata")));
        }
    }
    if metadata.marbles.is_empty() {
        return Err(not_a_model("its metadata names no marble set".into()));
    }
    Ok(metadata)
}

/// The marble sets of a model whose metadata names none: files exported before the field was
/// written were trained with the standard marbles (the built-in network among them).
fn standard_marbles() -> Vec<String> {
    vec![MarbleSet::Standard.name().to_string()]
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
    /// Marble sets the weights were trained for (`standard`, `blitz`: [`MarbleSet::name`]);
    /// `["standard"]` in files exported before the field was written.
    #[serde(default = "standard_marbles")]
    pub marbles: Vec<String>,
    /// Action-space size per board (keys are ring counts).
    pub action_space: std::collections::BTreeMap<String, usize>,
    /// Training step of the weights.
    #[serde(default)]
    pub step: u64,
    /// The architecture the weights are for ([`crate::architecture::ARCHITECTURE`]; absent in
    /// programs, which bring their own).
    #[serde(default)]
    pub architecture: Option<String>,
    /// The network's sizes ([`crate::architecture::Sizes`] in a network file).
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
    /// The SHA-256 of the network file's weights that a package was compiled from
    /// (`python -m zertz compile-network`).
    #[serde(default)]
    pub source_sha256: Option<String>,
    /// The SHA-256 of a network file's weights (hex; not in the JSON: the file's header holds
    /// it beside), `None` for a program.
    #[serde(skip)]
    pub sha256: Option<String>,
}

impl Metadata {
    /// Whether the weights were trained for `marbles` ([`Metadata::marbles`]).
    pub fn plays_marbles(&self, marbles: MarbleSet) -> bool {
        self.marbles.iter().any(|m| MarbleSet::from_name(m) == Some(marbles))
    }
}

/// The name of the network built into the engine: `nn:builtin` wherever a model can be named
/// (a file of that name is read as `./builtin`).
pub const BUILTIN: &str = "builtin";

/// The built-in network, `model/builtin/builtin.safetensors` (its provenance, in its metadata,
/// says how it was trained and how it plays: `zertz model info builtin`).
pub(crate) static BUILTIN_BYTES: &[u8] = include_bytes!("../builtin/builtin.safetensors");

/// The built-in network's file: a network file, as `python -m zertz export` writes it.
pub fn builtin_bytes() -> &'static [u8] {
    BUILTIN_BYTES
}

/// Whether `path` names the built-in network ([`BUILTIN`]).
pub fn is_builtin(path: &Path) -> bool {
    path.as_os_str() == BUILTIN
}
