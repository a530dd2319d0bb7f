//! Why a dataset cannot be made: [`DatasetError`], its class and its messages.
//!
//! The lowest part of the dataset module: it uses neither the build nor its folder.

use std::path::{Path, PathBuf};

/// Why a dataset cannot be made (bad records are not: they are counted).
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// A setting out of range.
    #[error("{0}")]
    Settings(String),
    /// The output folder already holds a dataset, or cannot be written.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A source that cannot be read.
    #[error(transparent)]
    Archive(#[from] zertz_archive::ArchiveError),
    /// Another build of the same dataset is under way: the temporary folder of a process that
    /// still runs.
    #[error(
        "{} is being made by another build (process {pid}, writing {}): wait for it to end, or \
         remove that folder if no build is running",
        out.display(),
        partial.display()
    )]
    InUse {
        /// The dataset folder.
        out: PathBuf,
        /// The other build's temporary folder.
        partial: PathBuf,
        /// Its process.
        pid: u32,
    },
    /// The build failed part-way (`source` says why): its temporary folder is removed and
    /// nothing is left at `out`.
    #[error("{}", stopped(out, partial, cleanup.as_ref(), source))]
    Stopped {
        /// The dataset folder, untouched.
        out: PathBuf,
        /// The build's temporary folder.
        partial: PathBuf,
        /// Why the temporary folder could not be removed (the next build of `out` removes
        /// it); None when it was.
        cleanup: Option<std::io::Error>,
        /// What failed.
        source: Box<DatasetError>,
    },
}

impl zertz_env::Classify for DatasetError {
    fn class(&self) -> zertz_env::ErrorClass {
        use zertz_env::{Cause, ErrorClass};
        match self {
            DatasetError::Settings(_) => ErrorClass::refused(Cause::Invalid),
            // Refused: a folder that already holds a dataset, or a build of it under way.
            DatasetError::InUse { .. } => {
                ErrorClass::refused(Cause::Io(std::io::ErrorKind::AlreadyExists))
            }
            DatasetError::Io { source, .. } => ErrorClass {
                cause: Cause::Io(source.kind()),
                while_working: source.kind() != std::io::ErrorKind::AlreadyExists,
            },
            DatasetError::Archive(e) => e.class(),
            DatasetError::Stopped { source, .. } => ErrorClass::during(source.class().cause),
        }
    }
}

/// The message of [`DatasetError::Stopped`].
fn stopped(
    out: &Path,
    partial: &Path,
    cleanup: Option<&std::io::Error>,
    source: &DatasetError,
) -> String {
    let left = match cleanup {
        None => "nothing was left (its temporary folder was removed)".to_string(),
        Some(e) => format!(
            "its temporary folder {} could not be removed ({e}); the next build of it removes it",
            partial.display()
        ),
    };
    format!("the dataset {} was not made: {source}; {left}", out.display())
}

impl From<crate::shard::WriteError> for DatasetError {
    fn from(e: crate::shard::WriteError) -> DatasetError {
        DatasetError::Io { path: e.path, source: e.source }
    }
}

/// The error of an I/O failure at `path`.
pub(super) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> DatasetError + use<> {
    let path = path.to_path_buf();
    move |source| DatasetError::Io { path, source }
}

/// The refusal of an `out` that holds something (nothing is ever replaced).
pub(super) fn taken(out: &Path, why: &str) -> DatasetError {
    DatasetError::Io {
        path: out.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::AlreadyExists, why.to_string()),
    }
}
