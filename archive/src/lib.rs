//! Record files streamed from what users have: folders, single files, and archives as they are
//! shipped (`.tar.xz`, `.tar.gz`, `.tar`, `.zip`, as boardspace.net publishes them), without
//! unpacking anything to disk.
//!
//! [`for_each_record`] calls a visitor with the name and bytes of every record (`*.sgf`) in order:
//! a folder's files by name (its subfolders too), an archive's entries as stored. Other files are
//! skipped and counted ([`Counts::skipped`]), as are archive entries larger than
//! [`MAX_RECORD_BYTES`]. A single file named on its own is a record whatever its name. A record
//! file that cannot be read (missing, a FIFO, too large) reaches the visitor as an error and the
//! walk goes on; an archive that cannot be read ends it with the error.
//!
//! Hostile archives are read in bounded memory: an entry is read only when it is at most
//! [`MAX_RECORD_BYTES`] (skipped otherwise, however much it inflates to); a tar's extension headers
//! (GNU long names and links, PAX headers) are at most [`MAX_TAR_HEADER_BYTES`] and the xz
//! decoder takes at most [`MAX_XZ_DECODER_BYTES`], past which the archive is corrupt; a zip's
//! names, extra fields and comments are bounded by the format (16-bit lengths) and its directory
//! by the file's size. Tar entries whose PAX `size` differs from their header's (over 8 GiB) and
//! GNU sparse entries with an extended map are not supported (corrupt). Names shown to people go
//! through [`printable`].
//!
//! ```
//! # fn main() -> Result<(), zertz_archive::ArchiveError> {
//! let dir = std::env::temp_dir().join(format!("zertz-archive-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! std::fs::write(dir.join("a.sgf"), "(;GM[22])").unwrap();
//! std::fs::write(dir.join("notes.txt"), "not a record").unwrap();
//! let mut names = Vec::new();
//! let counts = zertz_archive::for_each_record(&[dir.clone()], |record| {
//!     assert!(record.bytes.is_ok());
//!     names.push(record.name.to_string());
//!     std::ops::ControlFlow::Continue(())
//! })?;
//! assert_eq!((counts.records, counts.skipped), (1, 1));
//! assert!(names[0].ends_with("a.sgf"));
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok(())
//! # }
//! ```

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use tarball::read_tar;

mod escape;
mod tarball;

pub use escape::printable;

/// Entries larger than this are not game records (the largest real one is under 20 KB): skipped
/// without reading them whole.
pub const MAX_RECORD_BYTES: u64 = 1 << 20;

/// The most bytes a tar extension header may hold: a GNU long name or long link, a PAX header
/// (local or global). A path is at most 4 KiB on Linux; a larger header makes the archive
/// [`ArchiveError::Corrupt`] before any of it is read.
pub const MAX_TAR_HEADER_BYTES: u64 = 64 << 10;

/// The most memory the xz decoder may take (its dictionary, as the stream's header asks):
/// twice what `xz -9` needs. A stream that asks for more (a dictionary of up to 1.5 GiB, which a
/// few hundred KB of input fill) makes the archive [`ArchiveError::Corrupt`] before it is taken.
pub const MAX_XZ_DECODER_BYTES: u64 = 128 << 20;

/// Why the records of a path cannot be read (a record's content is the visitor's concern). Its
/// message shows paths and reasons through [`printable`]: they come from file and entry names.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// A file or folder that cannot be read (missing, not a regular file, unreadable).
    #[error(
        "cannot read {}: {}",
        printable(&path.to_string_lossy()),
        printable(&source.to_string())
    )]
    Read {
        /// The path.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// An archive whose data is broken (the records before the break were visited).
    #[error(
        "{} is not a readable {kind} archive: {}",
        printable(&path.to_string_lossy()),
        printable(reason)
    )]
    Corrupt {
        /// The archive.
        path: PathBuf,
        /// `tar.xz`, `tar.gz`, `tar` or `zip`.
        kind: &'static str,
        /// What is wrong.
        reason: String,
    },
}

