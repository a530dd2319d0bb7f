//! Files named by users are regular files: opening a FIFO waits for a writer forever, and a device
//! such as `/dev/zero` never ends. Every reader of a user's file (configs, models, records) asks
//! [`check_regular`] first.
//!
//! Whole files are read within a bound ([`read_bounded`]): checked before the file is opened,
//! opened so that nothing put in its place meanwhile can block (a FIFO opens at once), checked
//! again once open, and read no further than the bound. Each kind of file has its bound, one
//! constant each ([`LIMITS`]: [`MAX_CONFIG_BYTES`], [`MAX_JSON_BYTES`], [`MAX_METRICS_BYTES`],
//! [`MAX_NETWORK_BYTES`], [`MAX_CHECKPOINT_BYTES`]), and the error of a file past one states it:
//! "2 GiB is more than the 1 MiB that a config file may have".
//!
//! A file or folder being written is never seen under its own name: it is written beside it as
//! `.NAME.partial-PID` ([`partial_path`]: hidden, in the same folder so that the rename that
//! publishes it is atomic, and named after the process that writes it), and renamed once whole.
//! [`partial_owner`] reads such a name back, so that the leftovers of a killed process can be
//! told from those of one that still runs ([`process_runs`]). Every writer in Rust and in
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

/// The text of a user's file, of any size (records, which are read a line at a time): as
/// [`read_bounded`] opens it, then read.
pub fn read_text(path: &Path) -> io::Result<String> {
    read_text_bounded(path, u64::MAX, "a file")
}

/// The most bytes of a config file (TOML: training, self-play and match configs). The
/// project's are 1 to 5 KiB.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The most bytes of a JSON file of a run or a dataset (a self-play chunk's `summary.json` and
/// `chunk.json`, a dataset's manifest, a network's provenance). A chunk's summary holds a line
/// per shard: a few KiB.
pub const MAX_JSON_BYTES: u64 = 16 << 20;

/// The most bytes of a training run's metrics (`metrics.jsonl`, one line per iteration of about
/// 2 KiB: some 30,000 iterations).
pub const MAX_METRICS_BYTES: u64 = 64 << 20;

/// The most bytes of an exported network (TorchScript or an AOTInductor package). The largest
/// preset (`large`, 192 channels in 15 blocks, every board: 11 million parameters) exports to
/// 43 MiB; the bound takes some 250 million.
pub const MAX_NETWORK_BYTES: u64 = 1 << 30;

/// The most bytes of a training checkpoint (the weights, the optimizer's two moments of each,
/// counters: about three networks; 128 MiB for the `large` preset), for the networks that
/// [`MAX_NETWORK_BYTES`] takes.
pub const MAX_CHECKPOINT_BYTES: u64 = 4 << 30;

/// The bound of each kind of file users name: `(name, bytes, what it is in messages)`.
pub const LIMITS: [(&str, u64, &str); 5] = [
    ("config", MAX_CONFIG_BYTES, "a config file"),
    ("json", MAX_JSON_BYTES, "a JSON file of a run"),
    ("metrics", MAX_METRICS_BYTES, "a metrics file"),
    ("network", MAX_NETWORK_BYTES, "an exported network"),
    ("checkpoint", MAX_CHECKPOINT_BYTES, "a training checkpoint"),
];

/// The bound of the kind of file `name` ([`LIMITS`]): `(bytes, what it is)`.
///
/// ```
/// use zertz_env::files::{MAX_METRICS_BYTES, limit};
/// assert_eq!(limit("metrics"), Some((MAX_METRICS_BYTES, "a metrics file")));
/// assert_eq!(limit("other"), None);
/// ```
pub fn limit(name: &str) -> Option<(u64, &'static str)> {
    LIMITS.iter().find(|(n, ..)| *n == name).map(|&(_, bytes, what)| (bytes, what))
}

/// A count of bytes for people: "812 bytes", "64 MiB", "2.5 GiB" (binary units, one decimal
/// where it is not whole).
///
/// ```
/// use zertz_env::files::size_text;
/// assert_eq!(size_text(812), "812 bytes");
/// assert_eq!(size_text(64 << 20), "64 MiB");
/// assert_eq!(size_text(5 << 29), "2.5 GiB");
/// ```
pub fn size_text(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut unit = 0;
    while unit + 1 < UNITS.len() && bytes >> (10 * (unit + 2)) > 0 {
        unit += 1;
    }
    let scale = 1u64 << (10 * (unit + 1));
    if bytes % scale == 0 {
        format!("{} {}", bytes / scale, UNITS[unit])
    } else {
        format!("{:.1} {}", bytes as f64 / scale as f64, UNITS[unit])
    }
}

/// The error of a file of `size` bytes (None: it grew while it was read) past `max`.
pub fn too_large(size: Option<u64>, max: u64, what: &str) -> io::Error {
    let max = size_text(max);
    let message = match size {
        Some(size) => format!("{} is more than the {max} that {what} may have", size_text(size)),
        None => format!("it grew past the {max} that {what} may have while it was read"),
    };
    io::Error::new(io::ErrorKind::FileTooLarge, message)
}

