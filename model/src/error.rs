//! Why a model cannot be loaded or used: [`ModelError`].

use std::path::PathBuf;

use zertz_search::Precision;

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
    /// The file is not a network file written by `zertz.export` (or a trusted program), or
    /// not exactly one: what is wrong is said.
    #[error("{path} is not an exported zertz model: {}", printable(.reason))]
    NotAModel {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The file is a program (a TorchScript file, an AOTInductor package), which runs only when
    /// the user trusts it.
    #[error(
        "{path} is {}: a program, which could do anything this process can, and the engine \
         runs only network files (weights, read as data). {}; or, if you made it yourself on \
         this machine, pass --trust-code (trust_code=True in Python)",
        if *.package { "an AOTInductor package" } else { "a TorchScript file" },
        if *.package {
            "Run the network file it was compiled from (python -m zertz export writes one)".to_string()
        } else {
            format!(
                "Convert it: python -m zertz convert-network {} OUT.safetensors (reads its \
                 weights without running it)",
                path.display()
            )
        },
        path = path.display()
    )]
    Code {
        /// The file.
        path: PathBuf,
        /// Whether it is an AOTInductor package (else TorchScript).
        package: bool,
    },
    /// No package compiled from this network file for this device and precision in the cache.
    #[error(
        "no package compiled from {} for {device} in {precision} on this machine ({}): compile \
         one with python -m zertz compile-network {} --device {device} --precision {precision}, \
         or run the network file without --compiled",
        path.display(),
        package.display(),
        path.display()
    )]
    NotCompiled {
        /// The network file.
        path: PathBuf,
        /// Where its package would be.
        package: PathBuf,
        /// `cpu` or `cuda`.
        device: &'static str,
        /// `fp32`, `bf16` or `fp16`.
        precision: &'static str,
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
    /// The game's marble set is not among the model's.
    #[error(
        "model {path} was trained for the {} marbles, but the game is played with the {marbles} \
         marbles",
        .accepts.join(" and ")
    )]
    WrongMarbles {
        /// The file.
        path: PathBuf,
        /// Marble sets in the model's metadata.
        accepts: Vec<String>,
        /// The game's marble set.
        marbles: &'static str,
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

impl zertz_env::Classify for ModelError {
    fn class(&self) -> zertz_env::ErrorClass {
        use zertz_env::{Cause, ErrorClass};
        match self {
            ModelError::Read { source, .. } => ErrorClass::refused(Cause::Io(source.kind())),
            ModelError::NotAModel { .. }
            | ModelError::Code { .. }
            | ModelError::NotCompiled { .. }
            | ModelError::Version { .. }
            | ModelError::WrongBoard { .. }
            | ModelError::WrongMarbles { .. }
            | ModelError::Device(_)
            | ModelError::Precision(_)
            | ModelError::Unsupported { .. } => ErrorClass::refused(Cause::Invalid),
            // The network itself failed.
            ModelError::Forward { .. } | ModelError::NonFinite { .. } => {
                ErrorClass::during(Cause::Failed)
            }
        }
    }
}

/// `text` with its control characters escaped (`\n`, `\u{1b}`): a reason quotes what a file
/// holds, and an error is one line of text that a file cannot colour or move on a terminal.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() })
        .collect()
}

fn list(boards: &[usize]) -> String {
    let v: Vec<String> = boards.iter().map(|b| b.to_string()).collect();
    v.join(" or ")
}
