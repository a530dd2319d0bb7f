//! The dataset's folder: where a build may write (`out` new or empty, never replaced), its
//! temporary folder beside `out` ([`Partial`]), the temporary folders that killed builds left,
//! and the rename that publishes the finished folder.
//!
//! Below the build: it uses the errors ([`super::error`]), not the build.

use std::path::{Path, PathBuf};

use zertz_env::files;

use super::error::{DatasetError, io, taken};

/// Refuses an `out` that is a file or a folder that is not empty.
pub(super) fn refuse_taken(out: &Path) -> Result<(), DatasetError> {
    match std::fs::metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io(out)(e)),
        Ok(m) if !m.is_dir() => Err(taken(out, "it is a file, not a folder")),
        Ok(_) => match std::fs::read_dir(out).map_err(io(out))?.next() {
            Some(_) => Err(taken(out, "the folder is not empty (nothing is ever replaced)")),
            None => Ok(()),
        },
    }
}

/// `out` with a link followed, and `.` or `..` resolved: the folder whose name and parent the
/// build uses.
pub(super) fn resolve(out: &Path) -> Result<PathBuf, DatasetError> {
    let link = std::fs::symlink_metadata(out).is_ok_and(|m| m.file_type().is_symlink());
    let out = if link || out.file_name().is_none() {
        std::fs::canonicalize(out).map_err(io(out))?
    } else {
        out.to_path_buf()
    };
    if out.file_name().is_none() {
        return Err(DatasetError::Settings(format!(
            "the dataset folder must have a name, not {}",
            out.display()
        )));
    }
    Ok(out)
}

/// Removes the temporary folders (in `parent`: `.NAME.partial-PID`, NAME `out`'s name,
/// [`files::partial_owner`]) of builds of `out` that were stopped part-way; refuses while one's
/// process still runs ([`files::process_runs`]).
pub(super) fn remove_leftovers(
    out: &Path,
    parent: &Path,
    name: &str,
) -> Result<Vec<PathBuf>, DatasetError> {
    let mut removed = Vec::new();
    for entry in std::fs::read_dir(parent).map_err(io(parent))? {
        let entry = entry.map_err(io(parent))?;
        let entry_name = entry.file_name();
        let owner = entry_name.to_str().and_then(files::partial_owner);
        let Some(pid) = owner.filter(|&(of, _)| of == name).map(|(_, pid)| pid) else { continue };
        let path = entry.path();
        if files::process_runs(pid) {
            return Err(DatasetError::InUse { out: out.to_path_buf(), partial: path, pid });
        }
        std::fs::remove_dir_all(&path).map_err(io(&path))?;
        removed.push(path);
    }
    Ok(removed)
}

/// A build's temporary folder: removed when dropped unless published, so that a panic leaves
/// nothing either.
pub(super) struct Partial {
    pub(super) path: PathBuf,
    pub(super) done: bool,
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Writes every file of `dir` (and its folders, where the system allows) to the disk, so that
/// the rename that publishes it never names data still in memory.
pub(super) fn sync_tree(dir: &Path) -> Result<(), DatasetError> {
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let path = entry.map_err(io(dir))?.path();
        if path.is_dir() {
            sync_tree(&path)?;
        } else {
            std::fs::File::open(&path).and_then(|f| f.sync_all()).map_err(io(&path))?;
        }
    }
    // Folders cannot be opened everywhere (Windows): their entries are then the system's job.
    let _ = std::fs::File::open(dir).and_then(|f| f.sync_all());
    Ok(())
}

/// Gives the finished temporary folder `out`'s name: a rename, which replaces an empty `out`
/// where the system allows and never one that holds something.
pub(super) fn publish(partial: &Path, out: &Path, parent: &Path) -> Result<(), DatasetError> {
    if let Err(e) = std::fs::rename(partial, out) {
        // Filled meanwhile (by another program): refused; empty: removed, then renamed again.
        refuse_taken(out)?;
        if !out.is_dir() {
            return Err(io(out)(e));
        }
        std::fs::remove_dir(out).map_err(io(out))?;
        std::fs::rename(partial, out).map_err(io(out))?;
    }
    let _ = std::fs::File::open(parent).and_then(|f| f.sync_all());
    Ok(())
}