impl zertz_env::Classify for ArchiveError {
    /// Records are read as the work goes: a file that cannot be read or a broken archive fails
    /// it.
    fn class(&self) -> zertz_env::ErrorClass {
        use zertz_env::{Cause, ErrorClass};
        match self {
            ArchiveError::Read { source, .. } => ErrorClass::during(Cause::Io(source.kind())),
            ArchiveError::Corrupt { .. } => ErrorClass::during(Cause::Invalid),
        }
    }
}

/// One record: where it came from and its bytes.
#[derive(Debug)]
pub struct Entry<'a> {
    /// The file's path, or `ARCHIVE:ENTRY` inside an archive, as stored (lossy UTF-8): shown to
    /// people through [`printable`].
    pub name: &'a str,
    /// The file's content, or why a record file cannot be read (missing, a FIFO, too large):
    /// that record fails, the walk goes on.
    pub bytes: Result<&'a [u8], &'a ArchiveError>,
}

/// What a walk found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Records visited.
    pub records: u64,
    /// Files and entries that are not records (by name), or too large to be one.
    pub skipped: u64,
}

/// The kinds of archive, by file name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    TarXz,
    TarGz,
    Tar,
    Zip,
}

impl Kind {
    fn of(path: &Path) -> Option<Kind> {
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        [
            (".tar.xz", Kind::TarXz),
            (".txz", Kind::TarXz),
            (".tar.gz", Kind::TarGz),
            (".tgz", Kind::TarGz),
            (".tar", Kind::Tar),
            (".zip", Kind::Zip),
        ]
        .into_iter()
        .find(|(ext, _)| name.ends_with(ext))
        .map(|(_, k)| k)
    }

    fn name(self) -> &'static str {
        match self {
            Kind::TarXz => "tar.xz",
            Kind::TarGz => "tar.gz",
            Kind::Tar => "tar",
            Kind::Zip => "zip",
        }
    }
}

/// Whether a file name is a record's (`*.sgf`, any case).
pub fn is_record_name(name: &str) -> bool {
    let name = name.as_bytes();
    name.len() > 4 && name[name.len() - 4..].eq_ignore_ascii_case(b".sgf")
}

/// Whether `path` names an archive this crate reads.
pub fn is_archive(path: &Path) -> bool {
    Kind::of(path).is_some()
}

/// How many records `paths` hold, when that is known without reading archives: `None` when an
/// archive is among them (for a progress bar's length).
pub fn count_hint(paths: &[PathBuf]) -> Result<Option<u64>, ArchiveError> {
    let mut n = 0;
    for path in paths {
        if path.is_dir() {
            for file in folder_files(path)? {
                if is_archive(&file) {
                    return Ok(None);
                }
                n += u64::from(is_record_name(&file.to_string_lossy()));
            }
        } else if is_archive(path) {
            return Ok(None);
        } else {
            n += 1;
        }
    }
    Ok(Some(n))
}