/// Fails unless the file of `meta` is a regular file of at most `max` bytes.
fn check_bounded(meta: &std::fs::Metadata, max: u64, what: &str) -> io::Result<()> {
    if !meta.is_file() {
        let kind = file_kind(&meta.file_type());
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({kind})"),
        ));
    }
    if meta.len() > max {
        return Err(too_large(Some(meta.len()), max, what));
    }
    Ok(())
}

/// Opens a user's file for reading once it is a regular file of at most `max` bytes, `what`
/// (such as "a config file") naming it in the error of one past `max`: checked before it is
/// opened (a FIFO would wait for a writer), opened without blocking and without becoming the
/// process's terminal (`O_NONBLOCK | O_NOCTTY`: a FIFO or a terminal put in its place after the
/// check opens at once), and checked again once open. The errors: the system's (a missing
/// file), `InvalidInput` "not a regular file (a FIFO)", `FileTooLarge` "3 GiB is more than the
/// 64 MiB that a metrics file may have".
pub fn open_bounded(path: &Path, max: u64, what: &str) -> io::Result<std::fs::File> {
    check_bounded(&std::fs::metadata(path)?, max, what)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path)?;
    check_bounded(&file.metadata()?, max, what)?;
    Ok(file)
}

/// The bytes of a user's file of at most `max` bytes ([`open_bounded`]), read no further than
/// the bound (a file that grows past it meanwhile is refused too).
///
/// ```
/// use zertz_env::files::{MAX_CONFIG_BYTES, read_bounded};
/// let dir = std::env::temp_dir().join(format!("zertz-doc-read-bounded-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("big.toml");
/// std::fs::write(&path, vec![b'#'; 3 << 20]).unwrap();
/// let e = read_bounded(&path, MAX_CONFIG_BYTES, "a config file").unwrap_err();
/// assert_eq!(e.to_string(), "3 MiB is more than the 1 MiB that a config file may have");
/// assert_eq!(read_bounded(&path, 3 << 20, "a config file").unwrap().len(), 3 << 20);
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn read_bounded(path: &Path, max: u64, what: &str) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let file = open_bounded(path, max, what)?;
    let size = file.metadata()?.len();
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(None, max, what));
    }
    Ok(bytes)
}

/// The text of a user's file of at most `max` bytes ([`read_bounded`]); `InvalidData` for one
/// that is not UTF-8.
pub fn read_text_bounded(path: &Path, max: u64, what: &str) -> io::Result<String> {
    String::from_utf8(read_bounded(path, max, what)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("not UTF-8 text ({e})")))
}

/// Fails unless `path` is a regular file (after symbolic links), without opening it: the error of
/// a missing file, or `InvalidInput` "not a regular file (a FIFO)" (see [`file_kind`]).
pub fn check_regular(path: &Path) -> io::Result<()> {
    check_bounded(&std::fs::metadata(path)?, u64::MAX, "a file")
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

    /// A fresh folder of this test's own.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("zertz-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_file_within_its_bound_is_read_whole() {
        let dir = scratch("within");
        let path = dir.join("a.toml");
        std::fs::write(&path, "x = 1\n").unwrap();
        assert_eq!(read_bounded(&path, 6, "a config file").unwrap(), b"x = 1\n");
        assert_eq!(read_text_bounded(&path, 6, "a config file").unwrap(), "x = 1\n");
        assert_eq!(read_text(&path).unwrap(), "x = 1\n");
        let e = read_bounded(&path, 5, "a config file").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert_eq!(e.to_string(), "6 bytes is more than the 5 bytes that a config file may have");
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        let e = read_text_bounded(&path, 6, "a config file").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        let e = read_bounded(&dir.join("missing"), 6, "a config file").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_or_a_device_is_refused() {
        let dir = scratch("kinds");
        let e = read_bounded(&dir, MAX_CONFIG_BYTES, "a config file").unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a folder)");
        #[cfg(unix)]
        {
            // /dev/zero never ends; a link to it is the device too.
            let link = dir.join("zero");
            std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
            for path in [Path::new("/dev/zero"), &link] {
                let e = read_bounded(path, MAX_METRICS_BYTES, "a metrics file").unwrap_err();
                assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
                assert_eq!(e.to_string(), "not a regular file (a device)");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_is_refused_and_never_waits() {
        let dir = scratch("fifo");
        let fifo = dir.join("config.toml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let e = read_bounded(&fifo, MAX_CONFIG_BYTES, "a config file").unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a FIFO)");
        // Past the check (a FIFO put in place of a file after it): the open does not wait for
        // a writer, and the open file is refused.
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        let file = options.open(&fifo).unwrap();
        let e = check_bounded(&file.metadata().unwrap(), 1, "a config file").unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a FIFO)");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_limit_is_named_once() {
        for (name, bytes, what) in LIMITS {
            assert_eq!(limit(name), Some((bytes, what)));
            assert!(bytes.is_power_of_two(), "{name}");
        }
        assert_eq!(size_text(MAX_CHECKPOINT_BYTES), "4 GiB");
        assert_eq!(size_text(1023), "1023 bytes");
        assert_eq!(size_text(1536), "1.5 KiB");
        assert_eq!(size_text(u64::MAX), "16.0 EiB");
    }

    #[test]
    fn this_process_runs_and_an_impossible_one_does_not() {
        assert!(process_runs(std::process::id()));
        // Above any system's largest process id (Linux: 2^22).
        assert!(!process_runs(u32::MAX));
    }
}
