//! Archives of every kind, written by the tests (`archive.rs`, `fuzz.rs`).

use std::io::Write;

/// The files of every archive: two records in a folder, one at the top, and a README.
pub fn files() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("games/b.sgf", b"(;GM[22]SU[Zertz];P0[RtoB 2 0 D 4];P0[R- A 1])".to_vec()),
        ("games/a.SGF", b"(;GM[22]SU[Zertz+11])".to_vec()),
        ("README.md", b"not a record".to_vec()),
        ("c.sgf", b"(;GM[22]SU[Zertz+24])".to_vec()),
    ]
}

/// [`files`] as a tar archive.
pub fn tar_bytes() -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, bytes) in files() {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, name, bytes.as_slice()).unwrap();
    }
    builder.into_inner().unwrap()
}

/// [`files`] as each kind of archive: `(file name, bytes)` for `.tar.xz`, `.tar.gz`, `.tar` and
/// `.zip`.
pub fn archives() -> Vec<(&'static str, Vec<u8>)> {
    let tar = tar_bytes();
    let xz = {
        let mut e = xz2::write::XzEncoder::new(Vec::new(), 6);
        e.write_all(&tar).unwrap();
        e.finish().unwrap()
    };
    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&tar).unwrap();
        e.finish().unwrap()
    };
    let zip = {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, bytes) in files() {
            w.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
            w.write_all(&bytes).unwrap();
        }
        w.finish().unwrap().into_inner()
    };
    vec![("r.tar.xz", xz), ("r.tar.gz", gz), ("r.tar", tar), ("r.zip", zip)]
}

/// A record that replays (two turns), for the archives with extension headers.
pub const RECORD: &[u8] = b"(;GM[22]SU[Zertz];P0[RtoB 2 0 D 4];P0[R- A 1])";

/// One tar header block: a GNU header of `kind` named `name` (at most 100 bytes, raw), claiming
/// `size` bytes of content.
pub fn header_block(kind: tar::EntryType, name: &[u8], size: u64) -> Vec<u8> {
    let mut header = tar::Header::new_gnu();
    header.as_old_mut().name[..name.len()].copy_from_slice(name);
    header.set_entry_type(kind);
    header.set_mode(0o644);
    header.set_size(size);
    header.set_cksum();
    header.as_bytes().to_vec()
}

/// A tar entry: its header (claiming `content.len()` bytes) and its content, padded to blocks.
pub fn tar_entry(kind: tar::EntryType, name: &[u8], content: &[u8]) -> Vec<u8> {
    let mut out = header_block(kind, name, content.len() as u64);
    out.extend_from_slice(content);
    out.resize(out.len().next_multiple_of(512), 0);
    out
}

/// PAX records (`"LEN key=value\n"`, LEN counting the whole record).
pub fn pax_records(records: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (key, value) in records {
        let body = key.len() + value.len() + 3;
        let mut len = body + body.to_string().len();
        if len.to_string().len() + body != len {
            len += 1;
        }
        out.extend_from_slice(format!("{len} {key}=").as_bytes());
        out.extend_from_slice(value);
        out.push(b'\n');
    }
    out
}

/// The end of a tar archive: two zero blocks.
pub fn tar_end() -> Vec<u8> {
    vec![0; 1024]
}

/// A name of `len` bytes ending in `.sgf`, too long for a header's 100 bytes.
pub fn long_name(len: usize) -> Vec<u8> {
    let mut name = b"games/".to_vec();
    name.resize(len - 4, b'n');
    name.extend_from_slice(b".sgf");
    name
}

/// Tars whose entries use extension headers as real writers do (GNU long names and links, PAX
/// local and global headers): every walk of them gives records.
pub fn header_tars() -> Vec<(&'static str, Vec<u8>)> {
    use tar::EntryType::{GNULongLink, GNULongName, Regular, Symlink, XGlobalHeader, XHeader};
    let long = long_name(300);
    let mut long_nul = long_name(200);
    long_nul.push(0);
    let pax_path = long_name(150);
    let mut all = Vec::new();
    // GNU: a long name with and without its trailing NUL, a long link, a non-UTF-8 long name.
    let mut gnu = tar_entry(GNULongName, b"././@LongLink", &long);
    gnu.extend(tar_entry(Regular, b"short-but-ignored.sgf", RECORD));
    gnu.extend(tar_entry(GNULongName, b"././@LongLink", &long_nul));
    gnu.extend(tar_entry(Regular, b"x", RECORD));
    gnu.extend(tar_entry(GNULongLink, b"././@LongLink", &long_name(400)));
    gnu.extend(tar_entry(Symlink, b"link.sgf", b""));
    gnu.extend(tar_entry(GNULongName, b"././@LongLink", b"games/\xff\xfe.sgf"));
    gnu.extend(tar_entry(Regular, b"y", RECORD));
    gnu.extend(tar_entry(Regular, b"plain.sgf", RECORD));
    gnu.extend(tar_end());
    all.push(("gnu.tar", gnu));
    // PAX: a path, a path with other records and a size that agrees, a global header, a long name
    // and a PAX path together (the long name wins), a malformed record before the path.
    let mut pax = tar_entry(XHeader, b"PaxHeaders/a", &pax_records(&[("path", &pax_path)]));
    pax.extend(tar_entry(Regular, b"a", RECORD));
    let records = pax_records(&[
        ("mtime", b"1700000000.5"),
        ("size", RECORD.len().to_string().as_bytes()),
        ("path", b"games/pax \xe2\x99\x9f.sgf"),
    ]);
    pax.extend(tar_entry(XHeader, b"PaxHeaders/b", &records));
    pax.extend(tar_entry(Regular, b"b", RECORD));
    pax.extend(tar_entry(XGlobalHeader, b"GlobalHead", &pax_records(&[("comment", b"hi")])));
    pax.extend(tar_entry(Regular, b"after-global.sgf", RECORD));
    pax.extend(tar_entry(XHeader, b"PaxHeaders/c", &pax_records(&[("path", b"pax-loses.sgf")])));
    pax.extend(tar_entry(GNULongName, b"././@LongLink", b"games/long-wins.sgf"));
    pax.extend(tar_entry(Regular, b"c", RECORD));
    let mut malformed = b"99 broken\n".to_vec();
    malformed.extend(pax_records(&[("path", b"after-malformed.sgf")]));
    pax.extend(tar_entry(XHeader, b"PaxHeaders/d", &malformed));
    pax.extend(tar_entry(Regular, b"d.sgf", RECORD));
    pax.extend(tar_end());
    all.push(("pax.tar", pax));
    all
}

