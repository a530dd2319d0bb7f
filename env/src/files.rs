//! Files named by users are regular files: opening a FIFO waits for a writer forever, and a device
//! such as `/dev/zero` never ends. Every reader of a user's file (configs, models, records) asks
//! [`check_regular`] first.
//!
//! ```
//! use zertz_env::files::check_regular;
//! let e = check_regular(std::path::Path::new("/dev/null")).unwrap_err();
//! assert_eq!(e.to_string(), "not a regular file (a device)");
//! assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
//! ```

use std::fs::FileType;
use std::io;
use std::path::Path;

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
