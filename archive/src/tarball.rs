//! The records of a tar stream, its extension headers bounded.
//!
//! The `tar` crate, left to itself, reads a GNU long name or link (`L`, `K`) and a PAX header
//! (`x`) whole into memory, whatever size it claims: a few megabytes of gzip can claim gigabytes.
//! So entries are read raw, and the headers that describe the next entry are applied here, as the
//! crate would (a long name first, then a PAX `path`, then the header's own name), once each is
//! known to hold at most [`MAX_TAR_HEADER_BYTES`].

use std::io::{self, Read};
use std::ops::ControlFlow;

use crate::{Counts, Entry, MAX_RECORD_BYTES, MAX_TAR_HEADER_BYTES, is_record_name};

/// What the extension headers before an entry say about it.
#[derive(Default)]
struct Pending {
    /// A GNU long name (`L`), as stored.
    long_name: Option<Vec<u8>>,
    /// Whether a GNU long link (`K`) came (its content names a link target: unused).
    long_link: bool,
    /// A PAX header's records (`x`), as stored.
    pax: Option<Vec<u8>>,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.long_name.is_none() && !self.long_link && self.pax.is_none()
    }

    /// The entry's name: the long name (less one trailing NUL), else the first well-formed PAX
    /// `path` record, else the header's name.
    fn name(&self, header: &tar::Header) -> String {
        if let Some(name) = &self.long_name {
            return String::from_utf8_lossy(name.strip_suffix(&[0]).unwrap_or(name)).into_owned();
        }
        let pax_path = self.pax.as_deref().and_then(|pax| {
            tar::PaxExtensions::new(pax)
                .filter_map(Result::ok)
                .find(|record| record.key_bytes() == b"path")
                .map(|record| record.value_bytes())
        });
        match pax_path {
            Some(path) => String::from_utf8_lossy(path).into_owned(),
            None => String::from_utf8_lossy(&header.path_bytes()).into_owned(),
        }
    }

    /// The PAX `size` record, when the records up to it are well formed and it is a number.
    fn size(&self) -> Option<u64> {
        for record in tar::PaxExtensions::new(self.pax.as_deref()?) {
            let record = record.ok()?;
            if record.key_bytes() == b"size" {
                return record.value().ok()?.parse().ok();
            }
        }
        None
    }
}

/// What an extension header is, for messages; `None` for other entries.
fn extension(kind: tar::EntryType) -> Option<&'static str> {
    if kind.is_gnu_longname() {
        Some("GNU long name")
    } else if kind.is_gnu_longlink() {
        Some("GNU long link")
    } else if kind.is_pax_local_extensions() {
        Some("PAX")
    } else if kind.is_pax_global_extensions() {
        Some("PAX global")
    } else {
        None
    }
}

/// Reads an extension header's content (known to be at most [`MAX_TAR_HEADER_BYTES`]).
fn read_header(entry: &mut impl Read, size: u64) -> io::Result<Vec<u8>> {
    let mut content = Vec::with_capacity(size as usize);
    entry.read_to_end(&mut content)?;
    Ok(content)
}

/// Visits the records of a tar stream (see the crate docs); an error is what makes the archive
/// corrupt.
pub(crate) fn read_tar(
    reader: impl Read,
    prefix: &str,
    counts: &mut Counts,
    buffer: &mut Vec<u8>,
    visit: &mut impl FnMut(Entry<'_>) -> ControlFlow<()>,
) -> io::Result<ControlFlow<()>> {
    let mut archive = tar::Archive::new(reader);
    let mut pending = Pending::default();
    for entry in archive.entries()?.raw(true) {
        let mut entry = entry?;
        let size = entry.size();
        let header = entry.header();
        let kind = header.entry_type();
        if let Some(what) = extension(kind).filter(|_| size > MAX_TAR_HEADER_BYTES) {
            return Err(io::Error::other(format!(
                "a {what} header of {size} bytes (at most {MAX_TAR_HEADER_BYTES})"
            )));
        }
        // As the tar crate: a long name, long link or PAX header counts only in a GNU or ustar
        // header, once per entry; others are entries of an unknown kind.
        let recognized = header.as_gnu().is_some() || header.as_ustar().is_some();
        let twice = |what| io::Error::other(format!("two {what} headers for one entry"));
        if recognized && kind.is_gnu_longname() {
            if pending.long_name.is_some() {
                return Err(twice("GNU long name"));
            }
            pending.long_name = Some(read_header(&mut entry, size)?);
            continue;
        }
        if recognized && kind.is_gnu_longlink() {
            if pending.long_link {
                return Err(twice("GNU long link"));
            }
            pending.long_link = true;
            continue;
        }
        if recognized && kind.is_pax_local_extensions() {
            if pending.pax.is_some() {
                return Err(twice("PAX"));
            }
            pending.pax = Some(read_header(&mut entry, size)?);
            continue;
        }
        // This entry is the one the headers describe (a PAX global header too, as in the crate).
        let described = std::mem::take(&mut pending);
        let pax_size = described.size().filter(|_| !kind.is_pax_global_extensions());
        if let Some(pax_size) = pax_size.filter(|&s| s != size) {
            // The crate would take the PAX size (a writer's way past 8 GiB), but a raw walk cannot
            // find the next header then; no record is that large.
            return Err(io::Error::other(format!(
                "a PAX size of {pax_size} bytes for an entry of {size} (entries over 8 GiB are \
                 not supported)"
            )));
        }
        if kind.is_gnu_sparse() && header.as_gnu().is_some_and(|gnu| gnu.is_extended()) {
            // Its sparse map's extra blocks lie where a raw walk looks for the next header.
            return Err(io::Error::other("a GNU sparse entry with an extended map"));
        }
        if !kind.is_file() {
            continue;
        }
        let inner = described.name(header);
        if !is_record_name(&inner) || size > MAX_RECORD_BYTES {
            counts.skipped += 1;
            continue;
        }
        buffer.clear();
        entry.read_to_end(buffer)?;
        counts.records += 1;
        let name = format!("{prefix}:{inner}");
        if visit(Entry { name: &name, bytes: Ok(buffer) }).is_break() {
            return Ok(ControlFlow::Break(()));
        }
    }
    if !pending.is_empty() {
        return Err(io::Error::other("a long name or PAX header with no entry after it"));
    }
    Ok(ControlFlow::Continue(()))
}
