//! Files named by users are regular files: opening a FIFO waits for a writer forever, and a device
//! such as `/dev/zero` never ends. Every reader of a user's file (configs, models, records) asks
//! [`check_regular`] first.
//!
//!
//! A file or folder being written is never seen under its own name: it is written beside it as
//! `.NAME.partial-PID` ([`partial_path`]: hidden, in the same folder so that the rename that
//! publishes it is atomic, and named after the process that writes it), and renamed once whole.
//! [`partial_owner`] reads such a name back, so that the leftovers of a killed process can be
//! told from those of one that still runs ([`process_runs`]). Every writer of the engine and of
//! the Python package (through the bindings) names its partial outputs so.
//!
//! ```
//! use zertz_env::files::check_regular;
//! let e = check_regular(std::path::Path::new("/dev/null")).unwrap_err();
//! assert_eq!(e.to_string(), "not a regular file (a device)");
//! assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
//! ```

use std::fs::FileType;
use std::io;
use std::path::{Path, PathBuf};

/// What stands between a partial output's NAME and its writer's process id.
const PARTIAL: &str = ".partial-";

/// What a path that is not a regular file is, for messages: "a FIFO", "a socket", "a device",
/// "a folder".
pub fn file_kind(t: &FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    if t.is_dir() { "a folder" } else { "not a plain file" }
}

/// The text of a user's file: [`check_regular`] first, then read.
pub fn read_text(path: &Path) -> io::Result<String> {
    check_regular(path)?;
    std::fs::read_to_string(path)
}

/// Fails unless `path` is a regular file (after symbolic links), without opening it: the error of
/// a missing file, or `InvalidInput` "not a regular file (a FIFO)" (see [`file_kind`]).
pub fn check_regular(path: &Path) -> io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if meta.is_file() {
        return Ok(());
    }
    let kind = file_kind(&meta.file_type());
    Err(io::Error::new(io::ErrorKind::InvalidInput, format!("not a regular file ({kind})")))
}

/// The name of the partial output of the file or folder `name` written by process `pid`:
/// `.NAME.partial-PID`.
///
/// ```
/// use zertz_env::files::{partial_name, partial_owner};
/// assert_eq!(partial_name("shard-00-00001.npz", 42), ".shard-00-00001.npz.partial-42");
/// assert_eq!(partial_owner(".shard-00-00001.npz.partial-42"), Some(("shard-00-00001.npz", 42)));
/// ```
pub fn partial_name(name: &str, pid: u32) -> String {
    format!(".{name}{PARTIAL}{pid}")
}

/// Where this process writes `target` before it renames it into place: [`partial_name`] of its
/// file name and this process, in the same folder. A name that is not UTF-8 is written lossily
/// (the partial output is renamed to the real one); a path without a file name (`/`, `..`)
/// writes `.out.partial-PID` there.
///
/// ```
/// use std::path::Path;
/// use zertz_env::files::partial_path;
/// let partial = partial_path(Path::new("runs/a/best.pt"));
/// let name = format!(".best.pt.partial-{}", std::process::id());
/// assert_eq!(partial, Path::new("runs/a").join(name));
/// ```
pub fn partial_path(target: &Path) -> PathBuf {
    let name = target.file_name().map_or("out".into(), |n| n.to_string_lossy());
    target.with_file_name(partial_name(&name, std::process::id()))
}

/// The NAME and the process id of a partial output's file name `.NAME.partial-PID` (a name,
/// not a path); None for any other name (an empty NAME, a PID that is not a number of decimal
/// digits that fits 32 bits).
///
/// ```
/// use zertz_env::files::partial_owner;
/// assert_eq!(partial_owner(".c1.partial-4294967295"), Some(("c1", u32::MAX)));
/// assert_eq!(partial_owner(".c1.partial-"), None);
/// assert_eq!(partial_owner("c1"), None);
/// ```
pub fn partial_owner(name: &str) -> Option<(&str, u32)> {
    let (target, pid) = name.strip_prefix('.')?.rsplit_once(PARTIAL)?;
    let digits = !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
    if target.is_empty() || !digits {
        return None;
    }
    Some((target, pid.parse().ok()?))
}

/// Whether process `pid` runs: this one always; another where the system says (on Linux, its
/// `/proc` entry), and never elsewhere, so that elsewhere the leftovers of every other process
/// count as a killed one's.
pub fn process_runs(pid: u32) -> bool {
    pid == std::process::id()
        || cfg!(target_os = "linux") && Path::new("/proc").join(pid.to_string()).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_name_reads_back() {
        for (name, pid) in [("c1", 0), ("shard-00-00001.npz", 7), ("out", u32::MAX)] {
            assert_eq!(partial_owner(&partial_name(name, pid)), Some((name, pid)));
        }
        // A NAME that holds the marker itself: the last one is the writer's.
        let tricky = partial_name("a.partial-3", 9);
        assert_eq!(tricky, ".a.partial-3.partial-9");
        assert_eq!(partial_owner(&tricky), Some(("a.partial-3", 9)));
    }

    #[test]
    fn other_names_have_no_owner() {
        for name in [
            "c1",
            ".c1",
            "c1.partial-5",
            "..partial-5",
            ".c1.partial-",
            ".c1.partial-+5",
            ".c1.partial--5",
            ".c1.partial-5x",
            ".c1.partial-4294967296",
            ".c1.partial-notapid",
            // The names of earlier writers (npz.rs, the Python training loop).
            ".c1.tmp",
            ".c1.1234.tmp",
            ".shard.npz.tmp-1234",
        ] {
            assert_eq!(partial_owner(name), None, "{name}");
        }
    }

    #[test]
    fn a_partial_path_is_beside_its_target() {
        let me = std::process::id();
        let p = partial_path(Path::new("/data/out"));
        assert_eq!(p, PathBuf::from(format!("/data/.out.partial-{me}")));
        assert_eq!(partial_owner(p.file_name().unwrap().to_str().unwrap()), Some(("out", me)));
        assert_eq!(partial_path(Path::new("x.npz")), PathBuf::from(format!(".x.npz.partial-{me}")));
        assert_eq!(partial_path(Path::new("/")), PathBuf::from(format!("/.out.partial-{me}")));
    }

    #[test]
    fn this_process_runs_and_an_impossible_one_does_not() {
        assert!(process_runs(std::process::id()));
        // Above any system's largest process id (Linux: 2^22).
        assert!(!process_runs(u32::MAX));
    }
}