/// Calls `visit` with every record of `paths`, in order (see the crate docs), until it says
/// [`ControlFlow::Break`]. A folder's archives are read too.
pub fn for_each_record(
    paths: &[PathBuf],
    mut visit: impl FnMut(Entry<'_>) -> ControlFlow<()>,
) -> Result<Counts, ArchiveError> {
    let mut counts = Counts::default();
    let mut buffer = Vec::new();
    for path in paths {
        let files = if path.is_dir() { folder_files(path)? } else { vec![path.clone()] };
        let alone = !path.is_dir();
        for file in files {
            let flow = if let Some(kind) = Kind::of(&file) {
                read_archive(&file, kind, &mut counts, &mut buffer, &mut visit)?
            } else if alone || is_record_name(&file.to_string_lossy()) {
                counts.records += 1;
                let name = file.to_string_lossy();
                match read_file(&file, &mut buffer) {
                    Ok(()) => visit(Entry { name: &name, bytes: Ok(&buffer) }),
                    Err(e) => visit(Entry { name: &name, bytes: Err(&e) }),
                }
            } else {
                counts.skipped += 1;
                ControlFlow::Continue(())
            };
            if flow.is_break() {
                return Ok(counts);
            }
        }
    }
    Ok(counts)
}

/// Every file under a folder, subfolders included, sorted by path: anything that is not a folder
/// (FIFOs and devices too, refused when read; a link to a folder is not followed).
fn folder_files(dir: &Path) -> Result<Vec<PathBuf>, ArchiveError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let read = |e| ArchiveError::Read { path: d.clone(), source: e };
        for entry in std::fs::read_dir(&d).map_err(read)? {
            let entry = entry.map_err(read)?;
            let kind = entry.file_type().map_err(read)?;
            if kind.is_dir() {
                stack.push(entry.path());
            } else {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Reads a regular file into `buffer` (refusing FIFOs and devices, which could block forever).
fn read_file(path: &Path, buffer: &mut Vec<u8>) -> Result<(), ArchiveError> {
    let read = |e| ArchiveError::Read { path: path.to_path_buf(), source: e };
    zertz_env::files::check_regular(path).map_err(read)?;
    buffer.clear();
    File::open(path)
        .and_then(|f| f.take(MAX_RECORD_BYTES + 1).read_to_end(buffer))
        .map_err(read)?;
    if buffer.len() as u64 > MAX_RECORD_BYTES {
        return Err(read(io::Error::other(format!(
            "larger than {MAX_RECORD_BYTES} bytes: not a game record"
        ))));
    }
    Ok(())
}

fn read_archive(
    path: &Path,
    kind: Kind,
    counts: &mut Counts,
    buffer: &mut Vec<u8>,
    visit: &mut impl FnMut(Entry<'_>) -> ControlFlow<()>,
) -> Result<ControlFlow<()>, ArchiveError> {
    let read = |e| ArchiveError::Read { path: path.to_path_buf(), source: e };
    zertz_env::files::check_regular(path).map_err(read)?;
    let file = BufReader::with_capacity(1 << 16, File::open(path).map_err(read)?);
    let corrupt = |e: &dyn std::fmt::Display| ArchiveError::Corrupt {
        path: path.to_path_buf(),
        kind: kind.name(),
        reason: e.to_string(),
    };
    let prefix = path.to_string_lossy();
    match kind {
        Kind::TarXz => {
            // As `XzDecoder::new_multi_decoder` (.xz or .lzma, concatenated streams), bounded.
            let stream = xz2::stream::Stream::new_auto_decoder(
                MAX_XZ_DECODER_BYTES,
                xz2::stream::CONCATENATED,
            )
            .map_err(|e| corrupt(&e))?;
            let xz = xz2::read::XzDecoder::new_stream(file, stream);
            read_tar(xz, &prefix, counts, buffer, visit).map_err(|e| {
                let inner = e.get_ref().and_then(|e| e.downcast_ref::<xz2::stream::Error>());
                if matches!(inner, Some(xz2::stream::Error::MemLimit)) {
                    corrupt(&format_args!(
                        "its xz stream needs more than {} MiB of memory (the decoder's limit)",
                        MAX_XZ_DECODER_BYTES >> 20
                    ))
                } else {
                    corrupt(&e)
                }
            })
        }
        Kind::TarGz => {
            read_tar(flate2::read::MultiGzDecoder::new(file), &prefix, counts, buffer, visit)
                .map_err(|e| corrupt(&e))
        }
        Kind::Tar => read_tar(file, &prefix, counts, buffer, visit).map_err(|e| corrupt(&e)),
        Kind::Zip => {
            let mut zip = zip::ZipArchive::new(file).map_err(|e| corrupt(&e))?;
            for i in 0..zip.len() {
                let mut entry = zip.by_index(i).map_err(|e| corrupt(&e))?;
                if entry.is_dir() {
                    continue;
                }
                let name = format!("{prefix}:{}", entry.name());
                if !is_record_name(entry.name()) || entry.size() > MAX_RECORD_BYTES {
                    counts.skipped += 1;
                    continue;
                }
                // The size is what the archive says: the data could inflate to more.
                buffer.clear();
                (&mut entry)
                    .take(MAX_RECORD_BYTES + 1)
                    .read_to_end(buffer)
                    .map_err(|e| corrupt(&e))?;
                if buffer.len() as u64 > MAX_RECORD_BYTES {
                    counts.skipped += 1;
                    continue;
                }
                counts.records += 1;
                if visit(Entry { name: &name, bytes: Ok(buffer) }).is_break() {
                    return Ok(ControlFlow::Break(()));
                }
            }
            Ok(ControlFlow::Continue(()))
        }
    }
}