/// Tars with broken or hostile extension headers: each walk ends with a corrupt archive, and the
/// reason holds the given words. Claimed sizes are not backed by data.
pub fn hostile_header_tars() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    use tar::EntryType::{GNULongLink, GNULongName, GNUSparse, Regular, XGlobalHeader, XHeader};
    let huge = 3 << 30;
    let mut all = Vec::new();
    for (name, kind, what) in [
        ("huge-long-name.tar", GNULongName, "a GNU long name header of 3221225472 bytes"),
        ("huge-long-link.tar", GNULongLink, "a GNU long link header of 3221225472 bytes"),
        ("huge-pax.tar", XHeader, "a PAX header of 3221225472 bytes"),
        ("huge-pax-global.tar", XGlobalHeader, "a PAX global header of 3221225472 bytes"),
    ] {
        let mut tar = tar_entry(Regular, b"first.sgf", RECORD);
        tar.extend(header_block(kind, b"././@LongLink", huge));
        tar.extend(vec![b'n'; 4096]);
        all.push((name, tar, what));
    }
    // One byte past the bound.
    let mut over = tar_entry(GNULongName, b"././@LongLink", &long_name(64 * 1024 + 1));
    over.extend(tar_entry(Regular, b"x", RECORD));
    over.extend(tar_end());
    all.push(("long-name-over-the-bound.tar", over, "of 65537 bytes (at most 65536)"));
    let mut twice = tar_entry(GNULongName, b"././@LongLink", b"one.sgf");
    twice.extend(tar_entry(GNULongName, b"././@LongLink", b"two.sgf"));
    twice.extend(tar_entry(Regular, b"x", RECORD));
    twice.extend(tar_end());
    all.push(("two-long-names.tar", twice, "two GNU long name headers"));
    let mut twice = tar_entry(XHeader, b"P", &pax_records(&[("path", b"one.sgf")]));
    twice.extend(tar_entry(XHeader, b"P", &pax_records(&[("path", b"two.sgf")])));
    twice.extend(tar_entry(Regular, b"x", RECORD));
    twice.extend(tar_end());
    all.push(("two-pax.tar", twice, "two PAX headers"));
    let mut alone = tar_entry(Regular, b"first.sgf", RECORD);
    alone.extend(tar_entry(GNULongName, b"././@LongLink", b"nothing-after.sgf"));
    alone.extend(tar_end());
    all.push(("long-name-alone.tar", alone, "no entry after it"));
    let mut cut = tar_entry(Regular, b"first.sgf", RECORD);
    cut.extend(header_block(GNULongName, b"././@LongLink", 2000));
    cut.extend(vec![b'n'; 700]);
    all.push(("long-name-cut.tar", cut, ""));
    let mut sized = tar_entry(XHeader, b"P", &pax_records(&[("size", b"9999999999")]));
    sized.extend(tar_entry(Regular, b"x.sgf", RECORD));
    sized.extend(tar_end());
    all.push(("pax-size.tar", sized, "a PAX size of 9999999999 bytes for an entry of 46"));
    let mut header = tar::Header::new_gnu();
    header.set_path("sparse.sgf").unwrap();
    header.set_entry_type(GNUSparse);
    header.set_size(0);
    header.as_gnu_mut().unwrap().isextended[0] = 1;
    header.set_cksum();
    let mut sparse = header.as_bytes().to_vec();
    sparse.extend(vec![0; 512]);
    sparse.extend(tar_end());
    all.push(("sparse-extended.tar", sparse, "a GNU sparse entry with an extended map"));
    all
}

/// `tar` gzipped.
pub fn gzip(tar: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(tar).unwrap();
    e.finish().unwrap()
}
